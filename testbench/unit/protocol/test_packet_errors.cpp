// Whole-packet decode and encode of malformed input (packet.cpp with one decoder and encoder per
// header set of the opcode table, issue 31) against the contract of packet.hpp, restated here
// check by check in its order: random opcodes (unknown ones too), truncated and extended
// datagrams, TVer, pad counts and pad bytes; headers missing or extra, payloads on opcodes
// without one, short buffers, fields wider than their wire width. Replayed from NAA_TEST_SEED.
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "naa/protocol/opcode.hpp"
#include "naa/protocol/packet.hpp"
#include "seed.hpp"

using namespace naa::protocol;

namespace {

// decode_packet_into's verdict from packet.hpp's list of checks, with the headers' layout from
// find_opcode() and extension_headers_size() (not packet.cpp's tables).
std::optional<Error> reference_verdict(const std::vector<std::uint8_t>& d) {
  if (d.size() < kBthSize + kIcrcSize) return Error::too_short;
  if ((d[1] & 0x0FU) != 0) return Error::bad_tver;
  const OpcodeInfo* info = find_opcode(d[0]);
  if (info == nullptr) return Error::unknown_opcode;
  const std::size_t headers = kBthSize + extension_headers_size(info->headers);
  if (d.size() < headers + kIcrcSize) return Error::too_short;
  const std::size_t body = d.size() - headers - kIcrcSize;
  const std::size_t pad = (d[1] >> 4) & 0x3U;
  if (pad > body || body % 4 != 0) return Error::bad_pad;
  for (std::size_t i = 0; i < pad; ++i) {
    if (d[headers + body - pad + i] != 0) return Error::bad_pad;
  }
  switch (info->payload) {
    case PayloadRule::none:
      if (body != 0) return Error::too_long;
      break;
    case PayloadRule::full_mtu:
      if (pad != 0) return Error::bad_pad;
      if (body == 0) return Error::length_mismatch;
      break;
    case PayloadRule::up_to_mtu:
      break;
    case PayloadRule::reserved16:
      if (body != 16) return Error::length_mismatch;
      break;
  }
  return std::nullopt;
}

// A verdict as a number Catch prints: -1 when decoded, else the Error's value.
int code(std::optional<Error> e) {
  return e ? static_cast<int>(*e) : -1;
}

std::uint16_t present(const PacketHeaders& h) {
  return static_cast<std::uint16_t>((h.deth ? kHasDeth : 0) | (h.reth ? kHasReth : 0) |
                                    (h.atomic_eth ? kHasAtomicEth : 0) | (h.aeth ? kHasAeth : 0) |
                                    (h.atomic_ack_eth ? kHasAtomicAckEth : 0) |
                                    (h.immediate ? kHasImmDt : 0) | (h.ieth_rkey ? kHasIeth : 0) |
                                    (h.irn_eth ? kHasIrnEth : 0) | (h.sack_eth ? kHasSackEth : 0));
}

}  // namespace

TEST_CASE("packet decode rejects malformed datagrams as packet.hpp says, for every opcode",
          "[packet]") {
  const auto seed = naa::testbench::seed_for("packet decode errors");
  INFO("seed " << seed << " (NAA_TEST_SEED=" << naa::testbench::test_seed() << ")");
  std::mt19937_64 rng(seed);
  std::size_t accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    // A datagram that is mostly well formed: a known opcode's headers and a payload of 0-40
    // bytes with its pad, then one or two of: another opcode byte, TVer, pad count, a pad byte,
    // the length.
    std::uint8_t opcode = static_cast<std::uint8_t>(rng());
    while (find_opcode(opcode) == nullptr)
      opcode = static_cast<std::uint8_t>(rng());
    const OpcodeInfo* info = find_opcode(opcode);
    const std::size_t payload = rng() % 41;
    const std::size_t pad = (4U - payload % 4U) % 4U;
    std::vector<std::uint8_t> d(kBthSize + extension_headers_size(info->headers) + payload);
    for (auto& b : d)
      b = static_cast<std::uint8_t>(rng());
    d[0] = opcode;
    d[1] = static_cast<std::uint8_t>((d[1] & 0xC0U) | (pad << 4));  // TVer 0
    d.insert(d.end(), pad, 0);
    d.insert(d.end(), kIcrcSize, 0x5A);
    for (int k = 0, n = 1 + static_cast<int>(rng() % 2); k < n; ++k) {
      // The byte changes only while the datagram still has its headers and 4 bytes more.
      const auto change = d.size() >= kBthSize + kIcrcSize + 4 ? rng() % 6 : 4 + rng() % 2;
      switch (change) {
        case 0:
          d[0] = static_cast<std::uint8_t>(rng());
          break;
        case 1:
          d[1] ^= static_cast<std::uint8_t>(1U << (rng() % 4));
          break;
        case 2:
          d[1] = static_cast<std::uint8_t>((d[1] & 0xCFU) | ((rng() % 4) << 4));
          break;
        case 3:
          d[d.size() - kIcrcSize - 1 - rng() % 4] ^= static_cast<std::uint8_t>(1 + rng() % 255);
          break;
        case 4:
          d.resize(rng() % (d.size() + 1));
          break;
        default:
          d.insert(d.end(), 1 + rng() % 20, static_cast<std::uint8_t>(rng() % 2));
          break;
      }
    }
    PacketView v;
    const auto got = decode_packet_into(d, v);
    const auto want = reference_verdict(d);
    INFO("opcode " << int{d.empty() ? 0 : d[0]} << " length " << d.size());
    REQUIRE(code(got) == code(want));
    if (!got) {
      ++accepted;
      CHECK(v.info == find_opcode(d[0]));
      CHECK(present(v.headers) == v.info->headers);
      CHECK(v.header_size == kBthSize + extension_headers_size(v.info->headers));
    }
  }
  CHECK(accepted > 1000);  // the mutations leave some datagrams well formed
}

