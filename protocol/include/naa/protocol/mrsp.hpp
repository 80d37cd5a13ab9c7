// Memory Region Setup Protocol (MRSP, PROTOCOL.md 5.1): the one SEND each way with which a host
// tells the NAA which regions a call uses and the NAA answers where it placed them.
//
// Every message is a 4-byte header `type | count-or-code | 0x00 0x00` followed by `count` fixed-
// size big-endian entries. Decoding allocates nothing: the request and advertisement decoders
// return views over the caller's bytes that read an entry on demand, so the views must not outlive
// the receive buffer they were decoded from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <variant>

#include "naa/protocol/bytes.hpp"
#include "naa/protocol/result.hpp"

namespace naa::protocol {

inline constexpr std::size_t kMrspHeaderSize = 4;
inline constexpr std::size_t kMrspRequestEntrySize = 24;
inline constexpr std::size_t kMrspAdvertisementEntrySize = 16;
// The count is one byte. The NAA's receive buffer holds the largest request (PROTOCOL.md 5.1: 4 +
// 24 x 255 bytes); how many entries it accepts (the 32-entry MR table) is the NAA's business.
inline constexpr std::size_t kMrspMaxEntries = 255;
inline constexpr std::size_t kMrspMaxMessageSize =
    kMrspHeaderSize + kMrspRequestEntrySize * kMrspMaxEntries;
static_assert(kMrspMaxMessageSize == 6124);
// A request carries the NAA address in 7 bytes (the flags take the 8th).
inline constexpr std::uint64_t kMrspMaxNaaAddress = (std::uint64_t{1} << 56) - 1;

[[nodiscard]] constexpr std::size_t mrsp_request_size(std::size_t entries) noexcept {
  return kMrspHeaderSize + kMrspRequestEntrySize * entries;
}
[[nodiscard]] constexpr std::size_t mrsp_advertisement_size(std::size_t entries) noexcept {
  return kMrspHeaderSize + kMrspAdvertisementEntrySize * entries;
}
inline constexpr std::size_t kMrspErrorSize = kMrspHeaderSize;

// Byte 0. 0x03 is reserved and, like any other value, rejected.
enum class MrspType : std::uint8_t {
  error = 0x00,          // NAA -> host
  request = 0x01,        // host -> NAA: advertisement + request
  advertisement = 0x02,  // NAA -> host
};
inline constexpr std::uint8_t kMrspTypeReserved = 0x03;

// Request entry flags.
inline constexpr std::uint8_t kMrspFlagInternal = 0x01;    // NAA scratch, never transferred
inline constexpr std::uint8_t kMrspFlagSingleSend = 0x02;  // input written by the first call only
inline constexpr std::uint8_t kMrspFlagInput = 0x04;
inline constexpr std::uint8_t kMrspFlagOutput = 0x08;  // written back to host_va with host_rkey
inline constexpr std::uint8_t kMrspKnownFlags = 0x0F;
// Extension (docs/protocol.md "Streaming regions"): 0x10 STREAM marks an INPUT region whose
// payload the NAA's streaming handlers process packet by packet, and on an INTERNAL entry the
// stream descriptor (host rkey field = function code, host VA field = handler argument). A stock
// host never sets it, so is_known_mrsp_flags() keeps describing PROTOCOL.md 5.1 alone.
inline constexpr std::uint8_t kMrspFlagStream = 0x10;
// PROTOCOL.md 5.1 does not say what the upper four flag bits mean; decode keeps them as data and
// leaves the policy to the receiver, which can ask this.
[[nodiscard]] constexpr bool is_known_mrsp_flags(std::uint8_t flags) noexcept {
  return (flags & ~kMrspKnownFlags) == 0;
}

// Error codes (byte 1 of a type 0x00 message).
inline constexpr std::uint8_t kMrspErrorNotEnoughMemory = 0x01;  // address + size beyond memory
inline constexpr std::uint8_t kMrspErrorInvalidAddress = 0x02;   // out of bounds or overlapping
inline constexpr std::uint8_t kMrspErrorTooManyRegions = 0x03;   // more than the free MR entries
// An error message with another code still decodes (the code is data, a newer NAA may add codes);
// this says whether we know what it means.
[[nodiscard]] constexpr bool is_known_mrsp_error_code(std::uint8_t code) noexcept {
  return code >= kMrspErrorNotEnoughMemory && code <= kMrspErrorTooManyRegions;
}
// "not enough memory", "invalid address", "too many regions", "unknown".
[[nodiscard]] std::string_view mrsp_error_name(std::uint8_t code) noexcept;

// Host -> NAA, 24 bytes: `flags (1) | NAA address (7) | host VA (8) | host rkey (4) | size (4)`.
struct MrspRequestEntry {
  std::uint8_t flags = 0;
  std::uint64_t naa_address = 0;  // 56 bits
  std::uint64_t host_va = 0;      // 0 for INTERNAL regions
  std::uint32_t host_rkey = 0;    // 0 for INTERNAL regions
  std::uint32_t size = 0;
  friend bool operator==(const MrspRequestEntry&, const MrspRequestEntry&) = default;
};

// NAA -> host, 16 bytes: `NAA address (8) | rkey (4) | size (4)`, one per non-internal request
// entry, in request order.
struct MrspAdvertisementEntry {
  std::uint64_t naa_address = 0;
  std::uint32_t rkey = 0;
  std::uint32_t size = 0;
  friend bool operator==(const MrspAdvertisementEntry&, const MrspAdvertisementEntry&) = default;
};

// A validated type 0x01 message. Only the decoders make one, so count() always matches the bytes.
class MrspRequestView {
 public:
  [[nodiscard]] std::size_t count() const noexcept { return bytes_[1]; }
  // Precondition: i < count() (violating it is a programming error and aborts, like
  // Result::value(); it never reads past the message).
  [[nodiscard]] MrspRequestEntry entry(std::size_t i) const noexcept;
  // The whole message, header included.
  [[nodiscard]] ByteView bytes() const noexcept { return bytes_; }

