// The field layout of the BTH and the extension headers (IBTA vol. 1 9.2-9.3; PROTOCOL.md 1,
// docs/protocol.md "IRN"), read from and written to bytes the caller has checked are there: the
// one implementation behind headers.cpp's decode_*/encode_* (which check lengths and widths, one
// header at a time) and packet.cpp's whole-packet codec (which checks them once per packet,
// issue 31). Private to protocol/src.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "naa/protocol/bytes.hpp"
#include "naa/protocol/headers.hpp"

namespace naa::protocol::fields {

// ---- BTH, 12 bytes (IBTA vol. 1 9.2), as three big-endian words ----
//   opcode(8) | SE(1) M(1) PadCnt(2) TVer(4) | P_Key(16)
//   FECN(1) BECN(1) reserved(6) | DestQP(24)
//   AckReq(1) reserved(7) | PSN(24)
// Read into `h` (every field is set): a decoded packet's BTH goes straight into its view (issue
// 31: built on the stack and copied, it cost ~35 instructions more a packet). The bytes with
// several fields (byte 1: SE, M, PadCnt, TVer; byte 4: FECN, BECN, reserved) become `h`'s
// members by one table read each, stored with their neighbours as whole words in `h`'s layout
// (issue 31: ~20 instructions a packet less than a shift, mask and store per field).
namespace bth_layout {
static_assert(offsetof(Bth, opcode) == 0 && offsetof(Bth, solicited_event) == 1 &&
              offsetof(Bth, mig_req) == 2 && offsetof(Bth, pad_count) == 3 &&
              offsetof(Bth, tver) == 4 && offsetof(Bth, pkey) == 6 && offsetof(Bth, fecn) == 8 &&
              offsetof(Bth, becn) == 9 && offsetof(Bth, reserved6) == 10 &&
              offsetof(Bth, dest_qpn) == 12 && offsetof(Bth, ack_req) == 16 &&
              offsetof(Bth, reserved7) == 17 && offsetof(Bth, psn) == 20 && sizeof(bool) == 1 &&
              std::endian::native == std::endian::little);
// Byte 1 as h's bytes 1-4 (SE, M, PadCnt, TVer) and byte 4 as h's bytes 8-10 (FECN, BECN,
// reserved6), little-endian words; a bool is the byte 0 or 1.
constexpr std::array<std::uint32_t, 256> kByte1 = [] {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t b = 0; b < 256; ++b)
    t[b] = (b >> 7) | (((b >> 6) & 1U) << 8) | (((b >> 4) & 3U) << 16) | ((b & 0xFU) << 24);
  return t;
}();
constexpr std::array<std::uint32_t, 256> kByte4 = [] {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t b = 0; b < 256; ++b)
    t[b] = (b >> 7) | (((b >> 6) & 1U) << 8) | ((b & 0x3FU) << 16);
  return t;
}();
}  // namespace bth_layout
inline void read_bth(const std::uint8_t* p, Bth& h) noexcept {
  auto* raw = reinterpret_cast<std::uint8_t*>(&h);  // NOLINT: h's bytes, layout asserted above
  // Bytes 0-7: opcode | SE M PadCnt TVer | (padding) | P_Key.
  const std::uint64_t lo = std::uint64_t{p[0]} | (std::uint64_t{bth_layout::kByte1[p[1]]} << 8) |
                           (std::uint64_t{load_be16(p + 2)} << 48);
  std::memcpy(raw, &lo, sizeof lo);
  const std::uint32_t mid = bth_layout::kByte4[p[4]];  // bytes 8-11: FECN BECN reserved6 |
  std::memcpy(raw + 8, &mid, sizeof mid);
  const std::uint32_t w1 = load_be32(p + 4);  // FECN BECN reserved6 | DestQP
  const std::uint32_t w2 = load_be32(p + 8);  // AckReq reserved7 | PSN
  h.dest_qpn = w1 & kMax24;
  h.ack_req = (w2 & 0x80000000U) != 0;
  h.reserved7 = static_cast<std::uint8_t>((w2 >> 24) & 0x7FU);
  h.psn = w2 & kMax24;
}
// Whether every field but the pad count fits its width (write_bth's precondition, with a pad
// count of 0-3).
[[nodiscard]] inline bool bth_fits_but_pad(const Bth& h) noexcept {
  return h.tver <= 0xF && h.reserved6 <= 0x3F && h.reserved7 <= 0x7F && h.dest_qpn <= kMax24 &&
         h.psn <= kMax24;
}
// The pad count is given apart: encode_packet() derives it from the payload (no copy of h).
inline void write_bth(const Bth& h, std::uint8_t pad_count, std::uint8_t* p) noexcept {
  store_be32(p, (std::uint32_t{h.opcode} << 24) | (h.solicited_event ? 0x800000U : 0U) |
                    (h.mig_req ? 0x400000U : 0U) | (std::uint32_t{pad_count} << 20) |
                    (std::uint32_t{h.tver} << 16) | h.pkey);
  store_be32(p + 4, (h.fecn ? 0x80000000U : 0U) | (h.becn ? 0x40000000U : 0U) |
                        (std::uint32_t{h.reserved6} << 24) | h.dest_qpn);
  store_be32(p + 8, (h.ack_req ? 0x80000000U : 0U) | (std::uint32_t{h.reserved7} << 24) | h.psn);
}

