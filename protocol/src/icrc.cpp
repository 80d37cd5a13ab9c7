#include "naa/protocol/icrc.hpp"

#include <array>
#include <bit>
#include <cstddef>
#include <cstring>

#include "crc32_clmul.hpp"
#include "header_fields.hpp"
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
// One big-endian word as one store (fields::store_word: store_be32's byte stores let the
// compiler split and re-merge the words with the constant bytes around them).
using fields::store_word;

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

#ifdef NAA_CRC32_CLMUL
// The ICRC of a body of at least 16 bytes by carry-less folding, with the masked pseudo-header
// built in registers straight from `h` (issue 31: ~40 instructions per datagram less than storing
// the 48-byte head and loading it back). The CRC starts from 0xFFFFFFFF and the pseudo-header
// from four 0xFF bytes, which cancel it: from a zero register the stream is the pseudo-header's
// bytes 4-35 (two blocks) and then the body, whose first block is the BTH and 4 more bytes
// (BTH byte 4 masked). The body's last partial block is read from its last 16 bytes.
// IcrcUse::delta takes the IPv4 ID as 0 (recover_ipv4_id), without a copy of `h`.
//
// The two pseudo-header blocks are byte shuffles of `h` itself (16 bytes from offset 2, and 16
// from offset 12, past the padding after tos) into big-endian order, with the masked and
// constant bytes or-ed in; this needs the layout below.
static_assert(offsetof(Ipv4UdpHeaders, ip) == 0 && offsetof(Ipv4Header, total_length) == 2 &&
              offsetof(Ipv4Header, id) == 4 && offsetof(Ipv4Header, flags_fragment) == 6 &&
              offsetof(Ipv4Header, protocol) == 9 && offsetof(Ipv4Header, src) == 12 &&
              offsetof(Ipv4Header, dst) == 16 && offsetof(Ipv4UdpHeaders, udp) == 20 &&
              offsetof(UdpHeader, src_port) == 0 && offsetof(UdpHeader, dst_port) == 2 &&
              offsetof(UdpHeader, length) == 4 && sizeof(Ipv4UdpHeaders) == 28 &&
              std::endian::native == std::endian::little);

// What icrc_clmul does with the ICRC: the caller's wrapper is then a jump, with no registers
// saved around a call (issue 31: ~15 instructions per datagram).
enum class IcrcUse {
  compute,  // return it
  write,    // store it in the 4 bytes after the body
  delta,    // with the ID taken as 0: return it xor the 4 bytes after the body
};

template <IcrcUse kUse>
NAA_CLMUL_TARGET std::uint32_t icrc_clmul(const Ipv4UdpHeaders& h, std::uint8_t* body,
                                          std::size_t n) noexcept {
  using namespace clmul;  // NOLINT: the folding steps (crc32_clmul.hpp)
  const auto* raw = reinterpret_cast<const std::uint8_t*>(&h);  // NOLINT: h's bytes
  constexpr char kZ = static_cast<char>(0x80);           // a shuffle control byte yielding zero
  constexpr char kId = kUse == IcrcUse::delta ? kZ : 0;  // the ID's bytes kept, or zeroed
  // Pseudo-header bytes 4-19: LRH 0xFF x 4 | 0x45, TOS | total length | ID | flags, fragment |
  // TTL | protocol | header checksum; from h's bytes 2-17 (total length at 0, ID at 2, flags at
  // 4, protocol at 7).
  const __m128i ctl0 = _mm_setr_epi8(kZ, kZ, kZ, kZ, kZ, kZ, 1, 0, static_cast<char>(kId + 3),
                                     static_cast<char>(kId + 2), 5, 4, kZ, 7, kZ, kZ);
  const __m128i ones0 = _mm_setr_epi8(-1, -1, -1, -1, 0x45, -1, 0, 0, 0, 0, 0, 0, -1, 0, -1, -1);
  // Bytes 20-35: source address | destination address | source port | destination port |
  // length | UDP checksum; from h's bytes 12-27 (addresses at 0 and 4, ports at 8 and 10,
  // length at 12).
  const __m128i ctl1 = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 9, 8, 11, 10, 13, 12, kZ, kZ);
  const __m128i ones1 = _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1);
  const __m128i ones2 = _mm_setr_epi8(0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);  // BTH 4
  __m128i x = _mm_or_si128(_mm_shuffle_epi8(load_block(raw + 2), ctl0), ones0);
  x = fold16(x, k3k4(), _mm_or_si128(_mm_shuffle_epi8(load_block(raw + 12), ctl1), ones1));
  x = fold16(x, k3k4(), _mm_or_si128(load_block(body), ones2));
  const std::uint8_t* p = body + 16;
  std::size_t rest = n - 16;
  x = fold_blocks(x, p, rest);
  if (rest != 0) x = fold_tail(x, load_block(body + n - 16), rest);
  const std::uint32_t icrc = ~reduce(x);
  if constexpr (kUse == IcrcUse::write) store_le32(body + n, icrc);
  if constexpr (kUse == IcrcUse::delta) return icrc ^ load_le32(body + n);
  return icrc;
}
#endif

