#include "naa/protocol/icrc.hpp"

#include <array>
#include <bit>
#include <cstring>

#include "naa/protocol/crc32.hpp"
#include "naa/protocol/headers.hpp"

namespace naa::protocol {
namespace {

constexpr std::size_t kPrefixSize = 8 + kIpv4HeaderSize + kUdpHeaderSize;  // 36
constexpr std::size_t kIdOffsetInPrefix = 8 + 4;
// The masked pseudo-header and the masked BTH: 48 bytes, three whole 16-byte blocks, so the CRC
// folds them and goes on with the rest of the datagram where it lies (crc32_raw_update with a
// head; issue 31: no copy of the datagram, one final reduction).
constexpr std::size_t kHeadSize = kPrefixSize + kBthSize;
static_assert(kHeadSize % 16 == 0);

// The masked pseudo-header (IBTA annex A17.3.3; PROTOCOL.md 2): 8 x 0xFF for the LRH, then the
// IPv4 header (RFC 791) and the UDP header (RFC 768) as their 32-bit big-endian words, with the
// variant fields (TOS, TTL, header checksum, UDP checksum) set to ones; the other fields as
// encode_ipv4() and encode_udp() write them. Stored a word at a time (issue 31: field by field
// the compiler merged the stores at a cost of ~15 instructions per datagram).
// One big-endian word as one store (store_be32's byte stores let the compiler split and re-merge
// the words with the constant bytes around them).
void store_word(std::uint8_t* p, std::uint32_t v) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap32(v);
  std::memcpy(p, &v, sizeof v);
#else
  store_be32(p, v);
#endif
}

void masked_prefix(const Ipv4UdpHeaders& h, std::uint8_t* p) noexcept {
  store_word(p, 0xFFFFFFFFU);
  store_word(p + 4, 0xFFFFFFFFU);
  // version 4, IHL 5 | TOS masked | total length
  store_word(p + 8, 0x45FF0000U | h.ip.total_length);
  // identification | flags, fragment offset
  store_word(p + 12, (std::uint32_t{h.ip.id} << 16) | h.ip.flags_fragment);
  // TTL masked | protocol | header checksum masked
  store_word(p + 16, 0xFF00FFFFU | (std::uint32_t{h.ip.protocol} << 16));
  store_word(p + 20, h.ip.src);
  store_word(p + 24, h.ip.dst);
  // source port | destination port
  store_word(p + 28, (std::uint32_t{h.udp.src_port} << 16) | h.udp.dst_port);
  // length | checksum masked
  store_word(p + 32, (std::uint32_t{h.udp.length} << 16) | 0xFFFFU);
}

// The ID whose ICRC differs from ID 0's by `delta`, for a datagram of n bytes before its ICRC:
// out of line, so that the common case above (ID 0) saves no registers for it (issue 31).
[[gnu::noinline]] std::optional<std::uint16_t> solve_ipv4_id(std::size_t n,
                                                             std::uint32_t delta) noexcept {
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

}  // namespace

std::uint32_t compute_icrc(const Ipv4UdpHeaders& h, ByteView body) noexcept {
  std::array<std::uint8_t, kHeadSize> head;
  masked_prefix(h, head.data());
  if (body.size() < kBthSize) {  // no whole BTH: not a packet, but its CRC is still defined
    return ~crc32_raw_update(0xFFFFFFFFU, ByteView(head).first(kPrefixSize), body);
  }
  std::memcpy(head.data() + kPrefixSize, body.data(), kBthSize);
  head[kPrefixSize + 4] = 0xFF;  // BTH byte 4 (FECN, BECN, reserved) is variant: masked to ones
  return ~crc32_raw_update(0xFFFFFFFFU, head, body.subspan(kBthSize));
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
  const std::uint32_t delta =
      compute_icrc(zero_id, datagram.first(n)) ^ load_le32(datagram.data() + n);
  if (delta == 0) return 0;
  return solve_ipv4_id(n, delta);
}

}  // namespace naa::protocol
