// The kernel plug-in loader (naa/rtl/kernel_plugin.hpp, docs/rtl/kernel-shell.md "Plug-ins").
#include "naa/rtl/kernel_plugin.hpp"

#include <dlfcn.h>

#include <cstring>
#include <string_view>
#include <utility>

#ifndef NAA_VERSION
#error "NAA_VERSION (the project version) must be defined by the build"
#endif

namespace naa::rtl {

namespace {

using InfoFunction = const KernelPluginInfo* (*)();

// A port made by a plug-in, holding the plug-in: the port's code (its vtable) lives in the
// library, which must not be unloaded before the port is destroyed. One more virtual call per
// cycle, next to a Verilated eval() negligible.
class HeldPort final : public KernelPort {
 public:
  HeldPort(std::shared_ptr<const KernelPlugin> plugin, KernelPort* port)
      : plugin_(std::move(plugin)), port_(port) {}
  ~HeldPort() override { port_.reset(); }  // before plugin_ (declaration order says so too)
  [[nodiscard]] std::string_view block() const noexcept override { return port_->block(); }
  [[nodiscard]] std::uint32_t width() const noexcept override { return port_->width(); }
  KernelOutputs step(const KernelInputs& in) override { return port_->step(in); }

 private:
  std::shared_ptr<const KernelPlugin> plugin_;
  std::unique_ptr<KernelPort> port_;
};

std::string describe(const KernelPluginInfo& info) {
  return std::string(info.name != nullptr ? info.name : "?") + " (function code " +
         std::to_string(info.function_code) + ")";
}

}  // namespace

const char* kernel_plugin_naa_version() noexcept {
  return NAA_VERSION;
}

KernelPlugin::KernelPlugin(std::string path, void* handle, const KernelPluginInfo* info)
    : path_(std::move(path)), handle_(handle), info_(info) {}

KernelPlugin::~KernelPlugin() {
  // RTLD_NODELETE (load()) keeps the code mapped anyway: a Verilator runtime registers
  // thread-local state and atexit handlers that must outlive any dlclose.
  if (handle_ != nullptr) (void)::dlclose(handle_);
}

std::shared_ptr<KernelPlugin> KernelPlugin::load(const std::string& path) {
  // A name without a slash would be looked up in the library path, not as a file: make it one.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  // RTLD_LOCAL: the plug-in's symbols (there is one) never serve other libraries. RTLD_NOW: an
  // unresolved symbol fails here, with its name, not in the middle of a call.
  void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    throw KernelPluginError(
        path + " is not a loadable kernel plug-in: " + (why != nullptr ? why : "dlopen failed"));
  }
  // Closes the handle on every error below.
  std::unique_ptr<void, int (*)(void*)> guard(handle, &::dlclose);
  (void)::dlerror();
  void* sym = ::dlsym(handle, kKernelPluginSymbol);
  if (sym == nullptr) {
    throw KernelPluginError(
        path + " is not a naa kernel plug-in: it has no symbol " + kKernelPluginSymbol +
        " (plug-ins are built with naa_add_kernel() of the installed naa " + NAA_VERSION + ")");
  }
  InfoFunction fn = nullptr;
  static_assert(sizeof(fn) == sizeof(sym));
  std::memcpy(&fn, &sym, sizeof(fn));  // POSIX: a data pointer from dlsym is a function's
  const KernelPluginInfo* info = fn();
  if (info == nullptr)
    throw KernelPluginError(path + ": " + kKernelPluginSymbol + " returned null");
  // The ABI number first: of another ABI, no other field can be trusted.
  if (info->abi != kKernelPluginAbi) {
    throw KernelPluginError(path + " was built against another naa (kernel plug-in ABI " +
                            std::to_string(info->abi) + "); this program is naa " + NAA_VERSION +
                            " with ABI " + std::to_string(kKernelPluginAbi) +
                            ": rebuild the plug-in against this installation");
  }
  const std::string version = info->naa_version != nullptr ? info->naa_version : "?";
  if (version != NAA_VERSION) {
    throw KernelPluginError(path + " was built against naa " + version + "; this program is naa " +
                            NAA_VERSION + ": rebuild the plug-in against this installation");
  }
  if (info->name == nullptr || *info->name == '\0' || info->make_rtl == nullptr) {
    throw KernelPluginError(path + ": the plug-in has no name or no RTL factory");
  }
  if (info->function_code < 1 || info->function_code > 127) {
    throw KernelPluginError(path + ": " + describe(*info) +
                            ": function codes are 1..127 (PROTOCOL.md 5.2)");
  }
  if (!is_supported_width(info->width)) {
    throw KernelPluginError(path + ": " + describe(*info) + ": WIDTH " +
                            std::to_string(info->width) + " is not in 1.." +
                            std::to_string(kMaxStreamBytes));
  }
  if (!info->shape.in_place && (info->shape.inputs == 0 || info->shape.outputs == 0)) {
    throw KernelPluginError(path + ": " + describe(*info) +
                            ": a kernel needs at least one input and one output region "
                            "(INPUTS, OUTPUTS) unless IN_PLACE");
  }
  guard.release();
  return std::shared_ptr<KernelPlugin>(new KernelPlugin(path, handle, info));
}

