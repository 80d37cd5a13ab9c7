// Synthetic but protocol-exact host <-> NAA exchanges built from the protocol library alone:
// used by naa-pcap-gen (to look at the protocol in Wireshark before any simulator runs) and by
// the interop tests (tshark and scapy judge the same frames).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "naa/protocol/cm.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/packet.hpp"

namespace naa::tools {

struct Frame {
  std::uint64_t timestamp_ns = 0;
  protocol::Ipv4UdpHeaders headers;  // as on the wire (ICRC computed over them)
  std::vector<std::uint8_t> roce;    // BTH .. ICRC
  std::string what;                  // one line for humans
};

// Accumulates frames; computes pad and ICRC. Timestamps advance by `step_ns` per frame.
class FrameLog {
 public:
  explicit FrameLog(std::uint64_t step_ns = 1000) : step_ns_(step_ns) {}
  // Encodes one packet from src to dst (UDP source port from the sending QP, PROTOCOL.md 1).
  void add(std::uint32_t src_ip, std::uint32_t src_qpn, std::uint32_t dst_ip,
           const protocol::PacketHeaders& h, protocol::ByteView payload, std::string what);
  // A CM MAD in a UD SEND Only from QP 1 to QP 1 (PROTOCOL.md 4).
  void add_cm(std::uint32_t src_ip, std::uint32_t dst_ip, const protocol::CmMad& mad,
              std::string what);
  [[nodiscard]] const std::vector<Frame>& frames() const noexcept { return frames_; }

 private:
  std::uint64_t step_ns_;
  std::uint64_t now_ns_ = 0;
  std::vector<Frame> frames_;
};

// A complete, realistic session between a host at 127.0.0.3 and the NAA at 127.0.0.2: CM
// REQ/REP/RTU, MRSP 0x01/0x02, two inputs by RDMA WRITE (the last WRITE_WITH_IMM calling vadd_i32),
// the result written back with WRITE ... WRITE_WITH_IMM, ACKs, and DREQ/DREP.
[[nodiscard]] std::vector<Frame> realistic_exchange();

// One frame per opcode the project uses, every CM message, and every MRSP message inside a SEND,
// with distinctive field values, for conformance checking by independent decoders.
[[nodiscard]] std::vector<Frame> catalog();

}  // namespace naa::tools
