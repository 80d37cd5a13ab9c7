// The kernel contract at the ports (docs/rtl/kernel-shell.md): any kernel, built-in or a user's
// plug-in, is an AXI4-Stream module with the block-level handshake Vitis HLS generates for
// ap_ctrl_hs. KernelPort is that module seen from C++ one clock cycle at a time, as its C++ cycle
// model, its Verilated RTL behind the kernel shell (rtl/kernel_shell/naa_kernel_shell.sv.in) or a
// lockstep pair of both: naa-sim's kernel engine, the generic kernel testbench and the plug-in
// loader all drive kernels through it.
//
// Ports (names as in the SystemVerilog kernel; docs/rtl/kernel-shell.md "Ports"):
//   ap_start, ap_ready, ap_idle, ap_done, ap_return[31:0]   block-level control (ap_ctrl_hs)
//   user[23:0]                                               the call's 24 user bits
//   src_TDATA/TKEEP/TLAST/TVALID/TREADY                      the input regions, a packet each
//   dst_TDATA/TKEEP/TLAST/TVALID/TREADY                      the output regions, a packet each
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "naa/rtl/lockstep.hpp"
#include "naa/rtl/stream.hpp"

namespace naa::rtl {

struct KernelInputs {
  bool rst_n = true;  // ap_rst_n
  bool ap_start = false;
  std::uint32_t user = 0;  // user[23:0]; held for the whole call by the shell's driver
  bool src_valid = false;  // src_TVALID; src carries src_TDATA/TKEEP/TLAST
  StreamBeat src;
  bool dst_ready = false;  // dst_TREADY
};

struct KernelOutputs {
  bool ap_ready = false;
  bool ap_idle = false;
  bool ap_done = false;
  std::uint32_t ap_return = 0;  // meaningful only while ap_done
  bool src_ready = false;       // src_TREADY
  bool dst_valid = false;       // dst_TVALID; dst carries dst_TDATA/TKEEP/TLAST
  StreamBeat dst;               // meaningful only while dst_valid
};

// One kernel's ports. step() is one clock cycle: the inputs of the cycle go in, the outputs of
// the cycle (after combinational paths from the inputs) come out, and the rising edge that ends
// the cycle is taken. Concurrency: one thread at a time per instance.
class KernelPort {
 public:
  using Inputs = KernelInputs;
  using Outputs = KernelOutputs;

  virtual ~KernelPort() = default;
  // The kernel's name (its top module), for reports.
  [[nodiscard]] virtual std::string_view block() const noexcept = 0;
  // Bytes per beat of src and dst.
  [[nodiscard]] virtual std::uint32_t width() const noexcept = 0;
  virtual KernelOutputs step(const KernelInputs& in) = 0;
};

// The first output that differs (nullopt: none). Control and ready/valid always; ap_return only
// while ap_done; dst_TDATA/TKEEP/TLAST only while dst_TVALID (and only the bytes TKEEP selects:
// bytes outside the packet are don't-care, docs/rtl/kernel-shell.md "Streams").
[[nodiscard]] std::optional<PortMismatch> first_mismatch(const KernelPort& shape,
                                                         const KernelOutputs& expected,
                                                         const KernelOutputs& actual);

// A kernel's C++ model and its RTL on the same inputs every cycle; the model's outputs are what
// the caller sees. The first divergence is reported once to the handler (lockstep.hpp).
class KernelLockstep final : public KernelPort {
 public:
  KernelLockstep(std::unique_ptr<KernelPort> model, std::unique_ptr<KernelPort> rtl,
                 LockstepChecker::Handler on_divergence = {});
  [[nodiscard]] std::string_view block() const noexcept override { return model_->block(); }
  [[nodiscard]] std::uint32_t width() const noexcept override { return model_->width(); }
  KernelOutputs step(const KernelInputs& in) override;
  [[nodiscard]] const LockstepChecker& checker() const noexcept { return checker_; }
  [[nodiscard]] KernelPort& model() noexcept { return *model_; }
  [[nodiscard]] KernelPort& rtl() noexcept { return *rtl_; }

 private:
  std::unique_ptr<KernelPort> model_;
  std::unique_ptr<KernelPort> rtl_;
  LockstepChecker checker_;
};

}  // namespace naa::rtl
