// A stand-in kernel plug-in for the loader's error cases (check_kernel_plugin.sh): the entry point
// naa_add_kernel() generates, with the ABI, naa version, function code and model chosen by -D.
// Its RTL factory never succeeds; naa-sim must refuse it before asking for one, or report that.
#include <string>

#include "naa/rtl/kernel_plugin.hpp"

namespace {

naa::rtl::KernelPort* make_rtl(const naa::rtl::RtlOptions& /*options*/, std::string* error) {
  *error = "a stand-in plug-in has no RTL";
  return nullptr;
}

const naa::rtl::KernelPluginInfo kInfo{
    FAKE_ABI, FAKE_VERSION, "fake", FAKE_FN, 64, naa::rtl::KernelShape{}, &make_rtl, nullptr};

}  // namespace

extern "C" __attribute__((visibility("default"))) const naa::rtl::KernelPluginInfo*
naa_kernel_plugin_v1() {
  return &kInfo;
}
