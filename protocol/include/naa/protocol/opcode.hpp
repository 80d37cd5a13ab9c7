// The opcode table (IBTA vol. 1 table 35; PROTOCOL.md 1): for each BTH opcode we understand, which
// extension headers follow the BTH, which payload rule applies, and what the packet means.
#pragma once

#include <cstdint>
#include <string_view>

namespace naa::protocol {

namespace opcode {
inline constexpr std::uint8_t kSendFirst = 0x00;
inline constexpr std::uint8_t kSendMiddle = 0x01;
inline constexpr std::uint8_t kSendLast = 0x02;
inline constexpr std::uint8_t kSendLastImm = 0x03;
inline constexpr std::uint8_t kSendOnly = 0x04;
inline constexpr std::uint8_t kSendOnlyImm = 0x05;
inline constexpr std::uint8_t kWriteFirst = 0x06;
inline constexpr std::uint8_t kWriteMiddle = 0x07;
inline constexpr std::uint8_t kWriteLast = 0x08;
inline constexpr std::uint8_t kWriteLastImm = 0x09;
inline constexpr std::uint8_t kWriteOnly = 0x0A;
inline constexpr std::uint8_t kWriteOnlyImm = 0x0B;
inline constexpr std::uint8_t kReadRequest = 0x0C;
inline constexpr std::uint8_t kReadResponseFirst = 0x0D;
inline constexpr std::uint8_t kReadResponseMiddle = 0x0E;
inline constexpr std::uint8_t kReadResponseLast = 0x0F;
inline constexpr std::uint8_t kReadResponseOnly = 0x10;
inline constexpr std::uint8_t kAcknowledge = 0x11;
inline constexpr std::uint8_t kAtomicAcknowledge = 0x12;
inline constexpr std::uint8_t kCompareSwap = 0x13;
inline constexpr std::uint8_t kFetchAdd = 0x14;
inline constexpr std::uint8_t kSendLastInv = 0x16;
inline constexpr std::uint8_t kSendOnlyInv = 0x17;
inline constexpr std::uint8_t kUdSendOnly = 0x64;
inline constexpr std::uint8_t kUdSendOnlyImm = 0x65;
inline constexpr std::uint8_t kCnp = 0x81;  // RoCEv2 congestion notification packet
// IRN (docs/protocol.md "IRN"): manufacturer-specific opcodes (IBTA vol. 1 9.2.1, opcode bits 7:5
// = 110), used only on a QP whose CM exchange negotiated IRN (irn.hpp).
inline constexpr std::uint8_t kIrnSendFirst = 0xC0;
inline constexpr std::uint8_t kIrnSendMiddle = 0xC1;
inline constexpr std::uint8_t kIrnSendLast = 0xC2;
inline constexpr std::uint8_t kIrnSendLastImm = 0xC3;
inline constexpr std::uint8_t kIrnSendOnly = 0xC4;
inline constexpr std::uint8_t kIrnSendOnlyImm = 0xC5;
inline constexpr std::uint8_t kIrnWriteFirst = 0xC6;
inline constexpr std::uint8_t kIrnWriteMiddle = 0xC7;
inline constexpr std::uint8_t kIrnWriteLast = 0xC8;
inline constexpr std::uint8_t kIrnWriteLastImm = 0xC9;
inline constexpr std::uint8_t kIrnWriteOnly = 0xCA;
inline constexpr std::uint8_t kIrnWriteOnlyImm = 0xCB;
inline constexpr std::uint8_t kIrnAcknowledge = 0xCC;
// IRN READ (docs/protocol.md 8.5; seed 001 "Supporting RDMA Reads"): the request takes one PSN of
// the requester's stream, the responses travel in the responder's own stream and are acknowledged
// (and NACKed) by its peer's IRN ACKs like any other packet of that stream.
inline constexpr std::uint8_t kIrnReadRequest = 0xCD;
inline constexpr std::uint8_t kIrnReadResponseFirst = 0xCE;
inline constexpr std::uint8_t kIrnReadResponseMiddle = 0xCF;
inline constexpr std::uint8_t kIrnReadResponseLast = 0xD0;
inline constexpr std::uint8_t kIrnReadResponseOnly = 0xD1;
inline constexpr std::uint8_t kIrnFirst = 0xC0;  // the IRN opcode range, inclusive
inline constexpr std::uint8_t kIrnLast = 0xD1;
}  // namespace opcode

// Extension headers after the BTH, in wire order (PROTOCOL.md 1):
// [DETH] [RETH | AtomicETH | AETH] [AtomicAckETH | SackETH] [IrnETH] [ImmDt | IETH].
enum HeaderBit : std::uint16_t {
  kHasDeth = 1U << 0,
  kHasReth = 1U << 1,
  kHasAtomicEth = 1U << 2,
  kHasAeth = 1U << 3,
  kHasAtomicAckEth = 1U << 4,
  kHasImmDt = 1U << 5,
  kHasIeth = 1U << 6,
  kHasIrnEth = 1U << 7,   // IRN: recv_WQE_SN + packet offset (irn.hpp), before ImmDt
  kHasSackEth = 1U << 8,  // IRN: selective ACK, after the AETH (irn.hpp)
};

enum class PayloadRule : std::uint8_t {
  none,        // no payload (ACK, READ REQUEST, atomics)
  full_mtu,    // FIRST/MIDDLE: exactly one path MTU, pad 0 (checked by the transport)
  up_to_mtu,   // LAST/ONLY: 0..path MTU bytes
  reserved16,  // 16 reserved bytes (CNP)
};

enum class OpKind : std::uint8_t {
  send,
  rdma_write,
  rdma_read_request,
  rdma_read_response,
  acknowledge,
  atomic_acknowledge,
  atomic,
  congestion_notification,
};

enum class Segment : std::uint8_t { first, middle, last, only };

enum class ServiceType : std::uint8_t { rc, ud, congestion };

struct OpcodeInfo {
  std::uint8_t code;
  std::string_view name;  // as the IBTA names it
  ServiceType service;
  OpKind kind;
  Segment segment;
  std::uint16_t headers;  // HeaderBit set
  PayloadRule payload;

