// MRSP encode/decode (PROTOCOL.md 5.1).
#include "naa/protocol/mrsp.hpp"

#include <cstdlib>
#include <optional>

namespace naa::protocol {
namespace {

constexpr std::uint32_t kPsnMask = 0xFFFFFF;  // PSNs are 24 bits (BTH)

// Header checks shared by every message type (PROTOCOL.md 5.1: `type | count | 2 zero bytes`).
[[nodiscard]] std::optional<Error> check_header(ByteView m) noexcept {
  if (m.size() < kMrspHeaderSize) return Error::too_short;
  if (m[0] == kMrspTypeReserved || m[0] > kMrspTypeLast) return Error::bad_field;
  if (m[2] != 0 || m[3] != 0) return Error::bad_field;
  return std::nullopt;
}

// Precondition: check_header passed (so byte 1 exists).
[[nodiscard]] std::optional<Error> check_length(ByteView m, std::size_t entry_size) noexcept {
  if (m.size() != kMrspHeaderSize + entry_size * std::size_t{m[1]}) return Error::count_mismatch;
  return std::nullopt;
}

void write_header(std::uint8_t* b, MrspType type, std::uint8_t count_or_code) noexcept {
  b[0] = static_cast<std::uint8_t>(type);
  b[1] = count_or_code;
  b[2] = 0;
  b[3] = 0;
}

}  // namespace

std::string_view mrsp_error_name(std::uint8_t code) noexcept {
  switch (code) {
    case kMrspErrorNotEnoughMemory:
      return "not enough memory";
    case kMrspErrorInvalidAddress:
      return "invalid address";
    case kMrspErrorTooManyRegions:
      return "too many regions";
    case kMrspErrorWrongMachine:
      return "wrong machine";
    case kMrspErrorImageTooLarge:
      return "image too large";
    case kMrspErrorNoEntryPoint:
      return "missing entry point";
    case kMrspErrorBadImage:
      return "bad image";
    case kMrspErrorBadPeer:
      return "bad peer";
    default:
      return "unknown";
  }
}

MrspRequestEntry MrspRequestView::entry(std::size_t i) const noexcept {
  if (i >= count()) std::abort();
  const std::uint8_t* b = bytes_.data() + kMrspHeaderSize + kMrspRequestEntrySize * i;
  // The first 8 bytes are the big-endian word (flags << 56) | naa_address.
  const std::uint64_t word = load_be64(b);
  MrspRequestEntry e;
  e.flags = static_cast<std::uint8_t>(word >> 56);
  e.naa_address = word & kMrspMaxNaaAddress;
  e.host_va = load_be64(b + 8);
  e.host_rkey = load_be32(b + 16);
  e.size = load_be32(b + 20);
  return e;
}

MrspAdvertisementEntry MrspAdvertisementView::entry(std::size_t i) const noexcept {
  if (i >= count()) std::abort();
  const std::uint8_t* b = bytes_.data() + kMrspHeaderSize + kMrspAdvertisementEntrySize * i;
  MrspAdvertisementEntry e;
  e.naa_address = load_be64(b);
  e.rkey = load_be32(b + 8);
  e.size = load_be32(b + 12);
  return e;
}

Result<MrspRequestView> decode_mrsp_request(ByteView message) noexcept {
  if (const auto e = check_header(message)) return *e;
  if (message[0] != static_cast<std::uint8_t>(MrspType::request)) return Error::bad_field;
  if (const auto e = check_length(message, kMrspRequestEntrySize)) return *e;
  return MrspRequestView(message);
}

Result<MrspAdvertisementView> decode_mrsp_advertisement(ByteView message) noexcept {
  if (const auto e = check_header(message)) return *e;
  if (message[0] != static_cast<std::uint8_t>(MrspType::advertisement)) return Error::bad_field;
  if (const auto e = check_length(message, kMrspAdvertisementEntrySize)) return *e;
  return MrspAdvertisementView(message);
}

Result<MrspMessage> decode_mrsp(ByteView message) noexcept {
  if (const auto e = check_header(message)) return *e;
  switch (static_cast<MrspType>(message[0])) {
    case MrspType::error:
      if (message.size() > kMrspErrorSize) return Error::too_long;
      return MrspMessage{MrspError{message[1]}};
    case MrspType::request: {
      Result<MrspRequestView> r = decode_mrsp_request(message);
      if (!r) return r.error();
      return MrspMessage{*r};
    }
    case MrspType::advertisement: {
      Result<MrspAdvertisementView> r = decode_mrsp_advertisement(message);
      if (!r) return r.error();
      return MrspMessage{*r};
    }
    case MrspType::install:
      if (message[1] != 0) return Error::bad_field;
      if (message.size() != kMrspInstallSize) return Error::count_mismatch;
      return MrspMessage{MrspInstall{load_be64(message.data() + 4), load_be32(message.data() + 12),
                                     load_be32(message.data() + 16)}};
    case MrspType::installed:
      if (message.size() > kMrspInstalledSize) return Error::too_long;
      return MrspMessage{MrspInstalled{message[1]}};
    case MrspType::peer: {
      if (message.size() != kMrspPeerSize) return Error::count_mismatch;
      const std::uint8_t* b = message.data();
      return MrspMessage{MrspPeer{message[1], load_be32(b + 4), load_be32(b + 8), load_be32(b + 12),
                                  load_be64(b + 16), load_be32(b + 24), load_be32(b + 28),
                                  load_be32(b + 32)}};
    }
    case MrspType::peer_bound: {
      if (message.size() != kMrspPeerBoundSize) return Error::count_mismatch;
      const std::uint32_t psn = load_be32(message.data() + 8);
      if (psn > kPsnMask) return Error::bad_field;
      return MrspMessage{MrspPeerBound{message[1], load_be32(message.data() + 4), psn}};
    }
    case MrspType::handover: {
      if (message[1] != 0) return Error::bad_field;
      if (message.size() != kMrspHandoverSize) return Error::count_mismatch;
      const std::uint32_t psn = load_be32(message.data() + 12);
      if (psn > kPsnMask) return Error::bad_field;
      return MrspMessage{
          MrspHandover{load_be32(message.data() + 4), load_be32(message.data() + 8), psn}};
    }
    case MrspType::handed_over:
      if (message[1] != 0) return Error::bad_field;
      if (message.size() > kMrspHandedOverSize) return Error::too_long;
      return MrspMessage{MrspHandedOver{}};
  }
  return Error::bad_field;  // unreachable: check_header rejected the other types
}

Result<std::size_t> encode_mrsp_request(std::span<const MrspRequestEntry> entries,
                                        MutableByteView out) noexcept {
  if (entries.size() > kMrspMaxEntries) return Error::value_out_of_range;
  for (const MrspRequestEntry& e : entries) {
    if (e.naa_address > kMrspMaxNaaAddress) return Error::value_out_of_range;
  }
  const std::size_t size = mrsp_request_size(entries.size());
  if (out.size() < size) return Error::buffer_too_small;
  std::uint8_t* b = out.data();
  write_header(b, MrspType::request, static_cast<std::uint8_t>(entries.size()));
  b += kMrspHeaderSize;
  for (const MrspRequestEntry& e : entries) {
    store_be64(b, (std::uint64_t{e.flags} << 56) | e.naa_address);
    store_be64(b + 8, e.host_va);
    store_be32(b + 16, e.host_rkey);
    store_be32(b + 20, e.size);
    b += kMrspRequestEntrySize;
  }
  return size;
}

Result<std::size_t> encode_mrsp_advertisement(std::span<const MrspAdvertisementEntry> entries,
                                              MutableByteView out) noexcept {
  if (entries.size() > kMrspMaxEntries) return Error::value_out_of_range;
  const std::size_t size = mrsp_advertisement_size(entries.size());
  if (out.size() < size) return Error::buffer_too_small;
  std::uint8_t* b = out.data();
  write_header(b, MrspType::advertisement, static_cast<std::uint8_t>(entries.size()));
  b += kMrspHeaderSize;
  for (const MrspAdvertisementEntry& e : entries) {
    store_be64(b, e.naa_address);
    store_be32(b + 8, e.rkey);
    store_be32(b + 12, e.size);
    b += kMrspAdvertisementEntrySize;
  }
  return size;
}

Result<std::size_t> encode_mrsp_install(const MrspInstall& install, MutableByteView out) noexcept {
  if (out.size() < kMrspInstallSize) return Error::buffer_too_small;
  write_header(out.data(), MrspType::install, 0);
  store_be64(out.data() + 4, install.naa_address);
  store_be32(out.data() + 12, install.image_bytes);
  store_be32(out.data() + 16, install.state_bytes);
  return kMrspInstallSize;
}

Result<std::size_t> encode_mrsp_installed(std::uint8_t fn, MutableByteView out) noexcept {
  if (out.size() < kMrspInstalledSize) return Error::buffer_too_small;
  write_header(out.data(), MrspType::installed, fn);
  return kMrspInstalledSize;
}

Result<std::size_t> encode_mrsp_peer(const MrspPeer& peer, MutableByteView out) noexcept {
  if (out.size() < kMrspPeerSize) return Error::buffer_too_small;
  std::uint8_t* b = out.data();
  write_header(b, MrspType::peer, peer.index);
  store_be32(b + 4, peer.peer_ip);
  store_be32(b + 8, peer.peer_qpn);
  store_be32(b + 12, peer.mtu);
  store_be64(b + 16, peer.va);
  store_be32(b + 24, peer.rkey);
  store_be32(b + 28, peer.size);
  store_be32(b + 32, peer.end_imm);
  return kMrspPeerSize;
}

Result<std::size_t> encode_mrsp_peer_bound(const MrspPeerBound& bound,
                                           MutableByteView out) noexcept {
  if (bound.psn > kPsnMask) return Error::value_out_of_range;
  if (out.size() < kMrspPeerBoundSize) return Error::buffer_too_small;
  write_header(out.data(), MrspType::peer_bound, bound.index);
  store_be32(out.data() + 4, bound.qpn);
  store_be32(out.data() + 8, bound.psn);
  return kMrspPeerBoundSize;
}

Result<std::size_t> encode_mrsp_handover(const MrspHandover& handover,
                                         MutableByteView out) noexcept {
  if (handover.psn > kPsnMask) return Error::value_out_of_range;
  if (out.size() < kMrspHandoverSize) return Error::buffer_too_small;
  write_header(out.data(), MrspType::handover, 0);
  store_be32(out.data() + 4, handover.peer_ip);
  store_be32(out.data() + 8, handover.peer_qpn);
  store_be32(out.data() + 12, handover.psn);
  return kMrspHandoverSize;
}

Result<std::size_t> encode_mrsp_handed_over(MutableByteView out) noexcept {
  if (out.size() < kMrspHandedOverSize) return Error::buffer_too_small;
  write_header(out.data(), MrspType::handed_over, 0);
  return kMrspHandedOverSize;
}

Result<std::size_t> encode_mrsp_error(std::uint8_t code, MutableByteView out) noexcept {
  if (out.size() < kMrspErrorSize) return Error::buffer_too_small;
  write_header(out.data(), MrspType::error, code);
  return kMrspErrorSize;
}

}  // namespace naa::protocol
