#include "naa/protocol/packet.hpp"

#include <cstring>

namespace naa::protocol {
namespace {

std::uint16_t present_headers(const PacketHeaders& h) noexcept {
  std::uint16_t bits = 0;
  if (h.deth) bits |= kHasDeth;
  if (h.reth) bits |= kHasReth;
  if (h.atomic_eth) bits |= kHasAtomicEth;
  if (h.aeth) bits |= kHasAeth;
  if (h.atomic_ack_eth) bits |= kHasAtomicAckEth;
  if (h.immediate) bits |= kHasImmDt;
  if (h.ieth_rkey) bits |= kHasIeth;
  if (h.irn_eth) bits |= kHasIrnEth;
  if (h.sack_eth) bits |= kHasSackEth;
  return bits;
}

}  // namespace

std::optional<Error> decode_packet_into(ByteView in, PacketView& v) noexcept {
  if (in.size() < kBthSize + kIcrcSize) return Error::too_short;
  auto bth = decode_bth(in);
  if (!bth) return bth.error();
  const OpcodeInfo* info = find_opcode(bth->opcode);
  if (info == nullptr) return Error::unknown_opcode;

  v = PacketView{};
  v.info = info;
  v.headers.bth = *bth;
  const std::size_t hdr = kBthSize + extension_headers_size(info->headers);
  if (in.size() < hdr + kIcrcSize) return Error::too_short;
  std::size_t off = kBthSize;
  // Wire order: [DETH] [RETH | AtomicETH | AETH] [AtomicAckETH | SackETH] [IrnETH] [ImmDt | IETH].
  if (info->has(kHasDeth)) {
    v.headers.deth = *decode_deth(in.subspan(off));
    off += kDethSize;
  }
  if (info->has(kHasReth)) {
    v.headers.reth = *decode_reth(in.subspan(off));
    off += kRethSize;
  }
  if (info->has(kHasAtomicEth)) {
    v.headers.atomic_eth = *decode_atomic_eth(in.subspan(off));
    off += kAtomicEthSize;
  }
  if (info->has(kHasAeth)) {
    v.headers.aeth = *decode_aeth(in.subspan(off));
    off += kAethSize;
  }
  if (info->has(kHasAtomicAckEth)) {
    v.headers.atomic_ack_eth = *decode_atomic_ack_eth(in.subspan(off));
    off += kAtomicAckEthSize;
  }
  if (info->has(kHasSackEth)) {
    v.headers.sack_eth = *decode_sack_eth(in.subspan(off));
    off += kSackEthSize;
  }
  if (info->has(kHasIrnEth)) {
    v.headers.irn_eth = *decode_irn_eth(in.subspan(off));
    off += kIrnEthSize;
  }
  if (info->has(kHasImmDt)) {
    v.headers.immediate = load_be32(in.data() + off);
    off += kImmDtSize;
  }
  if (info->has(kHasIeth)) {
    v.headers.ieth_rkey = load_be32(in.data() + off);
    off += kIethSize;
  }
  v.header_size = off;

  const std::size_t body = in.size() - off - kIcrcSize;  // payload + pad
  const std::size_t pad = bth->pad_count;
  // pad = (-payload) & 3 (PROTOCOL.md 1), so payload + pad is a multiple of 4; the headers are
  // too, so any other length cannot be a well-formed packet (found by the packet fuzz target).
  if (pad > body || (body & 3U) != 0) return Error::bad_pad;
  const std::size_t payload_len = body - pad;
  for (std::size_t i = 0; i < pad; ++i) {
    if (in[off + payload_len + i] != 0) return Error::bad_pad;  // PROTOCOL.md 1: pad is zero
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
  v.payload = in.subspan(off, payload_len);
  v.icrc = load_le32(in.data() + in.size() - kIcrcSize);
  return std::nullopt;
}

Result<PacketView> decode_packet(ByteView in) noexcept {
  PacketView v;
  if (const auto e = decode_packet_into(in, v)) return *e;
  return v;
}

std::size_t header_size(const PacketHeaders& h) noexcept {
  return kBthSize + extension_headers_size(present_headers(h));
}

std::size_t packet_size(const PacketHeaders& h, std::size_t payload_len) noexcept {
  return header_size(h) + payload_len + ((0U - payload_len) & 3U) + kIcrcSize;
}

Result<std::size_t> encode_packet(const PacketHeaders& h, ByteView payload,
                                  MutableByteView out) noexcept {
  const OpcodeInfo* info = find_opcode(h.bth.opcode);
  if (info == nullptr) return Error::unknown_opcode;
  if (present_headers(h) != info->headers) return Error::bad_field;
  if (info->payload == PayloadRule::none && !payload.empty()) return Error::too_long;
  const std::size_t total = packet_size(h, payload.size());
  if (out.size() < total) return Error::buffer_too_small;

  Bth bth = h.bth;
  bth.pad_count = static_cast<std::uint8_t>((0U - payload.size()) & 3U);
  auto r = encode_bth(bth, out);
  if (!r) return r.error();
  std::size_t off = kBthSize;
  auto put = [&](Result<std::size_t> written) -> bool {
    if (!written) return false;
    off += *written;
    return true;
  };
  if (h.deth && !put(encode_deth(*h.deth, out.subspan(off)))) return Error::value_out_of_range;
  if (h.reth) (void)put(encode_reth(*h.reth, out.subspan(off)));
  if (h.atomic_eth) (void)put(encode_atomic_eth(*h.atomic_eth, out.subspan(off)));
  if (h.aeth && !put(encode_aeth(*h.aeth, out.subspan(off)))) return Error::value_out_of_range;
  if (h.atomic_ack_eth) (void)put(encode_atomic_ack_eth(*h.atomic_ack_eth, out.subspan(off)));
  if (h.sack_eth && !put(encode_sack_eth(*h.sack_eth, out.subspan(off)))) {
    return Error::value_out_of_range;
  }
  if (h.irn_eth) (void)put(encode_irn_eth(*h.irn_eth, out.subspan(off)));
  if (h.immediate) {
    store_be32(out.data() + off, *h.immediate);
    off += kImmDtSize;
  }
  if (h.ieth_rkey) {
    store_be32(out.data() + off, *h.ieth_rkey);
    off += kIethSize;
  }
  if (!payload.empty()) std::memcpy(out.data() + off, payload.data(), payload.size());
  off += payload.size();
  std::memset(out.data() + off, 0, bth.pad_count + kIcrcSize);
  return total;
}

}  // namespace naa::protocol