  [[nodiscard]] constexpr bool has(HeaderBit b) const noexcept { return (headers & b) != 0; }
  [[nodiscard]] constexpr bool starts_message() const noexcept {
    return segment == Segment::first || segment == Segment::only;
  }
  [[nodiscard]] constexpr bool ends_message() const noexcept {
    return segment == Segment::last || segment == Segment::only;
  }
  // Requests travel requester -> responder; responses (ACK, READ RESPONSE, ATOMIC ACK) back.
  // IRN opcodes (0xC0-0xD1): selective repeat, negotiated per QP.
  [[nodiscard]] constexpr bool is_irn() const noexcept {
    return code >= opcode::kIrnFirst && code <= opcode::kIrnLast;
  }
  // An IRN READ response travels in the responder's own PSN stream: its receiver places it and
  // acknowledges it as a request packet (docs/protocol.md 8.5), so it is not an ACK to it.
  [[nodiscard]] constexpr bool is_irn_read_response() const noexcept {
    return kind == OpKind::rdma_read_response && is_irn();
  }
  [[nodiscard]] constexpr bool is_response() const noexcept {
    return kind == OpKind::acknowledge || kind == OpKind::rdma_read_response ||
           kind == OpKind::atomic_acknowledge;
  }
};

// nullptr for an opcode not in the table.
[[nodiscard]] const OpcodeInfo* find_opcode(std::uint8_t code) noexcept;

// Size in bytes of the extension headers a HeaderBit set describes.
[[nodiscard]] std::size_t extension_headers_size(std::uint16_t headers) noexcept;

}  // namespace naa::protocol
