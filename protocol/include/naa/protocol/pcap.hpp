// Classic pcap files (not pcapng), Ethernet link type, nanosecond timestamps, so that both the
// simulated NAA (simulated time) and the host library (wall time) can leave captures that
// Wireshark/tshark decode as RoCEv2. RoCEv2 datagrams taken from a UDP socket get synthesized
// Ethernet/IPv4/UDP headers; pass the recovered IPv4 ID (icrc.hpp) so the capture's ICRC verifies.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <system_error>
#include <vector>

#include "naa/protocol/bytes.hpp"
#include "naa/protocol/ipv4_udp.hpp"

namespace naa::protocol {

inline constexpr std::uint32_t kPcapMagicNanoseconds = 0xA1B23C4D;
inline constexpr std::uint32_t kPcapMagicMicroseconds = 0xA1B2C3D4;
inline constexpr std::uint32_t kPcapLinkTypeEthernet = 1;
inline constexpr std::uint32_t kPcapSnapLength = 65535;

// Not thread-safe: one writer per thread, or serialise calls.
class PcapWriter {
 public:
  PcapWriter() = default;
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;
  PcapWriter(PcapWriter&& other) noexcept;
  PcapWriter& operator=(PcapWriter&& other) noexcept;
  ~PcapWriter();

  // Creates (truncates) the file and writes the global header.
  [[nodiscard]] std::error_code open(const std::string& path);
  [[nodiscard]] bool is_open() const noexcept { return file_ != nullptr; }

  // One Ethernet frame.
  void write_frame(std::uint64_t timestamp_ns, ByteView frame);
  // One RoCEv2 datagram (BTH..ICRC) with synthesized Ethernet (MACs from mac_for_ipv4()),
  // IPv4 and UDP headers taken from `headers`.
  void write_roce(std::uint64_t timestamp_ns, const Ipv4UdpHeaders& headers, ByteView roce);

  void flush();
  void close();
  [[nodiscard]] std::uint64_t frames_written() const noexcept { return frames_; }
  // Write errors (disk full...) are counted rather than thrown: a capture must never stop the
  // model or the endpoint.
  [[nodiscard]] std::uint64_t write_errors() const noexcept { return errors_; }

 private:
  std::FILE* file_ = nullptr;
  std::uint64_t frames_ = 0;
  std::uint64_t errors_ = 0;
  std::vector<std::uint8_t> scratch_;
};

struct PcapRecord {
  std::uint64_t timestamp_ns = 0;
  std::uint32_t original_length = 0;
  std::vector<std::uint8_t> data;
};

// Reads classic pcap in either byte order and either timestamp resolution.
class PcapReader {
 public:
  PcapReader() = default;
  PcapReader(const PcapReader&) = delete;
  PcapReader& operator=(const PcapReader&) = delete;
  ~PcapReader();

  [[nodiscard]] std::error_code open(const std::string& path);
  [[nodiscard]] std::uint32_t link_type() const noexcept { return link_type_; }
  // false at end of file or on a truncated record.
  [[nodiscard]] bool next(PcapRecord& record);

 private:
  std::FILE* file_ = nullptr;
  bool swapped_ = false;
  bool nanoseconds_ = false;
  std::uint32_t link_type_ = 0;
};

}  // namespace naa::protocol
