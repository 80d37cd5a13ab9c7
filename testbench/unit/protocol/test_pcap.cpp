// The pcap writer and reader: file layout, synthesized headers, and a read-back round trip.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "naa/protocol/icrc.hpp"
#include "naa/protocol/packet.hpp"
#include "naa/protocol/pcap.hpp"

using namespace naa::protocol;

namespace {
std::string temp_path(const char* name) {
  return std::string(std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "/tmp") +
         "/naa_test_" + std::to_string(::getpid()) + "_" + name;
}
}  // namespace

TEST_CASE("pcap writer writes classic nanosecond pcap that reads back", "[pcap]") {
  const std::string path = temp_path("rt.pcap");
  PacketHeaders h;
  h.bth.opcode = opcode::kSendOnly;
  h.bth.dest_qpn = 0x12;
  const std::vector<std::uint8_t> payload = {1, 2, 3, 4, 5};
  std::vector<std::uint8_t> roce(packet_size(h, payload.size()));
  REQUIRE(encode_packet(h, payload, roce).has_value());
  const auto hdrs =
      make_roce_headers(0x7F000003, roce_udp_source_port(0x12), 0x7F000002, roce.size(), 0x4242);
  write_icrc(hdrs, roce);
  {
    PcapWriter w;
    REQUIRE_FALSE(w.open(path));
    w.write_roce(1234567890123ULL, hdrs, roce);
    w.write_roce(1234567890124ULL, hdrs, roce);
    CHECK(w.frames_written() == 2);
    CHECK(w.write_errors() == 0);
  }
  std::ifstream raw(path, std::ios::binary);
  std::vector<std::uint8_t> file((std::istreambuf_iterator<char>(raw)), {});
  REQUIRE(file.size() == 24 + 2 * (16 + 42 + roce.size()));
  CHECK(load_le32(file.data()) == kPcapMagicNanoseconds);
  CHECK(load_le32(file.data() + 20) == kPcapLinkTypeEthernet);

  PcapReader r;
  REQUIRE_FALSE(r.open(path));
  PcapRecord rec;
  REQUIRE(r.next(rec));
  CHECK(rec.timestamp_ns == 1234567890123ULL);
  CHECK(rec.original_length == rec.data.size());
  auto f = decode_roce_frame(rec.data);
  REQUIRE(f.has_value());
  CHECK(f->headers == hdrs);
  CHECK(f->headers.ip.id == 0x4242);
  CHECK(f->eth.src == mac_for_ipv4(0x7F000003));
  CHECK(std::vector<std::uint8_t>(f->roce.begin(), f->roce.end()) == roce);
  CHECK(verify_icrc(f->headers, f->roce));
  REQUIRE(r.next(rec));
  CHECK_FALSE(r.next(rec));
  std::remove(path.c_str());
}

TEST_CASE("pcap writer reports an unwritable path, reader rejects non-pcap", "[pcap]") {
  PcapWriter w;
  CHECK(w.open("/nonexistent-dir/x.pcap"));
  CHECK_FALSE(w.is_open());
  w.write_frame(0, {});  // a closed writer ignores writes
  CHECK(w.frames_written() == 0);

  const std::string path = temp_path("junk.pcap");
  { std::ofstream(path) << "this is not a pcap file at all"; }
  PcapReader r;
  CHECK(r.open(path));
  std::remove(path.c_str());
}

TEST_CASE("IPv4 helpers", "[pcap][ipv4]") {
  const auto h = make_roce_headers(0xC0A8010A, 0xC123, 0xC0A80114, 60);
  CHECK(h.ip.total_length == 88);
  CHECK(h.udp.length == 68);
  CHECK(h.ip.ttl == 64);
  CHECK(h.ip.flags_fragment == kIpv4FlagDontFragment);
  CHECK(ipv4_header_checksum(h.ip) == h.ip.checksum);
  // Frame 1 of the vectors: checksum a4fe with ID 0x1234, total length 0x4c.
  auto v = make_roce_headers(0xC0A8010A, 0xC123, 0xC0A80114, 0x4c - 28, 0x1234);
  CHECK(v.ip.checksum == 0xa4fe);
  for (std::uint32_t qpn : {0U, 1U, 0x11U, 0xFFFFFFU}) {
    CHECK(roce_udp_source_port(qpn) >= 0xC000);
  }
  char buf[16];
  CHECK(format_ipv4(0x7F000002, buf, sizeof buf) == 9);
  CHECK(std::string(buf) == "127.0.0.2");
  std::vector<std::uint8_t> short_ip(19);
  CHECK(decode_ipv4(short_ip).error() == Error::too_short);
  std::vector<std::uint8_t> opts(24, 0);
  opts[0] = 0x46;  // IHL 6: options
  CHECK(decode_ipv4(opts).error() == Error::bad_ip_header);
}
