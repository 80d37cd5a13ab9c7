// RDMA READ on IRN (docs/protocol.md 8.5; seed 001 "Supporting RDMA Reads and Atomics"): two of
// the host's IRN queue pairs (host/src/irn_qp.hpp, a pure state machine) wired back to back
// through a scripted wire that drops, duplicates and reorders packets one by one. The oracle is
// the wire itself: every packet is encoded and decoded by the protocol library, and the test
// reads the requester's IRN ACKs (the read (N)ACKs), the responder's retransmissions and the
// bytes placed in the requester's buffer.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <random>

#include "irn_qp.hpp"
#include "naa/protocol/opcode.hpp"
#include "naa/protocol/packet.hpp"

namespace host = naa::host;
namespace detail = naa::host::detail;
namespace protocol = naa::protocol;
namespace op = naa::protocol::opcode;
using detail::Clock;

namespace {

constexpr std::uint32_t kMtu = 1024;
constexpr std::uint32_t kRequesterPsn = 100;       // the requester's stream (its requests)
constexpr std::uint32_t kResponderPsn = 0xFFFFFE;  // the responder's stream (its responses), wraps

struct Sent {
  std::vector<std::uint8_t> bytes;
  protocol::PacketHeaders headers;
  std::size_t payload = 0;
};

// Collects what a QP sends, as bytes on the wire.
class Wire : public detail::PacketSink {
 public:
  void send_packet(std::uint32_t, std::uint32_t, const protocol::PacketHeaders& h,
                   protocol::ByteView payload) override {
    Sent s;
    s.bytes.resize(protocol::packet_size(h, payload.size()));
    const auto n = protocol::encode_packet(h, payload, s.bytes);
    REQUIRE(n);
    s.bytes.resize(*n);
    s.headers = h;
    s.payload = payload.size();
    queue.push_back(std::move(s));
    log.push_back(queue.back());
  }
  std::deque<Sent> queue;  // not yet delivered
  std::vector<Sent> log;   // everything ever sent
};

struct Side {
  detail::MrTable mrs;
  detail::RcCounters counters;
  Wire wire;
  std::unique_ptr<detail::IrnQp> qp;
  explicit Side(std::uint64_t seed, std::uint32_t send_psn, std::uint32_t recv_psn) : mrs(seed) {
    detail::RcConfig cfg;
    cfg.qpn = 0x11;
    cfg.remote_qpn = 0x11;
    cfg.remote_ip = 0x7F000001;
    cfg.send_psn = send_psn;
    cfg.recv_psn = recv_psn;
    cfg.mtu = kMtu;
    cfg.max_reads_outstanding = 4;
    protocol::CapabilityBlock caps;
    caps.bdp_cap = 128;
    caps.rto_low = 5;  // 131 us
    caps.rto_high = 7;
    qp = std::make_unique<detail::IrnQp>(cfg, caps, mrs, wire, counters);
  }
};

// The requester and responder, and a clock the test moves.
struct Pair {
  Side req{1, kRequesterPsn, kResponderPsn};
  Side rsp{2, kResponderPsn, kRequesterPsn};
  Clock::time_point now{};
  std::vector<std::uint8_t> remote, local;
  host::MemoryRegion remote_mr, local_mr;

  explicit Pair(std::size_t size) : remote(size), local(size, 0xEE) {
    std::mt19937_64 rng(size);
    for (auto& b : remote)
      b = static_cast<std::uint8_t>(rng());
    REQUIRE_FALSE(rsp.mrs.add(remote.data(), remote.size(),
                              host::Access::remote_read | host::Access::remote_write, remote_mr));
    REQUIRE_FALSE(req.mrs.add(local.data(), local.size(), host::Access::local_write, local_mr));
  }
  host::SendWr read(std::uint64_t id, std::size_t offset, std::uint32_t len) {
    host::SendWr wr;
    wr.wr_id = id;
    wr.opcode = host::WrOpcode::rdma_read;
    wr.sge = {reinterpret_cast<std::uint64_t>(local.data() + offset), len, local_mr.lkey};
    wr.remote_addr = reinterpret_cast<std::uint64_t>(remote.data() + offset);
    wr.rkey = remote_mr.rkey;
    return wr;
  }
  // Delivers the packets queued at `from` to `to`; `keep` decides each one's fate: true
  // delivers, false drops.
  static void deliver(Side& from, Side& to, Clock::time_point now,
                      const std::function<bool(const Sent&)>& keep = nullptr) {
    std::deque<Sent> q;
    q.swap(from.wire.queue);
    for (const Sent& s : q) {
      if (keep && !keep(s)) continue;
      const auto v = protocol::decode_packet(s.bytes);
      REQUIRE(v);
      to.qp->on_packet(*v, now);
    }
  }
  std::vector<host::WorkCompletion> poll(Side& s) {
    std::vector<host::WorkCompletion> out(16);
    out.resize(s.qp->poll(out));
    return out;
  }
};

bool is_response(const Sent& s) {
  return s.headers.bth.opcode >= op::kIrnReadResponseFirst &&
         s.headers.bth.opcode <= op::kIrnReadResponseOnly;
}
std::uint32_t psn_of(std::uint32_t base, std::uint32_t k) {
  return protocol::psn_add(base, k);
}

}  // namespace

