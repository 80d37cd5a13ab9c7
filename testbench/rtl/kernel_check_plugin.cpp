// A kernel plug-in for naa-kernel-check's own tests (testbench/rtl/CMakeLists.txt): the entry
// point naa_add_kernel() generates (naa/rtl/kernel_plugin.hpp), with add_const's C++ model (W = 16,
// in place) standing in for the RTL, so the program is tested without Verilating anything.
// Built in variants by -D:
//   PLUGIN_MODEL   1: the plug-in carries a model (add_const's), 0: none (contract checks only)
//   PLUGIN_DEFECT  0: none; 1: the "RTL" flips a bit of one dst beat, the 39th (a datapath bug, for
//                  lockstep); 2: it drops byte 0 from TKEEP on every beat (a contract breach)
#include <memory>
#include <string>

#include "naa/rtl/add_const.hpp"
#include "naa/rtl/kernel_plugin.hpp"

namespace {

using namespace naa::rtl;

class StandIn final : public KernelPort {
 public:
  std::string_view block() const noexcept override { return "add_const"; }
  std::uint32_t width() const noexcept override { return inner_.width(); }
  KernelOutputs step(const KernelInputs& in) override {
    KernelOutputs o = inner_.step(in);
    if (o.dst_valid && in.dst_ready) ++beats_;
    if (PLUGIN_DEFECT == 1 && o.dst_valid && beats_ == 39) o.dst.data[0] ^= 0x10;
    if (PLUGIN_DEFECT == 2 && o.dst_valid) o.dst.keep &= ~1ULL;
    return o;
  }

 private:
  AddConstModel inner_{16};
  int beats_ = 0;
};

KernelPort* make_rtl(const RtlOptions& /*options*/, std::string* /*error*/) {
  return new StandIn();
}

KernelPort* make_model() {
  return new AddConstModel(16);
}

const KernelPluginInfo kInfo{kKernelPluginAbi,
                             NAA_VERSION,
                             "add_const",
                             100,
                             16,
                             KernelShape{1, 1, true},
                             &make_rtl,
                             PLUGIN_MODEL ? &make_model : nullptr};

}  // namespace

extern "C" __attribute__((visibility("default"))) const naa::rtl::KernelPluginInfo*
naa_kernel_plugin_v1() {
  return &kInfo;
}
