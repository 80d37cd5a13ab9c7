// The opcode table itself (IBTA vol. 1 table 35; PROTOCOL.md 1) and its two compile-time
// lookups, private to protocol/src: opcode.cpp defines find_opcode() and
// extension_headers_size() with them, and packet.cpp looks a packet's opcode up inline (issue 31:
// two calls per encoded or decoded packet less). Inline variables: one table in the program, so
// an OpcodeInfo pointer from either is the same.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "naa/protocol/headers.hpp"
#include "naa/protocol/opcode.hpp"

namespace naa::protocol::opcode_table {

namespace entries {  // the enumerators spelled short in this namespace only
using enum OpKind;
using enum Segment;
using enum PayloadRule;
using enum ServiceType;

inline constexpr std::array kOpcodes = {
    OpcodeInfo{0x00, "RC SEND First", rc, send, first, 0, full_mtu},
    OpcodeInfo{0x01, "RC SEND Middle", rc, send, middle, 0, full_mtu},
    OpcodeInfo{0x02, "RC SEND Last", rc, send, last, 0, up_to_mtu},
    OpcodeInfo{0x03, "RC SEND Last with Immediate", rc, send, last, kHasImmDt, up_to_mtu},
    OpcodeInfo{0x04, "RC SEND Only", rc, send, only, 0, up_to_mtu},
    OpcodeInfo{0x05, "RC SEND Only with Immediate", rc, send, only, kHasImmDt, up_to_mtu},
    OpcodeInfo{0x06, "RC RDMA WRITE First", rc, rdma_write, first, kHasReth, full_mtu},
    OpcodeInfo{0x07, "RC RDMA WRITE Middle", rc, rdma_write, middle, 0, full_mtu},
    OpcodeInfo{0x08, "RC RDMA WRITE Last", rc, rdma_write, last, 0, up_to_mtu},
    OpcodeInfo{0x09, "RC RDMA WRITE Last with Immediate", rc, rdma_write, last, kHasImmDt,
               up_to_mtu},
    OpcodeInfo{0x0A, "RC RDMA WRITE Only", rc, rdma_write, only, kHasReth, up_to_mtu},
    OpcodeInfo{0x0B, "RC RDMA WRITE Only with Immediate", rc, rdma_write, only,
               kHasReth | kHasImmDt, up_to_mtu},
    OpcodeInfo{0x0C, "RC RDMA READ Request", rc, rdma_read_request, only, kHasReth, none},
    OpcodeInfo{0x0D, "RC RDMA READ Response First", rc, rdma_read_response, first, kHasAeth,
               full_mtu},
    OpcodeInfo{0x0E, "RC RDMA READ Response Middle", rc, rdma_read_response, middle, 0, full_mtu},
    OpcodeInfo{0x0F, "RC RDMA READ Response Last", rc, rdma_read_response, last, kHasAeth,
               up_to_mtu},
    OpcodeInfo{0x10, "RC RDMA READ Response Only", rc, rdma_read_response, only, kHasAeth,
               up_to_mtu},
    OpcodeInfo{0x11, "RC Acknowledge", rc, acknowledge, only, kHasAeth, none},
    OpcodeInfo{0x12, "RC ATOMIC Acknowledge", rc, atomic_acknowledge, only,
               kHasAeth | kHasAtomicAckEth, none},
    OpcodeInfo{0x13, "RC CmpSwap", rc, atomic, only, kHasAtomicEth, none},
    OpcodeInfo{0x14, "RC FetchAdd", rc, atomic, only, kHasAtomicEth, none},
    OpcodeInfo{0x16, "RC SEND Last with Invalidate", rc, send, last, kHasIeth, up_to_mtu},
    OpcodeInfo{0x17, "RC SEND Only with Invalidate", rc, send, only, kHasIeth, up_to_mtu},
    OpcodeInfo{0x64, "UD SEND Only", ud, send, only, kHasDeth, up_to_mtu},
    OpcodeInfo{0x65, "UD SEND Only with Immediate", ud, send, only, kHasDeth | kHasImmDt,
               up_to_mtu},
    OpcodeInfo{0x81, "CNP", congestion, congestion_notification, only, 0, reserved16},
    // IRN (docs/protocol.md "IRN"): RETH on every WRITE packet, IrnETH on every SEND packet and
    // on the last WRITE-with-immediate packet, SackETH on the per-packet ACK.
    OpcodeInfo{0xC0, "IRN SEND First", rc, send, first, kHasIrnEth, full_mtu},
    OpcodeInfo{0xC1, "IRN SEND Middle", rc, send, middle, kHasIrnEth, full_mtu},
    OpcodeInfo{0xC2, "IRN SEND Last", rc, send, last, kHasIrnEth, up_to_mtu},
    OpcodeInfo{0xC3, "IRN SEND Last with Immediate", rc, send, last, kHasIrnEth | kHasImmDt,
               up_to_mtu},
    OpcodeInfo{0xC4, "IRN SEND Only", rc, send, only, kHasIrnEth, up_to_mtu},
    OpcodeInfo{0xC5, "IRN SEND Only with Immediate", rc, send, only, kHasIrnEth | kHasImmDt,
               up_to_mtu},
    OpcodeInfo{0xC6, "IRN RDMA WRITE First", rc, rdma_write, first, kHasReth, full_mtu},
    OpcodeInfo{0xC7, "IRN RDMA WRITE Middle", rc, rdma_write, middle, kHasReth, full_mtu},
    OpcodeInfo{0xC8, "IRN RDMA WRITE Last", rc, rdma_write, last, kHasReth, up_to_mtu},
    OpcodeInfo{0xC9, "IRN RDMA WRITE Last with Immediate", rc, rdma_write, last,
               kHasReth | kHasIrnEth | kHasImmDt, up_to_mtu},
    OpcodeInfo{0xCA, "IRN RDMA WRITE Only", rc, rdma_write, only, kHasReth, up_to_mtu},
    OpcodeInfo{0xCB, "IRN RDMA WRITE Only with Immediate", rc, rdma_write, only,
               kHasReth | kHasIrnEth | kHasImmDt, up_to_mtu},
    OpcodeInfo{0xCC, "IRN Acknowledge", rc, acknowledge, only, kHasAeth | kHasSackEth, none},
    // IRN READ (docs/protocol.md 8.5): read_WQE_SN in the IrnETH of the request and of every
    // response packet, the packet offset in the responses' IrnETH.
    OpcodeInfo{0xCD, "IRN RDMA READ Request", rc, rdma_read_request, only, kHasReth | kHasIrnEth,
               none},
    OpcodeInfo{0xCE, "IRN RDMA READ Response First", rc, rdma_read_response, first, kHasIrnEth,
               full_mtu},
    OpcodeInfo{0xCF, "IRN RDMA READ Response Middle", rc, rdma_read_response, middle, kHasIrnEth,
               full_mtu},
    OpcodeInfo{0xD0, "IRN RDMA READ Response Last", rc, rdma_read_response, last, kHasIrnEth,
               up_to_mtu},
    OpcodeInfo{0xD1, "IRN RDMA READ Response Only", rc, rdma_read_response, only, kHasIrnEth,
               up_to_mtu},
};

}  // namespace entries
using entries::kOpcodes;

// Direct-indexed lookup: one table read per packet on the receive path.
inline constexpr std::uint8_t kNoOpcode = 0xFF;
static_assert(kOpcodes.size() < kNoOpcode);
constexpr std::array<std::uint8_t, 256> make_index() {
  std::array<std::uint8_t, 256> idx{};
  for (auto& i : idx)
    i = kNoOpcode;
  for (std::size_t i = 0; i < kOpcodes.size(); ++i) {
    idx[kOpcodes[i].code] = static_cast<std::uint8_t>(i);
  }
  return idx;
}
inline constexpr auto kIndex = make_index();

constexpr std::size_t headers_size_by_bits(std::uint16_t headers) noexcept {
  std::size_t n = 0;
  if ((headers & kHasDeth) != 0) n += kDethSize;
  if ((headers & kHasReth) != 0) n += kRethSize;
  if ((headers & kHasAtomicEth) != 0) n += kAtomicEthSize;
  if ((headers & kHasAeth) != 0) n += kAethSize;
  if ((headers & kHasAtomicAckEth) != 0) n += kAtomicAckEthSize;
  if ((headers & kHasImmDt) != 0) n += kImmDtSize;
  if ((headers & kHasIeth) != 0) n += kIethSize;
  if ((headers & kHasIrnEth) != 0) n += kIrnEthSize;
  if ((headers & kHasSackEth) != 0) n += kSackEthSize;
  return n;
}

// Every combination of the nine header bits, computed at compile time (issue 31: a lookup per
// encoded and decoded packet instead of nine tests).
inline constexpr std::size_t kHeaderBitsCombinations = 1U << 9;
inline constexpr auto kHeadersSize = [] {
  std::array<std::uint8_t, kHeaderBitsCombinations> t{};
  for (std::size_t i = 0; i < t.size(); ++i)
    t[i] = static_cast<std::uint8_t>(headers_size_by_bits(static_cast<std::uint16_t>(i)));
  return t;
}();

// nullptr for an opcode not in the table.
[[nodiscard]] inline const OpcodeInfo* find(std::uint8_t code) noexcept {
  const std::uint8_t i = kIndex[code];
  return i == kNoOpcode ? nullptr : &kOpcodes[i];
}

// The extension headers' bytes of a set of the nine HeaderBits (a table entry's, or those a
// PacketHeaders has engaged).
[[nodiscard]] inline std::size_t extension_bytes(std::uint16_t header_bits) noexcept {
  return kHeadersSize[header_bits & (kHeaderBitsCombinations - 1)];
}

}  // namespace naa::protocol::opcode_table