TEST_CASE("IRN READ: the request carries RETH and read_WQE_SN, the responses their offsets",
          "[irn][read]") {
  Pair p(3 * kMtu + 100);
  REQUIRE_FALSE(p.req.qp->post_send(p.read(1, 0, 3 * kMtu + 100), p.now));
  REQUIRE(p.req.wire.queue.size() == 1);
  const Sent& rq = p.req.wire.queue.front();
  CHECK(rq.headers.bth.opcode == op::kIrnReadRequest);
  CHECK(rq.headers.bth.psn == kRequesterPsn);
  REQUIRE(rq.headers.reth);
  CHECK(rq.headers.reth->dma_length == 3 * kMtu + 100);
  REQUIRE(rq.headers.irn_eth);
  CHECK(rq.headers.irn_eth->recv_wqe_sn == 0);  // read_WQE_SN of the first READ
  Pair::deliver(p.req, p.rsp, p.now);
  // The responder's stream: ACK of the request, then 4 responses First, Middle x2, Last.
  std::vector<Sent> responses;
  for (const Sent& s : p.rsp.wire.queue)
    if (is_response(s)) responses.push_back(s);
  REQUIRE(responses.size() == 4);
  const std::uint8_t want[] = {op::kIrnReadResponseFirst, op::kIrnReadResponseMiddle,
                               op::kIrnReadResponseMiddle, op::kIrnReadResponseLast};
  for (std::uint32_t k = 0; k < 4; ++k) {
    CHECK(responses[k].headers.bth.opcode == want[k]);
    CHECK(responses[k].headers.bth.psn == psn_of(kResponderPsn, k));  // the responder's PSNs
    CHECK(responses[k].headers.irn_eth == protocol::IrnEth{0, k});
    CHECK(responses[k].payload == (k < 3 ? kMtu : 100));
  }
  Pair::deliver(p.rsp, p.req, p.now);
  const auto wc = p.poll(p.req);
  REQUIRE(wc.size() == 1);
  CHECK_FALSE(wc[0].status);
  CHECK(wc[0].opcode == host::WcOpcode::rdma_read);
  CHECK(wc[0].byte_len == 3 * kMtu + 100);
  CHECK(p.local == p.remote);
}

