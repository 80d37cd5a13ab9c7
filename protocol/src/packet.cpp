#include "naa/protocol/packet.hpp"

#include <cstring>

#include "opcode_table.hpp"
#include "packet_codec.hpp"

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
  const std::uint8_t i = opcode_table::kIndex[bth.opcode];
  if (i == opcode_table::kNoOpcode) return Error::unknown_opcode;
  v.info = &opcode_table::kOpcodes[i];
  // The rest by the opcode's own decoder: its headers' offsets known at compile time, no test
  // per header (issue 31; packet_codec.hpp).
  return packet_codec::kCodecs[i].decode_rest(p, in.size(), v);
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
  const std::uint8_t i = opcode_table::kIndex[h.bth.opcode];
  if (i == opcode_table::kNoOpcode) return Error::unknown_opcode;
  // By the opcode's own encoder (issue 31; packet_codec.hpp).
  return packet_codec::kCodecs[i].encode_rest(h, payload, out);
}

}  // namespace naa::protocol
