// A whole RoCEv2 packet as carried in a UDP datagram: BTH | extension headers | payload | pad |
// ICRC (PROTOCOL.md 1). decode_packet() validates structure without copying the payload;
// encode_packet() writes headers, payload and pad and leaves the ICRC to icrc.hpp, because the
// ICRC needs the IPv4/UDP context the packet itself does not carry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "naa/protocol/bytes.hpp"
#include "naa/protocol/headers.hpp"
#include "naa/protocol/opcode.hpp"
#include "naa/protocol/result.hpp"

namespace naa::protocol {

// The headers of one packet. Which optionals are engaged is decided by the opcode table: decode
// engages exactly those the opcode has; encode requires exactly those.
struct PacketHeaders {
  Bth bth;
  std::optional<Deth> deth;
  std::optional<Reth> reth;
  std::optional<AtomicEth> atomic_eth;
  std::optional<Aeth> aeth;
  std::optional<AtomicAckEth> atomic_ack_eth;
  std::optional<std::uint32_t> immediate;  // ImmDt, as the big-endian 32-bit value
  std::optional<std::uint32_t> ieth_rkey;  // IETH
  std::optional<IrnEth> irn_eth;           // IRN requests (docs/protocol.md "IRN")
  std::optional<SackEth> sack_eth;         // IRN ACK
  friend bool operator==(const PacketHeaders&, const PacketHeaders&) = default;
};

struct PacketView {
  PacketHeaders headers;
  const OpcodeInfo* info = nullptr;  // never null in a decoded packet
  ByteView payload;                  // without pad
  std::uint32_t icrc = 0;            // the CRC value (the wire carries it LSB first)
  std::size_t header_size = 0;       // BTH + extension headers
};

// Structural validation: too_short, bad_tver, unknown_opcode, bad_pad (pad count larger than the
// bytes after the headers, payload + pad not a multiple of 4, pad on FIRST/MIDDLE, non-zero pad
// bytes), too_long (payload on an
// opcode that carries none), length_mismatch (empty FIRST/MIDDLE, CNP not 16 bytes). The path
// MTU and the sequence rules are the transport's to check; the ICRC is icrc.hpp's.
[[nodiscard]] Result<PacketView> decode_packet(ByteView datagram) noexcept;
// The same into `out` (no copy of the view; issue 31): nullopt when it decoded, else the error
// (`out` then holds a partial decode).
[[nodiscard]] std::optional<Error> decode_packet_into(ByteView datagram, PacketView& out) noexcept;

// Bytes needed for these headers and a payload of this length: headers + payload + pad + ICRC.
[[nodiscard]] std::size_t packet_size(const PacketHeaders& h, std::size_t payload_len) noexcept;
[[nodiscard]] std::size_t header_size(const PacketHeaders& h) noexcept;

// Writes BTH, extension headers, payload and zero pad into out, with BTH PadCnt derived from the
// payload length; zeroes the 4 ICRC bytes (fill them with write_icrc()). Returns the total
// length including the ICRC. Errors: unknown_opcode, bad_field (a header the opcode needs is
// missing or one it does not have is present), too_long (payload on a no-payload opcode),
// buffer_too_small, value_out_of_range.
[[nodiscard]] Result<std::size_t> encode_packet(const PacketHeaders& h, ByteView payload,
                                                MutableByteView out) noexcept;

}  // namespace naa::protocol
