// The libfabric provider "naa" (docs/host/libfabric.md): FI_EP_MSG endpoints with FI_MSG and
// FI_RMA over the host library's UdpRoce transport. Internal declarations shared by the provider's
// files:
//   prov.cpp      fi_prov_ini, fi_getinfo (the fi_info it offers), the fabric, the transports
//   eq.cpp        event queues (FI_CONNREQ, FI_CONNECTED, FI_SHUTDOWN, rejections)
//   cq.cpp        completion queues and counters, completion error codes
//   domain.cpp    domains, memory registration, progress and completion dispatch
//   ep_cm.cpp     endpoints' life and binding, passive endpoints, connection management
//   ep_ops.cpp    fi_send/recv/inject/sendmsg, fi_write/writedata/read: the transmit queue
//
// Every libfabric object is a C struct whose first member is the libfabric fid (so the fid pointer
// the application holds is the object's address). Every entry point catches all exceptions
// (guard()): none crosses the C ABI.
//
// Locking: Domain::mu guards the data plane of a domain (its endpoints' QPs, operation tables,
// transmit queues, inject slots, and the CQs and counters bound to them: the progress thread
// dispatches into those); Cq::mu, Cntr::mu and Eq::mu guard their queues and values;
// Eq::sources_mu guards the endpoints and passive endpoints bound to an EQ and is held while
// poll_sources() looks at them, so that none is closed under it. Order: Eq::sources_mu, then
// Domain::mu, then Cq::mu / Cntr::mu / Eq::mu; Eq::mu is never held with another provider lock
// except Domain::mu -> Eq::mu. The UdpRoce endpoint's own locks are below all of these; with
// automatic progress its thread calls our completion callback with none of its locks held.
// Threads of the provider's own (issue 29): a manually progressed domain's NIC thread and an EQ's
// CM thread take the same locks in the same order as the application's calls they stand in for
// (Domain::progress_work, Eq::poll_sources_work); Domain::nic_mu and Eq::cm_mu only guard their
// stop flags and are held with no other lock.
#pragma once

#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "naa/host/transport.hpp"

namespace naa::ofi {

inline constexpr const char* kProviderName = "naa";
inline constexpr std::uint32_t kProviderVersion = FI_VERSION(0, 1);
inline constexpr std::size_t kDefaultQueueSize = 256;  // tx and rx queue entries per endpoint
inline constexpr std::size_t kMaxQueueSize = 4096;
// At least one MTU's payload (PROTOCOL.md: 4096-byte path MTU), so every single-packet message can
// be injected; tx_size slots of it per endpoint.
inline constexpr std::size_t kInjectSize = 4096;
inline constexpr std::size_t kIovLimit = 4;     // iovecs per message (tx and rx)
inline constexpr std::size_t kRmaIovLimit = 1;  // remote iovecs per RMA
// Every order an RC QP keeps (PROTOCOL.md 3: executed and completed in order).
inline constexpr std::uint64_t kMsgOrder =
    FI_ORDER_STRICT | FI_ORDER_RMA_RAR | FI_ORDER_RMA_RAW | FI_ORDER_RMA_WAR | FI_ORDER_RMA_WAW;
// ofi_rxm registers its bounce buffers with this internal flag of libfabric's (include/ofi_util.h:
// OFI_MR_NOCACHE, "do not put this region in the MR cache"); we have no cache, so it changes
// nothing.
inline constexpr std::uint64_t kOfiMrNoCache = 1ULL << 60;
inline constexpr std::size_t kMaxMsgSize = std::size_t{1} << 31;  // PROTOCOL.md 7: 2 GiB
inline constexpr std::size_t kConnectDataSize = 56;  // REQ user private data after rdma_cm's
// With IRN offered (FI_NAA_IRN=1), its capability block takes 16 of those (udp_roce.hpp).
inline constexpr std::size_t kConnectDataSizeIrn = 40;
inline constexpr std::size_t kRejectDataSize = 148;
inline constexpr std::size_t kAcceptDataSize = 196;
inline constexpr std::uint64_t kCaps =
    FI_MSG | FI_RMA | FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
inline constexpr std::uint64_t kMrMode =
    FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;

// How long the application may stay away before a domain's NIC thread (an EQ's CM thread) drives
// its transport, and the longest turn it takes (docs/host/libfabric.md "Progress").
inline constexpr std::chrono::milliseconds kNicIdle{1};
inline constexpr std::chrono::milliseconds kNicSlice{5};

// Whether the application called in lately, at the cost of one relaxed increment per call (no
// clock read, no lock, no wake-up on the data path): the application's calls bump the count, and
// a progress thread that finds it unchanged after kNicIdle knows nobody called for that long.
class CallWatch {
 public:
  void called() noexcept { calls_.fetch_add(1, std::memory_order_relaxed); }
  // True if no call came since the previous look (the first look sees the calls since start).
  bool idle_since_last_look() noexcept {
    const std::uint64_t now = calls_.load(std::memory_order_relaxed);
    const bool idle = now == seen_;
    seen_ = now;
    return idle;
  }

