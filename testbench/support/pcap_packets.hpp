// Every RoCE packet of a capture, decoded: the loop the capture-reading tests share. Frames that
// are not RoCEv2 (CM MADs are RoCE too: QP 1) or do not decode are skipped.
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/packet.hpp"
#include "naa/protocol/pcap.hpp"

namespace naa::testbench {

// fn(const protocol::RoceFrame&, const protocol::PacketView&) for each packet, in capture order.
template <typename Fn>
void for_each_roce_packet(const std::string& pcap, Fn&& fn) {
  protocol::PcapReader reader;
  REQUIRE_FALSE(reader.open(pcap));
  protocol::PcapRecord rec;
  while (reader.next(rec)) {
    const auto f = protocol::decode_roce_frame(rec.data);
    if (!f) continue;
    const auto v = protocol::decode_packet(f->roce);
    if (!v) continue;
    fn(*f, *v);
  }
}

}  // namespace naa::testbench
