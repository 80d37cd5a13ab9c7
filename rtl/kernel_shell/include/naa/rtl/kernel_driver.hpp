// The kernel shell's driver (docs/rtl/kernel-shell.md "One call"): runs one kernel invocation
// through a KernelPort (model, RTL or lockstep) the way naa-sim's kernel engine does, and checks
// that the kernel keeps the contract. No SystemC: the kernel engine (sim/rtl), the generic kernel
// testbench and naa-kernel-check use it alike.
//
// One invocation: ap_start is held with `user` until ap_ready; the src packets are offered from
// the first cycle, in order, W bytes per beat (TKEEP all ones except on a packet's last beat,
// where it is a prefix; an empty packet is one beat with TKEEP = 0 and TLAST = 1); dst is ready
// every cycle unless options say otherwise; the run ends in the cycle ap_done is high, and
// ap_return is the call's return code. The i-th dst packet lands in dst[i]; its byte count is
// output i's result length.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "naa/rtl/kernel_port.hpp"

namespace naa::rtl {

// What a kernel declares about the regions of a call (naa_add_kernel INPUTS, OUTPUTS, IN_PLACE;
// docs/rtl/kernel-shell.md "Regions").
struct KernelShape {
  std::uint32_t inputs = 1;   // src packets per invocation: the call's first `inputs` INPUT regions
  std::uint32_t outputs = 1;  // dst packets per invocation: its first `outputs` OUTPUT regions
  // One invocation per non-internal region, in MRSP order: src is the region, the one dst packet
  // is written back into it (add1/add2 of PROTOCOL.md 5.3). inputs/outputs are then unused.
  bool in_place = false;
};

struct KernelDriveOptions {
  // Random idle cycles on src (TVALID low while a beat is ready) and back-pressure on dst
  // (TREADY low), in percent, from `seed` (the generic testbench; naa-sim uses 0: full rate).
  std::uint32_t src_idle_percent = 0;
  std::uint32_t dst_stall_percent = 0;
  std::uint64_t seed = 1;
  // Cycles without any progress (no handshake on src, dst or ap_start/ap_done) before the run is
  // abandoned as a stall.
  std::uint64_t stall_cycles = 1000;
};

struct KernelInvocation {
  std::uint32_t rc = 0;                // ap_return in the ap_done cycle
  std::vector<std::uint32_t> lengths;  // bytes of each dst packet (dst.size() entries)
  std::uint64_t cycles = 0;            // first ap_start cycle .. the ap_done cycle, both included
  bool overflow = false;  // a dst packet was longer than its buffer: the surplus was dropped
  // Non-empty: the kernel broke the contract (stalled, finished before taking all of src or
  // giving all of dst, gave a packet too many, a TKEEP that is not a prefix or partial before
  // TLAST) - what happened, for the user. The outputs are then incomplete.
  std::string error;
};

// Runs one invocation. dst[i] is the buffer of the i-th dst packet (its capacity). Does not reset
// the kernel: the caller resets it once (reset_kernel) before the first invocation.
[[nodiscard]] KernelInvocation run_kernel(KernelPort& port, std::uint32_t user,
                                          std::span<const std::span<const std::uint8_t>> src,
                                          std::span<const std::span<std::uint8_t>> dst,
                                          const KernelDriveOptions& options = {});

// `cycles` cycles with ap_rst_n low and everything else idle.
void reset_kernel(KernelPort& port, std::uint32_t cycles = 1);

}  // namespace naa::rtl