 private:
  std::atomic<std::uint64_t> calls_{0};
  std::uint64_t seen_ = 0;  // the progress thread's own
};

// Runs f() and turns any exception into `on_exception` (an -FI_* code): nothing crosses the ABI.
template <class F, class R>
R guard(F&& f, R on_exception) noexcept {
  try {
    return f();
  } catch (...) {
    return on_exception;
  }
}

// libfabric codes for the host library's completion statuses, and the provider error numbers
// (prov_errno): the NAK syndrome for NAKs (0x61, 0x62, 0x63), the REJ reason for rejections,
// otherwise 0x1000 + the naa::host::Errc value.
int fi_error_of(std::error_code ec) noexcept;
int prov_errno_of(std::error_code ec) noexcept;
const char* prov_strerror(int prov_errno, char* buf, std::size_t len) noexcept;

// The UdpRoce endpoint of local address `ip` (0: the first free 127.0.0.x), shared by every
// domain and passive endpoint of the process on that address; the first opener sets its progress
// model (auto_progress in: what the caller asks; out: what the transport does). nullptr and an
// -FI_* code in err on failure.
std::shared_ptr<host::Transport> transport_for(std::uint32_t ip, bool& auto_progress, int& err,
                                               std::string& detail);
// The provider's variables (fi_param_define in fi_prov_ini; FI_NAA_<NAME> in the environment):
// false / nullptr when unset.
const char* param_str(const char* name) noexcept;
bool param_int(const char* name, int& value) noexcept;
bool param_bool(const char* name, bool& value) noexcept;
void define_params() noexcept;
// The private data a connect on `transport` carries: kConnectDataSize, or kConnectDataSizeIrn when
// the transport offers IRN.
std::size_t connect_data_size(const host::Transport& transport) noexcept;
// FI_NAA_ADDR (the default local address, dotted IPv4), 0 if unset.
std::uint32_t default_local_ip() noexcept;
sockaddr_in make_sin(std::uint32_t ip, std::uint16_t port) noexcept;
// ip and port of a FI_SOCKADDR_IN address; false if it is not one.
bool parse_sin(const void* addr, std::size_t len, std::uint32_t& ip, std::uint16_t& port) noexcept;

struct Fabric {
  fid_fabric fid;
};
int fabric_open(fi_fabric_attr* attr, fid_fabric** fabric, void* context) noexcept;
int fabric_trywait(fid_fabric* fabric, fid** fids, int count) noexcept;

struct Ep;
struct Cq;
struct Cntr;
struct Eq;

struct Domain {
  fid_domain fid;
  Fabric* fabric = nullptr;
  fi_info* info = nullptr;
  std::shared_ptr<host::Transport> transport;
  bool auto_progress = false;
  std::mutex mu;
  std::vector<Ep*> eps;
  // Closed endpoints, kept (answering -FI_EOPBADSTATE) until the domain closes: ep_close says why.
  std::vector<Ep*> closed_eps;
  std::atomic<int> refs{0};  // endpoints, CQs, counters and MRs open on it

