// The UdpRoce endpoint against the scripted fake peer (fake_peer.hpp), connected: the rig of
// test_udp_roce.cpp and test_ack_request.cpp. Each test process claims its own address block
// (test_addresses.hpp: host n on .n, peer n on .(100 + n)) so that `ctest -j` is safe.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "eventually.hpp"
#include "fake_peer.hpp"
#include "naa/host/udp_roce.hpp"
#include "test_addresses.hpp"

namespace naa::testbench::udp_rig {

namespace host = naa::host;
using naa::testbench::FakePeer;
using namespace std::chrono_literals;

// The test's address block (test_addresses.hpp): host endpoint n on .n, fake peer n on .(100 + n).
inline std::uint32_t host_ip(std::uint32_t n) {
  return naa::testbench::test_addresses().ip_u32(static_cast<int>(n));
}
inline std::uint32_t peer_ip(std::uint32_t n) {
  return naa::testbench::test_addresses().ip_u32(100 + static_cast<int>(n));
}

struct Rig {
  std::unique_ptr<FakePeer> peer;
  std::shared_ptr<host::Transport> ep;
  std::unique_ptr<host::QueuePair> qp;
  std::vector<std::uint8_t> buf;
  host::MemoryRegion mr;

  Rig(std::uint32_t n, FakePeer::Options peer_opts = {}, host::ConnectParams params = {},
      host::Progress progress = host::Progress::automatic, std::size_t buf_size = 1 << 20,
      host::UdpRoceOptions o = {}) {
    peer_opts.ip = peer_ip(n);
    peer = std::make_unique<FakePeer>(peer_opts);
    o.local_ip = host_ip(n);
    o.progress = progress;
    o.seed = 1000 + n;
    std::error_code ec;
    std::string detail;
    ep = host::open_udp_roce(o, ec, &detail);
    INFO(detail);
    REQUIRE(ep);
    buf.resize(buf_size);
    REQUIRE_FALSE(ep->register_memory(
        buf.data(), buf.size(),
        host::Access::local_write | host::Access::remote_write | host::Access::remote_read, mr));
    params.remote_ip = peer_ip(n);
    if (params.timeout == 5000ms) params.timeout = 2000ms;
    qp = ep->connect(params, ec, &detail);
    INFO(detail);
    REQUIRE_FALSE(ec);
    REQUIRE(qp);
  }

  std::optional<host::WorkCompletion> wait_one(
      std::chrono::milliseconds timeout = naa::testbench::kLivenessLimit) {
    host::WorkCompletion wc;
    if (qp->wait_cq(std::span(&wc, 1), timeout) == 1) return wc;
    return std::nullopt;
  }

  void fill(std::size_t n, std::uint8_t seed) {
    for (std::size_t i = 0; i < n; ++i)
      buf[i] = static_cast<std::uint8_t>(seed + i * 7);
  }

  host::SendWr write(std::uint32_t len, std::uint64_t peer_off = 0, bool imm = false) {
    host::SendWr wr;
    wr.wr_id = 42;
    wr.opcode = imm ? host::WrOpcode::rdma_write_with_imm : host::WrOpcode::rdma_write;
    wr.sge = {reinterpret_cast<std::uint64_t>(buf.data()), len, mr.lkey};
    wr.remote_addr = 0x100000 + peer_off;
    wr.rkey = 0x1234;
    wr.imm = 0x00ABCD83;
    wr.solicited = imm;
    return wr;
  }

  void expect_peer_memory(std::size_t len, std::uint64_t peer_off = 0) {
    const auto got = peer->memory(peer_off, len);
    REQUIRE(std::memcmp(got.data(), buf.data(), len) == 0);
  }
};

inline std::vector<std::uint32_t> psns(const std::vector<naa::testbench::SeenPacket>& v) {
  std::vector<std::uint32_t> out;
  for (const auto& p : v)
    out.push_back(p.headers.bth.psn);
  return out;
}

}  // namespace naa::testbench::udp_rig
