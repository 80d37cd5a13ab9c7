// HandlerEngine: the HPU pool, flow control, the per-call state and the actions' checks
// (handler_engine.hpp, docs/sim/handler_engine.md). The built-in handlers are in handlers.cpp.
#include "naa/sim/handler_engine.hpp"

// sc_spawn for the HPUs (see kernel_engine.cpp).
#include <sysc/kernel/sc_dynamic_processes.h>

#include <algorithm>

#include "naa/protocol/immediate.hpp"
#include "naa/protocol/mrsp.hpp"

namespace naa::sim {
namespace {

constexpr std::uint8_t kDescriptorFlags = protocol::kMrspFlagInternal | protocol::kMrspFlagStream;
constexpr std::uint8_t kStreamInputFlags = protocol::kMrspFlagInput | protocol::kMrspFlagStream;

bool is_stream_input(const Region& r) {
  return (r.flags & protocol::kMrspFlagInternal) == 0 &&
         (r.flags & kStreamInputFlags) == kStreamInputFlags;
}

std::uint64_t ps_of(const sc_core::sc_time& t) {
  return static_cast<std::uint64_t>(t.to_seconds() * 1e12 + 0.5);
}

}  // namespace

HandlerEngine::HandlerEngine(sc_core::sc_module_name name, ModelContext& ctx,
                             HandlerRegistry registry, const KernelRegistry& kernels)
    : sc_module(name),
      mem("mem"),
      ctx_(ctx),
      registry_(std::move(registry)),
      kernels_(kernels),
      calls_(ctx.qps.size()) {
  installed_.resize(ctx.qps.size());
  stream_summary_.resize(ctx.qps.size());
  counters_.resize(ctx.qps.size());
  install_meter_ = std::make_unique<CycleMeter>(ctx.cfg);
  if (ctx.cfg.hpus == 0 || ctx.cfg.hpus > 256)
    model_fatal("handler_engine", "--hpus must be 1..256");
  dma_meter_ = std::make_unique<CycleMeter>(ctx.cfg);
  SC_THREAD(dma_thread);
  for (std::uint32_t i = 0; i < ctx.cfg.hpus; ++i) {
    meters_.push_back(std::make_unique<CycleMeter>(ctx.cfg));
    sc_core::sc_spawn_options opts;
    sc_core::sc_spawn([this, i] { hpu(i); }, sc_core::sc_gen_unique_name("hpu"), &opts);
  }
}

std::optional<HandlerEngine::Descriptor> HandlerEngine::descriptor(const Qp& qp) const {
  // docs/protocol.md "Streaming regions": an INTERNAL|STREAM entry; its host rkey field holds
  // the function code, its host VA field the handler's argument, its size the HPU state.
  for (const Region& r : directory->regions(qp.qpn)) {
    if ((r.flags & kDescriptorFlags) == kDescriptorFlags) {
      return Descriptor{static_cast<std::uint8_t>(r.host_rkey & 0x7FU), r.host_va, r.size};
    }
  }
  return std::nullopt;
}

// owns_calls() is "a descriptor and a stream input", streams() "a descriptor and a stream input
// holding va" (such an input is a stream input), so streams() is false wherever owns_calls() is.
// The Transport asks both for every WRITE packet and call completion (issue 31: 67 + 2 x 17 for
// the directory per nop call, on connections that never stream). The answer of owns_calls() is
// kept per connection: a connection's regions change only in MrspHandler's 0x01 request and its
// release, and both call uninstall() (which forgets the answer) before or after changing them
// with no wait between, so the next question after a change sees the new regions. The
// generation covers a QP taken by a new connection, and a free QP has no regions (regions()).
bool HandlerEngine::owns_calls(const Qp& qp) const {
  StreamSummary& known = stream_summary_[static_cast<std::size_t>(&qp - ctx_.qps.data())];
  if (!known.valid || known.generation != qp.generation) {
    known = StreamSummary{true, qp.generation, regions_own_calls(qp)};
  }
  return known.owns_calls && qp.state != QpState::free;
}

bool HandlerEngine::regions_own_calls(const Qp& qp) const {
  const auto& regions = directory->regions(qp.qpn);
  bool has_descriptor = false, has_input = false;
  for (const Region& r : regions) {
    has_descriptor = has_descriptor || (r.flags & kDescriptorFlags) == kDescriptorFlags;
    has_input = has_input || is_stream_input(r);
  }
  return has_descriptor && has_input;
}

bool HandlerEngine::streams(const Qp& qp, std::uint64_t va) const {
  if (!owns_calls(qp)) return false;
  const auto& regions = directory->regions(qp.qpn);
  bool has_descriptor = false, holds_va = false;
  for (const Region& r : regions) {
    has_descriptor = has_descriptor || (r.flags & kDescriptorFlags) == kDescriptorFlags;
    holds_va =
        holds_va || (is_stream_input(r) && va >= r.naa_address && va < r.naa_address + r.size);
  }
  return has_descriptor && holds_va;
}

std::uint64_t HandlerEngine::buffered_bytes() const {
  // HPU memory in use: waiting packets and the state of live calls (a connection that ended
  // leaves its state behind until the QP is reused; it no longer counts).
  std::uint64_t n = queued_bytes_;
  for (std::size_t i = 0; i < calls_.size(); ++i) {
    const Qp& qp = ctx_.qps[i];
    if (qp.state == QpState::rts && qp.generation == calls_[i].generation) {
      n += calls_[i].state.size();
    }
  }
  return n;
}

bool HandlerEngine::can_take(Qp& qp, std::size_t len) {
  const bool hpu_idle = idle_hpus_ > queue_.size();
  if (hpu_idle) return true;
  // No HPU free: the packet waits in HPU memory if it fits (seed 3, flow control otherwise).
  CallState& call = call_of(static_cast<std::uint32_t>(&qp - ctx_.qps.data()), qp.generation);
  if (buffered_bytes() + len <= ctx_.cfg.hpu_mem) {
    ++held_;
    return true;
  }
  ++rnr_;
  if (!call.flow_control) ++flow_control_calls_;
  call.flow_control = true;
  return false;
}

HandlerEngine::CallState& HandlerEngine::call_of(std::uint32_t qp_index, std::uint32_t generation) {
  CallState& c = calls_[qp_index];
  if (c.generation != generation) {
    c = CallState{};
    c.generation = generation;
  }
  return c;
}

void HandlerEngine::take(Qp& qp, std::uint64_t va, std::span<const std::uint8_t> payload,
                         bool message_start) {
  const auto index = static_cast<std::uint32_t>(&qp - ctx_.qps.data());
  CallState& call = call_of(index, qp.generation);
  ++call.outstanding;
  // Seed 3: no payload handler of a message starts before its header handler has completed.
  Task t;
  t.headers_before = call.headers_taken;
  if (message_start) call.headers_pending.insert(call.headers_taken++);
  t.kind = TaskKind::payload;
  t.qp_index = index;
  t.generation = qp.generation;
  t.va = va;
  t.message_start = message_start;
  t.data.assign(payload.begin(), payload.end());
  t.handed_over = sim_now();
  queued_bytes_ += t.data.size();
  queue_.push_back(std::move(t));
  work_.notify(sc_core::SC_ZERO_TIME);
}

void HandlerEngine::complete(Qp& qp, std::uint32_t imm) {
  Task t;
  t.kind = TaskKind::completion;
  t.qp_index = static_cast<std::uint32_t>(&qp - ctx_.qps.data());
  t.generation = qp.generation;
  t.imm = imm;
  t.handed_over = sim_now();
  (void)call_of(t.qp_index, qp.generation);
  queue_.push_back(std::move(t));
  work_.notify(sc_core::SC_ZERO_TIME);
}

void HandlerEngine::release(Qp& qp) {
  // Queued tasks carry the generation and are discarded by the HPUs; the state goes now.
  CallState& c = calls_[static_cast<std::size_t>(&qp - ctx_.qps.data())];
  c.state.clear();
  c.state.shrink_to_fit();
}

std::uint8_t HandlerEngine::install(Qp& qp, std::uint8_t fn, std::uint64_t address,
                                    std::uint32_t image_bytes, std::uint32_t state_bytes,
                                    std::uint64_t state_limit) {
  const auto index = static_cast<std::size_t>(&qp - ctx_.qps.data());
  const std::uint32_t generation = qp.generation;
  auto refuse = [&](std::uint8_t code) {
    ++images_refused_;
    return code;
  };
  std::vector<std::uint8_t> bytes(std::size_t{image_bytes} + state_bytes);
  // The image comes from NAA memory through the handler engine's DMA (timed).
  if (!bytes.empty() && !mem.read(address, bytes.data(), bytes.size(), *install_meter_)) {
    return refuse(protocol::kMrspErrorInvalidAddress);
  }
  if (!loader_) return refuse(protocol::kMrspErrorBadImage);
  LoadedImage loaded = loader_(std::span<const std::uint8_t>(bytes).first(image_bytes));
  if (!loaded.handler) return refuse(loaded.mrsp_error);
  // The descriptor names the function its calls use; an image made for another is a mistake.
  if (loaded.handler->function_code() != fn) return refuse(protocol::kMrspErrorBadImage);
  if (state_bytes > state_limit) return refuse(protocol::kMrspErrorImageTooLarge);
  if (qp.generation != generation) return refuse(protocol::kMrspErrorBadImage);
  Installed& in = installed_[index];
  in.generation = generation;
  in.handler = std::move(loaded.handler);
  in.state.assign(bytes.begin() + image_bytes, bytes.end());
  ++images_installed_;
  return 0;
}

void HandlerEngine::uninstall(Qp& qp) {
  const auto index = static_cast<std::size_t>(&qp - ctx_.qps.data());
  installed_[index] = Installed{};
  stream_summary_[index].valid = false;  // the regions change (owns_calls)
}

std::shared_ptr<const Handler> HandlerEngine::handler_of(const Qp& qp, std::uint8_t fn) const {
  const Installed& in = installed_[static_cast<std::size_t>(&qp - ctx_.qps.data())];
  if (in.handler && in.generation == qp.generation) return in.handler;
  // The registry outlives every call: a non-owning pointer.
  return {std::shared_ptr<const Handler>(), registry_.find(fn)};
}

void HandlerEngine::dma_thread() {
  for (;;) {
    while (dma_.empty()) {
      dma_idle_.notify(sc_core::SC_ZERO_TIME);
      sc_core::wait(dma_work_);
    }
    dma_busy_ = true;
    Deposit d = std::move(dma_.front());
    dma_.pop_front();
    const Qp& qp = ctx_.qps[d.qp_index];
    if (qp.generation != d.generation || qp.state != QpState::rts) {
      dma_busy_ = false;
      ++deposits_done_;
      deposit_done_.notify(sc_core::SC_ZERO_TIME);
      continue;  // its regions are cleared and may belong to the next connection (5.1)
    }
    if (!mem.write(d.addr, d.bytes.data(), d.bytes.size(), *dma_meter_)) {
      model_fatal(name(), "deposit outside the memory");
    }
    dma_busy_ = false;
    ++deposits_done_;
    deposit_done_.notify(sc_core::SC_ZERO_TIME);
  }
}

std::function<bool(std::size_t, std::uint64_t, std::span<std::uint8_t>)> HandlerEngine::dma_reader(
    const std::vector<Region>& regions, CycleMeter& meter) {
  return [this, &regions, &meter](std::size_t region, std::uint64_t offset,
                                  std::span<std::uint8_t> out) {
    if (region >= regions.size()) return false;
    const Region& r = regions[region];
    if ((r.flags & protocol::kMrspFlagInternal) != 0 &&
        (r.flags & protocol::kMrspFlagStream) != 0) {
      return false;  // the descriptor holds no data
    }
    if (offset > r.size || out.size() > r.size - offset) return false;
    wait_deposits();  // earlier invocations' posted writes first
    ++dma_reads_;
    return out.empty() || mem.read(r.naa_address + offset, out.data(), out.size(), meter);
  };
}

void HandlerEngine::wait_deposits() {
  while (!dma_.empty() || dma_busy_)
    sc_core::wait(dma_idle_);
}

void HandlerEngine::wait_deposits_through(std::uint64_t count) {
  while (deposits_done_ < count)
    sc_core::wait(deposit_done_);
}

void HandlerEngine::hpu(std::uint32_t index) {
  for (;;) {
    ++idle_hpus_;
    while (queue_.empty())
      sc_core::wait(work_);
    --idle_hpus_;
    Task t = std::move(queue_.front());
    queue_.pop_front();
    if (t.kind == TaskKind::payload) {
      queued_bytes_ -= t.data.size();
      run_payload(index, t);
    } else {
      run_completion(index, t);
    }
  }
}

void HandlerEngine::fail(CallState& call, std::uint32_t rc) {
  if (call.rc == 0) call.rc = rc;  // seed B.4: only the first error is reported
  ++failed_;
}

HandlerRun HandlerEngine::watchdog(HandlerRun run, CallState& call) {
  // The kernel watchdog (--kernel-timeout-cycles) and the per-invocation limit (--hpu-max-cycles):
  // a runaway handler is stopped at the limit and the call answers 0x02 kernel timeout.
  std::uint64_t limit = ctx_.cfg.kernel_timeout_cycles;
  if (ctx_.cfg.hpu_max_cycles != 0 && (limit == 0 || ctx_.cfg.hpu_max_cycles < limit)) {
    limit = ctx_.cfg.hpu_max_cycles;
  }
  if (limit != 0 && run.cycles > limit) {
    ++timeouts_;
    fail(call, static_cast<std::uint32_t>(protocol::ReturnCode::kernel_timeout));
    return HandlerRun{HandlerRc::fail, limit};
  }
  return run;
}

void HandlerEngine::run_payload(std::uint32_t hpu_index, Task& t) {
  CycleMeter& meter = *meters_[hpu_index];
  Qp& qp = ctx_.qps[t.qp_index];
  CallState& call = calls_[t.qp_index];
  auto done = [&] {
    if (call.generation != t.generation) return;
    --call.outstanding;
    if (t.message_start) call.headers_pending.erase(t.headers_before);
    call.changed->notify(sc_core::SC_ZERO_TIME);
  };
  const bool was_idle_dispatch = sim_now() == t.handed_over;
  // The packet is in the HPU's buffer one cycle after the Transport handed it over (seed 3:
  // "execution can start within a cycle after a packet arrived").
  meter.spend(1);
  auto valid = [&] { return qp.generation == t.generation && qp.state == QpState::rts; };
  if (!valid() || call.generation != t.generation) return done();
  const auto d = descriptor(qp);
  const std::shared_ptr<const Handler> h = d ? handler_of(qp, d->fn) : nullptr;
  const std::vector<Region> regions = directory->regions(qp.qpn);
  std::size_t r = regions.size();
  for (std::size_t i = 0; i < regions.size(); ++i) {
    if (is_stream_input(regions[i]) && t.va >= regions[i].naa_address &&
        t.va < regions[i].naa_address + regions[i].size) {
      r = i;
    }
  }
  if (h == nullptr || r == regions.size()) {
    fail(call, static_cast<std::uint32_t>(protocol::ReturnCode::unknown_function));
  } else if (call.state.empty() && d->state_size != 0 && call.rc == 0) {
    // First packet of the call: HPU memory for the handler's state (seed B.2.1 max_handler_mem).
    std::uint64_t stream_bytes = 0;
    for (const Region& reg : regions)
      stream_bytes += is_stream_input(reg) ? reg.size : 0;
    const auto packets = static_cast<std::uint32_t>((stream_bytes + qp.mtu - 1) / qp.mtu);
    const std::uint64_t need = h->state_bytes(ctx_.cfg.hpus, packets);
    if (need > d->state_size || d->state_size > ctx_.cfg.hpu_mem) {
      ++memory_exceeded_;
      fail(call, kRcHandlerMemory);
    } else {
      call.state.assign(d->state_size, 0);
      // An installed image's initial state (docs/protocol.md "Handler images").
      const Installed& in = installed_[t.qp_index];
      if (in.handler && in.generation == qp.generation) {
        std::copy_n(in.state.begin(), std::min<std::size_t>(in.state.size(), call.state.size()),
                    call.state.begin());
      }
    }
  }
  const std::uint64_t offset = r < regions.size() ? t.va - regions[r].naa_address : 0;
  if (call.rc != 0) {
    call.dropped += t.data.size();
    ++dropped_packets_;
    return done();
  }
  if (!call.seen.emplace(r, offset).second) {  // a duplicate never re-runs a handler
    ++duplicates_;
    return done();
  }
  HandlerContext hc = context(hpu_index, t.qp_index, qp.generation, *d, regions, call, meter);
  // The packet's message (a header task's own number; packets of a message follow its header
  // packet on an ordered connection, the only one with per-message fates and user headers).
  const std::uint32_t message =
      t.message_start || t.headers_before == 0 ? t.headers_before : t.headers_before - 1;
  // Seed 3.2.1/3.2.2: the user header is the message's first bytes; the header handler gets them,
  // the payload handlers the rest.
  const std::size_t user_hdr =
      t.message_start ? std::min<std::size_t>(h->user_header_bytes(), t.data.size()) : 0;
  MessageFate fate = MessageFate::process;
  if (t.message_start) {
    fate = run_header(hc, call, qp, t, *h,
                      HeaderArgs{r, offset, static_cast<std::uint32_t>(t.data.size()),
                                 std::span(t.data).first(user_hdr)},
                      regions, meter);
    if (fate != MessageFate::process) call.fates[message] = fate;
    call.headers_pending.erase(t.headers_before);
    call.changed->notify(sc_core::SC_ZERO_TIME);
    t.message_start = false;
  } else {
    // Only the headers taken before this packet: its own message's and earlier ones.
    while (call.generation == t.generation && !call.headers_pending.empty() &&
           *call.headers_pending.begin() < t.headers_before)
      sc_core::wait(*call.changed);
    const auto f = call.fates.find(message);
    if (f != call.fates.end()) fate = f->second;
  }
  if (!valid() || call.generation != t.generation) return done();
  const std::span<const std::uint8_t> data = std::span(t.data).subspan(user_hdr);
  if (call.rc != 0 || fate == MessageFate::drop) {
    call.dropped += data.size();
    ++dropped_packets_;
    return done();
  }
  if (fate == MessageFate::proceed) {
    // Seed B.3 PROCEED: the default action, a plain RDMA WRITE into the region's NAA memory, the
    // user header included; no handler runs.
    const Region& reg = regions[r];
    if (offset > reg.size || t.data.size() > reg.size - offset) {
      ++segv_;
      fail(call, kRcHandlerSegv);
      return done();
    }
    ++proceeded_packets_;
    dma_.push_back(Deposit{reg.naa_address + offset, std::move(t.data), t.qp_index, t.generation});
    ++deposits_pushed_;
    dma_work_.notify(sc_core::SC_ZERO_TIME);
    return done();
  }
  if (data.empty()) return done();  // the user header was all of it: no payload (3.2.2)
  if (!first_seen_) {
    first_seen_ = true;
    first_start_ps_ = ps_of(sim_now());
    first_handover_ps_ = ps_of(t.handed_over);
  }
  if (was_idle_dispatch) {
    const auto delay =
        static_cast<std::uint64_t>((sim_now() - t.handed_over) / meter.cycle() + 0.5);
    max_idle_start_delay_cycles_ = std::max(max_idle_start_delay_cycles_, delay);
  }
  const HandlerRun run = watchdog(h->payload(hc, PayloadArgs{r, offset + user_hdr, data}), call);
  ++payloads_;
  handler_cycles_ += run.cycles;
  meter.spend(run.cycles);
  if (!valid() || call.generation != t.generation) return done();
  if (run.rc == HandlerRc::fail) {
    if (call.rc == 0) fail(call, kRcHandlerFail);
  } else if (run.rc == HandlerRc::drop) {
    call.dropped += data.size();
  } else if (run.rc == HandlerRc::segv) {
    ++segv_;
    fail(call, kRcHandlerSegv);
  } else if (call.rc == 0) {
    call.bytes += data.size();
    (void)apply(qp, t.generation, regions, hc.actions, false, 0, meter);
  }
  done();
}

void HandlerEngine::run_completion(std::uint32_t hpu_index, Task& t) {
  CycleMeter& meter = *meters_[hpu_index];
  Qp& qp = ctx_.qps[t.qp_index];
  CallState& call = calls_[t.qp_index];
  auto valid = [&] {
    return qp.generation == t.generation && qp.state == QpState::rts &&
           call.generation == t.generation;
  };
  // Seed 3: the completion handler runs after every header and payload handler of the call.
  while (valid() && call.outstanding > 0)
    sc_core::wait(*call.changed);
  if (!valid()) return;
  meter.spend(1);
  auto reset = [&] {
    ++calls_ended_;
    last_call_end_ps_ = static_cast<std::uint64_t>(sim_now().value());
    CallState next;
    next.generation = call.generation;
    call = std::move(next);
  };
  const auto imm = protocol::decode_call_immediate(t.imm);
  if (!imm || imm->aborted) return reset();  // not a call, or immediate 0: no reply
  const auto d = descriptor(qp);
  const std::shared_ptr<const Handler> h = d ? handler_of(qp, d->fn) : nullptr;
  if (h == nullptr) {
    fail(call, static_cast<std::uint32_t>(protocol::ReturnCode::unknown_function));
  } else if (imm->fn != d->fn) {
    // The stream regions hold what the handlers deposited, not the input: a call of another
    // function on this connection has no valid arguments (docs/protocol.md).
    ++mismatched_fn_;
    fail(call, static_cast<std::uint32_t>(protocol::ReturnCode::invalid_arguments));
  }
  const std::vector<Region> regions = directory->regions(qp.qpn);
  if (call.rc == 0) {
    HandlerContext hc = context(hpu_index, t.qp_index, qp.generation, *d, regions, call, meter);
    const CompletionArgs args{call.flow_control, call.dropped, call.bytes};
    const HandlerRun run = watchdog(h->completion(hc, args), call);
    ++completions_;
    if (call.flow_control) ++completions_saw_flow_control_;
    handler_cycles_ += run.cycles;
    meter.spend(run.cycles);
    if (!valid()) return;
    if (run.rc == HandlerRc::fail && call.rc == 0) fail(call, kRcHandlerFail);
    if (run.rc == HandlerRc::segv) {
      ++segv_;
      fail(call, kRcHandlerSegv);
    }
    // A connection handed over to another NAA's peer QP answers to nobody (docs/spin.md "Puts
    // to other nodes"): that NAA's handlers wait for no result.
    if (call.rc == 0 && apply(qp, t.generation, regions, hc.actions, !qp.handed_over,
                              protocol::encode_result_immediate(d->fn, 0), meter)) {
      end_peer_messages(qp, call);
      if (qp.handed_over) ++unanswered_calls_;
      return reset();
    }
  }
  if (!valid()) return;
  end_peer_messages(qp, call);  // the peers' messages end even if this call failed
  if (qp.handed_over) {
    ++unanswered_calls_;
    return reset();
  }
  // Failure: a zero-length WRITE_WITH_IMM with the return code (PROTOCOL.md 5.2).
  SendWqe w;
  w.op = SendWqe::Op::write;
  w.imm = protocol::encode_result_immediate(imm->fn, call.rc & 0xFFFFFFU);
  w.solicited = true;
  sends->post_send(qp, std::move(w));
  reset();
}

}  // namespace naa::sim
