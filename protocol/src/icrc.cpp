#include "naa/protocol/icrc.hpp"

#include <array>
#include <cstring>

#include "naa/protocol/crc32.hpp"
#include "naa/protocol/headers.hpp"

namespace naa::protocol {
namespace {

constexpr std::size_t kPrefixSize = 8 + kIpv4HeaderSize + kUdpHeaderSize;  // 36
constexpr std::size_t kIdOffsetInPrefix = 8 + 4;
// The masked pseudo-header and the BTH in one buffer: 48 bytes, three 16-byte blocks, so the
// CRC folds them (crc32.cpp) and goes on with the rest of the datagram from there (issue 31:
// four table-driven pieces per datagram cost ~400 instructions for a short one).
constexpr std::size_t kHeadSize = kPrefixSize + kBthSize;
// Up to this many bytes after the BTH, the ICRC is taken over one copy of head and rest.
constexpr std::size_t kShortRest = 208;

// The masked pseudo-header: 8 x 0xFF, IPv4 and UDP with the variant fields set to ones; the
// fields as encode_ipv4() and encode_udp() write them (issue 31: stored directly, for every
// datagram's ICRC).
void masked_prefix(const Ipv4UdpHeaders& h, std::uint8_t* p) noexcept {
  std::memset(p, 0xFF, 8);
  p[8] = 0x45;  // version 4, IHL 5
  p[9] = 0xFF;  // TOS: masked
  store_be16(p + 10, h.ip.total_length);
  store_be16(p + 12, h.ip.id);
  store_be16(p + 14, h.ip.flags_fragment);
  p[16] = 0xFF;  // TTL: masked
  p[17] = h.ip.protocol;
  p[18] = p[19] = 0xFF;  // header checksum: masked
  store_be32(p + 20, h.ip.src);
  store_be32(p + 24, h.ip.dst);
  store_be16(p + 28, h.udp.src_port);
  store_be16(p + 30, h.udp.dst_port);
  store_be16(p + 32, h.udp.length);
  p[34] = p[35] = 0xFF;  // UDP checksum: masked
}

}  // namespace

std::uint32_t compute_icrc(const Ipv4UdpHeaders& h, ByteView body) noexcept {
  if (body.size() >= kBthSize && body.size() - kBthSize <= kShortRest) {
    // A short datagram (ACKs, a short call's packets) as one run of bytes: one pass of the CRC
    // with one final reduction, and no byte-wise tail (issue 31). The register 0xFFFFFFFF
    // followed by four 0xFF bytes (the first half of the masked LRH) is 0 (the CRC is linear:
    // the bytes cancel the register), and zero bytes fed into a zero register leave it 0; so
    // the CRC from 0xFFFFFFFF over pseudo-header + BTH + rest is the CRC from 0 over
    // zeros + pseudo-header[4..] + BTH + rest, with as many zeros (0-15) as make that a whole
    // number of 16-byte blocks. Built in place: all[4, 4 + zeros) zero, the pseudo-header at
    // all[zeros] (its first four bytes, not fed, are then overwritten by the zeros).
    const ByteView rest = body.subspan(kBthSize);
    const std::size_t n = kHeadSize - 4 + rest.size();
    const std::size_t zeros = (16 - n % 16) % 16;
    std::array<std::uint8_t, 4 + 16 + kHeadSize + kShortRest> all;
    std::uint8_t* const head = all.data() + zeros;
    masked_prefix(h, head);
    std::memcpy(head + kPrefixSize, body.data(), kBthSize);
    head[kPrefixSize + 4] = 0xFF;  // BTH byte 4 (FECN, BECN, reserved) is variant: masked to ones
    if (!rest.empty()) std::memcpy(head + kHeadSize, rest.data(), rest.size());
    std::memset(all.data() + 4, 0, zeros);
    return ~crc32_raw_update(0, ByteView(all.data() + 4, zeros + n));
  }
  std::array<std::uint8_t, kHeadSize> head;
  masked_prefix(h, head.data());
  if (body.size() < kBthSize) {
    return ~crc32_raw_update(crc32_raw_update(0xFFFFFFFFU, ByteView(head).first(kPrefixSize)),
                             body);
  }
  std::memcpy(head.data() + kPrefixSize, body.data(), kBthSize);
  head[kPrefixSize + 4] = 0xFF;  // BTH byte 4 (FECN, BECN, reserved) is variant: masked to ones
  return ~crc32_raw_update(crc32_raw_update(0xFFFFFFFFU, head), body.subspan(kBthSize));
}

void write_icrc(const Ipv4UdpHeaders& h, MutableByteView datagram) noexcept {
  const std::size_t n = datagram.size() - kIcrcSize;
  store_le32(datagram.data() + n, compute_icrc(h, datagram.first(n)));
}

bool verify_icrc(const Ipv4UdpHeaders& h, ByteView datagram) noexcept {
  if (datagram.size() < kIcrcSize) return false;
  const std::size_t n = datagram.size() - kIcrcSize;
  return compute_icrc(h, datagram.first(n)) == load_le32(datagram.data() + n);
}

std::optional<std::uint16_t> recover_ipv4_id(const Ipv4UdpHeaders& h, ByteView datagram) noexcept {
  if (datagram.size() < kIcrcSize) return std::nullopt;
  Ipv4UdpHeaders zero_id = h;
  zero_id.ip.id = 0;
  const std::size_t n = datagram.size() - kIcrcSize;
  std::uint32_t delta = compute_icrc(zero_id, datagram.first(n)) ^ load_le32(datagram.data() + n);
  if (delta == 0) return 0;

  // Column k: how flipping ID bit k changes the CRC. With init and final xor cancelling, that is
  // the raw CRC of the two ID bytes (bit k set) followed by every byte after the ID.
  const std::size_t bytes_after_id = kPrefixSize - kIdOffsetInPrefix - 2 + n;
  const auto shift = Crc32ShiftOperator::for_zero_bytes(bytes_after_id);
  struct Row {
    std::uint32_t vec;
    std::uint16_t combo;
    std::uint32_t pivot;
  };
  Row basis[16];
  std::size_t rank = 0;
  for (unsigned k = 0; k < 16; ++k) {
    const std::uint8_t id_bytes[2] = {static_cast<std::uint8_t>((1U << k) >> 8),
                                      static_cast<std::uint8_t>(1U << k)};
    std::uint32_t v = shift.apply(crc32_raw_update(0, id_bytes));
    auto combo = static_cast<std::uint16_t>(1U << k);
    for (std::size_t r = 0; r < rank; ++r) {
      if ((v & basis[r].pivot) != 0) {
        v ^= basis[r].vec;
        combo ^= basis[r].combo;
      }
    }
    if (v == 0) continue;
    basis[rank++] = Row{v, combo, v & (~v + 1U)};  // pivot: lowest set bit
  }
  // Each row is reduced against the earlier ones, so eliminating in insertion order clears each
  // pivot for good.
  std::uint16_t id = 0;
  for (std::size_t r = 0; r < rank; ++r) {
    if ((delta & basis[r].pivot) != 0) {
      delta ^= basis[r].vec;
      id ^= basis[r].combo;
    }
  }
  if (delta != 0) return std::nullopt;
  return id;
}

}  // namespace naa::protocol
