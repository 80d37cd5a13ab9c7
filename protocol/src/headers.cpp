#include "naa/protocol/headers.hpp"

#include <array>

#include "header_fields.hpp"

namespace naa::protocol {

Result<Bth> decode_bth(ByteView in) noexcept {
  if (in.size() < kBthSize) return Error::too_short;
  Bth h;
  fields::read_bth(in.data(), h);
  if (h.tver != 0) return Error::bad_tver;
  return h;
}

Result<std::size_t> encode_bth(const Bth& h, MutableByteView out) noexcept {
  if (out.size() < kBthSize) return Error::buffer_too_small;
  if (h.pad_count > 3 || !fields::bth_fits_but_pad(h)) return Error::value_out_of_range;
  fields::write_bth(h, h.pad_count, out.data());
  return kBthSize;
}

Result<Reth> decode_reth(ByteView in) noexcept {
  if (in.size() < kRethSize) return Error::too_short;
  return fields::read_reth(in.data());
}

Result<std::size_t> encode_reth(const Reth& h, MutableByteView out) noexcept {
  if (out.size() < kRethSize) return Error::buffer_too_small;
  fields::write_reth(h, out.data());
  return kRethSize;
}

Result<Aeth> decode_aeth(ByteView in) noexcept {
  if (in.size() < kAethSize) return Error::too_short;
  return fields::read_aeth(in.data());
}

Result<std::size_t> encode_aeth(const Aeth& h, MutableByteView out) noexcept {
  if (out.size() < kAethSize) return Error::buffer_too_small;
  if (h.msn > kMax24) return Error::value_out_of_range;
  fields::write_aeth(h, out.data());
  return kAethSize;
}

Result<Deth> decode_deth(ByteView in) noexcept {
  if (in.size() < kDethSize) return Error::too_short;
  return fields::read_deth(in.data());
}

Result<std::size_t> encode_deth(const Deth& h, MutableByteView out) noexcept {
  if (out.size() < kDethSize) return Error::buffer_too_small;
  if (h.src_qpn > kMax24) return Error::value_out_of_range;
  fields::write_deth(h, out.data());
  return kDethSize;
}

Result<AtomicEth> decode_atomic_eth(ByteView in) noexcept {
  if (in.size() < kAtomicEthSize) return Error::too_short;
  return fields::read_atomic_eth(in.data());
}

Result<std::size_t> encode_atomic_eth(const AtomicEth& h, MutableByteView out) noexcept {
  if (out.size() < kAtomicEthSize) return Error::buffer_too_small;
  fields::write_atomic_eth(h, out.data());
  return kAtomicEthSize;
}

Result<AtomicAckEth> decode_atomic_ack_eth(ByteView in) noexcept {
  if (in.size() < kAtomicAckEthSize) return Error::too_short;
  return fields::read_atomic_ack_eth(in.data());
}

Result<std::size_t> encode_atomic_ack_eth(const AtomicAckEth& h, MutableByteView out) noexcept {
  if (out.size() < kAtomicAckEthSize) return Error::buffer_too_small;
  fields::write_atomic_ack_eth(h, out.data());
  return kAtomicAckEthSize;
}

Result<IrnEth> decode_irn_eth(ByteView in) noexcept {
  if (in.size() < kIrnEthSize) return Error::too_short;
  return fields::read_irn_eth(in.data());
}

Result<std::size_t> encode_irn_eth(const IrnEth& h, MutableByteView out) noexcept {
  if (out.size() < kIrnEthSize) return Error::buffer_too_small;
  fields::write_irn_eth(h, out.data());
  return kIrnEthSize;
}

Result<SackEth> decode_sack_eth(ByteView in) noexcept {
  if (in.size() < kSackEthSize) return Error::too_short;
  return fields::read_sack_eth(in.data());
}

Result<std::size_t> encode_sack_eth(const SackEth& h, MutableByteView out) noexcept {
  if (out.size() < kSackEthSize) return Error::buffer_too_small;
  if (h.sack_psn > kMax24) return Error::value_out_of_range;
  fields::write_sack_eth(h, out.data());
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
