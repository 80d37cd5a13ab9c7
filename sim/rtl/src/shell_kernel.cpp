#include "naa/sim/shell_kernel.hpp"

#include <vector>

#include "naa/protocol/immediate.hpp"
#include "naa/sim/common.hpp"

namespace naa::sim {

namespace {

constexpr auto kInvalidArguments =
    static_cast<std::uint32_t>(protocol::ReturnCode::invalid_arguments);

}  // namespace

ShellKernel::ShellKernel(Spec spec, std::shared_ptr<rtl::KernelPort> port,
                         std::unique_ptr<Kernel> reference, OnInvocation on_invocation,
                         BeforeCall before_call)
    : spec_(std::move(spec)),
      port_(std::move(port)),
      reference_(std::move(reference)),
      on_invocation_(std::move(on_invocation)),
      before_call_(std::move(before_call)) {}

std::uint32_t ShellKernel::check(const KernelCall& call) const {
  if (reference_) return reference_->check(call);
  if (spec_.shape.in_place) return 0;
  for (std::uint32_t i = 0; i < spec_.shape.inputs; ++i) {
    if (call.input(i) == nullptr) return kInvalidArguments;
  }
  for (std::uint32_t i = 0; i < spec_.shape.outputs; ++i) {
    if (call.output(i) == nullptr) return kInvalidArguments;
  }
  return 0;
}

std::uint64_t ShellKernel::cycles(const KernelCall& call, std::uint32_t width) const {
  return reference_ ? reference_->cycles(call, width) : 0;
}

std::uint32_t ShellKernel::run(KernelCall& call) const {
  return execute(call, port_->width()).rc;
}

KernelRun ShellKernel::invoke(std::uint32_t user,
                              std::span<const std::span<const std::uint8_t>> src,
                              std::span<const std::span<std::uint8_t>> dst,
                              std::vector<std::uint32_t>* lengths) const {
  const rtl::KernelInvocation inv = rtl::run_kernel(*port_, user, src, dst);
  if (on_invocation_) on_invocation_(inv);
  if (!inv.error.empty()) model_fatal("kernel_engine", "kernel " + spec_.name + ": " + inv.error);
  if (lengths != nullptr) *lengths = inv.lengths;
  return KernelRun{inv.overflow && inv.rc == 0 ? kInvalidArguments : inv.rc, inv.cycles};
}

KernelRun ShellKernel::execute(KernelCall& call, std::uint32_t /*width: the port's own*/) const {
  if (before_call_) before_call_();
  const std::uint32_t user = spec_.user.value_or(call.user);
  KernelRun total;
  if (spec_.shape.in_place) {
    // One invocation per non-empty region, src a copy of it, dst the region itself.
    for (KernelRegion& r : call.regions) {
      if (r.is_internal() || r.bytes.empty()) continue;
      const std::vector<std::uint8_t> copy(r.bytes.begin(), r.bytes.end());
      const std::span<const std::uint8_t> src[] = {copy};
      const std::span<std::uint8_t> dst[] = {r.bytes};
      const KernelRun one = invoke(user, src, dst, nullptr);
      total.cycles += one.cycles;
      if (one.rc != 0) {
        total.rc = one.rc;
        break;
      }
    }
    return total;
  }
  std::vector<std::span<const std::uint8_t>> src;
  for (std::uint32_t i = 0; i < spec_.shape.inputs; ++i) {
    if (const KernelRegion* r = call.input(i)) src.emplace_back(r->bytes);
  }
  std::vector<std::span<std::uint8_t>> dst;
  std::vector<KernelRegion*> outputs;
  for (std::uint32_t i = 0; i < spec_.shape.outputs; ++i) {
    if (KernelRegion* r = call.output(i)) {
      dst.push_back(r->bytes);
      outputs.push_back(r);
    }
  }
  std::vector<std::uint32_t> lengths;
  total = invoke(user, src, dst, &lengths);
  for (std::size_t i = 0; i < outputs.size(); ++i)
    outputs[i]->result_length = std::min<std::uint32_t>(lengths[i], outputs[i]->size);
  return total;
}

}  // namespace naa::sim
