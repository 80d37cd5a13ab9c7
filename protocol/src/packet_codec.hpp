// The whole-packet decoder and encoder compiled once per header set and payload rule of the
// opcode table (IBTA vol. 1 9.2-9.3; PROTOCOL.md 1), and a table of them per opcode: each knows
// at compile time which extension headers its packet has and at which offsets, so decoding and
// encoding a packet tests no header bit (issue 31: ~190 instructions a packet with a test per
// header, the nop call's WRITE with immediate and its ACKs ~100 less each). packet.cpp reads the
// BTH, looks the opcode up and calls the entry. Private to protocol/src.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>
#include <utility>

#include "header_fields.hpp"
#include "naa/protocol/packet.hpp"
#include "opcode_table.hpp"

namespace naa::protocol::packet_codec {

// Wire order: [DETH] [RETH | AtomicETH | AETH] [AtomicAckETH | SackETH] [IrnETH] [ImmDt | IETH];
// the offset of header `bit` in a packet with `headers` is the BTH and every header before it.
constexpr std::size_t offset_of(std::uint16_t headers, HeaderBit bit) noexcept {
  constexpr std::array<std::pair<HeaderBit, std::size_t>, 9> kWireOrder = {{
      {kHasDeth, kDethSize},
      {kHasReth, kRethSize},
      {kHasAtomicEth, kAtomicEthSize},
      {kHasAeth, kAethSize},
      {kHasAtomicAckEth, kAtomicAckEthSize},
      {kHasSackEth, kSackEthSize},
      {kHasIrnEth, kIrnEthSize},
      {kHasImmDt, kImmDtSize},
      {kHasIeth, kIethSize},
  }};
  std::size_t off = kBthSize;
  for (const auto& [b, size] : kWireOrder) {
    if (b == bit) break;
    if ((headers & b) != 0) off += size;
  }
  return off;
}

// One optional header: read at its offset when the packet has it, else disengaged (a view used
// before may hold another packet's). Both by assigning a whole optional, which for these
// trivially copyable headers stores the value and the flag (issue 31: assigning a value or
// reset() tests the flag first, ~2 instructions per header).
template <std::uint16_t kHeaders, HeaderBit kBit, auto kRead, typename T>
inline void take(const std::uint8_t* p, std::optional<T>& field) noexcept {
  if constexpr ((kHeaders & kBit) != 0) {
    field = std::optional<T>(kRead(p + offset_of(kHeaders, kBit)));
  } else {
    field = std::optional<T>();
  }
  static_assert(std::is_trivially_copyable_v<std::optional<T>>);
}

// decode_packet_into() after the BTH is read (into v.headers.bth), its TVer checked and v.info
// set: the same checks in the same order as before issue 31's specialisation.
template <std::uint16_t kHeaders, PayloadRule kRule>
std::optional<Error> decode_rest(const std::uint8_t* p, std::size_t size, PacketView& v) noexcept {
  constexpr std::size_t kHeaderSize = kBthSize + opcode_table::headers_size_by_bits(kHeaders);
  if (size < kHeaderSize + kIcrcSize) return Error::too_short;
  PacketHeaders& h = v.headers;
  take<kHeaders, kHasDeth, fields::read_deth>(p, h.deth);
  take<kHeaders, kHasReth, fields::read_reth>(p, h.reth);
  take<kHeaders, kHasAtomicEth, fields::read_atomic_eth>(p, h.atomic_eth);
  take<kHeaders, kHasAeth, fields::read_aeth>(p, h.aeth);
  take<kHeaders, kHasAtomicAckEth, fields::read_atomic_ack_eth>(p, h.atomic_ack_eth);
  take<kHeaders, kHasSackEth, fields::read_sack_eth>(p, h.sack_eth);
  take<kHeaders, kHasIrnEth, fields::read_irn_eth>(p, h.irn_eth);
  take<kHeaders, kHasImmDt, fields::read_word>(p, h.immediate);
  take<kHeaders, kHasIeth, fields::read_word>(p, h.ieth_rkey);
  v.header_size = kHeaderSize;

  const std::size_t body = size - kHeaderSize - kIcrcSize;  // payload + pad
  const std::size_t pad = h.bth.pad_count;
  // pad = (-payload) & 3 (PROTOCOL.md 1), so payload + pad is a multiple of 4; the headers are
  // too, so any other length cannot be a well-formed packet (found by the packet fuzz target).
  if (pad > body || (body & 3U) != 0) return Error::bad_pad;
  const std::size_t payload_len = body - pad;
  for (std::size_t i = 0; i < pad; ++i) {
    if (p[kHeaderSize + payload_len + i] != 0) return Error::bad_pad;  // PROTOCOL.md 1: zero pad
  }
  if constexpr (kRule == PayloadRule::none) {
    if (body != 0) return Error::too_long;
  } else if constexpr (kRule == PayloadRule::full_mtu) {
    if (pad != 0) return Error::bad_pad;
    if (payload_len == 0) return Error::length_mismatch;
  } else if constexpr (kRule == PayloadRule::reserved16) {
    if (body != 16) return Error::length_mismatch;
  }
  v.payload = ByteView(p + kHeaderSize, payload_len);
  v.icrc = load_le32(p + size - kIcrcSize);
  return std::nullopt;
}

// One optional header: whether `h` has it exactly when the opcode does.
template <std::uint16_t kHeaders, HeaderBit kBit, typename T>
[[nodiscard]] inline bool mismatched(const std::optional<T>& field) noexcept {
  return field.has_value() != ((kHeaders & kBit) != 0);
}

template <std::uint16_t kHeaders, HeaderBit kBit, auto kWrite, typename T>
inline void put(const std::optional<T>& field, std::uint8_t* p) noexcept {
  if constexpr ((kHeaders & kBit) != 0) kWrite(*field, p + offset_of(kHeaders, kBit));
}

// encode_packet() after the opcode is looked up: the same checks in the same order as before
// issue 31's specialisation.
template <std::uint16_t kHeaders, PayloadRule kRule>
Result<std::size_t> encode_rest(const PacketHeaders& h, ByteView payload,
                                MutableByteView out) noexcept {
  if (mismatched<kHeaders, kHasDeth>(h.deth) | mismatched<kHeaders, kHasReth>(h.reth) |
      mismatched<kHeaders, kHasAtomicEth>(h.atomic_eth) | mismatched<kHeaders, kHasAeth>(h.aeth) |
      mismatched<kHeaders, kHasAtomicAckEth>(h.atomic_ack_eth) |
      mismatched<kHeaders, kHasImmDt>(h.immediate) | mismatched<kHeaders, kHasIeth>(h.ieth_rkey) |
      mismatched<kHeaders, kHasIrnEth>(h.irn_eth) | mismatched<kHeaders, kHasSackEth>(h.sack_eth)) {
    return Error::bad_field;
  }
  if constexpr (kRule == PayloadRule::none) {
    if (!payload.empty()) return Error::too_long;
  }
  constexpr std::size_t kHeaderSize = kBthSize + opcode_table::headers_size_by_bits(kHeaders);
  const auto pad = static_cast<std::uint8_t>((0U - payload.size()) & 3U);
  const std::size_t total = kHeaderSize + payload.size() + pad + kIcrcSize;
  if (out.size() < total) return Error::buffer_too_small;
  // The fields narrower than their members, checked once for the packet; the BTH's pad count is
  // the payload's, whatever h.bth holds.
  bool out_of_range = !fields::bth_fits_but_pad(h.bth);
  if constexpr ((kHeaders & kHasDeth) != 0) out_of_range |= h.deth->src_qpn > kMax24;
  if constexpr ((kHeaders & kHasAeth) != 0) out_of_range |= h.aeth->msn > kMax24;
  if constexpr ((kHeaders & kHasSackEth) != 0) out_of_range |= h.sack_eth->sack_psn > kMax24;
  if (out_of_range) return Error::value_out_of_range;

  std::uint8_t* const p = out.data();
  fields::write_bth(h.bth, pad, p);
  put<kHeaders, kHasDeth, fields::write_deth>(h.deth, p);
  put<kHeaders, kHasReth, fields::write_reth>(h.reth, p);
  put<kHeaders, kHasAtomicEth, fields::write_atomic_eth>(h.atomic_eth, p);
  put<kHeaders, kHasAeth, fields::write_aeth>(h.aeth, p);
  put<kHeaders, kHasAtomicAckEth, fields::write_atomic_ack_eth>(h.atomic_ack_eth, p);
  put<kHeaders, kHasSackEth, fields::write_sack_eth>(h.sack_eth, p);
  put<kHeaders, kHasIrnEth, fields::write_irn_eth>(h.irn_eth, p);
  put<kHeaders, kHasImmDt, fields::write_word>(h.immediate, p);
  put<kHeaders, kHasIeth, fields::write_word>(h.ieth_rkey, p);
  std::size_t off = kHeaderSize;
  if constexpr (kRule != PayloadRule::none) {
    if (!payload.empty()) std::memcpy(p + off, payload.data(), payload.size());
    off += payload.size();
  }
  // The pad (0-3 zero bytes, PROTOCOL.md 1) and the ICRC field (zero until write_icrc()): 4-7
  // bytes, as two 4-byte stores that overlap (fixed sizes: no call to memset).
  std::memset(p + off, 0, 4);
  std::memset(p + off + pad, 0, 4);
  return total;
}

// Per entry of the opcode table (the same index), its decoder and encoder.
struct Codec {
  std::optional<Error> (*decode_rest)(const std::uint8_t*, std::size_t, PacketView&) noexcept;
  Result<std::size_t> (*encode_rest)(const PacketHeaders&, ByteView, MutableByteView) noexcept;
};
template <std::size_t... I>
constexpr std::array<Codec, sizeof...(I)> make_codecs(std::index_sequence<I...>) noexcept {
  using opcode_table::kOpcodes;
  return {{Codec{&decode_rest<kOpcodes[I].headers, kOpcodes[I].payload>,
                 &encode_rest<kOpcodes[I].headers, kOpcodes[I].payload>}...}};
}
inline constexpr auto kCodecs =
    make_codecs(std::make_index_sequence<opcode_table::kOpcodes.size()>());

}  // namespace naa::protocol::packet_codec