  // Manual progress: submits the queued transmits of every endpoint, then polls their QPs (which
  // progresses the UdpRoce endpoint) and dispatches completions. Automatic: polls only. The
  // application's call (progress) also tells the NIC thread that the application is there.
  void progress();
  void progress_work();
  // Manual progress: the "NIC" thread (domain.cpp) that runs the transport's reliability work when
  // the application has not called in for kNicIdle.
  CallWatch app;
  std::thread nic;
  std::mutex nic_mu;
  std::condition_variable nic_cv;
  bool nic_stop = false;
  void start_nic();
  void stop_nic();
  void nic_main();
  // Takes the completions of `ep`'s QP into its CQs and counters (mu held).
  void dispatch(Ep& ep);
  std::array<host::WorkCompletion, 32> wc_buf;  // dispatch's (mu)
};
int domain_open(fid_fabric* fabric, fi_info* info, fid_domain** domain, void* context) noexcept;

struct Mr {
  fid_mr fid;
  Domain* domain = nullptr;
  host::MemoryRegion region;
};

// One completion, as the data format holds it (narrower formats take a prefix).
struct CqEntry {
  void* op_context = nullptr;
  std::uint64_t flags = 0;
  std::size_t len = 0;
  void* buf = nullptr;
  std::uint64_t data = 0;
  bool error = false;
  int err = 0;
  int prov_errno = 0;
};

struct Cq {
  fid_cq fid;
  Domain* domain = nullptr;
  fi_cq_format format = FI_CQ_FORMAT_CONTEXT;
  fi_wait_obj wait_obj = FI_WAIT_NONE;
  int wait_fd = -1;  // FI_WAIT_FD: an eventfd, readable while entries wait
  std::mutex mu;
  std::condition_variable cv;
  std::deque<CqEntry> entries;
  std::atomic<bool> signaled{false};  // fi_cq_signal not yet taken by an fi_cq_sread
  std::atomic<int> refs{0};
  void push(const CqEntry& e);  // mu not held
};
int cq_open(fid_domain* domain, fi_cq_attr* attr, fid_cq** cq, void* context) noexcept;

struct Cntr {
  fid_cntr fid;
  Domain* domain = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  std::uint64_t value = 0;
  std::uint64_t errors = 0;
  std::atomic<int> refs{0};
  void add(bool error);  // mu not held
};
int cntr_open(fid_domain* domain, fi_cntr_attr* attr, fid_cntr** cntr, void* context) noexcept;

// An event as fi_eq_read returns it (data: the entry bytes) or an error for fi_eq_readerr.
struct EqEvent {
  std::uint32_t event = 0;
  std::vector<std::uint8_t> data;
  bool error = false;
  fi_eq_err_entry err{};
  std::vector<std::uint8_t> err_data;
};

struct Pep;

struct Eq {
  fid_eq fid;
  Fabric* fabric = nullptr;
  fi_wait_obj wait_obj = FI_WAIT_NONE;
  int wait_fd = -1;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<EqEvent> events;
  EqEvent last_error;     // keeps err_data valid until the next read
  std::mutex sources_mu;  // peps and eps, and their lives while poll_sources() runs
  std::vector<Pep*> peps;
  std::vector<Ep*> eps;
  // Closed endpoints, kept (answering -FI_EOPBADSTATE) until the domain closes: ep_close says why.
  std::vector<Ep*> closed_eps;
  void push(EqEvent e);  // mu not held
  // Looks for connection requests and disconnected endpoints (progressing manual transports); the
  // application's call (poll_sources) also parks the CM thread.
  void poll_sources();
  void poll_sources_work();
  CallWatch app;
  std::thread cm_thread;
  std::mutex cm_mu;
  std::condition_variable cm_cv;
  bool cm_stop = false;
  void cm_thread_main();
  void stop_cm_thread();
};
int eq_open(fid_fabric* fabric, fi_eq_attr* attr, fid_eq** eq, void* context) noexcept;

// The handle of a FI_CONNREQ's fi_info: which request of which transport.
struct ConnReq {
  ::fid self;  // fclass FI_CLASS_CONNREQ
  std::shared_ptr<host::Transport> transport;
  std::uint64_t id = 0;
};

struct Pep {
  fid_pep fid;
  Fabric* fabric = nullptr;
  fi_info* info = nullptr;
  Eq* eq = nullptr;
  std::shared_ptr<host::Transport> transport;
  std::uint16_t port = 0;              // set before listening
  std::atomic<bool> listening{false};  // poll_sources() reads it on another thread
};
int pep_open(fid_fabric* fabric, fi_info* info, fid_pep** pep, void* context) noexcept;
// Shared by endpoints (ep_cm.cpp) and passive endpoints (pep.cpp): an address for fi_getname /
// fi_getpeer (-FI_ETOOSMALL and the size needed if it does not fit), a CM event with the entry
// and its private data, FI_OPT_CM_DATA_SIZE.
int getname_sin(std::uint32_t ip, std::uint16_t port, void* addr, size_t* addrlen) noexcept;
struct EqEvent;
EqEvent cm_event(std::uint32_t event, fid* f, fi_info* info, const std::vector<std::uint8_t>& d);
int ep_getopt(fid_t f, int level, int optname, void* optval, size_t* optlen) noexcept;
int ep_setopt(fid_t f, int level, int optname, const void* optval, size_t optlen) noexcept;

// A posted operation, by the wr_id the QP knows it under.
// Several iovecs (iov_limit kIovLimit): the message goes through one registered bounce buffer,
// gathered at the post (sends, writes) or scattered at the completion (receives, reads), as the
// host QP takes one SGE per work request.
struct Bounce {
  std::vector<std::uint8_t> data;
  host::MemoryRegion mr;
  std::vector<iovec> scatter;  // receives and reads: where the bytes go at completion
};
// Scatters a completed receive's or read's `len` bytes and releases the registration.
void finish_bounce(host::Transport& transport, Bounce& b, std::size_t len, bool ok);

struct Op {
  std::shared_ptr<Bounce> bounce;  // several iovecs: the bounce buffer the QP uses
  void* context = nullptr;
  std::uint64_t flags = 0;  // completion flags (FI_SEND | FI_MSG, FI_RMA | FI_WRITE, ...)
  std::size_t len = 0;
  void* buf = nullptr;
  bool tx = true;
  bool report = true;    // a successful completion goes to the CQ
  int inject_slot = -1;  // the inject buffer slot it holds
};

enum class EpState : std::uint8_t { idle, connecting, connected, shut };

struct Ep {
  fid_ep fid;
  Domain* domain = nullptr;
  fi_info* info = nullptr;
  Eq* eq = nullptr;
  Cq* tx_cq = nullptr;
  Cq* rx_cq = nullptr;
  bool tx_selective = false;  // FI_SELECTIVE_COMPLETION on the transmit CQ
  bool rx_selective = false;
  Cntr* send_cntr = nullptr;
  Cntr* recv_cntr = nullptr;
  Cntr* read_cntr = nullptr;
  Cntr* write_cntr = nullptr;
  Cntr* remote_write_cntr = nullptr;
  bool enabled = false;
  // Connection (Domain::mu).
  std::atomic<EpState> state{EpState::idle};
  std::unique_ptr<host::QueuePair> qp;
  std::thread connector;  // the active side's CM exchange (UdpRoce connect() blocks)
  ConnReq* connreq = nullptr;
  std::uint32_t peer_ip = 0;
  std::uint16_t peer_port = 0;
  bool shutdown_reported = false;
  // Data plane (Domain::mu).
  std::size_t tx_size = kDefaultQueueSize;
  std::size_t rx_size = kDefaultQueueSize;
  std::size_t tx_outstanding = 0;  // queued or on the QP, not yet completed
  std::size_t rx_outstanding = 0;
  std::map<std::uint64_t, Op> ops;
  std::uint64_t next_wr_id = 1;
  std::deque<host::SendWr> unsubmitted;  // manual progress: sent at the next progress
  std::deque<host::RecvWr> unposted;     // receives posted before the QP existed
  std::vector<std::uint8_t> inject_buf;  // tx_size slots of kInjectSize
  host::MemoryRegion inject_mr;
  std::vector<int> free_slots;
};
int ep_open(fid_domain* domain, fi_info* info, fid_ep** ep, void* context) noexcept;

// fi_cancel of a posted receive (ep_ops.cpp).
ssize_t ep_cancel(fid_t fid, void* context) noexcept;

// Tables of the data operations (ep_ops.cpp).
extern fi_ops_msg g_msg_ops;
extern fi_ops_rma g_rma_ops;
// Tables of what is not offered at all (enosys.cpp): every entry answers -FI_ENOSYS.
extern fi_ops_tagged g_no_tagged_ops;
extern fi_ops_atomic g_no_atomic_ops;
extern fi_ops_collective g_no_collective_ops;
// A closed endpoint's tables: every entry answers -FI_EOPBADSTATE (ep_cm.cpp ep_close).
extern fi_ops g_closed_ep_fid_ops;
extern fi_ops_ep g_closed_ep_ops;
extern fi_ops_cm g_closed_cm_ops;
extern fi_ops_msg g_closed_msg_ops;
extern fi_ops_rma g_closed_rma_ops;
void close_ops(fid_ep& ep) noexcept;  // every table of `ep` to the closed ones

// Copies of fi_info pieces (fi_dupinfo), for the connection request's info.
fi_info* make_info(const fi_info* hints, std::uint32_t src_ip, std::uint16_t src_port,
                   const sockaddr_in* dest) noexcept;

}  // namespace naa::ofi