// ---- RETH, 16 bytes: VA(64) | R_Key(32) | DMA length(32) ----
[[nodiscard]] inline Reth read_reth(const std::uint8_t* p) noexcept {
  return Reth{load_be64(p), load_be32(p + 8), load_be32(p + 12)};
}
inline void write_reth(const Reth& h, std::uint8_t* p) noexcept {
  store_be64(p, h.va);
  store_be32(p + 8, h.rkey);
  store_be32(p + 12, h.dma_length);
}

// ---- AETH, 4 bytes: syndrome(8) | MSN(24) ----
// One big-endian word as one store: store_be32's byte stores of a word built from two fields are
// not always merged back by the compiler (issue 31: the AETH and SackETH as eight byte stores).
inline void store_word(std::uint8_t* p, std::uint32_t v) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap32(v);
  std::memcpy(p, &v, sizeof v);
#else
  store_be32(p, v);
#endif
}

// A 24-bit field after an 8-bit one is read and written as their 32-bit word (issue 31: three
// byte loads or stores and their shifts each otherwise).
[[nodiscard]] inline Aeth read_aeth(const std::uint8_t* p) noexcept {
  const std::uint32_t w = load_be32(p);
  return Aeth{static_cast<std::uint8_t>(w >> 24), w & kMax24};
}
inline void write_aeth(const Aeth& h, std::uint8_t* p) noexcept {  // msn <= kMax24
  store_word(p, (std::uint32_t{h.syndrome} << 24) | h.msn);
}

// ---- DETH, 8 bytes: Q_Key(32) | reserved(8) | source QP(24) ----
[[nodiscard]] inline Deth read_deth(const std::uint8_t* p) noexcept {
  const std::uint32_t w = load_be32(p + 4);
  return Deth{load_be32(p), static_cast<std::uint8_t>(w >> 24), w & kMax24};
}
inline void write_deth(const Deth& h, std::uint8_t* p) noexcept {  // src_qpn <= kMax24
  store_be32(p, h.qkey);
  store_word(p + 4, (std::uint32_t{h.reserved} << 24) | h.src_qpn);
}

// ---- AtomicETH, 28 bytes: VA(64) | R_Key(32) | swap or add(64) | compare(64) ----
[[nodiscard]] inline AtomicEth read_atomic_eth(const std::uint8_t* p) noexcept {
  return AtomicEth{load_be64(p), load_be32(p + 8), load_be64(p + 12), load_be64(p + 20)};
}
inline void write_atomic_eth(const AtomicEth& h, std::uint8_t* p) noexcept {
  store_be64(p, h.va);
  store_be32(p + 8, h.rkey);
  store_be64(p + 12, h.swap_add);
  store_be64(p + 20, h.compare);
}

// ---- AtomicAckETH, 8 bytes: original remote data(64) ----
[[nodiscard]] inline AtomicAckEth read_atomic_ack_eth(const std::uint8_t* p) noexcept {
  return AtomicAckEth{load_be64(p)};
}
inline void write_atomic_ack_eth(const AtomicAckEth& h, std::uint8_t* p) noexcept {
  store_be64(p, h.original_data);
}

// ---- IrnETH, 8 bytes: recv_WQE_SN(32) | packet offset(32) ----
[[nodiscard]] inline IrnEth read_irn_eth(const std::uint8_t* p) noexcept {
  return IrnEth{load_be32(p), load_be32(p + 4)};
}
inline void write_irn_eth(const IrnEth& h, std::uint8_t* p) noexcept {
  store_be32(p, h.recv_wqe_sn);
  store_be32(p + 4, h.packet_offset);
}

// ---- SackETH, 8 bytes: reserved(8) | SACK PSN(24) | bitmap(32) ----
[[nodiscard]] inline SackEth read_sack_eth(const std::uint8_t* p) noexcept {
  const std::uint32_t w = load_be32(p);
  return SackEth{static_cast<std::uint8_t>(w >> 24), w & kMax24, load_be32(p + 4)};
}
inline void write_sack_eth(const SackEth& h, std::uint8_t* p) noexcept {  // sack_psn <= kMax24
  store_word(p, (std::uint32_t{h.reserved} << 24) | h.sack_psn);
  store_be32(p + 4, h.bitmap);
}

// ---- ImmDt and IETH, 4 bytes each: one 32-bit field (the immediate value; the R_Key) ----
[[nodiscard]] inline std::uint32_t read_word(const std::uint8_t* p) noexcept {
  return load_be32(p);
}
inline void write_word(std::uint32_t v, std::uint8_t* p) noexcept {
  store_be32(p, v);
}

}  // namespace naa::protocol::fields
