// Kernel plug-ins (docs/rtl/kernel-shell.md "Plug-ins"): a shared library built by
// naa_add_kernel() from a user's kernel module, carrying its Verilated RTL inside the kernel shell
// and optionally its C++ cycle model. naa-sim --kernel PATH.so and naa-kernel-check load them.
//
// The ABI: the library exports one C symbol, kKernelPluginSymbol, a function returning a pointer
// to a static KernelPluginInfo, and nothing else (naa_add_kernel links it with a version script,
// -Bsymbolic and --exclude-libs,ALL). The library links its own copy of the Verilator runtime, so
// the RTL it makes runs in its own VerilatedContext: RtlOptions::session must be null, and the
// program that loads it may have a Verilator runtime of its own (naa-sim does) without the two
// ever binding to each other's symbols. Ports cross the boundary as KernelPort objects; both
// sides must be built with the same compiler and C++ library, which the exact naa version check
// stands for (a naa installation is built with one toolchain).
//
// The model (naa_add_kernel MODEL <files>): the user's sources define naa_kernel_model() below,
// returning their class derived from KernelPort at the plug-in's width.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "naa/rtl/kernel_driver.hpp"
#include "naa/rtl/kernel_port.hpp"
#include "naa/rtl/rtl_options.hpp"

namespace naa::rtl {

// Bumped whenever KernelPluginInfo, KernelPort, KernelInputs/Outputs, RtlOptions or StreamBeat
// change shape.
inline constexpr std::uint32_t kKernelPluginAbi = 1;
inline constexpr const char* kKernelPluginSymbol = "naa_kernel_plugin_v1";

struct KernelPluginInfo {
  std::uint32_t abi;           // kKernelPluginAbi of the naa it was built against
  const char* naa_version;     // that naa's version (PROJECT_VERSION), must equal the loader's
  const char* name;            // the kernel's top module
  std::uint8_t function_code;  // 1..127
  std::uint32_t width;         // bytes per beat of src and dst
  KernelShape shape;
  // A new RTL instance (owned by the caller), or nullptr with *error set.
  KernelPort* (*make_rtl)(const RtlOptions& options, std::string* error);
  // A new model instance, or nullptr if the plug-in carries no model (naa_add_kernel MODEL).
  KernelPort* (*make_model)();
};

// What can go wrong loading a plug-in; what() is the message for the user.
class KernelPluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One loaded plug-in (the library stays loaded while this object and the ports it made live:
// every port holds a reference to it).
class KernelPlugin : public std::enable_shared_from_this<KernelPlugin> {
 public:
  // Loads `path`; throws KernelPluginError (not a shared library, missing symbol, another ABI or
  // naa version, a function code outside 1..127, a width the ports cannot carry, a shape without
  // src or dst packets).
  [[nodiscard]] static std::shared_ptr<KernelPlugin> load(const std::string& path);
  // Loads every path and refuses two plug-ins with one function code, or a plug-in whose function
  // code is in `taken` (the built-in kernels'): throws KernelPluginError naming both.
  [[nodiscard]] static std::vector<std::shared_ptr<KernelPlugin>> load_all(
      std::span<const std::string> paths, std::span<const std::uint8_t> taken);
  ~KernelPlugin();
  KernelPlugin(const KernelPlugin&) = delete;
  KernelPlugin& operator=(const KernelPlugin&) = delete;

  [[nodiscard]] const KernelPluginInfo& info() const noexcept { return *info_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] bool has_model() const noexcept { return info_->make_model != nullptr; }
  // Throw KernelPluginError if the plug-in cannot make one.
  [[nodiscard]] std::unique_ptr<KernelPort> make_rtl(const RtlOptions& options) const;
  [[nodiscard]] std::unique_ptr<KernelPort> make_model() const;

 private:
  KernelPlugin(std::string path, void* handle, const KernelPluginInfo* info);
  // The port, wrapped so that it keeps this plug-in loaded.
  std::unique_ptr<KernelPort> hold(KernelPort* port) const;
  std::string path_;
  void* handle_;
  const KernelPluginInfo* info_;
};

// The naa version plug-ins must have been built against: this build's PROJECT_VERSION.
[[nodiscard]] const char* kernel_plugin_naa_version() noexcept;

}  // namespace naa::rtl

// Defined by the MODEL sources of a plug-in (naa_add_kernel MODEL, docs/rtl/kernel-shell.md
// "Plug-ins"): a new instance of the kernel's C++ cycle model at `width` bytes per beat (the
// plug-in's WIDTH). A plain function rather than a registration macro, so that a missing or
// misspelt definition is a link error of the plug-in, not a load-time surprise.
std::unique_ptr<naa::rtl::KernelPort> naa_kernel_model(std::uint32_t width);
