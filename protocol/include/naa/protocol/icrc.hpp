// The RoCEv2 Invariant CRC (PROTOCOL.md 2; IBTA annex A17.3.3).
//
// ICRC = zlib CRC-32 over 8 bytes of 0xFF || IPv4 header || UDP header || BTH .. pad, with IPv4
// TOS, TTL and header checksum, the UDP checksum and BTH byte 4 replaced by ones. It is written
// least-significant byte first. All functions take the datagram as it is on a UDP socket: BTH
// through ICRC, with the IPv4/UDP context supplied separately.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "naa/protocol/bytes.hpp"
#include "naa/protocol/ipv4_udp.hpp"

namespace naa::protocol {

// CRC over headers and the datagram WITHOUT its 4 ICRC bytes.
[[nodiscard]] std::uint32_t compute_icrc(const Ipv4UdpHeaders& h, ByteView body) noexcept;

// Computes the ICRC over datagram[0 .. size-4) and stores it in the last 4 bytes.
// Precondition: datagram.size() >= 4.
void write_icrc(const Ipv4UdpHeaders& h, MutableByteView datagram) noexcept;

// True if the last 4 bytes hold the ICRC of the rest (false if shorter than 4 bytes).
[[nodiscard]] bool verify_icrc(const Ipv4UdpHeaders& h, ByteView datagram) noexcept;

// Receiving on a UDP socket, the sender's IPv4 ID is unknown, yet the ICRC covers it. CRC-32 is
// affine over GF(2), so for a fixed length the received ICRC determines the ID: this returns the
// ID (h.ip.id is ignored) for which the ICRC verifies, or nullopt if none does (the packet is
// corrupt). A peer that sends ID 0 still gets the full 32-bit check; a peer that does not gets a
// 16-bit-strong one. The fast path (ID 0) costs one CRC; otherwise one more CRC-free solve.
[[nodiscard]] std::optional<std::uint16_t> recover_ipv4_id(const Ipv4UdpHeaders& h,
                                                           ByteView datagram) noexcept;

}  // namespace naa::protocol
