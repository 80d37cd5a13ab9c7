// Transport::post_last_send's transmit turn (issue 31, docs/performance-cost.md item 49): on an
// IRN QP, the KernelEngine's last write-back WQE makes the transmit scheduler's turn at the post
// and books the packet's stage, only when nothing else can run before the scheduler's delta
// cycle. These tests hold it to what the scheduler's own turn (one delta cycle after the post)
// would do: the packet handed to TxPipe at the same simulated time, and no turn at the post when
// another process could still post on another QP in between. In-process, against stand-ins for
// the Transport's ports.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "model_context_rig.hpp"
#include "naa/sim/memory.hpp"
#include "naa/sim/transport.hpp"

namespace {

namespace s = naa::sim;
using sc_core::sc_time;

// TxPipe's place: records each packet's source QP and when it was handed over.
class TimedTx final : public s::PacketSink {
 public:
  explicit TimedTx(s::PacketPool& pool) : pool_(pool) {}
  void put(s::Packet* p) override {
    qpns.push_back(p->src_qpn);
    sizes.push_back(p->size);
    times.push_back(sc_core::sc_time_stamp());
    pool_.put(p);
  }
  std::vector<std::uint32_t> qpns;
  std::vector<std::size_t> sizes;
  std::vector<sc_time> times;

 private:
  s::PacketPool& pool_;
};

class NoConnectionEvents final : public s::ConnectionEvents {
 public:
  void established_by_data(s::Qp&) override {}
  void on_qp_error(s::Qp&) override { ++errors; }
  int errors = 0;
};
class NoMessages final : public s::MessageDelivery {
 public:
  void deliver(s::Qp&) override {}
};
class NoCalls final : public s::CallQueue {
 public:
  [[nodiscard]] bool can_accept(const s::Qp&) const override { return true; }
  void post_call(s::Qp&, std::uint32_t) override {}
};
class NoAccess final : public s::RemoteAccessCheck {
 public:
  [[nodiscard]] s::MrCheck check(std::uint32_t, std::uint64_t, std::uint64_t, std::uint8_t,
                                 std::uint32_t) override {
    return {};
  }
};

struct TransportRig {
  TransportRig() {
    transport.to_tx(tx);
    transport.cm(cm);
    transport.messages(messages);
    transport.calls(calls);
    transport.access(access);
    transport.mem.bind_memory(memory, memory.socket);
    // QPs 0 and 1 connected with IRN, as the CM agent leaves them (docs/protocol.md 8.1).
    for (std::uint32_t i = 0; i < 2; ++i) {
      s::Qp& qp = model.qps[i];
      qp.claim(i);
      qp.peer_ip = 0x0A000002;
      qp.peer_qpn = 0x200 + i;
      qp.irn = true;
      transport.init_qp(qp, 0, 0);
      qp.state = s::QpState::rts;
    }
  }
  [[nodiscard]] std::uint64_t stat(const std::string& key) const {
    return naa::testbench::reported(transport, key);
  }

  naa::testbench::ModelContextRig model;
  s::Memory memory{"memory", model.cfg};
  s::Transport transport{"transport", model.ctx};
  naa::testbench::UnusedMemoryInitiators unused{
      "unused", memory, {&memory.kernel_socket, &memory.handler_socket}};
  TimedTx tx{model.pool};
  NoConnectionEvents cm;
  NoMessages messages;
  NoCalls calls;
  NoAccess access;
};

// A zero-length RDMA WRITE: one packet, no payload to read from memory.
s::SendWqe empty_write() {
  s::SendWqe w;
  w.op = s::SendWqe::Op::write;
  return w;
}

enum class Beside {
  nothing,      // the poster is all that runs: the post makes the scheduler's turn
  delta_event,  // a delta notification is pending (its process posts nothing)
  runnable,     // another process is runnable now and posts a WRITE on QP 0
};

struct PostRun {
  std::uint64_t turns_at_post = 0;
  std::vector<std::uint32_t> qpns;
  std::vector<sc_time> after_post;  // each packet's hand-over to TxPipe, from the post
  sc_time stage;                    // the Transport's stage for the first packet
};

// At 1 us the poster posts a WRITE on QP 1 with post_last_send (as the KernelEngine posts its
// last write-back WQE); `beside` says what else happens at that instant.
PostRun post_once(Beside beside) {
  TransportRig rig;
  sc_core::sc_event other;
  const sc_time at(1, sc_core::SC_US);
  sc_core::sc_spawn(
      [&] {
        for (;;) {
          sc_core::wait(other);
          if (beside == Beside::runnable) rig.transport.post_send(rig.model.qps[0], empty_write());
        }
      },
      "beside");
  sc_core::sc_spawn(
      [&] {
        sc_core::wait(at);
        if (beside == Beside::delta_event) other.notify(sc_core::SC_ZERO_TIME);
        if (beside == Beside::runnable) other.notify();
        rig.transport.post_last_send(rig.model.qps[1], empty_write());
      },
      "poster");
  sc_core::sc_start(sc_time(10, sc_core::SC_US));
  PostRun r;
  r.turns_at_post = rig.stat("activity.transport.tx_turns_at_post");
  r.qpns = rig.tx.qpns;
  for (const sc_time& t : rig.tx.times)
    r.after_post.push_back(t - at);
  const s::SimConfig& cfg = rig.model.cfg;
  if (!rig.tx.sizes.empty()) {
    r.stage = cfg.cycle() * static_cast<double>(s::SimConfig::stage_cycles(
                                rig.tx.sizes[0], cfg.width, cfg.transport_latency));
  }
  CHECK(rig.cm.errors == 0);
  return r;
}

}  // namespace

// Each case builds its own model: CTest runs every test case in a process of its own.

TEST_CASE(
    "transport post: the transmit turn made at the post, the packet handed over after its "
    "stage",
    "[sim][irn]") {
  const PostRun r = post_once(Beside::nothing);
  CHECK(r.turns_at_post == 1);
  REQUIRE(r.qpns.size() == 1);
  CHECK(r.qpns[0] == 0x101);
  CHECK(r.after_post[0] == r.stage);
}

TEST_CASE("transport post: with a delta notification pending the scheduler turns, at the same time",
          "[sim][irn]") {
  const PostRun r = post_once(Beside::delta_event);
  CHECK(r.turns_at_post == 0);  // sc_pending_activity_at_current_time(): the scheduler turns
  REQUIRE(r.qpns.size() == 1);
  CHECK(r.qpns[0] == 0x101);
  CHECK(r.after_post[0] == r.stage);
}

// The race the guard is for: another process, runnable when the post is made, posts on QP 0. The
// scheduler's own turn, one delta cycle later, scans the QPs round-robin from QP 0 and sends QP
// 0's packet first; a turn made at the post would have sent QP 1's first.
TEST_CASE("transport post: a post on another QP beside it is scanned as the scheduler would",
          "[sim][irn]") {
  const PostRun r = post_once(Beside::runnable);
  CHECK(r.turns_at_post == 0);
  REQUIRE(r.qpns.size() == 2);
  CHECK(r.qpns == std::vector<std::uint32_t>{0x100, 0x101});
  CHECK(r.after_post[0] == r.stage);
}
