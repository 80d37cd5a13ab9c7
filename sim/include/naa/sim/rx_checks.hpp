// RxChecks: the receive datapath's two checks as a replaceable block (docs/sim/rtl.md "The
// receive path"), so that RxPipe can run them as Verilated RTL (rtl/rx_parser, rtl/icrc_check)
// or in lockstep with their cycle models, through BlockFactory::make_rx_checks. Without one,
// RxPipe runs the protocol library (protocol::recover_ipv4_id, protocol::decode_packet), as the
// C++ model always did.
//
// What stays in the model either way: the IPv4 identification. RoCEv2 covers it with the ICRC
// but the socket does not deliver it (PROTOCOL.md 2, docs/adr/0002), so the model recovers it and
// hands the block the whole pseudo-header with it; the block then checks the ICRC over the masked
// pseudo-header and the datagram, W bytes per beat.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/result.hpp"

namespace naa::sim {

struct RxCheckVerdict {
  // nullopt: passed; else the drop reason, in decode_packet's terms (bad_icrc for the ICRC), so
  // naa-sim counts drops under the same rx_pipe.drop.* keys in every mode.
  std::optional<protocol::Error> reason;
  std::uint64_t cycles = 0;  // the block's cycles for this datagram
};

class RxChecksIf {
 public:
  virtual ~RxChecksIf() = default;
  // The ICRC of `datagram` (BTH through ICRC) under the IPv4/UDP headers `h` (the ID the model
  // recovered, 0 if none verified): passed or bad_icrc. At least BTH + ICRC bytes.
  [[nodiscard]] virtual RxCheckVerdict icrc(const protocol::Ipv4UdpHeaders& h,
                                            std::span<const std::uint8_t> datagram) = 0;
  // The structural check of decode_packet (BTH, extension headers per opcode, TVer, pad, length).
  [[nodiscard]] virtual RxCheckVerdict parse(std::span<const std::uint8_t> datagram) = 0;
};

}  // namespace naa::sim
