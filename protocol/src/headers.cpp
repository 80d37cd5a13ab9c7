#include "naa/protocol/headers.hpp"

#include <array>

namespace naa::protocol {

Result<Bth> decode_bth(ByteView in) noexcept {
  if (in.size() < kBthSize) return Error::too_short;
  const std::uint8_t* p = in.data();
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
  if (h.tver != 0) return Error::bad_tver;
  return h;
}

Result<std::size_t> encode_bth(const Bth& h, MutableByteView out) noexcept {
  if (out.size() < kBthSize) return Error::buffer_too_small;
  if (h.pad_count > 3 || h.tver > 0xF || h.reserved6 > 0x3F || h.reserved7 > 0x7F ||
      h.dest_qpn > kMax24 || h.psn > kMax24) {
    return Error::value_out_of_range;
  }
  std::uint8_t* p = out.data();
  p[0] = h.opcode;
  p[1] = static_cast<std::uint8_t>((h.solicited_event ? 0x80U : 0U) | (h.mig_req ? 0x40U : 0U) |
                                   (unsigned{h.pad_count} << 4) | h.tver);
  store_be16(p + 2, h.pkey);
  p[4] = static_cast<std::uint8_t>((h.fecn ? 0x80U : 0U) | (h.becn ? 0x40U : 0U) | h.reserved6);
  store_be24(p + 5, h.dest_qpn);
  p[8] = static_cast<std::uint8_t>((h.ack_req ? 0x80U : 0U) | h.reserved7);
  store_be24(p + 9, h.psn);
  return kBthSize;
}

Result<Reth> decode_reth(ByteView in) noexcept {
  if (in.size() < kRethSize) return Error::too_short;
  return Reth{load_be64(in.data()), load_be32(in.data() + 8), load_be32(in.data() + 12)};
}

Result<std::size_t> encode_reth(const Reth& h, MutableByteView out) noexcept {
  if (out.size() < kRethSize) return Error::buffer_too_small;
  store_be64(out.data(), h.va);
  store_be32(out.data() + 8, h.rkey);
  store_be32(out.data() + 12, h.dma_length);
  return kRethSize;
}

Result<Aeth> decode_aeth(ByteView in) noexcept {
  if (in.size() < kAethSize) return Error::too_short;
  return Aeth{in[0], load_be24(in.data() + 1)};
}

Result<std::size_t> encode_aeth(const Aeth& h, MutableByteView out) noexcept {
  if (out.size() < kAethSize) return Error::buffer_too_small;
  if (h.msn > kMax24) return Error::value_out_of_range;
  out[0] = h.syndrome;
  store_be24(out.data() + 1, h.msn);
  return kAethSize;
}

Result<Deth> decode_deth(ByteView in) noexcept {
  if (in.size() < kDethSize) return Error::too_short;
  return Deth{load_be32(in.data()), in[4], load_be24(in.data() + 5)};
}

Result<std::size_t> encode_deth(const Deth& h, MutableByteView out) noexcept {
  if (out.size() < kDethSize) return Error::buffer_too_small;
  if (h.src_qpn > kMax24) return Error::value_out_of_range;
  store_be32(out.data(), h.qkey);
  out[4] = h.reserved;
  store_be24(out.data() + 5, h.src_qpn);
  return kDethSize;
}

Result<AtomicEth> decode_atomic_eth(ByteView in) noexcept {
  if (in.size() < kAtomicEthSize) return Error::too_short;
  return AtomicEth{load_be64(in.data()), load_be32(in.data() + 8), load_be64(in.data() + 12),
                   load_be64(in.data() + 20)};
}

Result<std::size_t> encode_atomic_eth(const AtomicEth& h, MutableByteView out) noexcept {
  if (out.size() < kAtomicEthSize) return Error::buffer_too_small;
  store_be64(out.data(), h.va);
  store_be32(out.data() + 8, h.rkey);
  store_be64(out.data() + 12, h.swap_add);
  store_be64(out.data() + 20, h.compare);
  return kAtomicEthSize;
}

Result<AtomicAckEth> decode_atomic_ack_eth(ByteView in) noexcept {
  if (in.size() < kAtomicAckEthSize) return Error::too_short;
  return AtomicAckEth{load_be64(in.data())};
}

Result<std::size_t> encode_atomic_ack_eth(const AtomicAckEth& h, MutableByteView out) noexcept {
  if (out.size() < kAtomicAckEthSize) return Error::buffer_too_small;
  store_be64(out.data(), h.original_data);
  return kAtomicAckEthSize;
}

Result<IrnEth> decode_irn_eth(ByteView in) noexcept {
  if (in.size() < kIrnEthSize) return Error::too_short;
  return IrnEth{load_be32(in.data()), load_be32(in.data() + 4)};
}

Result<std::size_t> encode_irn_eth(const IrnEth& h, MutableByteView out) noexcept {
  if (out.size() < kIrnEthSize) return Error::buffer_too_small;
  store_be32(out.data(), h.recv_wqe_sn);
  store_be32(out.data() + 4, h.packet_offset);
  return kIrnEthSize;
}

Result<SackEth> decode_sack_eth(ByteView in) noexcept {
  if (in.size() < kSackEthSize) return Error::too_short;
  return SackEth{in[0], load_be24(in.data() + 1), load_be32(in.data() + 4)};
}

Result<std::size_t> encode_sack_eth(const SackEth& h, MutableByteView out) noexcept {
  if (out.size() < kSackEthSize) return Error::buffer_too_small;
  if (h.sack_psn > kMax24) return Error::value_out_of_range;
  out[0] = h.reserved;
  store_be24(out.data() + 1, h.sack_psn);
  store_be32(out.data() + 4, h.bitmap);
  return kSackEthSize;
}

std::uint64_t rnr_timer_ns(std::uint8_t timer_code) noexcept {
  // IBTA vol. 1 table 45, in microseconds x 100 (10 ns units) to stay integral.
  static constexpr std::array<std::uint32_t, 32> k10ns = {
      65536000, 1000,    2000,    3000,     4000,     6000,     8000,     12000,
      16000,    24000,   32000,   48000,    64000,    96000,    128000,   192000,
      256000,   384000,  512000,  768000,   1024000,  1536000,  2048000,  3072000,
      4096000,  6144000, 8192000, 12288000, 16384000, 24576000, 32768000, 49152000};
  return std::uint64_t{k10ns[timer_code & 0x1FU]} * 10U;
}

}  // namespace naa::protocol
