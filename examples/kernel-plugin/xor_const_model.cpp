// The C++ cycle model of xor_const.v: the same outputs in every cycle, which lockstep checks
// (naa-sim --kernels=lockstep). One step() is one clock cycle (naa/rtl/kernel_port.hpp): the
// outputs of the cycle from the inputs and the state, then the state at the rising edge.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "naa/rtl/kernel_models.hpp"  // KernelCtrlModel: the ap_ctrl_hs states, as xor_const.v has
#include "naa/rtl/kernel_plugin.hpp"  // naa_kernel_model(), which the plug-in calls

namespace {

class XorConstModel final : public naa::rtl::KernelPort {
 public:
  explicit XorConstModel(std::uint32_t width) : width_(width) {
    if (!naa::rtl::is_supported_width(width)) {
      throw std::invalid_argument("xor_const: width " + std::to_string(width));
    }
  }
  [[nodiscard]] std::string_view block() const noexcept override { return "xor_const"; }
  [[nodiscard]] std::uint32_t width() const noexcept override { return width_; }

  naa::rtl::KernelOutputs step(const naa::rtl::KernelInputs& in) override {
    if (!in.rst_n) {  // asynchronous reset: the outputs of this cycle show it already
      ctrl_.reset();
      took_last_ = false;
      valid_ = false;
    }
    naa::rtl::KernelOutputs out;
    ctrl_.outputs(in, out);  // ap_idle, ap_ready, ap_done
    out.ap_return = 0;
    out.src_ready = ctrl_.running() && !took_last_ && (!valid_ || in.dst_ready);
    out.dst_valid = valid_;
    out.dst = reg_;
    if (!in.rst_n) return out;

    // The rising edge.
    const bool load = ctrl_.load(in);
    const bool take = in.src_valid && out.src_ready;
    const bool finish = valid_ && in.dst_ready && reg_.last;
    if (load) key_ = static_cast<std::uint8_t>(in.user & 0xFFU);
    if (load) {
      took_last_ = false;
    } else if (take && in.src.last) {
      took_last_ = true;
    }
    if (take) {
      reg_ = naa::rtl::StreamBeat{};
      reg_.keep = in.src.keep & naa::rtl::keep_mask(width_);
      reg_.last = in.src.last;
      for (std::uint32_t i = 0; i < width_; ++i) {
        if ((reg_.keep >> i) & 1U) reg_.data[i] = static_cast<std::uint8_t>(in.src.data[i] ^ key_);
      }
      valid_ = true;
    } else if (in.dst_ready) {
      valid_ = false;
    }
    ctrl_.edge(in, finish);
    return out;
  }

 private:
  std::uint32_t width_;
  naa::rtl::KernelCtrlModel ctrl_;
  bool took_last_ = false;
  bool valid_ = false;  // dst_TVALID: the output register holds a beat
  std::uint8_t key_ = 0;
  naa::rtl::StreamBeat reg_;
};

}  // namespace

// The plug-in's model (naa_add_kernel MODEL): called with the plug-in's WIDTH.
std::unique_ptr<naa::rtl::KernelPort> naa_kernel_model(std::uint32_t width) {
  return std::make_unique<XorConstModel>(width);
}
