// ShellKernel: a kernel of the simulated NAA whose calls run through the kernel shell's ports
// (docs/rtl/kernel-shell.md): a built-in kernel with RTL, or a user's plug-in, as Verilated RTL,
// its C++ cycle model or a lockstep pair of both (rtl::KernelPort). The call's regions become
// src and dst packets as the kernel's KernelShape says, the shell's driver (rtl::run_kernel)
// runs the invocation, and the dst packets' byte counts become the outputs' result lengths.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "naa/rtl/kernel_driver.hpp"
#include "naa/rtl/kernel_port.hpp"
#include "naa/sim/kernels.hpp"

namespace naa::sim {

class ShellKernel final : public Kernel {
 public:
  struct Spec {
    std::uint8_t fn = 0;
    std::string name;
    rtl::KernelShape shape;
    // The kernel's user input for every call (add1/add2 drive add_const with 1 and 2); empty: the
    // call's 24 user bits.
    std::optional<std::uint32_t> user;
  };
  // Called with every invocation (cycles, errors), e.g. to count them; and before a call starts,
  // e.g. to bring the RTL's clock to the simulated time.
  using OnInvocation = std::function<void(const rtl::KernelInvocation&)>;
  using BeforeCall = std::function<void()>;

  // reference: the C++ kernel of the same function, if any: check() and the cost model are its
  // (the engine refuses a call before the RTL sees it exactly as in model mode). Without one, a
  // call needs at least shape.inputs INPUT and shape.outputs OUTPUT regions.
  ShellKernel(Spec spec, std::shared_ptr<rtl::KernelPort> port, std::unique_ptr<Kernel> reference,
              OnInvocation on_invocation = {}, BeforeCall before_call = {});

  [[nodiscard]] std::uint8_t function_code() const override { return spec_.fn; }
  [[nodiscard]] std::string_view name() const override { return spec_.name; }
  [[nodiscard]] std::uint32_t check(const KernelCall& call) const override;
  [[nodiscard]] std::uint64_t cycles(const KernelCall& call, std::uint32_t width) const override;
  std::uint32_t run(KernelCall& call) const override;
  // The return code and the cycles from the first ap_start to the last ap_done. A kernel that
  // breaks the contract (rtl::KernelInvocation::error) stops the simulation (model_fatal): its
  // outputs cannot be trusted. A dst packet longer than its region fails the call with 0x04.
  KernelRun execute(KernelCall& call, std::uint32_t width) const override;

 private:
  KernelRun invoke(std::uint32_t user, std::span<const std::span<const std::uint8_t>> src,
                   std::span<const std::span<std::uint8_t>> dst,
                   std::vector<std::uint32_t>* lengths) const;
  Spec spec_;
  std::shared_ptr<rtl::KernelPort> port_;
  std::unique_ptr<Kernel> reference_;
  OnInvocation on_invocation_;
  BeforeCall before_call_;
};

}  // namespace naa::sim
