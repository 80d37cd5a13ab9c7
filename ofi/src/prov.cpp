// The provider's entry point (fi_prov_ini, the only exported symbol), fi_getinfo and the fi_info
// it answers, the fabric, and the process-wide table of UdpRoce transports (one per local
// address). docs/host/libfabric.md describes what the attributes promise.
#include <arpa/inet.h>
#include <netdb.h>
#include <rdma/providers/fi_prov.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>

#include "enosys.hpp"
#include "naa/host/error.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa_fi.hpp"

namespace naa::ofi {
namespace {

std::mutex g_transports_mu;
struct OpenTransport {
  std::weak_ptr<host::Transport> transport;
  bool auto_progress = false;
  bool irn = false;  // offers IRN in its REQs: 16 bytes of the private data are the IRN block
};
std::map<std::uint32_t, OpenTransport> g_transports;

bool resolve_ipv4(const char* node, std::uint32_t& ip) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  if (::getaddrinfo(node, nullptr, &hints, &res) != 0 || res == nullptr) return false;
  ip = ntohl(reinterpret_cast<const sockaddr_in*>(res->ai_addr)->sin_addr.s_addr);
  ::freeaddrinfo(res);
  return true;
}

bool parse_port(const char* service, std::uint16_t& port) {
  if (service == nullptr) return true;
  char* end = nullptr;
  const long v = std::strtol(service, &end, 10);
  if (end == service || *end != '\0' || v < 0 || v > 65535) return false;
  port = static_cast<std::uint16_t>(v);
  return true;
}

void* dup_sin(const sockaddr_in& sin) {
  void* p = std::calloc(1, sizeof sin);
  if (p != nullptr) std::memcpy(p, &sin, sizeof sin);
  return p;
}

// The mr_mode check of libfabric's ofi_check_mr_mode (prov/util/src/util_attr.c): an application
// must be able to do what we need (registered local buffers, virtual addresses, our keys). Before
// API 1.5, and with FI_MR_BASIC (the old name of the last three), the local registration is the
// FI_LOCAL_MR mode bit; FI_MR_UNSPEC from a 1.5+ application means it can do none of them.
bool mr_mode_ok(std::uint32_t version, const fi_info& hints) {
  if (hints.domain_attr == nullptr) return true;
  const auto user = static_cast<std::uint64_t>(static_cast<unsigned>(hints.domain_attr->mr_mode));
  const auto basic = static_cast<std::uint64_t>(FI_MR_BASIC);
  const bool local = (hints.mode & FI_LOCAL_MR) != 0 || (user & FI_MR_LOCAL) != 0;
  if (!local) return false;
  if (FI_VERSION_LT(version, FI_VERSION(1, 5))) return user == FI_MR_UNSPEC || user == basic;
  if (user & basic) return (user & ~basic) == 0;
  if (user & static_cast<std::uint64_t>(FI_MR_SCALABLE)) return false;
  return (user & kMrMode) == kMrMode;
}

// What the hints ask for that we do not offer: tagged messages, atomics, other endpoint types,
// address formats or MR modes (docs/host/libfabric.md "Out of scope"), message orders, shared or
// multiple contexts, domain capabilities, more iovecs or a larger inject size. Every refusal is
// -FI_ENODATA from fi_getinfo, so the application looks elsewhere instead of failing later.
bool hints_ok(std::uint32_t version, const fi_info* hints) {
  if (hints == nullptr) return true;
  if (hints->caps & ~(kCaps | FI_LOCAL_COMM | FI_REMOTE_COMM | FI_SOURCE)) return false;
  if (hints->addr_format != FI_FORMAT_UNSPEC && hints->addr_format != FI_SOCKADDR &&
      hints->addr_format != FI_SOCKADDR_IN) {
    return false;
  }
  if (hints->ep_attr != nullptr) {
    const fi_ep_attr& e = *hints->ep_attr;
    if (e.type != FI_EP_UNSPEC && e.type != FI_EP_MSG) return false;
    if (e.protocol != FI_PROTO_UNSPEC && e.protocol != FI_PROTO_RDMA_CM_IB_RC) return false;
    if (e.max_msg_size > kMaxMsgSize) return false;
    // One transmit and one receive context per endpoint, none shared (FI_SHARED_CONTEXT < 0).
    if (e.tx_ctx_cnt > 1 || e.rx_ctx_cnt > 1) return false;
    if (e.mem_tag_format != 0) return false;
  }
  if (hints->fabric_attr != nullptr && hints->fabric_attr->name != nullptr &&
      std::strcmp(hints->fabric_attr->name, kProviderName) != 0) {
    return false;
  }
  if (!mr_mode_ok(version, *hints)) return false;
  if (hints->domain_attr != nullptr) {
    const fi_domain_attr& d = *hints->domain_attr;
    if (d.name != nullptr && std::strcmp(d.name, kProviderName) != 0) return false;
    if (d.cq_data_size > 4) return false;
    if (d.caps & ~(FI_LOCAL_COMM | FI_REMOTE_COMM)) return false;
    // Automatic control progress is the EQ's CM thread (or the transport's own thread): not
    // there with FI_NAA_PROGRESS_THREAD=0 and manual data progress.
    bool thread = true;
    if (d.control_progress == FI_PROGRESS_AUTO && d.data_progress != FI_PROGRESS_AUTO &&
        param_bool("progress_thread", thread) && !thread) {
      return false;
    }
    if (d.max_ep_stx_ctx > 0 || d.max_ep_srx_ctx > 0) return false;
    if (d.max_ep_tx_ctx > 1 || d.max_ep_rx_ctx > 1) return false;
    if (d.mr_key_size > 4 || d.mr_iov_limit > 1) return false;
  }
  if (hints->tx_attr != nullptr) {
    const fi_tx_attr& t = *hints->tx_attr;
    if (t.size > kMaxQueueSize || t.inject_size > kInjectSize) return false;
    if (t.msg_order & ~kMsgOrder) return false;
    if (t.comp_order & ~(FI_ORDER_STRICT | FI_ORDER_DATA)) return false;
    if (t.iov_limit > kIovLimit || t.rma_iov_limit > kRmaIovLimit) return false;
  }
  if (hints->rx_attr != nullptr) {
    const fi_rx_attr& r = *hints->rx_attr;
    if (r.size > kMaxQueueSize) return false;
    if (r.msg_order & ~kMsgOrder) return false;
    if (r.comp_order & ~(FI_ORDER_STRICT | FI_ORDER_DATA)) return false;
    if (r.iov_limit > kIovLimit || r.total_buffered_recv > 0) return false;
  }
  return true;
}

int getinfo(uint32_t version, const char* node, const char* service, uint64_t flags,
            const fi_info* hints, fi_info** info) noexcept {
  return guard(
      [&]() -> int {
        *info = nullptr;
        if (!hints_ok(version, hints)) return -FI_ENODATA;
        std::uint32_t src_ip = default_local_ip();
        std::uint16_t src_port = 0;
        sockaddr_in dest{};
        bool have_dest = false;
        std::uint32_t ip = 0;
        std::uint16_t port = 0;
        if (node != nullptr && !resolve_ipv4(node, ip)) return -FI_ENODATA;
        if (!parse_port(service, port)) return -FI_EINVAL;
        if (flags & FI_SOURCE) {
          if (node != nullptr) src_ip = ip;
          src_port = port;
        } else if (node != nullptr) {
          dest = make_sin(ip, port);
          have_dest = true;
        } else if (service != nullptr) {
          src_port = port;  // a service without a node is ours to listen on
        }
        if (hints != nullptr) {
          std::uint32_t hip = 0;
          std::uint16_t hport = 0;
          if (hints->src_addr != nullptr) {
            if (!parse_sin(hints->src_addr, hints->src_addrlen, hip, hport)) return -FI_ENODATA;
            src_ip = hip;
            src_port = hport;
          }
          if (hints->dest_addr != nullptr) {
            if (!parse_sin(hints->dest_addr, hints->dest_addrlen, hip, hport)) {
              return -FI_ENODATA;
            }
            dest = make_sin(hip, hport);
            have_dest = true;
          }
        }
        fi_info* out = make_info(hints, src_ip, src_port, have_dest ? &dest : nullptr);
        if (out == nullptr) return -FI_ENOMEM;
        *info = out;
        return 0;
      },
      -FI_ENOMEM);
}

void cleanup() noexcept {}

fi_provider g_provider = {
    .version = kProviderVersion,
    .fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
    .context = {},
    .name = kProviderName,
    .getinfo = getinfo,
    .fabric = fabric_open,
    .cleanup = cleanup,
};

int fabric_close(fid* f) noexcept {
  delete reinterpret_cast<Fabric*>(f);
  return 0;
}

fi_ops g_fabric_fid_ops = {
    .size = sizeof(fi_ops),
    .close = fabric_close,
    .bind = FI_NO(fi_ops, bind),
    .control = FI_NO(fi_ops, control),
    .ops_open = FI_NO(fi_ops, ops_open),
    .tostr = FI_NO(fi_ops, tostr),
    .ops_set = FI_NO(fi_ops, ops_set),
};

fi_ops_fabric g_fabric_ops = {
    .size = sizeof(fi_ops_fabric),
    .domain = domain_open,
    .passive_ep = pep_open,
    .eq_open = eq_open,
    .wait_open = FI_NO(fi_ops_fabric, wait_open),  // wait sets: out of scope
    .trywait = fabric_trywait,
    .domain2 = FI_NO(fi_ops_fabric, domain2),
};

}  // namespace

