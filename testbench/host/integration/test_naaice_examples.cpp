// Our NAAICE-style example programs (host/examples: AP1 naaice.h, AP2 naaice_ap2.h) against
// naa-sim, every result byte checked by the programs themselves (exit 0 = "results verified").
// Addresses: the test's own block (test_addresses.hpp): naa-sim on .1, host endpoints .11 and up.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "naa/host/session.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/packet.hpp"
#include "naa/protocol/pcap.hpp"
#include "naa_sim.hpp"
#include "test_addresses.hpp"

using namespace std::chrono_literals;
using naa::testbench::run_program;

namespace {

std::string sim_ip() {
  return naa::testbench::test_addresses().ip(1);
}
std::string host_ip(int m) {
  return naa::testbench::test_addresses().ip(10 + m);
}

// naa-sim for the test case (the shared fixture, naa_sim.hpp): a test fails if naa-sim did not
// come up or did not exit with status 0 at the end.
struct SimUnderTest {
  naa::testbench::NaaSim proc{sim_ip()};
  SimUnderTest() { REQUIRE(proc.ready()); }
};

// The immediates of the packets `from` sent (its WRITE_WITH_IMM replies: ONLY or LAST), in a pcap
// written by the host endpoint (classic pcap, Ethernet frames: 24-byte file header, 16-byte record
// headers, host byte order).
std::vector<std::uint32_t> reply_immediates(const std::string& path, std::uint32_t from) {
  std::vector<std::uint32_t> out;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  std::uint8_t file_header[24];
  REQUIRE(std::fread(file_header, 1, sizeof file_header, f) == sizeof file_header);
  std::uint8_t rec[16];
  while (std::fread(rec, 1, sizeof rec, f) == sizeof rec) {
    std::uint32_t caplen = 0;
    std::memcpy(&caplen, rec + 8, 4);
    std::vector<std::uint8_t> frame(caplen);
    if (std::fread(frame.data(), 1, caplen, f) != caplen) break;
    const auto rf = naa::protocol::decode_roce_frame(frame);
    if (!rf || rf->headers.ip.src != from) continue;
    const auto pkt = naa::protocol::decode_packet(rf->roce);
    if (pkt && pkt->headers.immediate) out.push_back(*pkt->headers.immediate);
  }
  std::fclose(f);
  return out;
}

std::vector<std::string> env_for(int m, const std::string& fn_params) {
  return {"NAA_SPEC=" + sim_ip() + ":12345:" + fn_params, "NAA_LOCAL_IP=" + host_ip(m),
          "NAA_CONNECT_TIMEOUT_MS=5000", "NAA_CALL_TIMEOUT_MS=30000"};
}

}  // namespace

TEST_CASE("AP1 example (naaice.h) against naa-sim: every result byte verified") {
  SimUnderTest sim;
  struct Case {
    std::string regions, sizes, calls;
  };
  const std::vector<Case> cases = {
      {"1", "4096", "2"},              // one inout region
      {"3", "1024 70000 4096", "3"},   // single-send first region, a short first send
      {"4", "1 4097 300000 17", "2"},  // odd sizes, several MTUs
  };
  int m = 1;
  for (const auto& c : cases) {
    INFO("regions " << c.regions << " sizes " << c.sizes);
    const auto r = run_program(NAAICE_AP1_CLIENT_PATH,
                               {host_ip(m), sim_ip(), c.regions, c.sizes, c.calls}, {}, 60s);
    ++m;
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("return code 0 ") != std::string::npos);
    CHECK(r.out.find("results verified") != std::string::npos);
  }
}

TEST_CASE("AP1 example with the MAX_MRS regions the reference could not send") {
  SimUnderTest sim;
  // 32 regions: the reference's MRSP buffer holds 31 (documented in docs/host/README.md).
  std::string sizes;
  for (int i = 0; i < 32; ++i)
    sizes += std::to_string(100 + i) + " ";
  sizes.pop_back();
  const auto r =
      run_program(NAAICE_AP1_CLIENT_PATH, {host_ip(1), sim_ip(), "32", sizes, "2"}, {}, 60s);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("region 31: NAA address") != std::string::npos);
  CHECK(r.out.find("results verified") != std::string::npos);
}

TEST_CASE("AP2 example (naaice_ap2.h) against naa-sim: every result byte verified") {
  SimUnderTest sim;
  const auto r =
      run_program(NAAICE_AP2_CLIENT_PATH, {"4", "64 128 70000 5000", "3"}, env_for(1, "1:4"), 60s);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Bytes received: 5128, RPC Return code: 0") != std::string::npos);
  CHECK(r.out.find("results verified") != std::string::npos);
  const auto e = run_program(NAA_EXAMPLE_C_PATH, {"3"}, env_for(2, "1:2"), 60s);
  INFO(e.out << e.err);
  CHECK(e.exit_code == 0);
}

TEST_CASE("naa-sim answers success with immediate 0 and a failure with rc << 8 | fn on the wire") {
  SimUnderTest sim;
  const std::string pcap = "naaice_reply_immediates.pcap";
  {
    naa::host::SessionOptions o;
    o.naa_address = sim_ip();
    o.local_address = host_ip(1);
    o.pcap_path = pcap;
    std::vector<std::uint8_t> data(5000, 1);
    naa::host::Session s(o, {naa::host::Region::inout(data)});
    CHECK(s.call(1).return_code == 0);  // add1
    CHECK(s.call(9).return_code == 3);  // no kernel 9: unknown function
    CHECK(data[0] == 2);
  }
  // PROTOCOL.md 5.2: the literal value 0 for success, never rc << 8 | fn with rc 0.
  const auto imms = reply_immediates(pcap, naa::testbench::test_addresses().ip_u32(1));
  REQUIRE(imms.size() == 2);
  CHECK(imms[0] == 0U);
  CHECK(imms[1] == (3U << 8 | 9U));
}

TEST_CASE("AP1 and AP2 measurement programs against naa-sim: verified, one CSV line each") {
  SimUnderTest sim;
  const std::string log1 = "naaice_ap1_measurement.csv", log2 = "naaice_ap2_measurement.csv";
  std::remove(log1.c_str());
  std::remove(log2.c_str());
  for (const char* size : {"1", "4096", "1000000"}) {
    INFO("size " << size);
    auto r =
        run_program(NAAICE_AP1_MEASUREMENT_PATH, {host_ip(1), sim_ip(), size, log1, "3"}, {}, 60s);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("results verified") != std::string::npos);
    r = run_program(NAAICE_AP2_MEASUREMENT_PATH, {size, log2, "3"}, env_for(2, "1:1"), 60s);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("results verified") != std::string::npos);
  }
  auto lines = [](const std::string& path) {
    std::ifstream in(path);
    std::vector<std::string> v;
    for (std::string l; std::getline(in, l);)
      v.push_back(l);
    return v;
  };
  const auto l1 = lines(log1), l2 = lines(log2);
  REQUIRE(l1.size() == 3);
  REQUIRE(l2.size() == 3);
  CHECK(std::regex_match(l1[2], std::regex(R"(1000000,[0-9]+\.[0-9]+,[0-9]+\.[0-9]+)")));
  CHECK(std::regex_match(l2[0], std::regex(R"(1,[0-9]+\.[0-9]+)")));
  // Bad arguments: usage, exit 3, nothing logged.
  const auto bad = run_program(NAAICE_AP1_MEASUREMENT_PATH, {"a", "b", "0", log1});
  CHECK(bad.exit_code == 3);
  CHECK(lines(log1).size() == 3);
}
