// HpuHandler (naa/sim/hpu_handler.hpp): loading a sPIN image and running its handlers on HPU cores
// through a bus that maps the HPU's address space (docs/spin.md "Memory map") and performs the
// actions of naa/spin.h's registers (seed 004, B.6).
#include "naa/sim/hpu_handler.hpp"

#include <algorithm>
#include <bit>
#include <fstream>
#include <iterator>
#include <optional>

#include "naa/protocol/mrsp.hpp"
#include "naa/rtl/hpu_run.hpp"

namespace naa::sim {
namespace {

using L = SpinLayout;

std::uint32_t u32(std::span<const std::uint8_t> b, std::size_t off) {
  return b[off] | b[off + 1] << 8 | b[off + 2] << 16 | static_cast<std::uint32_t>(b[off + 3]) << 24;
}
void put32(std::span<std::uint8_t> b, std::size_t off, std::uint32_t v) {
  for (unsigned i = 0; i < 4; ++i)
    b[off + i] = static_cast<std::uint8_t>(v >> (8 * i));
}
void put64(std::span<std::uint8_t> b, std::size_t off, std::uint64_t v) {
  put32(b, off, static_cast<std::uint32_t>(v));
  put32(b, off + 4, static_cast<std::uint32_t>(v >> 32));
}

// naa/spin.h's action codes and register offsets.
enum Action : std::uint32_t {
  kDmaToHost = 1,
  kPutFromDevice = 2,
  kPutFromHost = 3,
  kCas = 4,
  kFadd = 5,
  kDmaFromHost = 6,
  kCtInc = 7,
  kCtSet = 8,
  kCtGet = 9,
  kPutFromDevicePeer = 10,  // docs/spin.md "Puts to other nodes"
  kPutFromHostPeer = 11,
};
constexpr std::uint32_t kCommandOffset = 0x00;
constexpr std::uint32_t kResultOffset = 0x1C;
constexpr std::uint32_t kMaxActionBytes = 64 * 1024;

// One invocation's view of memory: what the HPU may touch, and the actions it asks for.
class InvocationBus final : public rtl::HpuBus {
 public:
  struct Area {
    std::uint32_t base = 0;
    std::span<std::uint8_t> bytes;
    bool writable = false;
    bool executable = false;
  };
  InvocationBus(HandlerContext& hc, std::vector<Area> areas) : hc_(hc), areas_(std::move(areas)) {}

  rtl::HpuBusResponse access(const rtl::HpuAccess& a) override {
    if (a.addr >= L::kMmio && a.addr < L::kMmio + L::kMmioSize) return mmio(a);
    rtl::HpuBusResponse rsp;
    const unsigned lo = static_cast<unsigned>(std::countr_zero(static_cast<unsigned>(a.be)));
    const unsigned n = static_cast<unsigned>(std::popcount(static_cast<unsigned>(a.be)));
    const std::uint32_t word = a.addr & ~3U;
    const Area* area = locate(word + lo, n);
    if (area == nullptr || (a.fetch && !area->executable) || (a.write && !area->writable)) {
      rsp.error = true;
      return rsp;
    }
    for (unsigned i = lo; i < lo + n; ++i) {
      std::uint8_t& byte = area->bytes[word + i - area->base];
      if (a.write) byte = static_cast<std::uint8_t>(a.wdata >> (8 * i));
      rsp.rdata |= std::uint32_t{byte} << (8 * i);
    }
    return rsp;
  }

 private:
  const Area* locate(std::uint32_t addr, std::uint32_t len) const {
    for (const Area& a : areas_) {
      if (addr >= a.base && std::uint64_t{addr} + len <= a.base + std::uint64_t{a.bytes.size()}) {
        return &a;
      }
    }
    return nullptr;
  }
  // HPU memory the actions read (any mapped area but the registers).
  std::optional<std::vector<std::uint8_t>> read(std::uint32_t addr, std::uint32_t len) const {
    if (len > kMaxActionBytes) return std::nullopt;
    const Area* a = locate(addr, len);
    if (a == nullptr) return std::nullopt;
    const auto first = a->bytes.begin() + (addr - a->base);
    return std::vector<std::uint8_t>(first, first + len);
  }
  // HPU memory an action writes (a writable mapped area).
  std::uint8_t* writable(std::uint32_t addr, std::uint32_t len) const {
    if (len > kMaxActionBytes) return nullptr;
    const Area* a = locate(addr, len);
    if (a == nullptr || !a->writable) return nullptr;
    return a->bytes.data() + (addr - a->base);
  }
  // A word of the handler state for CAS and fetch-and-add (B.6: "on HPU memory").
  std::uint8_t* state_word(std::uint32_t addr) const {
    if ((addr & 3U) != 0 || addr < L::kState) return nullptr;
    const Area* a = locate(addr, 4);
    if (a == nullptr || a->base != L::kState) return nullptr;
    return a->bytes.data() + (addr - a->base);
  }

