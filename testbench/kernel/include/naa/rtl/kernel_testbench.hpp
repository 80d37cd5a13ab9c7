// The generic kernel testbench (docs/rtl/kernel-shell.md "Testing your kernel"): runs any kernel
// behind KernelPort - a built-in one or a user's plug-in - on seeded random calls and checks it
// against its C++ model cycle by cycle, against a byte-level golden function if there is one,
// and against the kernel contract (run_kernel's checks) always. Library naa::kernel_testbench,
// installed: a kernel's author links it into a test of their own, or runs naa-kernel-check on
// the plug-in.
//
// What one run does, at every width of the configuration:
// - makes the RTL (and the model) once, resets it, then makes `calls` calls through
//   run_kernel(): random regions (sizes 0, 1, W-1, W, W+1, multi-beat, random; contents random,
//   sometimes all 0x00 or all 0xFF), random user bits, random idle cycles on src and
//   back-pressure on dst (a drive pattern per call, full rate included);
// - now and then resets the kernel in the middle of a transfer (ap_start accepted, part of src
//   taken, dst held) and checks that the calls after it still work;
// - with a model: model and RTL in lockstep (KernelLockstep, every output every cycle), and
//   their results (dst bytes, result lengths, ap_return) compared call by call;
// - with a golden function: the results compared with it;
// - stops at the first failure and reports it with what it takes to replay it: the seed, the
//   width, the call index and the cycle (counted from the instance's creation, as lockstep's).
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "naa/rtl/kernel_driver.hpp"
#include "naa/rtl/kernel_port.hpp"
#include "naa/rtl/rtl_options.hpp"

namespace naa::rtl {

using KernelBytes = std::vector<std::uint8_t>;

// The testbench's random source (SplitMix64: the same stream on every platform and standard
// library, so a seed replays anywhere). Call generators get one to draw from.
class KernelRandom {
 public:
  explicit KernelRandom(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next();
  // Uniform in [0, n); 0 for n = 0.
  std::uint64_t below(std::uint64_t n);
  // True with probability percent / 100.
  bool percent(std::uint32_t p) { return p != 0 && below(100) < p; }
  // A region size at W bytes per beat, at most max_bytes: half the time one of the edges 0, 1,
  // W - 1, W, W + 1, 2W, 2W + 1 (those that fit), else uniform in 0..max_bytes.
  std::uint32_t region_size(std::uint32_t width, std::uint32_t max_bytes);
  // n random bytes; one time in eight all 0xFF, one in sixteen all 0x00 (carries, zero sums).
  KernelBytes bytes(std::size_t n);

 private:
  std::uint64_t s_;
};

// One call's stimulus: what run_kernel() is given.
struct KernelCallSpec {
  std::uint32_t user = 0;                   // the 24 user bits
  std::vector<KernelBytes> src;             // the src packets, in order
  std::vector<std::uint32_t> dst_capacity;  // the size of each dst buffer
};

// A golden function's answer for one call.
struct KernelExpected {
  std::uint32_t rc = 0;
  std::vector<KernelBytes> dst;  // each dst packet; its size is the result length
};

struct KernelTestbenchConfig {
  std::string name;  // for reports (the kernel's top module)
  KernelShape shape;
  std::vector<std::uint32_t> widths;  // bytes per beat to run at (each needs make_rtl to work)
  // The RTL at a width. The testbench sets options.x_seed from the seed; plug-ins need
  // options.session null (naa/rtl/kernel_plugin.hpp). nullptr: the width cannot be built (a
  // failure).
  std::function<std::unique_ptr<KernelPort>(std::uint32_t width, const RtlOptions& options)>
      make_rtl;
  // The C++ cycle model at a width; empty: no model (no lockstep, contract and golden only).
  std::function<std::unique_ptr<KernelPort>(std::uint32_t width)> make_model;
  // One call's regions and user bits; empty: default_kernel_call().
  std::function<KernelCallSpec(KernelRandom& random, std::uint32_t width)> make_call;
  // The expected result of a call (nullopt: no opinion on this one); empty: none.
  std::function<std::optional<KernelExpected>(const KernelCallSpec& call)> golden;
  // The cycles of a call at full rate (no idle, no back-pressure) - run_kernel's `cycles`, the
  // kernel's throughput and latency; nullopt or empty: not checked.
  std::function<std::optional<std::uint64_t>(const KernelCallSpec& call, std::uint32_t width)>
      full_rate_cycles;
  // Non-empty after a SystemVerilog assertion of the RTL failed (a session made with
  // fatal_assertions = false); empty function: assertions end the program themselves.
  std::function<std::string()> assertion_failed;
  // Largest src region of the default generator.
  std::uint32_t max_region_bytes = 700;
};

struct KernelTestbenchOptions {
  std::uint64_t seed = 1;     // everything random derives from it (per width: kernel_width_seed)
  std::uint32_t calls = 200;  // calls per width
  std::uint32_t reset_percent = 5;    // chance, before a call, of a reset in the middle of one
  std::uint64_t stall_cycles = 2000;  // run_kernel's stall limit
  std::ostream* log = nullptr;        // a line per width, if set
};

// The first failure of a run.
struct KernelFailure {
  std::string kernel;
  std::uint32_t width = 0;
  std::uint64_t seed = 0;   // KernelTestbenchOptions::seed of the run
  std::uint32_t call = 0;   // index of the failing call at this width, from 0
  std::uint64_t cycle = 0;  // the instance's cycle (from its creation, as lockstep counts)
  std::string what;         // what differed or which rule broke
  // "kernel crc32, W=16, call 17, cycle 1234: <what> (replay: seed 42 ...)".
  [[nodiscard]] std::string to_string() const;
};

struct KernelTestbenchReport {
  std::optional<KernelFailure> failure;
  std::uint64_t calls = 0;           // calls completed and checked
  std::uint64_t resets = 0;          // resets in the middle of a transfer
  std::uint64_t cycles = 0;          // clock cycles, all widths
  std::uint64_t golden_checked = 0;  // calls compared with the golden function
  std::uint64_t timed = 0;           // calls whose full-rate cycles were checked
  bool lockstep = false;             // a model ran in lockstep
  // Every width saw src packets of 0, 1, W-1, W and W+1 bytes and one longer than 2W.
  bool edge_sizes = true;
  [[nodiscard]] bool passed() const { return !failure.has_value(); }
  // One line: PASS/FAIL, what ran, and the failure.
  [[nodiscard]] std::string summary() const;
};

// The default call: random user bits; in place, one src packet with its own size as the dst
// capacity; otherwise shape.inputs src packets and shape.outputs dst buffers as large as all the
// src packets together plus one beat.
[[nodiscard]] KernelCallSpec default_kernel_call(const KernelShape& shape, KernelRandom& random,
                                                 std::uint32_t width, std::uint32_t max_bytes);

// The seed of the random stream at one width (the run's seed mixed with the width).
[[nodiscard]] std::uint64_t kernel_width_seed(std::uint64_t seed, std::uint32_t width);

// Runs the testbench; never throws for a kernel's misbehaviour (that is the report's failure),
// std::invalid_argument for a configuration without make_rtl or widths.
[[nodiscard]] KernelTestbenchReport run_kernel_testbench(const KernelTestbenchConfig& config,
                                                         const KernelTestbenchOptions& options);

}  // namespace naa::rtl
