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

// Byte 0. 0x03 is reserved and, like any value above 0x05, rejected.
enum class MrspType : std::uint8_t {
  error = 0x00,          // NAA -> host
  request = 0x01,        // host -> NAA: advertisement + request
  advertisement = 0x02,  // NAA -> host
  // Extension (docs/protocol.md "Handler images"): only a host that installs a sPIN handler
  // image sends 0x04, after the 0x02 that advertised its HANDLER_IMAGE region; only then does
  // the NAA answer 0x05. A stock exchange never contains them.
  install = 0x04,    // host -> NAA: install the image written into the HANDLER_IMAGE region
  installed = 0x05,  // NAA -> host: the image is the connection's handler set
  // Extension (docs/protocol.md "Peers"): only a host that binds a peer (Session::bind_peer)
  // sends 0x06 and 0x08, so only it ever sees 0x07 and 0x09. An NAA without the extension
  // answers them as any message that does not decode (0x00, code 0x02).
  peer = 0x06,         // host -> NAA i: be the requester of a QP to NAA j, as peer k
  peer_bound = 0x07,   // NAA i -> host: the peer QP's QPN and first PSN
  handover = 0x08,     // host -> NAA j: this connection's requester is now NAA i's peer QP
  handed_over = 0x09,  // NAA j -> host: done once this answer is acknowledged
};
inline constexpr std::uint8_t kMrspTypeReserved = 0x03;
inline constexpr std::uint8_t kMrspTypeLast = 0x09;

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
// Extension (docs/protocol.md "Handler images"): 0x20 HANDLER_IMAGE marks the last entry of a
// streaming request as the buffer the host writes a sPIN handler image (and the handlers'
// initial state) into before it sends 0x04 install. The NAA advertises it (remote write only),
// never lists it among the call's regions and frees it once the install was answered.
inline constexpr std::uint8_t kMrspFlagHandlerImage = 0x20;
// PROTOCOL.md 5.1 does not say what the upper four flag bits mean; decode keeps them as data and
// leaves the policy to the receiver, which can ask this.
[[nodiscard]] constexpr bool is_known_mrsp_flags(std::uint8_t flags) noexcept {
  return (flags & ~kMrspKnownFlags) == 0;
}

// Error codes (byte 1 of a type 0x00 message).
inline constexpr std::uint8_t kMrspErrorNotEnoughMemory = 0x01;  // address + size beyond memory
inline constexpr std::uint8_t kMrspErrorInvalidAddress = 0x02;   // out of bounds or overlapping
inline constexpr std::uint8_t kMrspErrorTooManyRegions = 0x03;   // more than the free MR entries
// Extension (docs/protocol.md "Handler images"): answers to 0x04 install only.
inline constexpr std::uint8_t kMrspErrorWrongMachine = 0x04;   // not an ELF32 LE RISC-V file
inline constexpr std::uint8_t kMrspErrorImageTooLarge = 0x05;  // outside the 64 KiB, state too big
inline constexpr std::uint8_t kMrspErrorNoEntryPoint = 0x06;   // no handler table or payload entry
inline constexpr std::uint8_t kMrspErrorBadImage = 0x07;       // anything else wrong with the image
// Extension (docs/protocol.md "Peers"): answers to 0x06 peer and 0x08 handover only: a peer
// index >= kMrspMaxPeers, no QP free for the peer, a connection that cannot be handed over (IRN,
// messages of its own still unacknowledged).
inline constexpr std::uint8_t kMrspErrorBadPeer = 0x08;
// An error message with another code still decodes (the code is data, a newer NAA may add codes);
// this says whether we know what it means.
[[nodiscard]] constexpr bool is_known_mrsp_error_code(std::uint8_t code) noexcept {
  return code >= kMrspErrorNotEnoughMemory && code <= kMrspErrorBadPeer;
}
// "not enough memory", "invalid address", "too many regions", "wrong machine", "image too large",
// "missing entry point", "bad image", "bad peer", "unknown".
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

// A type 0x04 message, host -> NAA, 20 bytes: `04 | 00 | 00 00 | NAA address (8) |
// image bytes (4) | state bytes (4)`. The image is at the NAA address (the HANDLER_IMAGE region's
// advertised address), the handlers' initial state right behind it.
inline constexpr std::size_t kMrspInstallSize = 20;
struct MrspInstall {
  std::uint64_t naa_address = 0;
  std::uint32_t image_bytes = 0;
  std::uint32_t state_bytes = 0;
  friend bool operator==(const MrspInstall&, const MrspInstall&) = default;
};

// A type 0x05 message, NAA -> host, 4 bytes: `05 | function code | 00 00`.
inline constexpr std::size_t kMrspInstalledSize = 4;
struct MrspInstalled {
  std::uint8_t fn = 0;  // the installed handler set's function code
  friend bool operator==(const MrspInstalled&, const MrspInstalled&) = default;
};

