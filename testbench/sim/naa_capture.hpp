// Reads back naa-sim's --pcap capture for tests that must see every datagram the NAA sent or
// received, decoded with the protocol library (timestamps are simulated time, docs/sim/naa-sim.md).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/packet.hpp"
#include "naa/protocol/pcap.hpp"

namespace naa::testbench {

struct CapturedDatagram {
  std::uint64_t time_ns = 0;  // simulated time
  std::uint32_t src_ip = 0;
  std::uint32_t dst_ip = 0;
  std::vector<std::uint8_t> roce;  // BTH .. ICRC

  // Decoded headers and payload (views into `roce`); nullopt if it does not decode.
  [[nodiscard]] std::optional<protocol::PacketView> decode() const {
    auto v = protocol::decode_packet(roce);
    if (!v) return std::nullopt;
    return *v;
  }
};

// Every frame of the capture; nullopt if the file cannot be read or a frame is not RoCEv2.
inline std::optional<std::vector<CapturedDatagram>> read_capture(const std::string& path) {
  protocol::PcapReader r;
  if (r.open(path)) return std::nullopt;
  std::vector<CapturedDatagram> out;
  protocol::PcapRecord rec;
  while (r.next(rec)) {
    const auto f = protocol::decode_roce_frame(rec.data);
    if (!f) return std::nullopt;
    out.push_back(CapturedDatagram{rec.timestamp_ns, f->headers.ip.src, f->headers.ip.dst,
                                   std::vector<std::uint8_t>(f->roce.begin(), f->roce.end())});
  }
  return out;
}

// A temporary file name for a capture, removed by the destructor.
class TempPath {
 public:
  explicit TempPath(const std::string& tag)
      : path_("/tmp/naa-test-" + tag + "-" + std::to_string(::getpid()) + ".pcap") {}
  ~TempPath() { std::remove(path_.c_str()); }
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;
  [[nodiscard]] const std::string& str() const { return path_; }

 private:
  std::string path_;
};

}  // namespace naa::testbench
