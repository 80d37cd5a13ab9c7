// Helpers shared by the naa-sim integration test files: the test's addresses, MRSP entries for the
// test peer's host memory, payload patterns, statistics, calls and result immediates.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <algorithm>

#include "naa/protocol/immediate.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/mrsp.hpp"
#include "naa/protocol/packet.hpp"
#include "naa/protocol/pcap.hpp"
#include "naa_sim.hpp"
#include "peer.hpp"
#include "test_addresses.hpp"

namespace naa::testbench {

// naa-sim on .1 of the test's address block, test peers on .2, .3, ... (test_addresses.hpp).
inline std::string naa_address() {
  return test_addresses().ip(1);
}
inline std::string peer_address(int k = 2) {
  return test_addresses().ip(k);
}

// naa-sim on .1 (the fixture of testbench/support/naa_sim.hpp: its exit status is checked at
// the end of the test) and a test peer on .2 bound to it: the opening lines of most tests.
//   SimAndPeer rig({"--mem", "1M"});
//   auto& [naa, peer] = rig;
struct SimAndPeer {
  explicit SimAndPeer(const std::vector<std::string>& naa_sim_args = {},
                      const std::string& naa_sim_stderr = {})
      : naa(naa_address(), naa_sim_args, naa_sim_stderr),
        peer(ready_peer_address(naa), naa_address()) {}
  NaaSim naa;
  TestPeer peer;

 private:
  static std::string ready_peer_address(const NaaSim& sim) {
    if (!sim.ready()) throw NaaSimError("naa-sim did not start: " + sim.ready_line());
    return peer_address(2);
  }
};

// An MRSP request entry pointing at the peer's host memory (internal regions carry no host
// address or rkey, PROTOCOL.md 5.1).
inline protocol::MrspRequestEntry entry(std::uint8_t flags, std::uint64_t naa_addr,
                                        std::uint32_t size, const Connection& c,
                                        std::uint64_t host_off = 0) {
  const bool internal = (flags & protocol::kMrspFlagInternal) != 0;
  return protocol::MrspRequestEntry{flags, naa_addr, internal ? 0 : c.host_va + host_off,
                                    internal ? 0 : c.host_rkey, size};
}

// naa-sim's statistic `key` in a stats_text() snapshot.
inline std::uint64_t st(const std::string& s, const std::string& key) {
  return NaaSim::stat_in(s, key);
}

// Polls naa-sim's statistics until key == value (or a 30 s liveness limit); returns the last
// value.
inline std::uint64_t wait_stat(NaaSim& naa, const std::string& key, std::uint64_t value) {
  return st(naa.wait_stat(key, value), key);
}

// Posts a call without inputs (a zero-length WRITE_WITH_IMM to region 0).
inline void post_call(TestPeer& peer, Connection& c, const TestPeer::MrspResult& regs,
                      std::uint8_t fn) {
  const auto& r0 = regs.regions.at(0);
  (void)peer.post_write(c, r0.naa_address, r0.rkey, {}, protocol::encode_call_immediate(fn, 0),
                        true);
}

inline bool all_equal(const std::vector<std::uint8_t>& v, std::size_t off, std::size_t len,
                      std::uint8_t x) {
  return std::all_of(v.begin() + static_cast<std::ptrdiff_t>(off),
                     v.begin() + static_cast<std::ptrdiff_t>(off + len),
                     [x](std::uint8_t b) { return b == x; });
}

// The parts of a result immediate (PROTOCOL.md 5.2): return code in bits 31:8, function code in
// 6:0.
inline std::uint32_t rc_of(std::uint32_t imm) {
  return imm >> 8;
}
inline std::uint32_t fn_of(std::uint32_t imm) {
  return imm & 0x7F;
}

inline std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<std::uint8_t>(seed + i * 7);
  return v;
}

// A RoCE frame of naa-sim's capture (--pcap) with its timestamp, which is simulated time
// (docs/sim/timing.md): protocol timers are checked on these, not on the wall clock.
struct SimFrame {
  std::uint64_t t_ns = 0;
  bool from_naa = false;
  std::uint8_t opcode = 0;
  std::uint32_t psn = 0;
  std::optional<std::uint8_t> syndrome;  // AETH of an ACK/NAK
};

// Every decodable RoCE frame of a capture (naa-sim writes it out when it stops).
inline std::vector<SimFrame> sim_frames(const std::string& pcap, const std::string& naa_ip) {
  protocol::PcapReader r;
  if (r.open(pcap)) throw std::runtime_error("cannot read the capture " + pcap);
  const std::uint32_t naa = parse_ipv4(naa_ip);
  std::vector<SimFrame> frames;
  protocol::PcapRecord rec;
  while (r.next(rec)) {
    const auto f = protocol::decode_roce_frame(rec.data);
    if (!f) continue;
    const auto v = protocol::decode_packet(f->roce);
    if (!v) continue;
    SimFrame x;
    x.t_ns = rec.timestamp_ns;
    x.from_naa = f->headers.ip.src == naa;
    x.opcode = v->headers.bth.opcode;
    x.psn = v->headers.bth.psn;
    if (v->headers.aeth) x.syndrome = v->headers.aeth->syndrome;
    frames.push_back(x);
  }
  return frames;
}

// A capture file for one test, removed at the end.
struct ScratchPcap {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("naa-sim-test-" + std::to_string(::getpid()) + ".pcap"))
                         .string();
  ~ScratchPcap() { std::filesystem::remove(path); }
};

}  // namespace naa::testbench