TEST_CASE("IRN READ: a lost response is NACKed by the requester and resent by the responder",
          "[irn][read]") {
  Pair p(8 * kMtu);
  REQUIRE_FALSE(p.req.qp->post_send(p.read(7, 0, 8 * kMtu), p.now));
  Pair::deliver(p.req, p.rsp, p.now);
  const std::uint32_t lost = psn_of(kResponderPsn, 2);
  // Response 2 lost, the others arrive in reverse order (out-of-order placement).
  std::reverse(p.rsp.wire.queue.begin(), p.rsp.wire.queue.end());
  Pair::deliver(p.rsp, p.req, p.now, [&](const Sent& s) {
    return s.headers.bth.opcode == op::kIrnAcknowledge || s.headers.bth.psn != lost;
  });
  CHECK(p.poll(p.req).empty());  // not complete with a hole
  // The requester's ACKs are the read (N)ACKs: the last one says everything up to response 1
  // arrived (cumulative = lost - 1), NAK 0x60 (a hole), and the SACK bitmap shows 3..7.
  const Sent& nack = p.req.wire.queue.back();
  REQUIRE(nack.headers.bth.opcode == op::kIrnAcknowledge);
  CHECK(nack.headers.bth.psn == psn_of(kResponderPsn, 1));
  REQUIRE(nack.headers.aeth);
  CHECK(nack.headers.aeth->syndrome == protocol::kNakPsnSequenceError);
  REQUIRE(nack.headers.sack_eth);
  CHECK(nack.headers.sack_eth->bitmap == 0x1F);  // PSNs lost + 1 .. lost + 5 (responses 3..7)
  // Only that last ACK reaches the responder (the others are lost): it resends exactly the lost
  // response at once (no timer: now has not moved).
  const std::size_t acks = p.req.wire.queue.size();
  std::size_t i = 0;
  Pair::deliver(p.req, p.rsp, p.now, [&](const Sent&) { return ++i == acks; });
  REQUIRE(p.rsp.wire.queue.size() == 1);
  const Sent& again = p.rsp.wire.queue.front();
  CHECK(again.headers.bth.psn == lost);
  CHECK(again.headers.bth.opcode == op::kIrnReadResponseMiddle);
  CHECK(again.headers.irn_eth == protocol::IrnEth{0, 2});
  CHECK(p.rsp.counters.retransmitted_packets == 1);
  CHECK(p.rsp.counters.timeouts == 0);
  Pair::deliver(p.rsp, p.req, p.now);
  const auto wc = p.poll(p.req);
  REQUIRE(wc.size() == 1);
  CHECK(wc[0].wr_id == 7);
  CHECK_FALSE(wc[0].status);
  CHECK(p.local == p.remote);
  CHECK(p.req.qp->irn_counters().read_responses_placed == 8);
}

TEST_CASE(
    "IRN READ: a lost last response comes back on the responder's timer, duplicates are "
    "placed once",
    "[irn][read]") {
  Pair p(4 * kMtu);
  REQUIRE_FALSE(p.req.qp->post_send(p.read(3, 0, 4 * kMtu), p.now));
  Pair::deliver(p.req, p.rsp, p.now);
  const std::uint32_t last = psn_of(kResponderPsn, 3);
  Pair::deliver(p.rsp, p.req, p.now, [&](const Sent& s) { return s.headers.bth.psn != last; });
  Pair::deliver(p.req, p.rsp, p.now);  // ACKs of responses 0..2: nothing shows the tail lost
  CHECK(p.rsp.wire.queue.empty());
  const auto deadline = p.rsp.qp->next_deadline();
  REQUIRE(deadline);  // the responder's retransmit timer (seed 001: Read responder timeouts)
  p.now = *deadline;
  p.rsp.qp->on_timer(p.now);
  CHECK(p.rsp.counters.timeouts == 1);
  REQUIRE(p.rsp.wire.queue.size() == 1);
  CHECK(p.rsp.wire.queue.front().headers.bth.psn == last);
  // Delivered twice: placed once, the second answered as a duplicate.
  p.rsp.wire.queue.push_back(p.rsp.wire.queue.front());
  Pair::deliver(p.rsp, p.req, p.now);
  CHECK(p.req.counters.duplicates_received == 1);
  const auto wc = p.poll(p.req);
  REQUIRE(wc.size() == 1);
  CHECK(p.local == p.remote);
  CHECK(p.req.qp->irn_counters().read_responses_placed == 4);
  // The responder's stream is acknowledged in full: no timer left.
  Pair::deliver(p.req, p.rsp, p.now);
  CHECK_FALSE(p.rsp.qp->next_deadline());
}

