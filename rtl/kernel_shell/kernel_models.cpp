// The kernels' shared stream FSMs in C++ (naa/rtl/kernel_models.hpp).
#include "naa/rtl/kernel_models.hpp"

#include <stdexcept>

namespace naa::rtl {

ReduceKernelModel::ReduceKernelModel(std::string_view block, std::uint32_t width,
                                     std::uint32_t result_bytes, std::uint32_t latency)
    : block_(block), width_(width), result_bytes_(result_bytes), pipeline_(latency) {
  if (latency == 0 || result_bytes > 8 || result_bytes > width) {
    throw std::invalid_argument(block_ +
                                ": a reduction needs a latency >= 1 and a result of at "
                                "most 8 bytes and one beat");
  }
}

KernelOutputs ReduceKernelModel::step(const KernelInputs& in) {
  if (!in.rst_n) {
    ctrl_.reset();
    took_last_ = false;
    dst_valid_ = false;
    for (auto& p : pipeline_)
      p.reset();
    restart();
  }
  KernelOutputs out;
  ctrl_.outputs(in, out);
  out.src_ready = ctrl_.running() && !took_last_;
  out.dst_valid = dst_valid_;
  for (std::uint32_t i = 0; i < result_bytes_; ++i)
    out.dst.data[i] = static_cast<std::uint8_t>(result_ >> (8 * i));
  out.dst.keep = keep_mask(result_bytes_);
  out.dst.last = true;
  if (!in.rst_n) return out;

  const bool load = ctrl_.load(in);
  const bool take = in.src_valid && out.src_ready;
  const bool finish_call = dst_valid_ && in.dst_ready;

  // The accumulator and its pipeline.
  const std::optional<std::uint64_t> result = pipeline_.back();
  for (std::size_t k = pipeline_.size() - 1; k > 0; --k)
    pipeline_[k] = pipeline_[k - 1];
  pipeline_[0].reset();
  if (load) {
    restart();
  } else if (take && in.src.last) {
    pipeline_[0] = finish(in.src);
  } else if (take) {
    absorb(in.src);
  }

  // The stream FSM.
  if (load) {
    took_last_ = false;
  } else if (take && in.src.last) {
    took_last_ = true;
  }
  if (result) {
    dst_valid_ = true;
    result_ = *result;
  } else if (in.dst_ready) {
    dst_valid_ = false;
  }
  ctrl_.edge(in, finish_call);
  return out;
}

}  // namespace naa::rtl