const char* param_str(const char* name) noexcept {
  char* v = nullptr;
  return fi_param_get_str(&g_provider, name, &v) == 0 ? v : nullptr;
}

bool param_int(const char* name, int& value) noexcept {
  return fi_param_get_int(&g_provider, name, &value) == 0;
}

bool param_bool(const char* name, bool& value) noexcept {
  int v = 0;
  if (fi_param_get_bool(&g_provider, name, &v) != 0) return false;
  value = v != 0;
  return true;
}

void define_params() noexcept {
  // fi_info -e lists these; each is read from FI_NAA_<NAME> (docs/host/libfabric.md).
  fi_param_define(&g_provider, "addr", FI_PARAM_STRING,
                  "local IPv4 address (dotted) when the application gives no source address "
                  "(default: the first 127.0.0.x, x >= 3, whose UDP 4791 is free)");
  fi_param_define(&g_provider, "connect_timeout_ms", FI_PARAM_INT,
                  "how long fi_connect tries, REQ retries included, before FI_ETIMEDOUT "
                  "(default: 5000)");
  fi_param_define(&g_provider, "pcap", FI_PARAM_STRING,
                  "capture each UdpRoce endpoint's datagrams to <value>-<n>.pcap");
  fi_param_define(&g_provider, "progress_thread", FI_PARAM_BOOL,
                  "with manual progress, a thread per domain and event queue runs the transport's "
                  "ACKs, retransmissions and CM while the application does not call in "
                  "(default: 1; 0 only for tests that need a silent peer)");
  fi_param_define(&g_provider, "irn", FI_PARAM_BOOL,
                  "1: offer IRN selective repeat in every connection request, 0: go-back-N "
                  "(default: 1, as the host library)");
  fi_param_define(&g_provider, "share_addr", FI_PARAM_BOOL,
                  "1: share the local address with other processes that set this too, as on a "
                  "RoCE NIC (SO_REUSEPORT steered by QPN, docs/adr/0006; needs an address, e.g. "
                  "FI_NAA_ADDR), 0: hold <address>:4791 alone (default: 0)");
}

