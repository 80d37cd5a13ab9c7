// The Verilations of one block, as a type list (generated per block by naa_rtl_block(),
// cmake/NaaRtlBlock.cmake, from its WIDTHS): a factory picks the one for a width without listing
// the widths again.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "naa/rtl/rtl_options.hpp"

namespace naa::rtl::verilated {

// One Verilated class V at W bytes per beat (W = 0: a block without a width parameter).
template <class V, std::uint32_t W>
struct Verilation {
  using Model = V;
  static constexpr std::uint32_t kWidth = W;
};

template <class... Vs>
struct Verilations {
  static constexpr std::array<std::uint32_t, sizeof...(Vs)> kWidths{Vs::kWidth...};

  // A new Adapter<V, W> (a Port) for the Verilation at `width`, or nullptr if there is none.
  template <template <class, std::uint32_t> class Adapter, class Port>
  static std::unique_ptr<Port> make(std::uint32_t width, const RtlOptions& options) {
    std::unique_ptr<Port> port;
    ((width == Vs::kWidth && !port
          ? (void)(port = std::make_unique<Adapter<typename Vs::Model, Vs::kWidth>>(options))
          : void()),
     ...);
    return port;
  }
};

}  // namespace naa::rtl::verilated
