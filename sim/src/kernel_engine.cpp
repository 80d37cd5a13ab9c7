#include "naa/sim/kernel_engine.hpp"

// sc_spawn and sc_spawn_options for the lanes (<systemc> has them only with
// SC_INCLUDE_DYNAMIC_PROCESSES defined before its first inclusion).
#include <sysc/kernel/sc_dynamic_processes.h>

#include <cstring>
#include <optional>

#include "naa/protocol/immediate.hpp"

namespace naa::sim {
namespace {

// One WRITE of a write-back; with `imm` the last one: WRITE_WITH_IMM with SE (PROTOCOL.md 5.2).
// Returned into post_send's by-value argument (issue 31: no local work request to move from and
// destroy per WRITE).
SendWqe write_back_wqe(std::vector<std::uint8_t> data, std::uint64_t host_va,
                       std::uint32_t host_rkey, std::optional<std::uint32_t> imm) {
  SendWqe w;
  w.op = SendWqe::Op::write;
  w.data = std::move(data);
  w.remote_va = host_va;
  w.rkey = host_rkey;
  w.imm = imm;
  w.solicited = imm.has_value();
  return w;
}

}  // namespace

KernelEngine::KernelEngine(sc_core::sc_module_name name, ModelContext& ctx, KernelRegistry registry)
    : sc_module(name), mem("mem"), ctx_(ctx), registry_(std::move(registry)), meter_(ctx.cfg) {
  for (std::size_t i = 0; i < ctx.qps.size(); ++i) {
    lanes_.push_back(std::make_unique<ReadyQueue<Call>>(ctx.cfg.call_queue_depth));
    scratch_.emplace_back();
    call_vectors_.emplace_back();
    sc_core::sc_spawn_options opts;
    sc_core::sc_spawn([this, i] { lane(i); }, sc_core::sc_gen_unique_name("lane"), &opts);
  }
}

bool KernelEngine::can_accept(const Qp& qp) const {
  return !lanes_.at(static_cast<std::size_t>(&qp - ctx_.qps.data()))->full();
}

void KernelEngine::post_call(Qp& qp, std::uint32_t imm) {
  ReadyQueue<Call>& lane = *lanes_.at(static_cast<std::size_t>(&qp - ctx_.qps.data()));
  if (lane.full()) return;  // the Transport asked can_accept() first
  const sc_core::sc_time now = sim_now();
  // An idle lane would wake one delta cycle from now, check the QP and wait the kernel latency.
  // When nothing else can run before it (no other process runnable now, no delta notification
  // pending: the poster's own activation is all that runs first, and the Transport changes no
  // QP state after posting), its check sees what the post sees: made here, the lane wakes once,
  // when the latency has passed (issue 31). Otherwise it wakes as it did.
  if (ctx_.cfg.kernel_latency != 0 && lane.idle_now() &&
      !sc_core::sc_pending_activity_at_current_time()) {
    ++accepted_at_post_;
    if (qp.state != QpState::rts) {
      ++stale_;  // what the lane would have found
      return;
    }
    lane.put(Call{qp.generation, imm, true}, now + meter_.times(ctx_.cfg.kernel_latency));
    return;
  }
  lane.put(Call{qp.generation, imm, false}, now);
}

void KernelEngine::release(Qp& /*qp*/) {
  // Queued calls carry the QP generation; the lane discards them once the QP is gone.
}

std::span<std::uint8_t> KernelEngine::LoadBuffer::take(std::uint64_t n) {
  if (size < n) {  // grows only; the old contents need not survive (the load overwrites them)
    bytes = std::make_unique_for_overwrite<std::uint8_t[]>(n);
    size = n;
  }
  return {bytes.get(), n};
}

void KernelEngine::lane(std::size_t index) {
  for (;;) {
    const Call c = lanes_[index]->next();
    Qp& qp = ctx_.qps[index];
    if (!c.accepted && (qp.generation != c.generation || qp.state != QpState::rts)) {
      ++stale_;
      continue;
    }
    run_call(index, qp, c.generation, c.imm, c.accepted);
    // The connection has gone: its buffers are not needed again (a new one starts empty).
    if (qp.generation != c.generation || qp.state != QpState::rts) {
      scratch_[index].clear();
      call_vectors_[index] = {};
    }
  }
}

void KernelEngine::run_call(std::size_t index, Qp& qp, std::uint32_t generation, std::uint32_t imm,
                            bool latency_passed) {
  if (latency_passed) {
    meter_.account(ctx_.cfg.kernel_latency);  // waited before the lane woke (post_call)
  } else {
    meter_.spend(ctx_.cfg.kernel_latency);
  }
  const auto call = protocol::decode_call_immediate(imm);
  if (!call) {
    ++bad_immediate_;  // bit 7 clear or function code 0: not a call
    return;
  }
  if (call->aborted) {
    ++aborted_;  // immediate 0: the host aborted this call; no kernel, no reply
    return;
  }
  const std::uint8_t fn = call->fn;
  auto still_valid = [&] { return qp.generation == generation && qp.state == QpState::rts; };

  CallVectors& cv = call_vectors_[index];
  // The directory may change while the call waits (a new 0x01 request replaces the regions):
  // what the call uses after its first wait is taken now, into the lane's own vectors (no
  // allocation per call once they have held as many regions). Only the fields it needs, not a
  // copy of the directory's entries (issue 31).
  const std::vector<Region>& regions = directory->regions(qp.qpn);
  const std::size_t count = regions.size();
  if (cv.count != count) {  // most calls on a connection have as many regions as the last one
    cv.regions.resize(count);
    cv.targets.resize(count);
    cv.count = count;
  }
  // As spans: their storage and size stay fixed for the call (the lane's vectors change only
  // between calls), so they are not read back from the vectors after each wait (issue 31).
  const std::span<KernelRegion> kr{cv.regions.data(), count};
  const std::span<const WriteBackTarget> targets{cv.targets.data(), count};
  for (std::size_t i = 0; i < count; ++i) {
    const Region& r = regions[i];
    kr[i] = KernelRegion{.flags = r.flags,
                         .naa_address = r.naa_address,
                         .size = r.size,
                         .bytes = {},
                         .result_length = r.size};
    cv.targets[i] = WriteBackTarget{r.naa_address, r.host_va, r.host_rkey};
  }
  KernelCall kc{fn, call->user, kr};
  std::uint32_t rc = 0;
  const Kernel* k = registry_.find(fn);
  if (k == nullptr) {
    ++unknown_fn_;
    rc = static_cast<std::uint32_t>(protocol::ReturnCode::unknown_function);
  } else if ((rc = k->check(kc)) != 0) {
    ++invalid_args_;
  } else {
    // Load the non-internal regions, compute, store them back (a kernel may update inputs in
    // place, as add1/add2 do). The kernel computes on the regions where they lie in memory
    // (issue 31: no copy out and back, no zero-fill): the loads and stores are the timed
    // transactions they were, which move no bytes (MemoryPort::direct).
    //
    // A kernel that only computes (Kernel::computes_only) runs as soon as its last load is
    // issued, and the engine waits that load's time and the kernel's cycles as one: the same
    // end time, one activation less (issue 31). Earlier loads are waited one by one as before.
    const bool merge = k->computes_only();
    const std::uint64_t limit = ctx_.cfg.kernel_timeout_cycles;
    sc_core::sc_time load_wait;
    bool load_pending = false;
    for (std::size_t i = 0; i < kr.size(); ++i) {
      if (kr[i].is_internal()) continue;
      if (load_pending) {
        sc_core::wait(load_wait);
        load_pending = false;
      }
      const bool ok =
          merge ? mem.read_unwaited(kr[i].naa_address, nullptr, kr[i].size, meter_, load_wait)
                : mem.read(kr[i].naa_address, nullptr, kr[i].size, meter_);
      load_pending = merge && kr[i].size != 0;
      if (!ok) {
        if (load_pending) sc_core::wait(load_wait);  // the failed access's time, as read() waits
        model_fatal(name(), "region outside the memory");
      }
    }
    // On private copies instead where what the kernel writes must not reach the memory: the
    // connection ended during the loads (its regions are cleared and may be another
    // connection's already), or the watchdog is on and the kernel's cycles are known only once
    // it has run (an RTL kernel; nothing it computed may be stored if it ran too long).
    const bool in_place = still_valid() && (merge || limit == 0);
    std::vector<LoadBuffer>* const scratch = in_place ? nullptr : &scratch_[index];
    if (scratch != nullptr && scratch->size() < kr.size()) scratch->resize(kr.size());
    for (std::size_t i = 0; i < kr.size(); ++i) {
      if (kr[i].is_internal()) continue;
      std::uint8_t* const at = mem.direct(kr[i].naa_address, kr[i].size, in_place);
      if (at == nullptr) model_fatal(name(), "region outside the memory");
      if (in_place) {
        kr[i].bytes = std::span<std::uint8_t>(at, kr[i].size);
      } else {
        kr[i].bytes = (*scratch)[i].take(kr[i].size);
        std::memcpy(kr[i].bytes.data(), at, kr[i].size);
        private_copy_bytes_ += kr[i].size;
      }
    }
    // The kernel computes now and the engine is busy for the cycles it took: the cost model's,
    // or the RTL's own count (an RTL kernel is clocked only here, while it has work). A kernel
    // that only computes and would pass the watchdog's limit does not run at all: in place, its
    // results would otherwise be in memory (its cycles are its cost model's, known before).
    bool timed_out = merge && in_place && limit != 0 && k->cycles(kc, ctx_.cfg.width) > limit;
    KernelRun run;
    if (!timed_out) {
      run = k->execute(kc, ctx_.cfg.width);
      timed_out = limit != 0 && run.cycles > limit;
    }
    ++dispatches_;
    ++per_fn_[fn];
    // The watchdog stops the kernel at its limit: the engine was busy that long, nothing the
    // kernel computed is stored, and the host learns why (return code 0x02).
    const std::uint64_t busy = timed_out ? limit : run.cycles;
    kernel_cycles_ += busy;
    // The engine is busy for those cycles after the loads: with the last load's time when merged.
    // One call site (issue 31: as a lambda called twice, GCC had kept it out of line).
    if (load_pending) {
      meter_.account(busy);
      sc_core::wait(load_wait + meter_.times(busy));
    } else {
      meter_.spend(busy);
    }
    if (timed_out) {
      ++timeouts_;
      rc = static_cast<std::uint32_t>(protocol::ReturnCode::kernel_timeout);
    } else {
      rc = run.rc;
    }
    for (std::size_t i = 0; i < kr.size() && !timed_out; ++i) {
      if (kr[i].is_internal()) continue;
      bytes_processed_ += kr[i].size;
      // The connection may have ended while the kernel ran (each write also waits): its regions
      // are then cleared and may already belong to the next connection, which must not see
      // this one's data (PROTOCOL.md 5.1). In place, the store only takes its time.
      if (!still_valid()) return;
      (void)mem.write(kr[i].naa_address, in_place ? nullptr : kr[i].bytes.data(), kr[i].size,
                      meter_);
    }
  }
  if (!still_valid()) return;

  // Write-back (PROTOCOL.md 5.2): each OUTPUT region in 0x01 order to its host address and rkey,
  // the last as WRITE_WITH_IMM with SE; a zero-length WRITE_WITH_IMM if there is nothing to send.
  const std::uint32_t result_imm = protocol::encode_result_immediate(fn, rc & 0xFFFFFFU);
  // The last OUTPUT region carries the immediate (none: a zero-length WRITE_WITH_IMM).
  std::size_t last_out = kr.size();
  if (rc == 0) {
    for (std::size_t i = 0; i < kr.size(); ++i) {
      if (kr[i].is_output() && !kr[i].is_internal()) last_out = i;
    }
  }
  // The last WQE: after it the lane posts nothing more and changes no QP before it next waits
  // (a next call starts with the kernel latency's wait), so the Transport may make its
  // transmit turn at the post (SendQueue::post_last_send, issue 31). Without a latency a queued
  // call could post again in this activation: post_send then.
  const bool waits_next = ctx_.cfg.kernel_latency != 0;
  auto post_last = [&](SendWqe w) {
    if (waits_next) {
      sends->post_last_send(qp, std::move(w));
    } else {
      sends->post_send(qp, std::move(w));
    }
  };
  if (last_out == kr.size()) {
    post_last(write_back_wqe({}, 0, 0, result_imm));
    return;
  }
  for (std::size_t i = 0; i <= last_out; ++i) {
    if (!kr[i].is_output() || kr[i].is_internal()) continue;
    const WriteBackTarget& t = targets[i];
    const std::uint32_t len = std::min(kr[i].result_length, kr[i].size);
    // The payload is a snapshot of the region as stored (retransmissions resend it): one copy
    // out of the memory, without zero-filling the vector first.
    const std::uint8_t* const at = mem.direct(t.naa_address, len, false);
    if (at == nullptr) model_fatal(name(), "region outside the memory");
    // A completed write-back's vector, if one was kept.
    std::vector<std::uint8_t> data = sends->take_payload_buffer();
    data.assign(at, at + len);
    if (i == last_out) {
      post_last(write_back_wqe(std::move(data), t.host_va, t.host_rkey, result_imm));
    } else {
      sends->post_send(qp, write_back_wqe(std::move(data), t.host_va, t.host_rkey, std::nullopt));
    }
  }
}

void KernelEngine::report(std::ostream& os) const {
  os << "kernel.cycles=" << meter_.busy_cycles() << '\n'
     << "kernel.compute_cycles=" << kernel_cycles_ << '\n'
     << "kernel.dispatches=" << dispatches_ << '\n'
     << "kernel.aborted=" << aborted_ << '\n'
     << "kernel.unknown_function=" << unknown_fn_ << '\n'
     << "kernel.invalid_arguments=" << invalid_args_ << '\n'
     << "kernel.timeouts=" << timeouts_ << '\n'
     << "kernel.bad_immediate=" << bad_immediate_ << '\n'
     << "kernel.stale_calls=" << stale_ << '\n'
     << "kernel.bytes_processed=" << bytes_processed_ << '\n'
     << "activity.kernel.private_copy_bytes=" << private_copy_bytes_ << '\n'
     << "activity.kernel.accepted_at_post=" << accepted_at_post_ << '\n';
  for (std::size_t fn = 1; fn < per_fn_.size(); ++fn) {
    if (per_fn_[fn] == 0) continue;
    const Kernel* k = registry_.find(static_cast<std::uint8_t>(fn));
    os << "kernel.dispatches." << (k != nullptr ? k->name() : "fn") << '=' << per_fn_[fn] << '\n';
  }
}

}  // namespace naa::sim
