#include "naa/sim/tx_pipe.hpp"

#include "naa/protocol/icrc.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/sim/icrc_headers.hpp"

namespace naa::sim {

TxPipe::TxPipe(sc_core::sc_module_name name, ModelContext& ctx)
    : sc_module(name), ctx_(ctx), in_(64, this, &TxPipe::service), meter_(ctx.cfg) {
  SC_THREAD(thread);
}

sc_core::sc_time TxPipe::service(void* self, const Packet& p, sc_core::sc_time /*start*/) {
  auto* stage = static_cast<TxPipe*>(self);
  const std::uint64_t cycles = stage->stage_cycles(p);
  stage->meter_.account(cycles);
  return stage->meter_.times(cycles);
}

void TxPipe::put(Packet* p) {
  const sc_core::sc_time now = sim_now();
  if (in_.can_book_at(now)) {
    // The stage's time computed once: for the hand-over and for the booking (issue 31).
    const std::uint64_t cycles = stage_cycles(*p);
    const sc_core::sc_time done = now + meter_.times(cycles);
    // The ICRC first: the port may put the packet on the wire at once. A packet it does not
    // take goes through the stage's process, which writes the same ICRC again.
    finish_icrc(p);
    if (to_net->try_put_at(p, done)) {
      meter_.account(cycles);  // the stage's time, counted busy (as service() would)
      (void)in_.book(now, now, done);
      count(p);
      return;
    }
  }
  in_.put(p);
}

void TxPipe::finish_icrc(Packet* p) {
  // The ICRC covers the IPv4/UDP headers that will really be on the wire: our address, the
  // QP's actual source port (4791 if its own could not be bound), ID 0 (PROTOCOL.md 1 and 2).
  const auto h =
      icrc_headers(addresses->local_ip(), addresses->source_port(p->src_qpn), p->peer_ip, p->size);
  protocol::write_icrc(h, {p->data.data(), p->size});
}

void TxPipe::thread() {
  for (;;) {
    Packet* p = in_.next();  // after the stage's time (StageQueue)
    finish_icrc(p);
    count(p);
    to_net->put(p);
  }
}

void TxPipe::report(std::ostream& os) const {
  os << "tx_pipe.cycles=" << meter_.busy_cycles() << '\n'
     << "tx_pipe.packets=" << packets_ << '\n'
     << "tx_pipe.bytes=" << bytes_ << '\n';
}

}  // namespace naa::sim