std::vector<std::shared_ptr<KernelPlugin>> KernelPlugin::load_all(
    std::span<const std::string> paths, std::span<const std::uint8_t> taken) {
  std::vector<std::shared_ptr<KernelPlugin>> plugins;
  for (const std::string& path : paths) {
    std::shared_ptr<KernelPlugin> p = load(path);
    const std::uint8_t fn = p->info().function_code;
    for (const std::uint8_t t : taken) {
      if (t == fn) {
        throw KernelPluginError(path + ": " + describe(p->info()) + ": function code " +
                                std::to_string(fn) +
                                " is taken by a built-in kernel (PROTOCOL.md 5.3); build the "
                                "plug-in with another FUNCTION");
      }
    }
    for (const auto& other : plugins) {
      if (other->info().function_code == fn) {
        throw KernelPluginError(path + ": " + describe(p->info()) + ": function code " +
                                std::to_string(fn) + " is taken by the plug-in " + other->path() +
                                " (" + other->info().name + ")");
      }
    }
    plugins.push_back(std::move(p));
  }
  return plugins;
}

std::unique_ptr<KernelPort> KernelPlugin::hold(KernelPort* port) const {
  return std::make_unique<HeldPort>(shared_from_this(), port);
}

std::unique_ptr<KernelPort> KernelPlugin::make_rtl(const RtlOptions& options) const {
  if (options.session) {
    throw KernelPluginError(path_ +
                            ": a plug-in's RTL runs in its own Verilator context, not in an "
                            "RtlSession of the program (RtlOptions::session must be null)");
  }
  std::string error;
  KernelPort* port = info_->make_rtl(options, &error);
  if (port == nullptr) {
    throw KernelPluginError(path_ + ": " + describe(*info_) + ": cannot make the RTL: " +
                            (error.empty() ? "no reason given" : error));
  }
  return hold(port);
}

std::unique_ptr<KernelPort> KernelPlugin::make_model() const {
  if (info_->make_model == nullptr) {
    throw KernelPluginError(path_ + ": " + describe(*info_) +
                            " carries no C++ model (build it with naa_add_kernel(... MODEL "
                            "<files>)); it runs only as RTL (--kernels=rtl)");
  }
  KernelPort* port = info_->make_model();
  if (port == nullptr) {
    throw KernelPluginError(path_ + ": " + describe(*info_) + ": its model factory returned null");
  }
  if (port->width() != info_->width) {
    const std::uint32_t w = port->width();
    delete port;
    throw KernelPluginError(path_ + ": " + describe(*info_) + ": the model has width " +
                            std::to_string(w) + ", the RTL " + std::to_string(info_->width));
  }
  return hold(port);
}

}  // namespace naa::rtl
