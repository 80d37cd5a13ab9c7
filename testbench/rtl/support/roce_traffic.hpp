// RoCEv2 datagrams for the receive-path testbenches (rx_parser, icrc_check): the conformance
// vectors of testbench/vectors, and seeded random datagrams built with naa::protocol (every opcode
// of the table, random header fields and payloads) of which about half are then damaged in one
// of the ways a parser must catch (truncated, extended, TVer, pad count, pad bytes, opcode, a
// flipped byte, or plain noise).
#pragma once

#include <cstdint>
#include <vector>

#include "naa/protocol/icrc.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/opcode.hpp"
#include "naa/protocol/packet.hpp"
#include "naa/protocol/pcap.hpp"
#include "stream_traffic.hpp"
#include "vectors.hpp"

namespace naa::testbench::rtl {

// One datagram (BTH .. ICRC) with the IPv4/UDP headers it travelled under.
struct Datagram {
  std::string name;
  protocol::Ipv4UdpHeaders headers;
  Bytes bytes;
};

// The 16 frames of roce_frames.txt and the ConnectX-4 Lx CNP.
inline std::vector<Datagram> vector_datagrams() {
  std::vector<Datagram> out;
  auto add = [&out](std::string name, const std::vector<std::uint8_t>& frame) {
    auto rf = protocol::decode_roce_frame(frame);
    if (!rf) throw std::runtime_error("vector " + name + " is not a RoCEv2 frame");
    out.push_back({std::move(name), rf->headers, Bytes(rf->roce.begin(), rf->roce.end())});
  };
  for (const auto& f : load_roce_frames())
    add("frame " + std::to_string(f.index) + " " + f.name, f.bytes);
  add("cx4lx CNP", load_cx4lx_frame());
  return out;
}

inline std::vector<std::uint8_t> known_opcodes() {
  std::vector<std::uint8_t> codes;
  for (unsigned c = 0; c < 256; ++c) {
    if (protocol::find_opcode(static_cast<std::uint8_t>(c)) != nullptr) {
      codes.push_back(static_cast<std::uint8_t>(c));
    }
  }
  return codes;
}

// A well-formed datagram of a random opcode (ICRC written for `headers`' addresses).
inline Datagram random_good_datagram(Rng& rng, std::size_t max_payload = 300) {
  static const std::vector<std::uint8_t> codes = known_opcodes();
  const std::uint8_t code = codes[uniform<std::size_t>(rng, 0, codes.size() - 1)];
  const protocol::OpcodeInfo* info = protocol::find_opcode(code);
  protocol::PacketHeaders h;
  h.bth.opcode = code;
  h.bth.solicited_event = chance(rng, 0.5);
  h.bth.mig_req = chance(rng, 0.5);
  h.bth.pkey = chance(rng, 0.8) ? 0xFFFF : uniform<std::uint16_t>(rng, 0, 0xFFFF);
  h.bth.fecn = chance(rng, 0.2);
  h.bth.becn = chance(rng, 0.2);
  h.bth.reserved6 = chance(rng, 0.1) ? uniform<std::uint8_t>(rng, 0, 0x3F) : 0;
  h.bth.dest_qpn = uniform<std::uint32_t>(rng, 0, 0xFFFFFF);
  h.bth.ack_req = chance(rng, 0.5);
  h.bth.reserved7 = chance(rng, 0.1) ? uniform<std::uint8_t>(rng, 0, 0x7F) : 0;
  h.bth.psn = uniform<std::uint32_t>(rng, 0, 0xFFFFFF);
  if (info->has(protocol::kHasDeth)) {
    h.deth = protocol::Deth{static_cast<std::uint32_t>(rng()), uniform<std::uint8_t>(rng, 0, 255),
                            uniform<std::uint32_t>(rng, 0, 0xFFFFFF)};
  }
  if (info->has(protocol::kHasReth)) {
    h.reth =
        protocol::Reth{rng(), static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(rng())};
  }
  if (info->has(protocol::kHasAtomicEth)) {
    h.atomic_eth = protocol::AtomicEth{rng(), static_cast<std::uint32_t>(rng()), rng(), rng()};
  }
  if (info->has(protocol::kHasAeth)) {
    h.aeth = protocol::Aeth{uniform<std::uint8_t>(rng, 0, 255),
                            uniform<std::uint32_t>(rng, 0, 0xFFFFFF)};
  }
  if (info->has(protocol::kHasAtomicAckEth)) h.atomic_ack_eth = protocol::AtomicAckEth{rng()};
  if (info->has(protocol::kHasImmDt)) h.immediate = static_cast<std::uint32_t>(rng());
  if (info->has(protocol::kHasIeth)) h.ieth_rkey = static_cast<std::uint32_t>(rng());
  if (info->has(protocol::kHasIrnEth)) {  // IRN (docs/protocol.md 8)
    h.irn_eth =
        protocol::IrnEth{static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(rng())};
  }
  if (info->has(protocol::kHasSackEth)) {
    h.sack_eth = protocol::SackEth{uniform<std::uint8_t>(rng, 0, 255),
                                   uniform<std::uint32_t>(rng, 0, 0xFFFFFF),
                                   static_cast<std::uint32_t>(rng())};
  }
  std::size_t len = 0;
  switch (info->payload) {
    case protocol::PayloadRule::none:
      break;
    case protocol::PayloadRule::full_mtu:
      len = 4 * uniform<std::size_t>(rng, 1, max_payload / 4);
      break;
    case protocol::PayloadRule::up_to_mtu:
      len = uniform<std::size_t>(rng, 0, max_payload);
      break;
    case protocol::PayloadRule::reserved16:
      len = 16;
      break;
  }
  const Bytes payload = random_bytes(rng, len);
  Datagram d;
  d.name = "random opcode " + std::to_string(code);
  d.bytes.resize(protocol::packet_size(h, len));
  if (!protocol::encode_packet(h, payload, d.bytes)) throw std::logic_error("encode_packet");
  d.headers = protocol::make_roce_headers(
      0xC0A8010A + uniform<std::uint32_t>(rng, 0, 3), uniform<std::uint16_t>(rng, 0xC000, 0xFFFF),
      0xC0A80114, d.bytes.size(), chance(rng, 0.5) ? 0 : uniform<std::uint16_t>(rng, 0, 0xFFFF));
  protocol::write_icrc(d.headers, d.bytes);
  return d;
}

// A random datagram, about half of them damaged (the ICRC is then stale: the parser does not
// check it; icrc_check's testbench rewrites it where it wants a good one).
inline Datagram random_datagram(Rng& rng, std::size_t max_payload = 300) {
  Datagram d = random_good_datagram(rng, max_payload);
  if (chance(rng, 0.5)) return d;
  Bytes& b = d.bytes;
  switch (uniform(rng, 0, 8)) {
    case 0:  // truncated
      b.resize(uniform<std::size_t>(rng, 0, b.size()));
      break;
    case 1:  // extended
      for (int n = uniform(rng, 1, 7); n > 0; --n)
        b.push_back(uniform<std::uint8_t>(rng, 0, 255));
      break;
    case 2:  // TVer
      b[1] = static_cast<std::uint8_t>((b[1] & 0xF0U) | uniform(rng, 1U, 15U));
      break;
    case 3:  // pad count
      b[1] = static_cast<std::uint8_t>((b[1] & 0xCFU) | (uniform(rng, 0U, 3U) << 4));
      break;
    case 4: {  // a pad byte (or, with no pad, a payload byte) before the ICRC
      const std::size_t i = b.size() - 5 - uniform<std::size_t>(rng, 0, 2);
      if (i < b.size()) b[i] = uniform<std::uint8_t>(rng, 1, 255);
      break;
    }
    case 5:  // opcode
      b[0] = uniform<std::uint8_t>(rng, 0, 255);
      break;
    case 6:  // any byte
      b[uniform<std::size_t>(rng, 0, b.size() - 1)] ^= uniform<std::uint8_t>(rng, 1, 255);
      break;
    case 7:  // noise
      b = random_bytes(rng, uniform<std::size_t>(rng, 0, 80));
      break;
    default:  // a different length, in whole words
      b.resize(b.size() + 4 * uniform<std::size_t>(rng, 1, 5), 0);
      break;
  }
  d.name += " (damaged)";
  return d;
}

}  // namespace naa::testbench::rtl