std::uint32_t default_local_ip() noexcept {
  const char* a = param_str("addr");
  in_addr in{};
  if (a == nullptr || ::inet_pton(AF_INET, a, &in) != 1) return 0;
  return ntohl(in.s_addr);
}

sockaddr_in make_sin(std::uint32_t ip, std::uint16_t port) noexcept {
  sockaddr_in s{};
  s.sin_family = AF_INET;
  s.sin_addr.s_addr = htonl(ip);
  s.sin_port = htons(port);
  return s;
}

bool parse_sin(const void* addr, std::size_t len, std::uint32_t& ip, std::uint16_t& port) noexcept {
  if (addr == nullptr || len < sizeof(sockaddr_in)) return false;
  sockaddr_in s;
  std::memcpy(&s, addr, sizeof s);
  if (s.sin_family != AF_INET) return false;
  ip = ntohl(s.sin_addr.s_addr);
  port = ntohs(s.sin_port);
  return true;
}

fi_info* make_info(const fi_info* hints, std::uint32_t src_ip, std::uint16_t src_port,
                   const sockaddr_in* dest) noexcept {
  fi_info* fi = fi_dupinfo(nullptr);
  if (fi == nullptr) return nullptr;
  const bool rx_cq_data = hints == nullptr || (hints->mode & FI_RX_CQ_DATA) != 0;
  fi->caps = kCaps;
  fi->mode = rx_cq_data ? FI_RX_CQ_DATA : 0;
  fi->addr_format = FI_SOCKADDR_IN;
  const sockaddr_in src = make_sin(src_ip, src_port);
  fi->src_addr = dup_sin(src);
  fi->src_addrlen = sizeof src;
  if (dest != nullptr) {
    fi->dest_addr = dup_sin(*dest);
    fi->dest_addrlen = sizeof *dest;
  }
  std::size_t tx_size = kDefaultQueueSize;
  std::size_t rx_size = kDefaultQueueSize;
  if (hints != nullptr && hints->tx_attr != nullptr && hints->tx_attr->size != 0) {
    tx_size = hints->tx_attr->size;
  }
  if (hints != nullptr && hints->rx_attr != nullptr && hints->rx_attr->size != 0) {
    rx_size = hints->rx_attr->size;
  }
  fi_tx_attr& tx = *fi->tx_attr;
  tx.caps = kCaps & ~(FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE);
  tx.mode = 0;
  tx.op_flags = 0;
  // An RC QP executes and completes in order (PROTOCOL.md 3).
  tx.msg_order = kMsgOrder;
  tx.comp_order = FI_ORDER_STRICT;
  tx.inject_size = kInjectSize;
  tx.size = tx_size;
  tx.iov_limit = kIovLimit;
  tx.rma_iov_limit = kRmaIovLimit;
  fi_rx_attr& rx = *fi->rx_attr;
  rx.caps = kCaps & ~(FI_SEND | FI_READ | FI_WRITE);
  rx.mode = fi->mode;
  rx.op_flags = 0;
  rx.msg_order = tx.msg_order;
  rx.comp_order = FI_ORDER_STRICT;
  rx.total_buffered_recv = 0;
  rx.size = rx_size;
  rx.iov_limit = kIovLimit;
  fi_ep_attr& ep = *fi->ep_attr;
  ep.type = FI_EP_MSG;
  ep.protocol = FI_PROTO_RDMA_CM_IB_RC;
  ep.protocol_version = 1;
  ep.max_msg_size = kMaxMsgSize;
  ep.msg_prefix_size = 0;
  ep.max_order_raw_size = kMaxMsgSize;
  ep.max_order_war_size = kMaxMsgSize;
  ep.max_order_waw_size = kMaxMsgSize;
  ep.mem_tag_format = 0;
  ep.tx_ctx_cnt = 1;
  ep.rx_ctx_cnt = 1;
  fi_domain_attr& d = *fi->domain_attr;
  d.name = ::strdup(kProviderName);
  d.threading = FI_THREAD_SAFE;
  fi_progress progress = FI_PROGRESS_MANUAL;
  if (hints != nullptr && hints->domain_attr != nullptr &&
      hints->domain_attr->data_progress == FI_PROGRESS_AUTO) {
    progress = FI_PROGRESS_AUTO;
  }
  d.control_progress = progress;
  if (hints != nullptr && hints->domain_attr != nullptr &&
      hints->domain_attr->control_progress == FI_PROGRESS_AUTO) {
    d.control_progress = FI_PROGRESS_AUTO;  // hints_ok: the EQ's CM thread runs (eq.cpp)
  }
  d.data_progress = progress;
  d.resource_mgmt = FI_RM_ENABLED;
  d.av_type = FI_AV_UNSPEC;
  d.mr_mode = kMrMode;
  if (hints != nullptr && hints->domain_attr != nullptr &&
      hints->domain_attr->mr_mode == FI_MR_BASIC) {
    // The old name of VIRT_ADDR | ALLOCATED | PROV_KEY; local registration is the mode bit.
    d.mr_mode = FI_MR_BASIC;
    fi->mode |= FI_LOCAL_MR;
  }
  d.mr_key_size = 4;   // a UdpRoce rkey (PROTOCOL.md: RETH R_Key is 32 bits)
  d.cq_data_size = 4;  // the ImmDt of SEND / RDMA WRITE WITH IMMEDIATE
  d.cq_cnt = 1024;
  d.ep_cnt = 1024;
  d.tx_ctx_cnt = 1024;
  d.rx_ctx_cnt = 1024;
  d.max_ep_tx_ctx = 1;
  d.max_ep_rx_ctx = 1;
  d.max_ep_stx_ctx = 0;
  d.max_ep_srx_ctx = 0;
  d.cntr_cnt = 1024;
  d.mr_iov_limit = 1;
  d.caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
  d.mr_cnt = 65536;
  d.max_err_data = kRejectDataSize;
  fi->fabric_attr->name = ::strdup(kProviderName);
  fi->fabric_attr->prov_version = kProviderVersion;
  return fi;
}

