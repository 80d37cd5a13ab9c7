// The 28 header bytes icrc_check takes (IPv4 then UDP, as on the wire) from naa::protocol's
// headers. Header-only; include it where naa::protocol is linked (naa-sim, the testbench).
#pragma once

#include "naa/protocol/bytes.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/rtl/icrc_check.hpp"

namespace naa::rtl {

[[nodiscard]] inline IpUdpHeaderBytes ip_udp_header_bytes(
    const protocol::Ipv4UdpHeaders& h) noexcept {
  IpUdpHeaderBytes b{};
  const protocol::MutableByteView out(b);
  (void)protocol::encode_ipv4(h.ip, out.first(protocol::kIpv4HeaderSize));
  (void)protocol::encode_udp(h.udp, out.subspan(protocol::kIpv4HeaderSize));
  return b;
}

}  // namespace naa::rtl