TEST_CASE("packet encode rejects bad headers as packet.hpp says, for every opcode", "[packet]") {
  const auto seed = naa::testbench::seed_for("packet encode errors");
  INFO("seed " << seed << " (NAA_TEST_SEED=" << naa::testbench::test_seed() << ")");
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> out(200);
  std::vector<std::uint8_t> payload_bytes(40, 0xAB);
  std::size_t encoded = 0;
  for (int round = 0; round < 20000; ++round) {
    PacketHeaders h;
    h.bth.opcode = static_cast<std::uint8_t>(rng());
    const OpcodeInfo* info = find_opcode(h.bth.opcode);
    // The opcode's headers, or (one time in four) each one flipped with probability 1/8.
    const std::uint16_t want_headers = info != nullptr ? info->headers : 0;
    auto engaged = [&](HeaderBit b) {
      const bool has = (want_headers & b) != 0;
      return rng() % 32 == 0 ? !has : has;
    };
    // Each field over its width one time in 64.
    auto wide = [&](std::uint32_t max) {
      return rng() % 64 == 0 ? max + 1 : static_cast<std::uint32_t>(rng() % (max + 1ULL));
    };
    h.bth.tver = static_cast<std::uint8_t>(wide(0xF));
    h.bth.reserved6 = static_cast<std::uint8_t>(wide(0x3F));
    h.bth.reserved7 = static_cast<std::uint8_t>(wide(0x7F));
    h.bth.dest_qpn = wide(kMax24);
    h.bth.psn = wide(kMax24);
    if (engaged(kHasDeth)) h.deth = Deth{1, 2, wide(kMax24)};
    if (engaged(kHasReth)) h.reth = Reth{1, 2, 3};
    if (engaged(kHasAtomicEth)) h.atomic_eth = AtomicEth{1, 2, 3, 4};
    if (engaged(kHasAeth)) h.aeth = Aeth{1, wide(kMax24)};
    if (engaged(kHasAtomicAckEth)) h.atomic_ack_eth = AtomicAckEth{1};
    if (engaged(kHasImmDt)) h.immediate = 5;
    if (engaged(kHasIeth)) h.ieth_rkey = 6;
    if (engaged(kHasIrnEth)) h.irn_eth = IrnEth{7, 8};
    if (engaged(kHasSackEth)) h.sack_eth = SackEth{1, wide(kMax24), 9};
    const std::size_t len = rng() % 4 == 0 ? 0 : rng() % 41;
    const ByteView payload(payload_bytes.data(), len);
    const MutableByteView buffer(out.data(), rng() % 4 == 0 ? rng() % 100 : out.size());

    std::optional<Error> want;
    if (info == nullptr) {
      want = Error::unknown_opcode;
    } else if (present(h) != info->headers) {
      want = Error::bad_field;
    } else if (info->payload == PayloadRule::none && len != 0) {
      want = Error::too_long;
    } else if (buffer.size() < packet_size(h, len)) {
      want = Error::buffer_too_small;
    } else if (h.bth.tver > 0xF || h.bth.reserved6 > 0x3F || h.bth.reserved7 > 0x7F ||
               h.bth.dest_qpn > kMax24 || h.bth.psn > kMax24 ||
               (h.deth && h.deth->src_qpn > kMax24) || (h.aeth && h.aeth->msn > kMax24) ||
               (h.sack_eth && h.sack_eth->sack_psn > kMax24)) {
      want = Error::value_out_of_range;
    }
    INFO("opcode " << int{h.bth.opcode} << " headers " << present(h) << " payload " << len
                   << " buffer " << buffer.size());
    const auto n = encode_packet(h, payload, buffer);
    if (want) {
      REQUIRE_FALSE(n.has_value());
      REQUIRE(n.error() == *want);
    } else {
      REQUIRE(n.has_value());
      REQUIRE(*n == packet_size(h, len));
      ++encoded;
    }
  }
  CHECK(encoded > 1000);
}
