// The field layout of the BTH and the extension headers (IBTA vol. 1 9.2-9.3; PROTOCOL.md 1,
// docs/protocol.md "IRN"), read from and written to bytes the caller has checked are there: the
// one implementation behind headers.cpp's decode_*/encode_* (which check lengths and widths, one
// header at a time) and packet.cpp's whole-packet codec (which checks them once per packet,
// issue 31). Private to protocol/src.
#pragma once

#include <cstdint>

#include "naa/protocol/bytes.hpp"
#include "naa/protocol/headers.hpp"

namespace naa::protocol::fields {

// ---- BTH, 12 bytes ----
[[nodiscard]] inline Bth read_bth(const std::uint8_t* p) noexcept {
  Bth h;
  h.opcode = p[0];
  h.solicited_event = (p[1] & 0x80U) != 0;
  h.mig_req = (p[1] & 0x40U) != 0;
  h.pad_count = static_cast<std::uint8_t>((p[1] >> 4) & 0x3U);
  h.tver = static_cast<std::uint8_t>(p[1] & 0x0FU);
  h.pkey = load_be16(p + 2);
  h.fecn = (p[4] & 0x80U) != 0;
  h.becn = (p[4] & 0x40U) != 0;
  h.reserved6 = static_cast<std::uint8_t>(p[4] & 0x3FU);
  h.dest_qpn = load_be24(p + 5);
  h.ack_req = (p[8] & 0x80U) != 0;
  h.reserved7 = static_cast<std::uint8_t>(p[8] & 0x7FU);
  h.psn = load_be24(p + 9);
  return h;
}
// Whether every field fits its width (write_bth's precondition).
[[nodiscard]] inline bool bth_fits(const Bth& h) noexcept {
  return h.pad_count <= 3 && h.tver <= 0xF && h.reserved6 <= 0x3F && h.reserved7 <= 0x7F &&
         h.dest_qpn <= kMax24 && h.psn <= kMax24;
}
inline void write_bth(const Bth& h, std::uint8_t* p) noexcept {
  p[0] = h.opcode;
  p[1] = static_cast<std::uint8_t>((h.solicited_event ? 0x80U : 0U) | (h.mig_req ? 0x40U : 0U) |
                                   (unsigned{h.pad_count} << 4) | h.tver);
  store_be16(p + 2, h.pkey);
  p[4] = static_cast<std::uint8_t>((h.fecn ? 0x80U : 0U) | (h.becn ? 0x40U : 0U) | h.reserved6);
  store_be24(p + 5, h.dest_qpn);
  p[8] = static_cast<std::uint8_t>((h.ack_req ? 0x80U : 0U) | h.reserved7);
  store_be24(p + 9, h.psn);
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
[[nodiscard]] inline Aeth read_aeth(const std::uint8_t* p) noexcept {
  return Aeth{p[0], load_be24(p + 1)};
}
inline void write_aeth(const Aeth& h, std::uint8_t* p) noexcept {  // msn <= kMax24
  p[0] = h.syndrome;
  store_be24(p + 1, h.msn);
}

// ---- DETH, 8 bytes: Q_Key(32) | reserved(8) | source QP(24) ----
[[nodiscard]] inline Deth read_deth(const std::uint8_t* p) noexcept {
  return Deth{load_be32(p), p[4], load_be24(p + 5)};
}
inline void write_deth(const Deth& h, std::uint8_t* p) noexcept {  // src_qpn <= kMax24
  store_be32(p, h.qkey);
  p[4] = h.reserved;
  store_be24(p + 5, h.src_qpn);
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
  return SackEth{p[0], load_be24(p + 1), load_be32(p + 4)};
}
inline void write_sack_eth(const SackEth& h, std::uint8_t* p) noexcept {  // sack_psn <= kMax24
  p[0] = h.reserved;
  store_be24(p + 1, h.sack_psn);
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
