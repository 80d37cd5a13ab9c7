// The golden model of rtl/vadd_i32/vadd_i32.sv.
#include "naa/rtl/vadd_i32.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

namespace naa::rtl {

VaddI32Model::VaddI32Model(std::uint32_t width, std::uint32_t max_bytes)
    : width_(width), depth_(width == 0 ? 0 : max_bytes / width) {
  if (!is_supported_width(width) || width % 4 != 0) {
    throw std::invalid_argument("vadd_i32: width " + std::to_string(width) +
                                " is not a multiple of 4 in 4..64");
  }
  if (max_bytes < width || max_bytes % width != 0) {
    throw std::invalid_argument("vadd_i32: the buffer must be a positive multiple of the width");
  }
  // The RTL's read address has clog2(depth) bits (at least 1) and wraps there.
  const std::uint32_t bits =
      depth_ > 1 ? static_cast<std::uint32_t>(std::bit_width(depth_ - 1)) : 1;
  addr_mask_ = (1U << bits) - 1U;
  buffer_.assign(static_cast<std::size_t>(depth_) * width_, 0);
}

void VaddI32Model::start_call() {
  phase_ = Phase::a;
  beats_a_ = 0;
  bytes_a_ = 0;
  too_big_ = false;
  rem_ = 0;
  rd_addr_ = 0;
  out_done_ = false;
  out_sent_ = false;
  took_last_ = false;
}

KernelOutputs VaddI32Model::step(const KernelInputs& in) {
  if (!in.rst_n) {
    ctrl_.reset();
    start_call();
    reg_valid_ = false;
  }
  KernelOutputs out;
  ctrl_.outputs(in, out);
  out.ap_return = too_big_ ? kVaddI32TooBig : 0;
  const bool reg_ready = !reg_valid_ || in.dst_ready;
  out.src_ready =
      ctrl_.running() && (phase_ == Phase::a || (phase_ == Phase::b && reg_ready && !took_last_));
  out.dst_valid = reg_valid_;
  out.dst = reg_;
  if (!in.rst_n) return out;

  const bool load = ctrl_.load(in);
  const bool take = in.src_valid && out.src_ready;
  const std::uint32_t rem = rem_;
  const bool give = take && phase_ == Phase::b && !out_done_;
  const bool give_last = rem <= width_ || in.src.last;
  const bool dst_last_fire = reg_valid_ && in.dst_ready && reg_.last;
  const bool finish = ctrl_.running() && (out_sent_ || dst_last_fire) &&
                      (took_last_ || (take && phase_ == Phase::b && in.src.last));
  const StreamBeat a = a_;

  if (load) {
    start_call();
  } else {
    if (take && phase_ == Phase::a) {
      if (beats_a_ < depth_) {
        std::memcpy(buffer_.data() + static_cast<std::size_t>(beats_a_) * width_,
                    in.src.data.data(), width_);
      }
      if (beats_a_ <= depth_) ++beats_a_;
      bytes_a_ += static_cast<std::uint32_t>(std::popcount(in.src.keep & keep_mask(width_)));
      if (in.src.last) phase_ = Phase::read;
    } else if (phase_ == Phase::read) {
      phase_ = Phase::b;
      too_big_ = beats_a_ > depth_;
      rem_ = too_big_ ? 0 : bytes_a_ & ~3U;
      rd_addr_ = 1;
      std::memcpy(a_.data.data(), buffer_.data(), width_);
    } else if (take && phase_ == Phase::b) {
      rem_ -= width_;  // wraps once out0 is done; then unused
      // Beyond the buffer (in1 beats past out0, dropped): the RTL reads don't-care values.
      const std::uint32_t addr = rd_addr_ & addr_mask_;
      if (addr < depth_) {
        std::memcpy(a_.data.data(), buffer_.data() + static_cast<std::size_t>(addr) * width_,
                    width_);
      }
      rd_addr_ = (rd_addr_ + 1) & addr_mask_;
      if (in.src.last) took_last_ = true;
    }
    if (give && give_last) out_done_ = true;
    if (dst_last_fire) out_sent_ = true;
  }
  if (give) {
    reg_ = StreamBeat{};
    reg_.keep = keep_mask(std::min(rem, width_));
    reg_.last = give_last;
    for (std::uint32_t l = 0; l < width_ / 4; ++l) {
      std::uint32_t x = 0;
      std::uint32_t y = 0;
      std::memcpy(&x, a.data.data() + 4 * l, 4);
      std::memcpy(&y, in.src.data.data() + 4 * l, 4);
      const std::uint32_t s = x + y;  // little-endian lanes on a little-endian host
      std::memcpy(reg_.data.data() + 4 * l, &s, 4);
    }
    reg_valid_ = true;
  } else if (in.dst_ready) {
    reg_valid_ = false;
  }
  ctrl_.edge(in, finish);
  return out;
}

std::uint64_t vadd_i32_call_cycles(std::uint64_t in0, std::uint64_t in1, std::uint32_t width) {
  const auto beats = [width](std::uint64_t bytes) {
    return bytes == 0 ? std::uint64_t{1} : (bytes + width - 1) / width;
  };
  const std::uint64_t n = in0 > kVaddI32MaxBytes ? 0 : in0 / 4 * 4;
  const std::uint64_t a = beats(in0);
  const std::uint64_t b = beats(in1);
  const std::uint64_t o = beats(n);  // out0's beats (an empty out0 is one)
  // ap_start, in0's beats, the buffer read, then the later of out0's last beat leaving the
  // register and in1's last beat; ap_done.
  const std::uint64_t finish = std::max(a + 2 + o, a + 1 + b);
  return finish + 2;
}

}  // namespace naa::rtl
