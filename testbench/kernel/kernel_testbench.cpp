// The generic kernel testbench (naa/rtl/kernel_testbench.hpp).
#include "naa/rtl/kernel_testbench.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace naa::rtl {

std::uint64_t KernelRandom::next() {
  std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t KernelRandom::below(std::uint64_t n) {
  return n == 0 ? 0 : next() % n;
}

std::uint32_t KernelRandom::region_size(std::uint32_t width, std::uint32_t max_bytes) {
  if (percent(50)) {
    const std::uint32_t edges[] = {0, 1, width - 1, width, width + 1, 2 * width, 2 * width + 1};
    const std::uint32_t e = edges[below(std::size(edges))];
    if (e <= max_bytes) return e;
  }
  return static_cast<std::uint32_t>(below(std::uint64_t{max_bytes} + 1));
}

KernelBytes KernelRandom::bytes(std::size_t n) {
  const std::uint64_t pattern = below(16);
  KernelBytes b(n, pattern < 2 ? 0xFF : 0x00);
  if (pattern >= 3) {
    for (auto& x : b)
      x = static_cast<std::uint8_t>(next());
  }
  return b;
}

namespace {

// What one side (model or RTL) gave during a call, read at its ports: the dst packets as they
// moved (every byte, whatever the buffer's capacity) and ap_return at ap_done.
struct PortResult {
  bool done = false;
  std::uint32_t rc = 0;
  std::vector<KernelBytes> packets;
};

// A port between the driver (or the lockstep pair) and a kernel that counts its cycles and,
// during a call, records what it gives, so that model and RTL results can be compared with each
// other and with the golden function independently of the dst buffers' capacities.
class Tap final : public KernelPort {
 public:
  explicit Tap(std::unique_ptr<KernelPort> inner) : inner_(std::move(inner)) {}
  [[nodiscard]] std::string_view block() const noexcept override { return inner_->block(); }
  [[nodiscard]] std::uint32_t width() const noexcept override { return inner_->width(); }
  KernelOutputs step(const KernelInputs& in) override {
    const KernelOutputs o = inner_->step(in);
    ++cycles_;
    if (recording_ && in.rst_n) record(in, o);
    return o;
  }
  void start() {
    result_ = PortResult{};
    open_ = false;
    recording_ = true;
  }
  void stop() { recording_ = false; }
  [[nodiscard]] const PortResult& result() const { return result_; }
  [[nodiscard]] std::uint64_t cycles() const { return cycles_; }

 private:
  void record(const KernelInputs& in, const KernelOutputs& o) {
    if (o.dst_valid && in.dst_ready) {
      if (!open_) result_.packets.emplace_back();
      open_ = !o.dst.last;
      for (std::uint32_t i = 0; i < width(); ++i) {
        if ((o.dst.keep >> i) & 1U) result_.packets.back().push_back(o.dst.data[i]);
      }
    }
    if (o.ap_done && !result_.done) {
      result_.done = true;
      result_.rc = o.ap_return;
    }
  }
  std::unique_ptr<KernelPort> inner_;
  std::uint64_t cycles_ = 0;
  bool recording_ = false;
  bool open_ = false;
  PortResult result_;
};

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// The first difference between an expected and an actual set of dst packets and return code.
std::optional<std::string> compare(std::uint32_t expected_rc,
                                   const std::vector<KernelBytes>& expected, const PortResult& got,
                                   const char* expected_name, const char* actual_name) {
  const auto both = [&](const std::string& e, const std::string& a) {
    return std::string(expected_name) + " " + e + ", " + actual_name + " " + a;
  };
  if (expected_rc != got.rc) return "ap_return: " + both(hex(expected_rc), hex(got.rc));
  if (expected.size() != got.packets.size()) {
    return "dst packets: " +
           both(std::to_string(expected.size()), std::to_string(got.packets.size()));
  }
  for (std::size_t p = 0; p < expected.size(); ++p) {
    const KernelBytes& e = expected[p];
    const KernelBytes& a = got.packets[p];
    const std::size_t n = std::min(e.size(), a.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (e[i] != a[i]) {
        return "dst packet " + std::to_string(p) + " byte " + std::to_string(i) + ": " +
               both(hex(e[i]), hex(a[i]));
      }
    }
    if (e.size() != a.size()) {
      return "dst packet " + std::to_string(p) +
             " result length: " + both(std::to_string(e.size()), std::to_string(a.size()));
    }
  }
  return std::nullopt;
}

// The src packets as beats, the way run_kernel offers them (kernel_driver.hpp).
std::vector<StreamBeat> to_beats(const std::vector<KernelBytes>& packets, std::uint32_t w) {
  std::vector<StreamBeat> beats;
  for (const KernelBytes& p : packets) {
    std::size_t at = 0;
    do {
      StreamBeat b;
      const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(w, p.size() - at));
      if (n != 0) std::memcpy(b.data.data(), p.data() + at, n);
      b.keep = keep_mask(n);
      at += n;
      b.last = at == p.size();
      beats.push_back(b);
    } while (at < p.size());
  }
  return beats;
}

// Starts `call` and resets the kernel a random number of cycles into it: the call accepted,
// part of src taken, dst now ready and now not (a reset "in the middle of a transfer"). The
// driver keeps the stream rules up to the reset (a waiting beat stays).
void interrupt(KernelPort& port, const KernelCallSpec& call, KernelRandom& random) {
  const std::vector<StreamBeat> beats = to_beats(call.src, port.width());
  const std::uint64_t cut = 1 + random.below(beats.size() + 3);
  KernelInputs in;
  in.user = call.user & 0xFFFFFFU;
  bool started = false;
  std::size_t next = 0;
  for (std::uint64_t c = 0; c < cut; ++c) {
    in.ap_start = !started;
    in.src_valid = next < beats.size();
    if (in.src_valid) in.src = beats[next];
    in.dst_ready = random.percent(50);
    const KernelOutputs out = port.step(in);
    if (in.ap_start && out.ap_ready) started = true;
    if (in.src_valid && out.src_ready) ++next;
  }
  reset_kernel(port, 1 + static_cast<std::uint32_t>(random.below(2)));
}

// Idle / back-pressure patterns, in percent; full rate twice as often as any other, so that the
// full-rate cycle check runs on a good share of the calls.
constexpr std::pair<std::uint32_t, std::uint32_t> kPatterns[] = {
    {0, 0}, {0, 0}, {25, 0}, {0, 40}, {50, 50}, {10, 80}, {80, 10}};

// Edge sizes seen at one width: 0, 1, W-1, W, W+1, > 2W.
std::uint32_t size_bits(std::size_t s, std::uint32_t w) {
  std::uint32_t bits = 0;
  if (s == 0) bits |= 1U;
  if (s == 1) bits |= 2U;
  if (s + 1 == w) bits |= 4U;
  if (s == w) bits |= 8U;
  if (s == std::size_t{w} + 1) bits |= 16U;
  if (s > 2 * std::size_t{w}) bits |= 32U;
  return bits;
}
constexpr std::uint32_t kAllSizes = 63;

// One width's run; returns false at the first failure (recorded in the report).
class WidthRun {
 public:
  WidthRun(const KernelTestbenchConfig& config, const KernelTestbenchOptions& options,
           std::uint32_t width, KernelTestbenchReport& report)
      : config_(config),
        options_(options),
        w_(width),
        report_(report),
        random_(kernel_width_seed(options.seed, width)) {}

  bool run() {
    const bool ok = body();
    if (rtl_ != nullptr) report_.cycles += rtl_->cycles();
    return ok;
  }

 private:
  bool body() {
    if (!build()) return false;
    reset_kernel(*top_, 2);
    std::uint32_t sizes = 0;
    for (call_ = 0; call_ < options_.calls; ++call_) {
      try {
        if (random_.percent(options_.reset_percent)) {
          const KernelCallSpec cut = make_call();
          interrupt(*top_, cut, random_);
          ++report_.resets;
          if (!healthy("during a reset in the middle of a call, before this call")) return false;
        }
        const KernelCallSpec call = make_call();
        for (const KernelBytes& p : call.src)
          sizes |= size_bits(p.size(), w_);
        if (!one_call(call)) return false;
      } catch (const std::exception& e) {
        return fail(rtl_->cycles(), std::string("threw: ") + e.what());
      }
      ++report_.calls;
    }
    if (sizes != kAllSizes) report_.edge_sizes = false;
    if (options_.log != nullptr) {
      *options_.log << "kernel " << config_.name << " W=" << w_ << ": " << options_.calls
                    << " calls, " << rtl_->cycles() << " cycles"
                    << (sizes == kAllSizes ? "" : " (not every edge size drawn)") << "\n";
    }
    return true;
  }

  bool build() {
    RtlOptions ro;
    ro.x_seed = static_cast<std::uint32_t>(random_.next()) | 1U;  // 0 would mean "flops at 0"
    std::unique_ptr<KernelPort> rtl = config_.make_rtl(w_, ro);
    if (!rtl) return fail(0, "no RTL at this width");
    if (rtl->width() != w_) {
      return fail(0, "the RTL is " + std::to_string(rtl->width()) + " bytes per beat");
    }
    auto rtl_tap = std::make_unique<Tap>(std::move(rtl));
    rtl_ = rtl_tap.get();
    if (!config_.make_model) {
      top_ = std::move(rtl_tap);
      return true;
    }
    std::unique_ptr<KernelPort> model = config_.make_model(w_);
    if (!model) return fail(0, "no model at this width");
    auto model_tap = std::make_unique<Tap>(std::move(model));
    model_ = model_tap.get();
    try {
      auto pair = std::make_unique<KernelLockstep>(std::move(model_tap), std::move(rtl_tap));
      lockstep_ = pair.get();
      top_ = std::move(pair);
    } catch (const std::invalid_argument& e) {
      return fail(0, e.what());
    }
    report_.lockstep = true;
    return true;
  }

  KernelCallSpec make_call() {
    if (config_.make_call) return config_.make_call(random_, w_);
    return default_kernel_call(config_.shape, random_, w_, config_.max_region_bytes);
  }

  // No divergence, no failed assertion.
  bool healthy(const std::string& when) {
    if (lockstep_ != nullptr && lockstep_->checker().diverged()) {
      const Divergence& d = *lockstep_->checker().divergence();
      return fail(d.cycle, d.to_string() + " (" + when + ")");
    }
    if (config_.assertion_failed) {
      const std::string a = config_.assertion_failed();
      if (!a.empty()) return fail(rtl_->cycles() - 1, "assertion failed: " + a + " (" + when + ")");
    }
    return true;
  }

  bool one_call(const KernelCallSpec& call) {
    std::vector<std::span<const std::uint8_t>> src(call.src.begin(), call.src.end());
    std::vector<KernelBytes> buffers;
    for (const std::uint32_t c : call.dst_capacity)
      buffers.emplace_back(c);
    std::vector<std::span<std::uint8_t>> dst(buffers.begin(), buffers.end());
    const auto& [idle, stall] = kPatterns[random_.below(std::size(kPatterns))];
    KernelDriveOptions drive;
    drive.src_idle_percent = idle;
    drive.dst_stall_percent = stall;
    drive.seed = random_.next();
    drive.stall_cycles = options_.stall_cycles;

    const std::uint64_t first = rtl_->cycles();
    rtl_->start();
    if (model_ != nullptr) model_->start();
    const KernelInvocation inv = run_kernel(*top_, call.user, src, dst, drive);
    rtl_->stop();
    if (model_ != nullptr) model_->stop();
    const std::uint64_t last = rtl_->cycles() - 1;
    const std::string when = "call from cycle " + std::to_string(first) + ", src " +
                             describe(call) + ", src idle " + std::to_string(idle) +
                             "%, dst stall " + std::to_string(stall) + "%";

    if (!healthy(when)) return false;
    if (!inv.error.empty()) return fail(last, "contract: " + inv.error + " (" + when + ")");
    const PortResult& got = rtl_->result();
    if (model_ != nullptr) {
      const PortResult& expected = model_->result();
      if (auto d = compare(expected.rc, expected.packets, got, "model", "RTL")) {
        return fail(last, "results: " + *d + " (" + when + ")");
      }
    }
    if (config_.golden) {
      if (const std::optional<KernelExpected> g = config_.golden(call)) {
        ++report_.golden_checked;
        const PortResult& checked = model_ != nullptr ? model_->result() : got;
        if (auto d =
                compare(g->rc, g->dst, checked, "golden", model_ != nullptr ? "model" : "RTL")) {
          return fail(last, "results: " + *d + " (" + when + ")");
        }
      }
    }
    if (idle == 0 && stall == 0 && config_.full_rate_cycles) {
      if (const std::optional<std::uint64_t> c = config_.full_rate_cycles(call, w_)) {
        ++report_.timed;
        if (*c != inv.cycles) {
          return fail(last, "cycles at full rate: expected " + std::to_string(*c) + ", took " +
                                std::to_string(inv.cycles) + " (" + when + ")");
        }
      }
    }
    return true;
  }

  static std::string describe(const KernelCallSpec& call) {
    std::string s = "[";
    for (std::size_t i = 0; i < call.src.size(); ++i)
      s += (i == 0 ? "" : ", ") + std::to_string(call.src[i].size());
    return s + "] bytes, user " + hex(call.user);
  }

  bool fail(std::uint64_t cycle, std::string what) {
    report_.failure = KernelFailure{config_.name, w_, options_.seed, call_, cycle, std::move(what)};
    return false;
  }

  const KernelTestbenchConfig& config_;
  const KernelTestbenchOptions& options_;
  std::uint32_t w_;
  KernelTestbenchReport& report_;
  KernelRandom random_;
  std::uint32_t call_ = 0;
  std::unique_ptr<KernelPort> top_;
  Tap* rtl_ = nullptr;
  Tap* model_ = nullptr;
  KernelLockstep* lockstep_ = nullptr;
};

}  // namespace