  rtl::HpuBusResponse mmio(const rtl::HpuAccess& a) {
    rtl::HpuBusResponse rsp;
    const std::uint32_t off = a.addr - L::kMmio;
    if (a.be != 0xF || (off & 3U) != 0) {
      rsp.error = true;  // the registers are words
      return rsp;
    }
    if (!a.write) {
      rsp.rdata = regs_[off / 4];
      return rsp;
    }
    if (off == kResultOffset) {
      rsp.error = true;  // read-only
      return rsp;
    }
    regs_[off / 4] = a.wdata;
    if (off == kCommandOffset) perform(a.wdata, rsp);
    return rsp;
  }

  void perform(std::uint32_t command, rtl::HpuBusResponse& rsp) {
    const std::uint32_t* arg = &regs_[1];
    std::uint32_t& result = regs_[kResultOffset / 4];
    switch (command) {
      case kDmaToHost:
      case kPutFromDevice: {
        const auto bytes = read(arg[0], arg[4]);
        if (!bytes) {
          rsp.error = true;
          return;
        }
        const std::uint64_t offset = arg[2] | std::uint64_t{arg[3]} << 32;
        if (command == kDmaToHost) {
          hc_.deposit(arg[1], offset, *bytes);
        } else {
          hc_.reply(arg[1], offset, *bytes);
        }
        // The DMA engine reads HPU memory at the HPU width while the blocking call waits.
        rsp.latency = 1 + (arg[4] + hc_.width - 1) / std::max<std::uint32_t>(1, hc_.width);
        result = 0;
        return;
      }
      case kDmaFromHost: {
        std::uint8_t* dst = writable(arg[0], arg[4]);
        const std::uint64_t offset = arg[2] | std::uint64_t{arg[3]} << 32;
        if (dst == nullptr || !hc_.read ||
            !hc_.read(arg[1], offset, std::span<std::uint8_t>(dst, arg[4]))) {
          rsp.error = true;  // outside the HPU's memory or the region: SEGV
          return;
        }
        rsp.latency = 1 + (arg[4] + hc_.width - 1) / std::max<std::uint32_t>(1, hc_.width);
        result = 0;
        return;
      }
      case kCtInc:
      case kCtSet:
      case kCtGet: {
        // B.6 counters: a handle outside the connection's counters answers -1 (no fault).
        if (hc_.counters == nullptr || arg[0] >= hc_.counters->size()) {
          result = 0xFFFF'FFFFU;
          return;
        }
        HandlerContext::CtEvent& ct = (*hc_.counters)[arg[0]];
        if (command == kCtGet) {
          std::uint8_t* dst = writable(arg[1], 16);
          if (dst == nullptr) {
            rsp.error = true;  // the event must land in the HPU's writable memory: SEGV
            return;
          }
          put64({dst, 16}, 0, ct.success);
          put64({dst, 16}, 8, ct.failure);
        } else {
          const std::uint64_t success = arg[1] | std::uint64_t{arg[2]} << 32;
          const std::uint64_t failure = arg[3] | std::uint64_t{arg[4]} << 32;
          ct.success = command == kCtInc ? ct.success + success : success;
          ct.failure = command == kCtInc ? ct.failure + failure : failure;
        }
        result = 0;
        rsp.latency = 2;  // read and write of the counter, as an atomic on HPU memory
        return;
      }
      case kPutFromHost:
        hc_.write_back(arg[0], arg[1] | std::uint64_t{arg[2]} << 32);
        result = 0;
        return;
      case kPutFromDevicePeer: {  // args: local, len, peer, offset lo, offset hi
        const auto bytes = read(arg[0], arg[1]);
        if (!bytes) {
          rsp.error = true;
          return;
        }
        hc_.put_peer(arg[2], arg[3] | std::uint64_t{arg[4]} << 32, *bytes);
        rsp.latency = 1 + (arg[1] + hc_.width - 1) / std::max<std::uint32_t>(1, hc_.width);
        result = 0;
        return;
      }
      case kPutFromHostPeer:  // args: region, length, peer, offset lo, offset hi
        hc_.put_peer_from_region(arg[0], arg[1], arg[2], arg[3] | std::uint64_t{arg[4]} << 32);
        result = 0;
        return;
      case kCas:
      case kFadd: {
        std::uint8_t* w = state_word(arg[0]);
        if (w == nullptr) {
          rsp.error = true;
          return;
        }
        const std::span<std::uint8_t> word(w, 4);
        const std::uint32_t old = u32(word, 0);
        if (command == kCas) {
          result = old == arg[1] ? 1U : 0U;
          if (result != 0) put32(word, 0, arg[2]);
        } else {
          result = old;
          put32(word, 0, old + arg[1]);
        }
        rsp.latency = 2;  // read and write of one HPU memory word
        return;
      }
      default:
        rsp.error = true;
        return;
    }
  }

