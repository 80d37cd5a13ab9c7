// The kernel port's comparison and lockstep pair (naa/rtl/kernel_port.hpp).
#include "naa/rtl/kernel_port.hpp"

#include <cstdio>
#include <stdexcept>

#include "compare.hpp"

namespace naa::rtl {

namespace {

std::string hex(std::uint64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::optional<PortMismatch> first_mismatch(const KernelPort& shape, const KernelOutputs& expected,
                                           const KernelOutputs& actual) {
  if (auto m = detail::compare_bool("ap_ready", expected.ap_ready, actual.ap_ready)) return m;
  if (auto m = detail::compare_bool("ap_idle", expected.ap_idle, actual.ap_idle)) return m;
  if (auto m = detail::compare_bool("ap_done", expected.ap_done, actual.ap_done)) return m;
  if (expected.ap_done && expected.ap_return != actual.ap_return) {
    return PortMismatch{"ap_return", hex(expected.ap_return), hex(actual.ap_return)};
  }
  if (auto m = detail::compare_bool("src_TREADY", expected.src_ready, actual.src_ready)) return m;
  if (auto m = detail::compare_bool("dst_TVALID", expected.dst_valid, actual.dst_valid)) return m;
  if (!expected.dst_valid) return std::nullopt;
  const std::uint32_t w = shape.width();
  const std::uint64_t keep = expected.dst.keep & keep_mask(w);
  if (keep != (actual.dst.keep & keep_mask(w))) {
    return PortMismatch{"dst_TKEEP", hex(keep), hex(actual.dst.keep & keep_mask(w))};
  }
  if (auto m = detail::compare_bool("dst_TLAST", expected.dst.last, actual.dst.last)) return m;
  // Only the bytes in the packet: TDATA under a clear TKEEP bit is don't-care.
  for (std::uint32_t i = 0; i < w; ++i) {
    if (((keep >> i) & 1U) != 0 && expected.dst.data[i] != actual.dst.data[i]) {
      const std::span<const std::uint8_t> e(expected.dst.data.data(), w);
      const std::span<const std::uint8_t> a(actual.dst.data.data(), w);
      return PortMismatch{"dst_TDATA (byte " + std::to_string(i) + ")", to_hex(e), to_hex(a)};
    }
  }
  return std::nullopt;
}

KernelLockstep::KernelLockstep(std::unique_ptr<KernelPort> model, std::unique_ptr<KernelPort> rtl,
                               LockstepChecker::Handler on_divergence)
    : model_(std::move(model)),
      rtl_(std::move(rtl)),
      checker_(model_ ? std::string(model_->block()) : std::string(), std::move(on_divergence)) {
  if (!model_ || !rtl_) throw std::invalid_argument("kernel lockstep: model and RTL are required");
  if (model_->width() != rtl_->width()) {
    throw std::invalid_argument("kernel lockstep " + std::string(model_->block()) +
                                ": the model is " + std::to_string(model_->width()) +
                                " bytes per beat, the RTL " + std::to_string(rtl_->width()));
  }
}

KernelOutputs KernelLockstep::step(const KernelInputs& in) {
  KernelOutputs expected = model_->step(in);
  const KernelOutputs actual = rtl_->step(in);
  checker_.check(first_mismatch(*model_, expected, actual));
  return expected;
}

}  // namespace naa::rtl
