// naa-kernel-check: the generic kernel testbench (naa/rtl/kernel_testbench.hpp) on a kernel
// plug-in (naa_add_kernel(), naa/rtl/kernel_plugin.hpp), for a kernel's author before naa-sim
// runs it (docs/rtl/kernel-shell.md "Testing your kernel"). With a model in the plug-in: model and
// RTL in lockstep and their results compared; without: the contract checks only (stalls, TKEEP
// rules, packet counts).
// Usage: naa-kernel-check PLUGIN.so [--calls N] [--seed S]
// Exit status: 0 passed, 1 the kernel failed, 2 bad options or a plug-in that does not load.
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "naa/rtl/kernel_plugin.hpp"
#include "naa/rtl/kernel_testbench.hpp"

namespace {

constexpr const char* kUsage =
    "usage: naa-kernel-check PLUGIN.so [--calls N] [--seed S]\n"
    "  runs the generic kernel testbench on a kernel plug-in (naa_add_kernel):\n"
    "  --calls N  calls at the plug-in's width (default 500)\n"
    "  --seed S   seed of the random calls, decimal or 0x hex (default: random, printed)\n";

struct CheckOptions {
  std::string plugin;
  std::uint32_t calls = 500;
  std::optional<std::uint64_t> seed;
};

// A number in full (decimal, or 0x hex when hex is allowed), or nullopt.
std::optional<std::uint64_t> number(std::string_view text, bool hex) {
  const std::string s(text);
  if (s.empty() || s[0] == '-' || s[0] == '+' || s[0] == ' ') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), &end, hex ? 0 : 10);
  if (errno != 0 || end == s.c_str() || *end != '\0') return std::nullopt;
  return v;
}

// The command line, or the reason it is wrong (empty when --help was asked for: `help`).
std::optional<CheckOptions> parse(int argc, char** argv, std::string& why, bool& help) {
  CheckOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "-h" || a == "--help") {
      help = true;
      return std::nullopt;
    }
    if (a == "--calls" || a == "--seed") {
      if (!has_value) {
        why = std::string(a) + " needs a value";
        return std::nullopt;
      }
      const std::string_view v = argv[++i];
      const auto n = number(v, a == "--seed");
      if (a == "--calls") {
        if (!n || *n == 0 || *n > 10'000'000) {
          why = "--calls " + std::string(v) + ": not a number of calls in 1..10000000";
          return std::nullopt;
        }
        o.calls = static_cast<std::uint32_t>(*n);
      } else {
        if (!n) {
          why = "--seed " + std::string(v) + ": not a seed (a decimal or 0x hex 64-bit number)";
          return std::nullopt;
        }
        o.seed = *n;
      }
    } else if (a.starts_with("-")) {
      why = "unknown option " + std::string(a);
      return std::nullopt;
    } else if (o.plugin.empty()) {
      o.plugin = a;
    } else {
      why = "one plug-in only (" + o.plugin + ", then " + std::string(a) + ")";
      return std::nullopt;
    }
  }
  if (o.plugin.empty()) {
    why = "no plug-in given";
    return std::nullopt;
  }
  return o;
}

int run(const CheckOptions& o) {
  std::shared_ptr<naa::rtl::KernelPlugin> plugin;
  try {
    plugin = naa::rtl::KernelPlugin::load(o.plugin);
  } catch (const naa::rtl::KernelPluginError& e) {
    std::cerr << "naa-kernel-check: " << e.what() << "\n";
    return 2;
  }
  const naa::rtl::KernelPluginInfo& info = plugin->info();
  naa::rtl::KernelTestbenchConfig config;
  config.name = info.name;
  config.shape = info.shape;
  config.widths = {info.width};
  // The plug-in's RTL runs in its own Verilator context (session null); its assertions end the
  // program with their message.
  config.make_rtl = [plugin](std::uint32_t, const naa::rtl::RtlOptions& options) {
    naa::rtl::RtlOptions own = options;
    own.session = nullptr;
    return plugin->make_rtl(own);
  };
  if (plugin->has_model()) {
    config.make_model = [plugin](std::uint32_t) { return plugin->make_model(); };
  }
  naa::rtl::KernelTestbenchOptions options;
  options.seed =
      o.seed ? *o.seed : (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  options.calls = o.calls;
  options.log = &std::cout;
  std::cout << "naa-kernel-check: " << info.name << " (function " << unsigned{info.function_code}
            << ", W=" << info.width << ", "
            << (info.shape.in_place ? std::string("in place")
                                    : std::to_string(info.shape.inputs) + " in, " +
                                          std::to_string(info.shape.outputs) + " out")
            << ", " << (plugin->has_model() ? "with" : "without") << " a model), seed "
            << options.seed << "\n";
  naa::rtl::KernelTestbenchReport report;
  try {
    report = naa::rtl::run_kernel_testbench(config, options);
  } catch (const std::exception& e) {
    std::cerr << "naa-kernel-check: " << e.what() << "\n";
    return 2;
  }
  std::cout << report.summary() << "\n";
  return report.passed() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string why;
  bool help = false;
  const std::optional<CheckOptions> o = parse(argc, argv, why, help);
  if (help) {
    std::cout << kUsage;
    return 0;
  }
  if (!o) {
    std::cerr << "naa-kernel-check: " << why << "\n" << kUsage;
    return 2;
  }
  return run(*o);
}