std::string KernelFailure::to_string() const {
  return "kernel " + kernel + ", W=" + std::to_string(width) + ", call " + std::to_string(call) +
         ", cycle " + std::to_string(cycle) + ": " + what + " (replay: seed " +
         std::to_string(seed) + ", NAA_TEST_SEED=" + std::to_string(seed) +
         " for a test, naa-kernel-check --seed " + std::to_string(seed) + ")";
}

std::string KernelTestbenchReport::summary() const {
  std::ostringstream s;
  s << (passed() ? "PASS" : "FAIL") << ": " << calls << " calls, " << resets
    << " resets mid-transfer, " << cycles << " cycles; "
    << (lockstep ? "model in lockstep" : "no model (contract checks only)") << ", "
    << golden_checked << " calls against the golden function, " << timed
    << " full-rate calls timed";
  if (failure) s << "\n" << failure->to_string();
  return s.str();
}

KernelCallSpec default_kernel_call(const KernelShape& shape, KernelRandom& random,
                                   std::uint32_t width, std::uint32_t max_bytes) {
  KernelCallSpec call;
  call.user = static_cast<std::uint32_t>(random.next()) & 0xFFFFFFU;
  const std::uint32_t inputs = shape.in_place ? 1 : shape.inputs;
  std::uint64_t total = 0;
  for (std::uint32_t i = 0; i < inputs; ++i) {
    call.src.push_back(random.bytes(random.region_size(width, max_bytes)));
    total += call.src.back().size();
  }
  if (shape.in_place) {
    call.dst_capacity.push_back(static_cast<std::uint32_t>(call.src[0].size()));
  } else {
    call.dst_capacity.assign(shape.outputs, static_cast<std::uint32_t>(total + width));
  }
  return call;
}

std::uint64_t kernel_width_seed(std::uint64_t seed, std::uint32_t width) {
  return KernelRandom(seed ^ (std::uint64_t{width} << 32 | width)).next();
}

KernelTestbenchReport run_kernel_testbench(const KernelTestbenchConfig& config,
                                           const KernelTestbenchOptions& options) {
  if (!config.make_rtl || config.widths.empty()) {
    throw std::invalid_argument("kernel testbench " + config.name +
                                ": make_rtl and at least one width are required");
  }
  KernelTestbenchReport report;
  for (const std::uint32_t w : config.widths) {
    if (!WidthRun(config, options, w, report).run()) break;
  }
  return report;
}

}  // namespace naa::rtl