// Peers (docs/protocol.md "Peers"): how many peers one connection's handlers may put to.
inline constexpr std::uint8_t kMrspMaxPeers = 8;

// A type 0x06 message, host -> NAA i on its connection, 36 bytes: `06 | peer index | 00 00 |
// peer IP (4) | peer QPN (4) | path MTU (4) | region VA (8) | rkey (4) | size (4) | end
// immediate (4)`. NAA i opens a requester QP to NAA j's QPN at that IP; handlers of this
// connection put to region [VA, VA + size) with the rkey, and end each call's message with a
// zero-length WRITE_WITH_IMM carrying the end immediate (a call immediate, PROTOCOL.md 5.2).
inline constexpr std::size_t kMrspPeerSize = 36;
struct MrspPeer {
  std::uint8_t index = 0;  // < kMrspMaxPeers (checked by the NAA: error 0x08)
  std::uint32_t peer_ip = 0;
  std::uint32_t peer_qpn = 0;
  std::uint32_t mtu = 0;
  std::uint64_t va = 0;
  std::uint32_t rkey = 0;
  std::uint32_t size = 0;
  std::uint32_t end_imm = 0;
  friend bool operator==(const MrspPeer&, const MrspPeer&) = default;
};

// A type 0x07 message, NAA i -> host, 12 bytes: `07 | peer index | 00 00 | local QPN (4) |
// first PSN (4)`: the peer QP that will send, and the PSN its first packet carries (24 bits).
inline constexpr std::size_t kMrspPeerBoundSize = 12;
struct MrspPeerBound {
  std::uint8_t index = 0;
  std::uint32_t qpn = 0;
  std::uint32_t psn = 0;
  friend bool operator==(const MrspPeerBound&, const MrspPeerBound&) = default;
};

// A type 0x08 message, host -> NAA j on the connection it hands over, 16 bytes: `08 | 00 | 00 00
// | new peer IP (4) | new peer QPN (4) | expected PSN (4)`. Once NAA j's 0x09 answer is
// acknowledged, the connection's peer is that QP and its responder expects that PSN next.
inline constexpr std::size_t kMrspHandoverSize = 16;
struct MrspHandover {
  std::uint32_t peer_ip = 0;
  std::uint32_t peer_qpn = 0;
  std::uint32_t psn = 0;  // 24 bits
  friend bool operator==(const MrspHandover&, const MrspHandover&) = default;
};

// A type 0x09 message, NAA j -> host, 4 bytes: `09 | 00 | 00 00`.
inline constexpr std::size_t kMrspHandedOverSize = 4;
struct MrspHandedOver {
  friend bool operator==(const MrspHandedOver&, const MrspHandedOver&) = default;
};

using MrspMessage =
    std::variant<MrspError, MrspRequestView, MrspAdvertisementView, MrspInstall, MrspInstalled,
                 MrspPeer, MrspPeerBound, MrspHandover, MrspHandedOver>;

// Identifies and validates any MRSP message. Errors, checked in this order:
//   too_short        fewer than 4 bytes;
//   bad_field        type 0x03 (reserved) or above 0x09, bytes 2-3 not zero, byte 1 of a 0x04,
//                    0x08 or 0x09 not zero, or a PSN of a 0x07 or 0x08 wider than 24 bits;
//   count_mismatch   request/advertisement whose length is not exactly 4 + count x entry size.
//                    Trailing bytes are rejected as well as missing ones: a SEND delivers exactly
//                    the message into the receive buffer and the completion reports its length,
//                    so extra bytes mean a sender that disagrees with us about the format;
//   too_long         an error or 0x05 message longer than its 4 bytes (same reasoning);
//   count_mismatch   a 0x04, 0x06, 0x07 or 0x08 that is not exactly its size (20, 36, 12, 16);
//   too_long         a 0x09 longer than 4 bytes.
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
[[nodiscard]] Result<std::size_t> encode_mrsp_install(const MrspInstall& install,
                                                      MutableByteView out) noexcept;
[[nodiscard]] Result<std::size_t> encode_mrsp_installed(std::uint8_t fn,
                                                        MutableByteView out) noexcept;
// value_out_of_range: a PSN wider than 24 bits.
[[nodiscard]] Result<std::size_t> encode_mrsp_peer(const MrspPeer& peer,
                                                   MutableByteView out) noexcept;
[[nodiscard]] Result<std::size_t> encode_mrsp_peer_bound(const MrspPeerBound& bound,
                                                         MutableByteView out) noexcept;
[[nodiscard]] Result<std::size_t> encode_mrsp_handover(const MrspHandover& handover,
                                                       MutableByteView out) noexcept;
[[nodiscard]] Result<std::size_t> encode_mrsp_handed_over(MutableByteView out) noexcept;
// Any code is written (codes are data, see is_known_mrsp_error_code).
[[nodiscard]] Result<std::size_t> encode_mrsp_error(std::uint8_t code,
                                                    MutableByteView out) noexcept;

}  // namespace naa::protocol