 private:
  friend Result<MrspRequestView> decode_mrsp_request(ByteView message) noexcept;
  explicit MrspRequestView(ByteView bytes) noexcept : bytes_(bytes) {}
  ByteView bytes_;
};

// A validated type 0x02 message.
class MrspAdvertisementView {
 public:
  [[nodiscard]] std::size_t count() const noexcept { return bytes_[1]; }
  // Precondition: i < count() (aborts otherwise).
  [[nodiscard]] MrspAdvertisementEntry entry(std::size_t i) const noexcept;
  [[nodiscard]] ByteView bytes() const noexcept { return bytes_; }

 private:
  friend Result<MrspAdvertisementView> decode_mrsp_advertisement(ByteView message) noexcept;
  explicit MrspAdvertisementView(ByteView bytes) noexcept : bytes_(bytes) {}
  ByteView bytes_;
};

// A type 0x00 message.
struct MrspError {
  std::uint8_t code = 0;
  friend bool operator==(const MrspError&, const MrspError&) = default;
};

using MrspMessage = std::variant<MrspError, MrspRequestView, MrspAdvertisementView>;

// Identifies and validates any MRSP message. Errors, checked in this order:
//   too_short        fewer than 4 bytes;
//   bad_field        type 0x03 (reserved) or above, or bytes 2-3 not zero;
//   count_mismatch   request/advertisement whose length is not exactly 4 + count x entry size.
//                    Trailing bytes are rejected as well as missing ones: a SEND delivers exactly
//                    the message into the receive buffer and the completion reports its length,
//                    so extra bytes mean a sender that disagrees with us about the format;
//   too_long         an error message longer than its 4 bytes (same reasoning).
[[nodiscard]] Result<MrspMessage> decode_mrsp(ByteView message) noexcept;
// The same checks, but anything other than the named type is bad_field.
[[nodiscard]] Result<MrspRequestView> decode_mrsp_request(ByteView message) noexcept;
[[nodiscard]] Result<MrspAdvertisementView> decode_mrsp_advertisement(ByteView message) noexcept;

// Encoders write the whole message to the front of `out` and return its length. Errors:
// value_out_of_range for more than 255 entries or a NAA address >= 2^56; buffer_too_small if `out`
// is shorter than the message. Nothing is written on error.
[[nodiscard]] Result<std::size_t> encode_mrsp_request(std::span<const MrspRequestEntry> entries,
                                                      MutableByteView out) noexcept;
[[nodiscard]] Result<std::size_t> encode_mrsp_advertisement(
    std::span<const MrspAdvertisementEntry> entries, MutableByteView out) noexcept;
// Any code is written (codes are data, see is_known_mrsp_error_code).
[[nodiscard]] Result<std::size_t> encode_mrsp_error(std::uint8_t code,
                                                    MutableByteView out) noexcept;

}  // namespace naa::protocol