  HandlerContext& hc_;
  std::vector<Area> areas_;
  std::uint32_t regs_[L::kMmioSize / 4] = {};
};

// naa/spin.h's return codes. A PENDING variant (0x100 set) means its plain code: the NAA answers
// every call (docs/spin.md "Return codes"). PROCEED is a header handler's code only (seed B.3).
HandlerRc rc_of(std::uint32_t ret, bool header) {
  if ((ret & ~0x1FFU) != 0) return HandlerRc::fail;  // not one of naa/spin.h's codes
  switch (ret & 0xFFU) {
    case 0:
      return HandlerRc::success;
    case 1:
      return HandlerRc::drop;
    case 3:
      return HandlerRc::segv;
    case 4:
      return header ? HandlerRc::proceed : HandlerRc::fail;
    default:  // 2 FAIL; anything else
      return HandlerRc::fail;
  }
}

}  // namespace

std::uint8_t mrsp_error_of(SpinImageError e) noexcept {
  switch (e) {
    case SpinImageError::wrong_machine:
      return protocol::kMrspErrorWrongMachine;
    case SpinImageError::too_large:
      return protocol::kMrspErrorImageTooLarge;
    case SpinImageError::no_info:
    case SpinImageError::bad_entry:
      return protocol::kMrspErrorNoEntryPoint;
    default:
      return protocol::kMrspErrorBadImage;
  }
}

HpuCores::HpuCores(std::vector<std::unique_ptr<rtl::HpuPort>> cores) : cores_(std::move(cores)) {
  for (auto& c : cores_)
    rtl::reset_hpu(*c);
}

HpuHandler::Loaded HpuHandler::load(std::span<const std::uint8_t> file, std::string name,
                                    std::shared_ptr<HpuCores> cores, std::uint64_t max_cycles) {
  Loaded out;
  auto refuse = [&](SpinImageError e, std::string message) {
    out.error = e;
    out.message = std::move(message);
    return std::move(out);
  };
  rtl::HpuImageResult img = rtl::load_hpu_image(file);
  if (!img.image) {
    const bool machine = img.error == rtl::HpuImageError::wrong_class ||
                         img.error == rtl::HpuImageError::wrong_machine;
    return refuse(machine ? SpinImageError::wrong_machine : SpinImageError::bad_elf, img.message);
  }
  std::unique_ptr<HpuHandler> h(new HpuHandler());
  h->image_ = std::move(*img.image);
  for (const rtl::HpuSegment& s : h->image_.segments) {
    if (s.vaddr < L::kImageBase ||
        s.vaddr + std::uint64_t{s.bytes.size()} > L::kImageBase + L::kImageMax) {
      return refuse(SpinImageError::too_large,
                    "a segment lies outside the 64 KiB at 0x10000 handler images are linked to "
                    "(naa_add_handler's linker script)");
    }
  }
  const auto info_at = h->image_.symbol("naa_spin_info");
  const rtl::HpuSegment* seg = nullptr;
  for (const rtl::HpuSegment& s : h->image_.segments) {
    if (info_at && *info_at >= s.vaddr && *info_at + 28ULL <= s.vaddr + s.bytes.size()) seg = &s;
  }
  if (seg == nullptr) {
    return refuse(SpinImageError::no_info, "no naa_spin_info (NAA_SPIN_HANDLERS in naa/spin.h)");
  }
  // ABI 1's naa_spin_info_t is 28 bytes; ABI 2 adds user_hdr_bytes.
  const auto first = std::span<const std::uint8_t>(seg->bytes).subspan(*info_at - seg->vaddr);
  const std::uint32_t abi = u32(first, 4);
  if (u32(first, 0) != L::kMagic || (abi != L::kAbi && abi != L::kAbiNoUserHeader)) {
    return refuse(SpinImageError::bad_info, "naa_spin_info has the wrong magic or ABI version");
  }
  const std::size_t info_size = abi == L::kAbiNoUserHeader ? 28 : 32;
  if (first.size() < info_size)
    return refuse(SpinImageError::no_info, "naa_spin_info is cut short");
  const auto info = first.first(info_size);
  const std::uint32_t fn = u32(info, 8);
  if (fn == 0 || fn > 127) {
    return refuse(SpinImageError::bad_info,
                  "function code " + std::to_string(fn) + " not in 1..127");
  }
  h->fn_ = static_cast<std::uint8_t>(fn);
  h->state_per_hpu_ = u32(info, 12);
  h->header_ = u32(info, 16);
  h->payload_ = u32(info, 20);
  h->completion_ = u32(info, 24);
  h->user_hdr_ = abi == L::kAbi ? u32(info, 28) : 0;
  if (h->user_hdr_ > L::kMaxUserHeader) {
    return refuse(SpinImageError::bad_info,
                  "a user header of " + std::to_string(h->user_hdr_) + " bytes (at most " +
                      std::to_string(L::kMaxUserHeader) + ", NAA_SPIN_MAX_USER_HDR)");
  }
  if (h->payload_ == 0) return refuse(SpinImageError::bad_entry, "no payload handler");
  for (const std::uint32_t entry : {h->header_, h->payload_, h->completion_}) {
    if (entry == 0) continue;
    const bool inside = std::any_of(
        h->image_.segments.begin(), h->image_.segments.end(), [&](const rtl::HpuSegment& s) {
          return s.executable && entry >= s.vaddr && entry < s.vaddr + s.bytes.size();
        });
    if (!inside) return refuse(SpinImageError::bad_entry, "a handler lies outside the code");
  }
  h->name_ = std::move(name);
  h->cores_ = std::move(cores);
  h->max_cycles_ = max_cycles;
  out.handler = std::move(h);
  return out;
}

std::vector<rtl::HpuSegment>& HpuHandler::data_of(std::uint32_t index) const {
  if (data_.size() <= index) data_.resize(index + 1);
  std::vector<rtl::HpuSegment>& d = data_[index];
  if (d.empty()) {
    for (const rtl::HpuSegment& s : image_.segments) {
      if (s.writable) d.push_back(s);
    }
  }
  return d;
}

HandlerRun HpuHandler::invoke(HandlerContext& ctx, std::uint32_t entry,
                              std::span<const std::uint8_t> args,
                              std::span<const std::uint8_t> packet, bool header) const {
  std::vector<rtl::HpuSegment>& data = data_of(ctx.hpu);
  std::vector<std::uint8_t> arg_block(L::kArgsSize, 0);
  std::copy(args.begin(), args.end(), arg_block.begin());
  put32(arg_block, 0x100, ctx.hpu);  // naa_spin_env_t
  put32(arg_block, 0x104, ctx.hpus);
  put64(arg_block, 0x108, ctx.arg);
  const std::size_t listed = std::min<std::size_t>(ctx.regions.size(), L::kMaxRegions);
  put32(arg_block, 0x110, static_cast<std::uint32_t>(listed));
  put32(arg_block, 0x114, static_cast<std::uint32_t>(ctx.state.size()));
  for (std::size_t i = 0; i < listed; ++i) {
    put32(arg_block, 0x118 + 8 * i, ctx.regions[i].flags);
    put32(arg_block, 0x11C + 8 * i, ctx.regions[i].size);
  }
  std::vector<std::uint8_t> stack(L::kStackSize, 0);
  std::vector<InvocationBus::Area> areas;
  for (rtl::HpuSegment& s : image_.segments) {
    if (!s.writable) areas.push_back({s.vaddr, s.bytes, false, s.executable});
  }
  for (rtl::HpuSegment& s : data)
    areas.push_back({s.vaddr, s.bytes, true, s.executable});
  areas.push_back({L::kState, ctx.state, true, false});
  // The packet is mapped read-only (the bus refuses writes to it), so it needs no copy.
  areas.push_back({L::kPacket,
                   {const_cast<std::uint8_t*>(packet.data()), packet.size()},  // NOLINT
                   false,
                   false});
  areas.push_back({L::kArgs, arg_block, false, false});
  areas.push_back({L::kStackTop - L::kStackSize, stack, true, false});
  InvocationBus bus(ctx, std::move(areas));
  rtl::HpuCall call;
  call.entry = entry;
  call.sp = L::kStackTop;
  call.args = {L::kArgs, L::kState, 0};
  call.max_cycles = max_cycles_ + 1;  // one more: the engine's watchdog sees it was exceeded
  const rtl::HpuCallResult r = rtl::run_hpu_call(cores_->core(ctx.hpu), bus, call);
  ++invocations_;
  cycles_ += r.cycles;
  switch (r.outcome) {
    case rtl::HpuOutcome::returned:
      return {rc_of(r.ret, header), r.cycles};
    case rtl::HpuOutcome::trapped:
      ++traps_;
      ctx.actions.clear();  // a handler that faulted does nothing (all or none)
      return {r.trap == rtl::HpuTrap::illegal_instruction || r.trap == rtl::HpuTrap::ecall ||
                      r.trap == rtl::HpuTrap::ebreak
                  ? HandlerRc::fail
                  : HandlerRc::segv,
              r.cycles};
    case rtl::HpuOutcome::watchdog:
      break;
  }
  ctx.actions.clear();
  return {HandlerRc::fail, r.cycles};
}

HandlerRun HpuHandler::header(HandlerContext& ctx, const HeaderArgs& h) const {
  if (header_ == 0) return Handler::header(ctx, h);
  std::vector<std::uint8_t> args(24, 0);  // ptl_header_t; the user header is the packet buffer
  put32(args, 0, static_cast<std::uint32_t>(h.region));
  put32(args, 4, h.length);
  put32(args, 8, user_hdr_ != 0 ? L::kPacket : 0U);
  put32(args, 12, static_cast<std::uint32_t>(h.user_header.size()));
  put64(args, 16, h.offset);
  return invoke(ctx, header_, args, h.user_header, true);
}

HandlerRun HpuHandler::payload(HandlerContext& ctx, const PayloadArgs& p) const {
  std::vector<std::uint8_t> args(24, 0);  // ptl_payload_t
  put32(args, 0, L::kPacket);
  put32(args, 4, static_cast<std::uint32_t>(p.data.size()));
  put32(args, 8, static_cast<std::uint32_t>(p.region));
  put64(args, 16, p.offset);
  return invoke(ctx, payload_, args, p.data, false);
}

HandlerRun HpuHandler::completion(HandlerContext& ctx, const CompletionArgs& c) const {
  if (completion_ == 0) return {HandlerRc::success, 0};
  std::vector<std::uint8_t> args(24, 0);  // ptl_completion_t
  put64(args, 0, c.dropped_bytes);
  put64(args, 8, c.bytes);
  put32(args, 16, c.flow_control_triggered ? 1U : 0U);
  return invoke(ctx, completion_, args, {}, false);
}

bool add_handler_image_file(SimConfig& cfg, const std::string& path, std::string& why) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    why = "cannot read it";
    return false;
  }
  HandlerImageFile image{path, {std::istreambuf_iterator<char>(f), {}}};
  const auto loaded = HpuHandler::load(image.bytes, path, nullptr, 1);
  if (!loaded.handler) {
    why = loaded.message;
    return false;
  }
  const std::uint8_t fn = loaded.handler->function_code();
  if (HandlerRegistry::with_builtins().find(fn) != nullptr) {
    why = "function code " + std::to_string(fn) + " is a built-in handler's";
    return false;
  }
  for (const auto& other : cfg.handler_images) {
    const auto o = HpuHandler::load(other.bytes, other.name, nullptr, 1);
    if (o.handler && o.handler->function_code() == fn) {
      why = "function code " + std::to_string(fn) + " is taken by " + other.name;
      return false;
    }
  }
  cfg.handler_images.push_back(std::move(image));
  return true;
}

}  // namespace naa::sim
