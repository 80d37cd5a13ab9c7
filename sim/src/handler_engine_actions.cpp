// HandlerEngine, what handlers do (handler_engine.hpp, docs/spin.md): an invocation's context,
// the header handler and the fate of its message (seed 004 3.2.1, B.3), the checked actions and the
// engine's statistics. The HPU pool, flow control and the calls are in handler_engine.cpp.
#include <algorithm>

#include "naa/protocol/mrsp.hpp"
#include "naa/sim/handler_engine.hpp"

namespace naa::sim {

HandlerContext HandlerEngine::context(std::uint32_t hpu_index, std::uint32_t qp_index,
                                      std::uint32_t generation, const Descriptor& d,
                                      const std::vector<Region>& regions, CallState& call,
                                      CycleMeter& meter) {
  HandlerContext hc;
  hc.hpu = hpu_index;
  hc.hpus = ctx_.cfg.hpus;
  hc.width = ctx_.cfg.hpu_width;
  hc.arg = d.arg;
  hc.state = call.state;
  hc.regions = regions;
  hc.kernel = kernels_.find(d.fn);
  hc.kernel_runs = &kernel_runs_[d.fn];
  hc.read = dma_reader(regions, meter);
  Counters& c = counters_[qp_index];
  if (c.generation != generation) c = Counters{generation, {}};  // a new connection: zeros
  hc.counters = &c.events;
  return hc;
}

HandlerEngine::MessageFate HandlerEngine::run_header(HandlerContext& hc, CallState& call, Qp& qp,
                                                     const Task& t, const Handler& h,
                                                     const HeaderArgs& args,
                                                     const std::vector<Region>& regions,
                                                     CycleMeter& meter) {
  // An unordered connection (IRN) starts a message at the first of its packets to arrive, which
  // need not carry the user header, and a packet cannot be told to belong to one message rather
  // than another: such handlers are refused there (docs/spin.md "Return codes").
  if (qp.irn && h.user_header_bytes() != 0) {
    ++unordered_;
    if (call.rc == 0) fail(call, kRcHandlerUnordered);
    return MessageFate::process;
  }
  const HandlerRun hr = watchdog(h.header(hc, args), call);
  handler_cycles_ += hr.cycles;
  meters_[hc.hpu]->spend(hr.cycles);
  ++headers_;
  const bool valid =
      qp.generation == t.generation && qp.state == QpState::rts && call.generation == t.generation;
  if (!valid) return MessageFate::process;
  switch (hr.rc) {
    case HandlerRc::fail:
      if (call.rc == 0) fail(call, kRcHandlerFail);
      return MessageFate::process;
    case HandlerRc::segv:
      ++segv_;
      fail(call, kRcHandlerSegv);
      return MessageFate::process;
    case HandlerRc::success:
    case HandlerRc::drop:
    case HandlerRc::proceed:
      break;
  }
  // The header handler's own actions (its DMA, puts), all or none, before its payload handlers.
  if (call.rc == 0) (void)apply(qp, t.generation, regions, hc.actions, false, 0, meter);
  hc.actions.clear();
  if (hr.rc == HandlerRc::success) return MessageFate::process;
  if (qp.irn) {
    ++unordered_;
    if (call.rc == 0) fail(call, kRcHandlerUnordered);
    return MessageFate::process;
  }
  ++(hr.rc == HandlerRc::drop ? dropped_messages_ : proceeded_messages_);
  return hr.rc == HandlerRc::drop ? MessageFate::drop : MessageFate::proceed;
}

bool HandlerEngine::apply(Qp& qp, std::uint32_t generation, const std::vector<Region>& regions,
                          std::vector<HandlerContext::Action>& actions, bool with_imm,
                          std::uint32_t imm, CycleMeter& meter) {
  using Kind = HandlerContext::Action::Kind;
  CallState& call = calls_[static_cast<std::size_t>(&qp - ctx_.qps.data())];
  // All or nothing: every action is checked against the call's regions before any is applied.
  for (const auto& a : actions) {
    if (a.kind == Kind::peer_device || a.kind == Kind::peer_host) {
      if (!peer_action_ok(qp, regions, a)) {  // no such peer, or outside its region: SEGV
        ++segv_;
        fail(call, kRcHandlerSegv);
        return false;
      }
      continue;
    }
    const bool in_range = a.region < regions.size();
    const Region* reg = in_range ? &regions[a.region] : nullptr;
    const std::uint64_t len = a.kind == Kind::write_back ? a.length : a.bytes.size();
    bool ok = reg != nullptr && a.offset <= reg->size && len <= reg->size - a.offset;
    if (ok && a.kind != Kind::deposit) {
      ok = (reg->flags & protocol::kMrspFlagOutput) != 0 &&
           (reg->flags & protocol::kMrspFlagInternal) == 0;
    }
    if (ok && a.kind == Kind::reply) ok = len <= qp.mtu;
    if (!ok) {
      ++segv_;
      fail(call, kRcHandlerSegv);
      return false;
    }
  }
  for (std::size_t n = 0; n < actions.size(); ++n) {
    auto& a = actions[n];
    if (qp.generation != generation || qp.state != QpState::rts) return false;
    if (a.kind == Kind::peer_device || a.kind == Kind::peer_host) {
      post_peer_put(qp, generation, regions, a, meter);  // never carries the call's result
      continue;
    }
    const Region& reg = regions[a.region];
    const bool last = n + 1 == actions.size();
    if (a.kind == Kind::deposit) {
      ++deposits_;
      if (!a.bytes.empty()) {
        dma_.push_back(Deposit{reg.naa_address + a.offset, std::move(a.bytes),
                               static_cast<std::uint32_t>(&qp - ctx_.qps.data()), generation});
        ++deposits_pushed_;
        dma_work_.notify(sc_core::SC_ZERO_TIME);
      }
      continue;
    }
    SendWqe w;
    w.op = SendWqe::Op::write;
    w.remote_va = reg.host_va + a.offset;
    w.rkey = reg.host_rkey;
    if (a.kind == Kind::reply) {
      ++replies_;
      w.data = std::move(a.bytes);
    } else {
      wait_deposits();  // the region must hold every deposit before it is read back
      w.data.resize(a.length);
      if (a.length != 0 && !mem.read(reg.naa_address + a.offset, w.data.data(), a.length, meter)) {
        model_fatal(name(), "write-back outside the memory");
      }
      if (qp.generation != generation || qp.state != QpState::rts) return false;
    }
    if (last && with_imm) {
      w.imm = imm;
      w.solicited = true;
      with_imm = false;
    }
    sends->post_send(qp, std::move(w));
  }
  if (with_imm) {  // nothing carried the result: a zero-length WRITE_WITH_IMM (PROTOCOL.md 5.2)
    SendWqe w;
    w.op = SendWqe::Op::write;
    w.imm = imm;
    w.solicited = true;
    sends->post_send(qp, std::move(w));
  }
  return true;
}

void HandlerEngine::report(std::ostream& os) const {
  std::uint64_t busy = 0;
  for (const auto& m : meters_)
    busy += m->busy_cycles();
  os << "handler.hpus=" << ctx_.cfg.hpus << '\n'
     << "handler.busy_cycles=" << busy << '\n'
     << "handler.compute_cycles=" << handler_cycles_ << '\n'
     << "handler.headers=" << headers_ << '\n'
     << "handler.payloads=" << payloads_ << '\n'
     << "handler.completions=" << completions_ << '\n'
     << "handler.duplicates=" << duplicates_ << '\n'
     << "handler.held=" << held_ << '\n'
     << "handler.rnr_naks=" << rnr_ << '\n'
     << "handler.flow_control_calls=" << flow_control_calls_ << '\n'
     << "handler.completion_saw_flow_control=" << completions_saw_flow_control_ << '\n'
     << "handler.dropped_packets=" << dropped_packets_ << '\n'
     << "handler.failed=" << failed_ << '\n'
     << "handler.segv=" << segv_ << '\n'
     << "handler.timeouts=" << timeouts_ << '\n'
     << "handler.dma_reads=" << dma_reads_ << '\n'
     << "handler.memory_exceeded=" << memory_exceeded_ << '\n'
     << "handler.mismatched_function=" << mismatched_fn_ << '\n'
     << "handler.deposits=" << deposits_ << '\n'
     << "handler.replies=" << replies_ << '\n'
     << "handler.first_payload_handover_ps=" << first_handover_ps_ << '\n'
     << "handler.first_payload_start_ps=" << first_start_ps_ << '\n'
     << "handler.max_idle_start_delay_cycles=" << max_idle_start_delay_cycles_ << '\n';
  // Only once a handler put to a peer or a handed-over connection ended a call (sparse).
  if (peer_puts_ + peer_ends_ + unanswered_calls_ != 0) {
    os << "handler.peer_puts=" << peer_puts_ << '\n'
       << "handler.peer_bytes=" << peer_bytes_ << '\n'
       << "handler.peer_ends=" << peer_ends_ << '\n'
       << "handler.unanswered_calls=" << unanswered_calls_ << '\n'
       << "handler.peer_blocked=" << peer_blocked_ << '\n'
       << "handler.peer_max_outstanding=" << peer_max_outstanding_ << '\n';
  }
  // Only once a header handler dropped or proceeded a message (sparse, like the images').
  if (dropped_messages_ + proceeded_messages_ + unordered_ != 0) {
    os << "handler.dropped_messages=" << dropped_messages_ << '\n'
       << "handler.proceeded_messages=" << proceeded_messages_ << '\n'
       << "handler.proceeded_packets=" << proceeded_packets_ << '\n'
       << "handler.unordered_refused=" << unordered_ << '\n';
  }
  if (images_installed_ + images_refused_ != 0) {  // only once a host installed one (sparse)
    os << "handler.images_installed=" << images_installed_ << '\n'
       << "handler.images_refused=" << images_refused_ << '\n';
  }
  for (std::size_t fn = 0; fn < kernel_runs_.size(); ++fn) {
    if (kernel_runs_[fn] == 0) continue;
    const Kernel* k = kernels_.find(static_cast<std::uint8_t>(fn));
    os << "handler.kernel_runs." << (k != nullptr ? k->name() : "fn") << '=' << kernel_runs_[fn]
       << '\n';
  }
}

}  // namespace naa::sim