std::shared_ptr<host::Transport> transport_for(std::uint32_t ip, bool& auto_progress, int& err,
                                               std::string& detail) {
  std::lock_guard lock(g_transports_mu);
  if (ip != 0) {
    auto it = g_transports.find(ip);
    if (it != g_transports.end()) {
      if (auto t = it->second.transport.lock()) {
        auto_progress = it->second.auto_progress;
        return t;
      }
    }
  }
  host::UdpRoceOptions o;
  if (ip != 0) o.local_ip = ip;
  o.progress = auto_progress ? host::Progress::automatic : host::Progress::manual;
  // FI_NAA_PCAP=<prefix>: each transport captures to <prefix>-<n>.pcap (docs/host/libfabric.md).
  static int pcaps = 0;
  if (const char* pcap = param_str("pcap")) {
    o.pcap_path = std::string(pcap) + "-" + std::to_string(pcaps++) + ".pcap";
  }
  // FI_NAA_IRN=0|1: IRN selective repeat or go-back-N. Unset: IRN offered, as the host library
  // does (issue 30); IRN carries FI_RMA reads too (docs/protocol.md 8.5). A peer that does not
  // answer with the capability block gets go-back-N all the same.
  bool irn = true;
  (void)param_bool("irn", irn);
  o.irn = irn;
  // FI_NAA_SHARE_ADDR=1: many processes on one address (docs/adr/0006).
  bool share = false;
  if (param_bool("share_addr", share)) o.share_address = share;
  std::error_code ec;
  auto t = host::open_udp_roce(o, ec, &detail);
  if (!t) {
    err = ec == host::Errc::address_in_use ? -FI_EADDRINUSE : -FI_EADDRNOTAVAIL;
    return nullptr;
  }
  g_transports[t->local_ip()] = OpenTransport{t, auto_progress, o.irn};
  return t;
}

std::size_t connect_data_size(const host::Transport& transport) noexcept {
  std::lock_guard lock(g_transports_mu);
  auto it = g_transports.find(transport.local_ip());
  const bool irn = it != g_transports.end() && it->second.irn;
  return irn ? kConnectDataSizeIrn : kConnectDataSize;
}

int fabric_open(fi_fabric_attr* attr, fid_fabric** fabric, void* context) noexcept {
  return guard(
      [&]() -> int {
        if (attr != nullptr && attr->name != nullptr &&
            std::strcmp(attr->name, kProviderName) != 0) {
          return -FI_EINVAL;
        }
        auto* f = new Fabric{};
        f->fid.fid.fclass = FI_CLASS_FABRIC;
        f->fid.fid.context = context;
        f->fid.fid.ops = &g_fabric_fid_ops;
        f->fid.ops = &g_fabric_ops;
        *fabric = &f->fid;
        return 0;
      },
      -FI_ENOMEM);
}

}  // namespace naa::ofi

extern "C" FI_EXT_INI {
  naa::ofi::define_params();
  return &naa::ofi::g_provider;
}
