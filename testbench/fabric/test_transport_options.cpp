// The fabric's transport options (UdpRoceOptions::irn_rto_low_ns / irn_rto_high_ns,
// gbn_max_unacked_psns, wire_timers; docs/fabric.md "The IRN comparison"), on the host's queue
// pairs (host/src/irn_qp.hpp, rc_qp.hpp, pure state machines) driven directly: a sink counts
// what each sends, the test moves the clock and reports packets on the wire.
#include <catch2/catch.hpp>

#include <chrono>
#include <vector>

#include "irn_qp.hpp"
#include "rc_qp.hpp"

namespace host = naa::host;
namespace detail = naa::host::detail;
namespace protocol = naa::protocol;
using detail::Clock;
using std::chrono::microseconds;

namespace {

constexpr std::uint32_t kMtu = 1024;
constexpr std::uint32_t kPsn = 0xFFFFF8;  // wraps within the first message

class Count : public detail::PacketSink {
 public:
  void send_packet(std::uint32_t, std::uint32_t, const protocol::PacketHeaders& h,
                   protocol::ByteView) override {
    psns.push_back(h.bth.psn);
  }
  std::vector<std::uint32_t> psns;
};

struct Qp {
  detail::MrTable mrs{7};
  detail::RcCounters counters;
  Count sink;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(1 << 20, 0x5A);
  host::MemoryRegion mr;
  std::unique_ptr<detail::QpEngine> qp;
  Qp(bool irn, const detail::RcConfig& extra) {
    detail::RcConfig cfg = extra;
    cfg.qpn = 0x11;
    cfg.remote_qpn = 0x22;
    cfg.remote_ip = 0x0A000002;
    cfg.send_psn = kPsn;
    cfg.recv_psn = 5;
    cfg.mtu = kMtu;
    REQUIRE_FALSE(mrs.add(buf.data(), buf.size(), host::Access::local_write, mr));
    if (irn) {
      protocol::CapabilityBlock caps;
      caps.bdp_cap = 110;
      caps.rto_low = 5;   // 131 us
      caps.rto_high = 6;  // 262 us
      caps.low_threshold = 3;
      qp = std::make_unique<detail::IrnQp>(cfg, caps, mrs, sink, counters);
    } else {
      qp = std::make_unique<detail::RcQp>(cfg, mrs, sink, counters);
    }
  }
  void write(std::uint32_t packets, Clock::time_point now) {
    host::SendWr wr;
    wr.wr_id = 1;
    wr.opcode = host::WrOpcode::rdma_write;
    wr.sge = {reinterpret_cast<std::uint64_t>(buf.data()), packets * kMtu, mr.lkey};
    wr.remote_addr = 0x1000;
    wr.rkey = 9;
    REQUIRE_FALSE(qp->post_send(wr, now));
  }
};

}  // namespace

TEST_CASE("IRN timeouts as exact durations: RTO_low with at most N unSACKed, else RTO_high",
          "[irn][fabric]") {
  for (const bool exact : {false, true}) {
    INFO((exact ? "irn_rto 100 / 320 us" : "the negotiated exponents"));
    detail::RcConfig cfg;
    if (exact) {
      cfg.irn_rto_low = microseconds(100);
      cfg.irn_rto_high = microseconds(320);
    }
    Qp q(true, cfg);
    auto& irn = dynamic_cast<detail::IrnQp&>(*q.qp);
    CHECK(irn.timeout_for(3) == (exact ? microseconds(100) : std::chrono::nanoseconds(131072)));
    CHECK(irn.timeout_for(4) == (exact ? microseconds(320) : std::chrono::nanoseconds(262144)));
    const Clock::time_point t0{};
    q.write(10, t0);
    REQUIRE(q.sink.psns.size() == 10);
    // Armed when the first packet went out, alone in flight: RTO_low.
    REQUIRE(q.qp->next_deadline());
    CHECK(*q.qp->next_deadline() - t0 ==
          (exact ? microseconds(100) : std::chrono::nanoseconds(131072)));
  }
}

TEST_CASE("IRN wire timers: the retransmit timer starts when the first packet leaves the NIC",
          "[irn][fabric]") {
  const Clock::time_point t0{};
  SECTION("off: armed when the first packet is handed over; on_wire changes nothing") {
    Qp q(true, detail::RcConfig{});
    q.write(10, t0);
    REQUIRE(q.qp->next_deadline());
    CHECK(*q.qp->next_deadline() == t0 + std::chrono::nanoseconds(131072));  // 1 in flight then
    CHECK_FALSE(q.qp->on_wire(kPsn, t0 + microseconds(500)));
    CHECK(*q.qp->next_deadline() == t0 + std::chrono::nanoseconds(131072));
    q.qp->on_timer(t0 + microseconds(500));  // still in the NIC, yet it fires
    CHECK(q.counters.timeouts == 1);
  }
  SECTION("on: no timer while the packets wait in the NIC, then from the first departure") {
    detail::RcConfig cfg;
    cfg.wire_timers = true;
    Qp q(true, cfg);
    q.write(10, t0);
    REQUIRE(q.sink.psns.size() == 10);
    CHECK_FALSE(q.qp->next_deadline());
    // Held in a paused NIC for 1 ms: nothing fires (a timer from the hand-over would have).
    q.qp->on_timer(t0 + microseconds(1000));
    CHECK(q.counters.timeouts == 0);
    CHECK(q.sink.psns.size() == 10);
    const auto left = t0 + microseconds(1000);
    CHECK(q.qp->on_wire(kPsn, left));
    REQUIRE(q.qp->next_deadline());  // 10 in flight: RTO_high
    CHECK(*q.qp->next_deadline() == left + std::chrono::nanoseconds(262144));
    // Later departures do not move a running timer.
    CHECK_FALSE(q.qp->on_wire(kPsn + 1, left + microseconds(1)));
    CHECK(*q.qp->next_deadline() == left + std::chrono::nanoseconds(262144));
    // It fires from there: one timeout, a probe resent.
    q.qp->on_timer(left + std::chrono::nanoseconds(262144));
    CHECK(q.counters.timeouts == 1);
    CHECK(q.sink.psns.size() == 11);
  }
}

TEST_CASE("go-back-N window: 128 PSNs by default, gbn_max_unacked_psns more", "[fabric]") {
  for (const std::uint32_t window : {0U, 1000U}) {
    INFO("max_unacked_psns " << window);
    detail::RcConfig cfg;
    cfg.max_unacked_psns = window;
    Qp q(false, cfg);
    q.write(300, Clock::time_point{});
    CHECK(q.sink.psns.size() == (window == 0 ? 128U : 300U));
    CHECK(q.sink.psns.front() == kPsn);
  }
}
