// InfiniBand transport headers carried by RoCEv2 (IBTA vol. 1 ch. 9; PROTOCOL.md 1): BTH and the
// extension headers RETH, AETH, ImmDt, IETH, DETH, AtomicETH, AtomicAckETH.
//
// Each header is a plain field struct with encode_*/decode_* over bytes. Reserved bits are kept
// as fields so that decode followed by encode reproduces the input byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>

#include "naa/protocol/bytes.hpp"
#include "naa/protocol/result.hpp"

namespace naa::protocol {

inline constexpr std::size_t kBthSize = 12;
inline constexpr std::size_t kRethSize = 16;
inline constexpr std::size_t kAethSize = 4;
inline constexpr std::size_t kImmDtSize = 4;
inline constexpr std::size_t kIethSize = 4;
inline constexpr std::size_t kDethSize = 8;
inline constexpr std::size_t kAtomicEthSize = 28;
inline constexpr std::size_t kAtomicAckEthSize = 8;
inline constexpr std::size_t kIcrcSize = 4;
inline constexpr std::size_t kIrnEthSize = 8;   // IRN (docs/protocol.md "IRN")
inline constexpr std::size_t kSackEthSize = 8;  // IRN
inline constexpr std::uint16_t kDefaultPkey = 0xFFFF;
inline constexpr std::uint32_t kMax24 = 0xFFFFFF;

// Base Transport Header, 12 bytes.
struct Bth {
  std::uint8_t opcode = 0;
  bool solicited_event = false;  // SE
  bool mig_req = false;
  std::uint8_t pad_count = 0;  // 0..3
  std::uint8_t tver = 0;       // must be 0
  std::uint16_t pkey = kDefaultPkey;
  bool fecn = false;
  bool becn = false;
  std::uint8_t reserved6 = 0;  // byte 4 bits 5:0 (masked in the ICRC)
  std::uint32_t dest_qpn = 0;  // 24 bit
  bool ack_req = false;
  std::uint8_t reserved7 = 0;  // byte 8 bits 6:0
  std::uint32_t psn = 0;       // 24 bit
  friend bool operator==(const Bth&, const Bth&) = default;
};

// RDMA Extended Transport Header, 16 bytes.
struct Reth {
  std::uint64_t va = 0;
  std::uint32_t rkey = 0;
  std::uint32_t dma_length = 0;
  friend bool operator==(const Reth&, const Reth&) = default;
};

// ACK Extended Transport Header, 4 bytes.
struct Aeth {
  std::uint8_t syndrome = 0;
  std::uint32_t msn = 0;  // 24 bit
  friend bool operator==(const Aeth&, const Aeth&) = default;
};

// Datagram Extended Transport Header, 8 bytes.
struct Deth {
  std::uint32_t qkey = 0;
  std::uint8_t reserved = 0;
  std::uint32_t src_qpn = 0;  // 24 bit
  friend bool operator==(const Deth&, const Deth&) = default;
};

// Atomic Extended Transport Header, 28 bytes.
struct AtomicEth {
  std::uint64_t va = 0;
  std::uint32_t rkey = 0;
  std::uint64_t swap_add = 0;
  std::uint64_t compare = 0;
  friend bool operator==(const AtomicEth&, const AtomicEth&) = default;
};

// Atomic Acknowledge Extended Transport Header, 8 bytes.
struct AtomicAckEth {
  std::uint64_t original_data = 0;
  friend bool operator==(const AtomicAckEth&, const AtomicAckEth&) = default;
};

// IRN Extended Transport Header, 8 bytes (docs/protocol.md "IRN"): recv_WQE_SN(32), the index of
// the receive WQE the message consumes (IRN 5.3.2), then the packet's offset in its message in
// packets (32), so an out-of-order SEND packet is placed at offset x MTU of the receive buffer.
struct IrnEth {
  std::uint32_t recv_wqe_sn = 0;
  std::uint32_t packet_offset = 0;
  friend bool operator==(const IrnEth&, const IrnEth&) = default;
};

// IRN selective-ACK Extended Transport Header, 8 bytes: reserved(8) | SACK PSN(24), the PSN of the
// packet that triggered this ACK | arrived bitmap(32): bit i (LSB first) set when PSN
// cumulative + 2 + i has arrived (cumulative is the BTH PSN, so bit 0 is the PSN after the hole).
struct SackEth {
  std::uint8_t reserved = 0;
  std::uint32_t sack_psn = 0;  // 24 bit
  std::uint32_t bitmap = 0;
  friend bool operator==(const SackEth&, const SackEth&) = default;
};

static_assert(kBthSize == 12 && kRethSize == 16 && kAethSize == 4 && kDethSize == 8 &&
              kAtomicEthSize == 28 && kAtomicAckEthSize == 8);

// decode_* return Error::too_short if the input is shorter than the header; encode_* return
// Error::buffer_too_small, or Error::value_out_of_range when a field exceeds its width.
[[nodiscard]] Result<Bth> decode_bth(ByteView in) noexcept;  // also Error::bad_tver
[[nodiscard]] Result<std::size_t> encode_bth(const Bth& h, MutableByteView out) noexcept;
[[nodiscard]] Result<Reth> decode_reth(ByteView in) noexcept;
[[nodiscard]] Result<std::size_t> encode_reth(const Reth& h, MutableByteView out) noexcept;
[[nodiscard]] Result<Aeth> decode_aeth(ByteView in) noexcept;
[[nodiscard]] Result<std::size_t> encode_aeth(const Aeth& h, MutableByteView out) noexcept;
[[nodiscard]] Result<Deth> decode_deth(ByteView in) noexcept;
[[nodiscard]] Result<std::size_t> encode_deth(const Deth& h, MutableByteView out) noexcept;
[[nodiscard]] Result<AtomicEth> decode_atomic_eth(ByteView in) noexcept;
[[nodiscard]] Result<std::size_t> encode_atomic_eth(const AtomicEth& h,
                                                    MutableByteView out) noexcept;
[[nodiscard]] Result<AtomicAckEth> decode_atomic_ack_eth(ByteView in) noexcept;
[[nodiscard]] Result<std::size_t> encode_atomic_ack_eth(const AtomicAckEth& h,
                                                        MutableByteView out) noexcept;

[[nodiscard]] Result<IrnEth> decode_irn_eth(ByteView in) noexcept;
[[nodiscard]] Result<std::size_t> encode_irn_eth(const IrnEth& h, MutableByteView out) noexcept;
[[nodiscard]] Result<SackEth> decode_sack_eth(ByteView in) noexcept;
[[nodiscard]] Result<std::size_t> encode_sack_eth(const SackEth& h, MutableByteView out) noexcept;

// ---- AETH syndromes (IBTA 9.7.5.1.5 / table 44) ----
inline constexpr std::uint8_t kAethAck = 0x1F;  // ACK, credit count "invalid" (as rxe sends)
inline constexpr std::uint8_t kNakPsnSequenceError = 0x60;
inline constexpr std::uint8_t kNakInvalidRequest = 0x61;
inline constexpr std::uint8_t kNakRemoteAccessError = 0x62;
inline constexpr std::uint8_t kNakRemoteOperationalError = 0x63;
inline constexpr std::uint8_t kNakInvalidRdRequest = 0x64;

enum class AethKind : std::uint8_t { ack, rnr_nak, nak, reserved };

[[nodiscard]] constexpr AethKind aeth_kind(std::uint8_t syndrome) noexcept {
  switch (syndrome >> 5) {
    case 0:
      return AethKind::ack;
    case 1:
      return AethKind::rnr_nak;
    case 3:
      return AethKind::nak;
    default:
      return AethKind::reserved;
  }
}
[[nodiscard]] constexpr std::uint8_t rnr_nak_syndrome(std::uint8_t timer_code) noexcept {
  return static_cast<std::uint8_t>(0x20U | (timer_code & 0x1FU));
}
// The RNR NAK timer field (IBTA table 45) in nanoseconds: code 0 = 655.36 ms, 1 = 0.01 ms, ...
// 31 = 491.52 ms.
[[nodiscard]] std::uint64_t rnr_timer_ns(std::uint8_t timer_code) noexcept;
// The local ACK timeout (CM REQ field, QP attribute): 4.096 us x 2^timeout; 0 means "infinite"
// and returns 0.
[[nodiscard]] constexpr std::uint64_t local_ack_timeout_ns(std::uint8_t timeout) noexcept {
  return timeout == 0 || timeout > 31 ? 0 : 4096ULL << timeout;
}

// ---- PSN arithmetic, modulo 2^24 (PROTOCOL.md 3) ----
// A requester keeps at most this many PSNs unacknowledged (PROTOCOL.md 3).
inline constexpr std::uint32_t kMaxUnackedPsns = 128;
[[nodiscard]] constexpr std::uint32_t psn_add(std::uint32_t psn, std::uint32_t n) noexcept {
  return (psn + n) & kMax24;
}
// (a - b) mod 2^24.
[[nodiscard]] constexpr std::uint32_t psn_diff(std::uint32_t a, std::uint32_t b) noexcept {
  return (a - b) & kMax24;
}
// "a is after b": ((a - b) mod 2^24) in (0, 2^23).
[[nodiscard]] constexpr bool psn_after(std::uint32_t a, std::uint32_t b) noexcept {
  const std::uint32_t d = psn_diff(a, b);
  return d != 0 && d < 0x800000U;
}

}  // namespace naa::protocol