// recover_ipv4_id's ICRC with ID 0 xor the received one, without CLMUL or for bodies under 16
// bytes: out of line, so that the common case saves no registers for its copy of h.
[[gnu::noinline]] std::uint32_t icrc_delta_with_id0(const Ipv4UdpHeaders& h, ByteView datagram,
                                                    std::size_t n) noexcept {
  Ipv4UdpHeaders zero_id = h;
  zero_id.ip.id = 0;
  return compute_icrc(zero_id, datagram.first(n)) ^ load_le32(datagram.data() + n);
}

// write_icrc without CLMUL or for bodies under 16 bytes: out of line, as above.
[[gnu::noinline]] void write_icrc_portable(const Ipv4UdpHeaders& h, MutableByteView datagram,
                                           std::size_t n) noexcept {
  store_le32(datagram.data() + n, compute_icrc(h, datagram.first(n)));
}

}  // namespace

std::uint32_t compute_icrc(const Ipv4UdpHeaders& h, ByteView body) noexcept {
#ifdef NAA_CRC32_CLMUL
  if (body.size() >= 16 && clmul::cpu_has_clmul()) {
    // Not written to (IcrcUse::compute).
    return icrc_clmul<IcrcUse::compute>(h, const_cast<std::uint8_t*>(body.data()), body.size());
  }
#endif
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
#ifdef NAA_CRC32_CLMUL
  if (n >= 16 && clmul::cpu_has_clmul()) {
    (void)icrc_clmul<IcrcUse::write>(h, datagram.data(), n);
    return;
  }
#endif
  write_icrc_portable(h, datagram, n);
}

bool verify_icrc(const Ipv4UdpHeaders& h, ByteView datagram) noexcept {
  if (datagram.size() < kIcrcSize) return false;
  const std::size_t n = datagram.size() - kIcrcSize;
  return compute_icrc(h, datagram.first(n)) == load_le32(datagram.data() + n);
}

std::optional<std::uint16_t> recover_ipv4_id(const Ipv4UdpHeaders& h, ByteView datagram) noexcept {
  if (datagram.size() < kIcrcSize) return std::nullopt;
  const std::size_t n = datagram.size() - kIcrcSize;
  std::uint32_t delta;
#ifdef NAA_CRC32_CLMUL
  if (n >= 16 && clmul::cpu_has_clmul()) {
    // Not written to (IcrcUse::delta).
    delta = icrc_clmul<IcrcUse::delta>(h, const_cast<std::uint8_t*>(datagram.data()), n);
  } else
#endif
  {
    delta = icrc_delta_with_id0(h, datagram, n);
  }
  if (delta == 0) return 0;
  return solve_ipv4_id(n, delta);
}

}  // namespace naa::protocol
