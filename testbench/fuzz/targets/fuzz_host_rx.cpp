// Fuzz target: the host endpoint's receive path (UdpRoce: ICRC with ID recovery, decode, CM active
// side, RC responder and requester, MR checks), with state carried across inputs. One endpoint
// lives for the process on <net>.1 with one connection to a scripted "NAA" at <net>.2:
// the endpoint really sends its REQ there (a UDP socket reads it), and the REP and every fuzzed
// datagram go in through inject_udp_roce_datagram() on the fuzzer's thread.
// Records: flags (1) | length (2, big-endian) | datagram. Flags: 0x01 write a valid ICRC; 0x02 set
// the destination QPN to the connection's; 0x04 set the PSN to the one the host expects next;
// 0x08 point the RETH at the registered region with its rkey; 0x10 post a receive first; 0x20
// send from another address.
// Properties: nothing crashes or trips ASan/UBSan; every datagram the endpoint sends decodes and
// carries a valid ICRC; no completion reports more bytes than its buffer holds.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fuzz.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/protocol/cm.hpp"
#include "naa/protocol/icrc.hpp"
#include "naa/protocol/packet.hpp"

namespace naa::fuzz {
namespace {

namespace p = naa::protocol;
namespace h = naa::host;

// <net>.1/2/3, net = NAA_FUZZ_NET ("A.B.C": an address block the caller claimed, testbench/
// support/test_addresses.*; scripts/fuzz.sh and the regression test set it). In host byte order.
std::uint32_t net() {
  static const std::uint32_t n = [] {
    const char* text = std::getenv("NAA_FUZZ_NET");
    const auto base =
        text != nullptr ? h::parse_ipv4(std::string(text) + ".0") : std::optional<std::uint32_t>{};
    if (!base) {
      std::fprintf(stderr, "fuzz_host_rx: set NAA_FUZZ_NET to a claimed address block (A.B.C)\n");
      std::abort();
    }
    return *base;
  }();
  return n;
}
std::uint32_t host_ip() {
  return net() | 1U;
}
std::uint32_t naa_ip() {
  return net() | 2U;
}
std::uint32_t stranger_ip() {
  return net() | 3U;
}
constexpr std::uint32_t kNaaQpn = 0x100;

class Harness {
 public:
  Harness() {
    naa_fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(p::kRoceUdpPort);
    a.sin_addr.s_addr = htonl(naa_ip());
    NAA_FUZZ_CHECK(::bind(naa_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    h::UdpRoceOptions o;
    o.local_ip = host_ip();
    o.seed = 1;
    std::error_code ec;
    ep_ = h::open_udp_roce(o, ec);
    NAA_FUZZ_CHECK(ep_ != nullptr);
    mem_.assign(64 << 10, 0);
    NAA_FUZZ_CHECK(!ep_->register_memory(
        mem_.data(), mem_.size(),
        h::Access::local_write | h::Access::remote_write | h::Access::remote_read, mr_));
  }

  void one_input(const std::uint8_t* data, std::size_t size) {
    if (!qp_ || qp_->error()) connect();
    if (!qp_) return;
    std::size_t off = 0;
    while (off + 3 <= size) {
      const std::uint8_t flags = data[off];
      std::size_t len = (std::size_t{data[off + 1]} << 8) | data[off + 2];
      off += 3;
      len = std::min({len, size - off, std::size_t{9000}});
      std::vector<std::uint8_t> d(data + off, data + off + len);
      off += len;
      if ((flags & 0x10U) != 0) {
        (void)qp_->post_recv(
            h::RecvWr{1, h::Sge{reinterpret_cast<std::uint64_t>(mem_.data()), 4096, mr_.lkey}});
      }
      if (d.size() >= p::kBthSize) {
        if ((flags & 0x02U) != 0) p::store_be24(&d[5], qp_->qp_num());
        if ((flags & 0x04U) != 0) {
          p::store_be24(&d[9], naa_psn_);
          naa_psn_ = p::psn_add(naa_psn_, 1);
        }
        const std::uint8_t opc = d[0];
        const bool has_reth = opc == p::opcode::kWriteFirst || opc == p::opcode::kWriteOnly ||
                              opc == p::opcode::kWriteOnlyImm || opc == p::opcode::kReadRequest;
        if ((flags & 0x08U) != 0 && has_reth && d.size() >= p::kBthSize + p::kRethSize) {
          p::store_be64(&d[p::kBthSize], reinterpret_cast<std::uint64_t>(mem_.data()) +
                                             (d[p::kBthSize + 6] % 64U) * 512U);
          p::store_be32(&d[p::kBthSize + 8], mr_.rkey);
        }
      }
      const std::uint32_t from = (flags & 0x20U) != 0 ? stranger_ip() : naa_ip();
      if ((flags & 0x01U) != 0 && d.size() >= p::kIcrcSize) {
        p::write_icrc(p::make_roce_headers(from, 0xC100, host_ip(), d.size()), d);
      }
      (void)h::inject_udp_roce_datagram(*ep_, d, from, 0xC100);
    }
    drain();
  }

 private:
  // Everything the endpoint sent to the "NAA" so far: checked, then dropped.
  void drain(int wait_ms = 0) {
    std::array<std::uint8_t, 9216> buf{};
    for (;;) {
      pollfd pfd{naa_fd_, POLLIN, 0};
      if (::poll(&pfd, 1, wait_ms) <= 0) break;
      sockaddr_in from{};
      socklen_t fl = sizeof from;
      const ssize_t n = ::recvfrom(naa_fd_, buf.data(), buf.size(), MSG_DONTWAIT,
                                   reinterpret_cast<sockaddr*>(&from), &fl);
      if (n <= 0) break;
      const p::ByteView d(buf.data(), static_cast<std::size_t>(n));
      const auto hdr = p::make_roce_headers(host_ip(), ntohs(from.sin_port), naa_ip(), d.size());
      NAA_FUZZ_CHECK(p::verify_icrc(hdr, d));
      const auto v = p::decode_packet(d);
      NAA_FUZZ_CHECK(v.has_value());
      if (v->headers.bth.dest_qpn == p::kCmQpn) {
        if (const auto mad = p::decode_cm_mad(v->payload)) {
          if (std::get_if<p::CmReq>(&mad->body) != nullptr) last_req_ = *mad;
        }
      }
      wait_ms = 0;
    }
    std::array<h::WorkCompletion, 16> wc;
    while (qp_) {
      const std::size_t k = qp_->poll_cq(wc);
      for (std::size_t i = 0; i < k; ++i)
        NAA_FUZZ_CHECK(wc[i].byte_len <= mem_.size());
      if (k == 0) break;
    }
  }

  void connect() {
    qp_.reset();
    drain();
    last_req_.reset();
    std::unique_ptr<h::QueuePair> qp;
    std::thread t([&] {
      h::ConnectParams cp;
      cp.remote_ip = naa_ip();
      cp.timeout = std::chrono::milliseconds(2000);
      cp.path_mtu = 1024;
      cp.local_ack_timeout = 8;  // 1 ms: timers fire between inputs
      std::error_code ec;
      qp = ep_->connect(cp, ec);
    });
    for (int i = 0; i < 200 && !last_req_; ++i)
      drain(10);
    if (last_req_) {
      const auto& req = std::get<p::CmReq>(last_req_->body);
      p::CmRep rep;
      rep.local_comm_id = 0xABC00000U + ++connects_;
      rep.remote_comm_id = req.local_comm_id;
      rep.local_qpn = kNaaQpn;
      rep.starting_psn = 0x200;  // what the host sends with
      rep.responder_resources = 1;
      rep.initiator_depth = 1;
      rep.rnr_retry_count = 7;
      naa_psn_ = req.starting_psn;  // what we (the NAA) send with
      p::CmMad mad{last_req_->header, rep};
      std::array<std::uint8_t, p::kMadSize> bytes{};
      NAA_FUZZ_CHECK(p::encode_cm_mad(mad, bytes).has_value());
      p::PacketHeaders ph;
      ph.bth.opcode = p::opcode::kUdSendOnly;
      ph.bth.dest_qpn = p::kCmQpn;
      ph.deth = p::Deth{p::kCmQKey, 0, p::kCmQpn};
      std::vector<std::uint8_t> d(p::packet_size(ph, bytes.size()));
      const auto n = p::encode_packet(ph, bytes, d);
      NAA_FUZZ_CHECK(n.has_value());
      p::write_icrc(p::make_roce_headers(naa_ip(), 0xC100, host_ip(), *n), d);
      (void)h::inject_udp_roce_datagram(*ep_, d, naa_ip(), 0xC100);
    }
    t.join();
    qp_ = std::move(qp);
  }

  int naa_fd_ = -1;
  std::shared_ptr<h::Transport> ep_;
  std::vector<std::uint8_t> mem_;
  h::MemoryRegion mr_;
  std::unique_ptr<h::QueuePair> qp_;
  std::optional<p::CmMad> last_req_;
  std::uint32_t naa_psn_ = 0;
  std::uint32_t connects_ = 0;
};

}  // namespace

int host_rx(const std::uint8_t* data, std::size_t size) {
  static Harness* h = new Harness();  // one endpoint per process: state carries across inputs
  h->one_input(data, size);
  return 0;
}

}  // namespace naa::fuzz
