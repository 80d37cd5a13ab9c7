// Random mr_table stimulus biased towards the interesting cases: lookups of programmed entries
// with the right or a stale key, the right or another QP, and accesses that end exactly at, one
// byte before or one byte past the region's end (where an off-by-one lives), regions at the top
// of the address space (va + len overflow), writes and lookups of one entry in the same cycle.
#pragma once

#include <array>
#include <cstdint>
#include <limits>

#include "naa/rtl/mr_table.hpp"
#include "rtl_seed.hpp"

namespace naa::testbench::rtl {

using namespace naa::rtl;  // the blocks under test and their port types

class MrTraffic {
 public:
  explicit MrTraffic(Rng& rng) : rng_(rng) {}

  // The inputs of the next cycle. p_write / p_lookup / p_read: probability of a write / lookup /
  // entry read (p_read = 0 draws nothing for it, so older seeds give the same traffic).
  MrTableInputs next(double p_write, double p_lookup, double p_read = 0) {
    MrTableInputs in;
    if (chance(rng_, p_write)) in.write = random_write();
    if (chance(rng_, p_lookup)) {
      in.lookup = random_lookup();
    } else {
      in.lookup = junk_lookup();  // valid = 0 with random fields: must be ignored
    }
    if (p_read > 0) {
      in.read.valid = chance(rng_, p_read);
      in.read.index = uniform<std::uint8_t>(rng_, 0, kMrIndexMask);  // ignored unless valid
    }
    if (in.write.valid) shadow_[in.write.index & kMrIndexMask] = in.write;
    return in;
  }

  // A reset clears the testbench's view of the table too.
  void reset() { shadow_ = {}; }

 private:
  static constexpr std::uint64_t kTop = std::numeric_limits<std::uint64_t>::max();

  MrTableWrite random_write() {
    MrTableWrite w;
    w.valid = true;
    w.index = uniform<std::uint8_t>(rng_, 0, kMrIndexMask);
    w.entry_valid = chance(rng_, 0.85);
    const std::uint32_t tag = static_cast<std::uint32_t>(rng_()) & ~kMrIndexMask;
    w.rkey = tag | w.index;
    if (chance(rng_, 0.03)) w.rkey ^= 1U;  // misplaced entry: never found
    switch (uniform(rng_, 0, 3)) {
      case 0:
        w.base = uniform<std::uint64_t>(rng_, 0, 1 << 20);
        break;
      case 1:
        w.base = kTop - uniform<std::uint64_t>(rng_, 0, 1ULL << 33);
        break;  // top of space
      default:
        w.base = rng_();
        break;
    }
    switch (uniform(rng_, 0, 4)) {
      case 0:
        w.length = 0;
        break;
      case 1:
        w.length = uniform<std::uint32_t>(rng_, 1, 16);
        break;
      case 2:
        w.length = std::numeric_limits<std::uint32_t>::max();
        break;
      default:
        w.length = static_cast<std::uint32_t>(rng_());
        break;
    }
    w.access = uniform<std::uint8_t>(rng_, 0, 7);
    w.owner_qpn = kQpns[uniform<std::size_t>(rng_, 0, kQpns.size() - 1)];
    if (chance(rng_, 0.02)) w.access |= 0xF8;  // bits above the port width are ignored
    return w;
  }

  MrTableLookup random_lookup() {
    MrTableLookup l;
    l.valid = true;
    const MrTableWrite& e = shadow_[uniform<std::size_t>(rng_, 0, kMrEntries - 1)];
    if (!e.valid || chance(rng_, 0.1)) {  // anything at all
      l.rkey = static_cast<std::uint32_t>(rng_());
      l.va = rng_();
      l.len = static_cast<std::uint32_t>(rng_());
      l.access = uniform<std::uint8_t>(rng_, 0, 7);
      l.qpn = kQpns[uniform<std::size_t>(rng_, 0, kQpns.size() - 1)];
      return l;
    }
    l.rkey = chance(rng_, 0.9) ? e.rkey : e.rkey ^ (1U << uniform(rng_, 5, 31));
    l.qpn =
        chance(rng_, 0.9) ? e.owner_qpn : kQpns[uniform<std::size_t>(rng_, 0, kQpns.size() - 1)];
    l.access = chance(rng_, 0.8) ? static_cast<std::uint8_t>(e.access & rng_())
                                 : uniform<std::uint8_t>(rng_, 0, 7);
    // Offset into the region and length, biased to the edges.
    const std::uint64_t length = e.length;
    std::uint64_t off = 0;
    switch (uniform(rng_, 0, 5)) {
      case 0:
        off = 0;
        break;
      case 1:
        off = length;
        break;
      case 2:
        off = length == 0 ? 0 : length - 1;
        break;
      case 3:
        off = length + 1;
        break;
      case 4:
        off = static_cast<std::uint64_t>(-static_cast<std::int64_t>(uniform(rng_, 1, 4)));
        break;
      default:
        off = length == 0 ? 0 : uniform<std::uint64_t>(rng_, 0, length);
        break;
    }
    l.va = e.base + off;  // may wrap: that is a case too
    const std::uint64_t room = off <= length ? length - off : 0;
    switch (uniform(rng_, 0, 5)) {
      case 0:
        l.len = 0;
        break;
      case 1:
        l.len = static_cast<std::uint32_t>(room);
        break;
      case 2:
        l.len = static_cast<std::uint32_t>(room + 1);
        break;
      case 3:
        l.len = room == 0 ? 0 : static_cast<std::uint32_t>(room - 1);
        break;
      case 4:
        l.len = static_cast<std::uint32_t>(kTop - l.va + 1 + uniform<std::uint64_t>(rng_, 0, 2));
        break;
      default:
        l.len = static_cast<std::uint32_t>(rng_());
        break;
    }
    return l;
  }

  MrTableLookup junk_lookup() {
    MrTableLookup l;
    l.rkey = static_cast<std::uint32_t>(rng_());
    l.va = rng_();
    l.len = static_cast<std::uint32_t>(rng_());
    l.access = uniform<std::uint8_t>(rng_, 0, 7);
    l.qpn = static_cast<std::uint32_t>(rng_());
    return l;
  }

  static constexpr std::array<std::uint32_t, 4> kQpns{0x11, 0x12, 0xABCDEF, 0x1000011};
  Rng& rng_;
  std::array<MrTableWrite, kMrEntries> shadow_{};
};

}  // namespace naa::testbench::rtl
