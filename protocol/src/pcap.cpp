#include "naa/protocol/pcap.hpp"

#include <array>
#include <cerrno>
#include <utility>

namespace naa::protocol {
namespace {

// pcap headers are in the writer's native byte order; we always write little-endian.
void put_le32(std::uint8_t* p, std::uint32_t v) {
  store_le32(p, v);
}
void put_le16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
}

std::uint32_t get32(const std::uint8_t* p, bool swapped) {
  return swapped ? load_be32(p) : load_le32(p);
}

}  // namespace

PcapWriter::PcapWriter(PcapWriter&& other) noexcept
    : file_(std::exchange(other.file_, nullptr)),
      frames_(other.frames_),
      errors_(other.errors_),
      scratch_(std::move(other.scratch_)) {}

PcapWriter& PcapWriter::operator=(PcapWriter&& other) noexcept {
  if (this != &other) {
    close();
    file_ = std::exchange(other.file_, nullptr);
    frames_ = other.frames_;
    errors_ = other.errors_;
    scratch_ = std::move(other.scratch_);
  }
  return *this;
}

PcapWriter::~PcapWriter() {
  close();
}

std::error_code PcapWriter::open(const std::string& path) {
  close();
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) return {errno, std::generic_category()};
  std::array<std::uint8_t, 24> hdr{};
  put_le32(&hdr[0], kPcapMagicNanoseconds);
  put_le16(&hdr[4], 2);  // version 2.4
  put_le16(&hdr[6], 4);
  put_le32(&hdr[16], kPcapSnapLength);
  put_le32(&hdr[20], kPcapLinkTypeEthernet);
  if (std::fwrite(hdr.data(), 1, hdr.size(), file_) != hdr.size()) {
    const std::error_code ec{errno, std::generic_category()};
    close();
    return ec;
  }
  return {};
}

void PcapWriter::write_frame(std::uint64_t timestamp_ns, ByteView frame) {
  if (file_ == nullptr) return;
  const auto caplen =
      static_cast<std::uint32_t>(frame.size() < kPcapSnapLength ? frame.size() : kPcapSnapLength);
  std::array<std::uint8_t, 16> rec{};
  put_le32(&rec[0], static_cast<std::uint32_t>(timestamp_ns / 1000000000U));
  put_le32(&rec[4], static_cast<std::uint32_t>(timestamp_ns % 1000000000U));
  put_le32(&rec[8], caplen);
  put_le32(&rec[12], static_cast<std::uint32_t>(frame.size()));
  if (std::fwrite(rec.data(), 1, rec.size(), file_) != rec.size() ||
      std::fwrite(frame.data(), 1, caplen, file_) != caplen) {
    ++errors_;
    return;
  }
  ++frames_;
}

void PcapWriter::write_roce(std::uint64_t timestamp_ns, const Ipv4UdpHeaders& headers,
                            ByteView roce) {
  if (file_ == nullptr) return;
  EthernetHeader eth;
  eth.src = mac_for_ipv4(headers.ip.src);
  eth.dst = mac_for_ipv4(headers.ip.dst);
  scratch_.resize(kEthernetHeaderSize + kIpv4HeaderSize + kUdpHeaderSize + roce.size());
  auto n = encode_roce_frame(eth, headers, roce, scratch_);
  if (!n) {
    ++errors_;
    return;
  }
  write_frame(timestamp_ns, ByteView(scratch_).first(*n));
}

void PcapWriter::flush() {
  if (file_ != nullptr && std::fflush(file_) != 0) ++errors_;
}

void PcapWriter::close() {
  if (file_ != nullptr) {
    if (std::fclose(file_) != 0) ++errors_;
    file_ = nullptr;
  }
}

PcapReader::~PcapReader() {
  if (file_ != nullptr) std::fclose(file_);
}

std::error_code PcapReader::open(const std::string& path) {
  if (file_ != nullptr) std::fclose(file_);
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) return {errno, std::generic_category()};
  std::array<std::uint8_t, 24> hdr{};
  if (std::fread(hdr.data(), 1, hdr.size(), file_) != hdr.size()) {
    return std::make_error_code(std::errc::illegal_byte_sequence);
  }
  const std::uint32_t magic_le = load_le32(hdr.data());
  const std::uint32_t magic_be = load_be32(hdr.data());
  if (magic_le == kPcapMagicMicroseconds || magic_le == kPcapMagicNanoseconds) {
    swapped_ = false;
    nanoseconds_ = magic_le == kPcapMagicNanoseconds;
  } else if (magic_be == kPcapMagicMicroseconds || magic_be == kPcapMagicNanoseconds) {
    swapped_ = true;
    nanoseconds_ = magic_be == kPcapMagicNanoseconds;
  } else {
    return std::make_error_code(std::errc::illegal_byte_sequence);
  }
  link_type_ = get32(&hdr[20], swapped_);
  return {};
}

bool PcapReader::next(PcapRecord& record) {
  if (file_ == nullptr) return false;
  std::array<std::uint8_t, 16> rec{};
  if (std::fread(rec.data(), 1, rec.size(), file_) != rec.size()) return false;
  const std::uint64_t sec = get32(&rec[0], swapped_);
  const std::uint64_t frac = get32(&rec[4], swapped_);
  const std::uint32_t caplen = get32(&rec[8], swapped_);
  if (caplen > 262144U) return false;  // corrupt header: refuse a huge allocation
  record.timestamp_ns = sec * 1000000000U + (nanoseconds_ ? frac : frac * 1000U);
  record.original_length = get32(&rec[12], swapped_);
  record.data.resize(caplen);
  return std::fread(record.data.data(), 1, caplen, file_) == caplen;
}

}  // namespace naa::protocol