TEST_CASE("IRN READ: a READ executes only when every packet before it arrived, and only once",
          "[irn][read]") {
  Pair p(2 * kMtu);
  // A WRITE of new bytes, then a READ of the same bytes: the READ must see the WRITE.
  std::vector<std::uint8_t> fresh(2 * kMtu);
  for (std::size_t i = 0; i < fresh.size(); ++i)
    fresh[i] = static_cast<std::uint8_t>(i * 7 + 3);
  host::MemoryRegion fresh_mr;
  REQUIRE_FALSE(p.req.mrs.add(fresh.data(), fresh.size(), host::Access::local_write, fresh_mr));
  host::SendWr w;
  w.wr_id = 1;
  w.opcode = host::WrOpcode::rdma_write;
  w.sge = {reinterpret_cast<std::uint64_t>(fresh.data()), 2 * kMtu, fresh_mr.lkey};
  w.remote_addr = reinterpret_cast<std::uint64_t>(p.remote.data());
  w.rkey = p.remote_mr.rkey;
  REQUIRE_FALSE(p.req.qp->post_send(w, p.now));
  REQUIRE_FALSE(p.req.qp->post_send(p.read(2, 0, 2 * kMtu), p.now));
  REQUIRE(p.req.wire.queue.size() == 3);  // WRITE First, Last, READ request
  const Sent write_first = p.req.wire.queue[0];
  // WRITE First delayed: the READ request arrives before it, is held, and answers nothing.
  Pair::deliver(p.req, p.rsp, p.now,
                [&](const Sent& s) { return s.headers.bth.opcode != op::kIrnWriteFirst; });
  for (const Sent& s : p.rsp.wire.queue)
    CHECK_FALSE(is_response(s));
  CHECK(p.rsp.qp->irn_counters().reads_executed == 0);
  // The READ request again (a retransmission) while held: still one READ.
  p.req.wire.queue.push_back(p.req.wire.log[2]);
  p.req.wire.queue.push_back(write_first);
  Pair::deliver(p.req, p.rsp, p.now);
  CHECK(p.rsp.qp->irn_counters().reads_executed == 1);
  Pair::deliver(p.rsp, p.req, p.now);
  // The READ request once more after it executed: a duplicate, no second set of responses.
  p.req.wire.queue.push_back(p.req.wire.log[2]);
  Pair::deliver(p.req, p.rsp, p.now);
  CHECK(p.rsp.qp->irn_counters().reads_executed == 1);
  for (const Sent& s : p.rsp.wire.queue)
    CHECK_FALSE(is_response(s));
  Pair::deliver(p.rsp, p.req, p.now);
  const auto wc = p.poll(p.req);
  REQUIRE(wc.size() == 2);  // in posting order
  CHECK(wc[0].wr_id == 1);
  CHECK(wc[0].opcode == host::WcOpcode::rdma_write);
  CHECK(wc[1].wr_id == 2);
  CHECK(wc[1].opcode == host::WcOpcode::rdma_read);
  CHECK(p.local == fresh);
}

TEST_CASE("IRN READ: a response for no READ of ours, or of the wrong shape, fails the QP",
          "[irn][read]") {
  Pair p(2 * kMtu);
  REQUIRE_FALSE(p.req.qp->post_send(p.read(1, 0, 2 * kMtu), p.now));
  Pair::deliver(p.req, p.rsp, p.now);
  Sent bad;
  for (const Sent& s : p.rsp.wire.queue)
    if (is_response(s) && s.headers.irn_eth->packet_offset == 1) bad = s;
  REQUIRE_FALSE(bad.bytes.empty());
  p.rsp.wire.queue.clear();
  SECTION("an unknown read_WQE_SN") {
    protocol::PacketHeaders h = bad.headers;
    h.irn_eth->recv_wqe_sn = 5;
    p.rsp.wire.send_packet(0, 0, h, std::vector<std::uint8_t>(bad.payload, 1));
  }
  SECTION("a Last response at an offset that is not the last") {
    protocol::PacketHeaders h = bad.headers;
    h.irn_eth->packet_offset = 0;
    p.rsp.wire.send_packet(0, 0, h, std::vector<std::uint8_t>(bad.payload, 1));
  }
  Pair::deliver(p.rsp, p.req, p.now);
  CHECK(p.req.qp->error() == host::Errc::remote_invalid_request);
  const auto wc = p.poll(p.req);
  REQUIRE(wc.size() == 1);
  CHECK(wc[0].status);
  CHECK(p.req.wire.queue.back().headers.aeth->syndrome == protocol::kNakInvalidRequest);
}

TEST_CASE("IRN READ: the initiator depth bounds the READs in flight", "[irn][read]") {
  Pair p(8 * kMtu);
  for (std::uint64_t i = 0; i < 6; ++i)
    REQUIRE_FALSE(p.req.qp->post_send(p.read(i, i * kMtu, kMtu), p.now));
  CHECK(p.req.wire.queue.size() == 4);  // max_reads_outstanding
  std::size_t done = 0;
  for (int round = 0; round < 4; ++round) {
    Pair::deliver(p.req, p.rsp, p.now);
    Pair::deliver(p.rsp, p.req, p.now);
    done += p.poll(p.req).size();
  }
  CHECK(done == 6);
  CHECK(std::equal(p.local.begin(), p.local.begin() + 6 * kMtu, p.remote.begin()));
}
