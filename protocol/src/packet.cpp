#include "naa/protocol/packet.hpp"

#include <cstring>

#include "header_fields.hpp"
#include "opcode_table.hpp"

namespace naa::protocol {
namespace {

std::uint16_t present_headers(const PacketHeaders& h) noexcept {
  auto bit = [](const auto& field, HeaderBit b) { return field.has_value() ? unsigned{b} : 0U; };
  return static_cast<std::uint16_t>(bit(h.deth, kHasDeth) | bit(h.reth, kHasReth) |
                                    bit(h.atomic_eth, kHasAtomicEth) | bit(h.aeth, kHasAeth) |
                                    bit(h.atomic_ack_eth, kHasAtomicAckEth) |
                                    bit(h.immediate, kHasImmDt) | bit(h.ieth_rkey, kHasIeth) |
                                    bit(h.irn_eth, kHasIrnEth) | bit(h.sack_eth, kHasSackEth));
}

}  // namespace

std::optional<Error> decode_packet_into(ByteView in, PacketView& v) noexcept {
  if (in.size() < kBthSize + kIcrcSize) return Error::too_short;
  const std::uint8_t* const p = in.data();
  const Bth& bth = v.headers.bth;
  fields::read_bth(p, v.headers.bth);
  if (bth.tver != 0) return Error::bad_tver;
  const OpcodeInfo* info = opcode_table::find(bth.opcode);
  if (info == nullptr) return Error::unknown_opcode;
  v.info = info;
  const std::size_t hdr = kBthSize + opcode_table::extension_bytes(info->headers);
  if (in.size() < hdr + kIcrcSize) return Error::too_short;
  // Every header the opcode has is within `hdr`, checked once (issue 31: no length check and no
  // Result per header); the ones it has not are disengaged.
  std::size_t off = kBthSize;
  auto take = [&](HeaderBit bit, auto& field, auto read, std::size_t size) {
    if (info->has(bit)) {
      field = read(p + off);
      off += size;
    } else {
      field.reset();
    }
  };
  // Wire order: [DETH] [RETH | AtomicETH | AETH] [AtomicAckETH | SackETH] [IrnETH] [ImmDt | IETH].
  PacketHeaders& h = v.headers;
  take(kHasDeth, h.deth, fields::read_deth, kDethSize);
  take(kHasReth, h.reth, fields::read_reth, kRethSize);
  take(kHasAtomicEth, h.atomic_eth, fields::read_atomic_eth, kAtomicEthSize);
  take(kHasAeth, h.aeth, fields::read_aeth, kAethSize);
  take(kHasAtomicAckEth, h.atomic_ack_eth, fields::read_atomic_ack_eth, kAtomicAckEthSize);
  take(kHasSackEth, h.sack_eth, fields::read_sack_eth, kSackEthSize);
  take(kHasIrnEth, h.irn_eth, fields::read_irn_eth, kIrnEthSize);
  take(kHasImmDt, h.immediate, fields::read_word, kImmDtSize);
  take(kHasIeth, h.ieth_rkey, fields::read_word, kIethSize);
  v.header_size = off;

  const std::size_t body = in.size() - off - kIcrcSize;  // payload + pad
  const std::size_t pad = bth.pad_count;
  // pad = (-payload) & 3 (PROTOCOL.md 1), so payload + pad is a multiple of 4; the headers are
  // too, so any other length cannot be a well-formed packet (found by the packet fuzz target).
  if (pad > body || (body & 3U) != 0) return Error::bad_pad;
  const std::size_t payload_len = body - pad;
  for (std::size_t i = 0; i < pad; ++i) {
    if (p[off + payload_len + i] != 0) return Error::bad_pad;  // PROTOCOL.md 1: pad is zero
  }
  switch (info->payload) {
    case PayloadRule::none:
      if (body != 0) return Error::too_long;
      break;
    case PayloadRule::full_mtu:
      if (pad != 0) return Error::bad_pad;
      if (payload_len == 0) return Error::length_mismatch;
      break;
    case PayloadRule::up_to_mtu:
      break;
    case PayloadRule::reserved16:
      if (body != 16) return Error::length_mismatch;
      break;
  }
  v.payload = ByteView(p + off, payload_len);
  v.icrc = load_le32(p + in.size() - kIcrcSize);
  return std::nullopt;
}

Result<PacketView> decode_packet(ByteView in) noexcept {
  PacketView v;
  if (const auto e = decode_packet_into(in, v)) return *e;
  return v;
}

std::size_t header_size(const PacketHeaders& h) noexcept {
  return kBthSize + opcode_table::extension_bytes(present_headers(h));
}

std::size_t packet_size(const PacketHeaders& h, std::size_t payload_len) noexcept {
  return header_size(h) + payload_len + ((0U - payload_len) & 3U) + kIcrcSize;
}

Result<std::size_t> encode_packet(const PacketHeaders& h, ByteView payload,
                                  MutableByteView out) noexcept {
  const OpcodeInfo* info = opcode_table::find(h.bth.opcode);
  if (info == nullptr) return Error::unknown_opcode;
  if (present_headers(h) != info->headers) return Error::bad_field;
  if (info->payload == PayloadRule::none && !payload.empty()) return Error::too_long;
  const auto pad = static_cast<std::uint8_t>((0U - payload.size()) & 3U);
  const std::size_t total =
      kBthSize + opcode_table::extension_bytes(info->headers) + payload.size() + pad + kIcrcSize;
  if (out.size() < total) return Error::buffer_too_small;
  // The fields narrower than their members, checked once for the packet (issue 31); the BTH's
  // pad count is the payload's, whatever h.bth holds.
  if (!fields::bth_fits_but_pad(h.bth) || (h.deth && h.deth->src_qpn > kMax24) ||
      (h.aeth && h.aeth->msn > kMax24) || (h.sack_eth && h.sack_eth->sack_psn > kMax24)) {
    return Error::value_out_of_range;
  }

  std::uint8_t* const p = out.data();
  fields::write_bth(h.bth, pad, p);
  std::size_t off = kBthSize;
  auto put = [&](const auto& field, auto write, std::size_t size) {
    if (field) {
      write(*field, p + off);
      off += size;
    }
  };
  // Wire order: [DETH] [RETH | AtomicETH | AETH] [AtomicAckETH | SackETH] [IrnETH] [ImmDt | IETH].
  put(h.deth, fields::write_deth, kDethSize);
  put(h.reth, fields::write_reth, kRethSize);
  put(h.atomic_eth, fields::write_atomic_eth, kAtomicEthSize);
  put(h.aeth, fields::write_aeth, kAethSize);
  put(h.atomic_ack_eth, fields::write_atomic_ack_eth, kAtomicAckEthSize);
  put(h.sack_eth, fields::write_sack_eth, kSackEthSize);
  put(h.irn_eth, fields::write_irn_eth, kIrnEthSize);
  put(h.immediate, fields::write_word, kImmDtSize);
  put(h.ieth_rkey, fields::write_word, kIethSize);
  if (!payload.empty()) std::memcpy(p + off, payload.data(), payload.size());
  off += payload.size();
  // The pad (0-3 zero bytes, PROTOCOL.md 1) and the ICRC field (zero until write_icrc()): 4-7
  // bytes, as two 4-byte stores that overlap (fixed sizes: no call to memset).
  std::memset(p + off, 0, 4);
  std::memset(p + off + pad, 0, 4);
  return total;
}

}  // namespace naa::protocol
