// Unit tests of naa::host::Session against the fake peer's mini NAA (MRSP answers, add1): the
// MRSP request as sent, placements, calls, single-send, MRSP errors, return codes, busy, loss.
// Addresses: the test's block (test_addresses.hpp): host n on .n, peer n on .(100 + n).
#include <catch2/catch.hpp>

#include <cstring>
#include <numeric>
#include <thread>

#include "eventually.hpp"
#include "fake_naa.hpp"
#include "fake_peer.hpp"
#include "naa/host/error.hpp"
#include "naa/host/session.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/protocol/mrsp.hpp"
#include "naa/protocol/opcode.hpp"
#include "test_addresses.hpp"

using namespace std::chrono_literals;
using naa::host::Errc;
using naa::host::Region;
using naa::testbench::FakePeer;
using naa::testbench::Fault;
namespace host = naa::host;
namespace protocol = naa::protocol;

namespace {

// The test's address block (test_addresses.hpp): host endpoint n on .n, mini NAA n on .(100 + n).
std::string host_addr(int n) {
  return naa::testbench::fake_naa_host_ip(n);
}

std::unique_ptr<FakePeer> mini_naa(int n, std::uint8_t mrsp_error = 0) {
  return naa::testbench::make_fake_naa(n, {.memory_size = 1 << 20, .mrsp_error = mrsp_error});
}

host::SessionOptions options(int n) {
  host::SessionOptions o;
  o.naa_address = naa::testbench::fake_naa_ip(n);
  o.local_address = host_addr(n);
  o.connect_timeout = 2000ms;
  o.mrsp_timeout = 2000ms;
  o.call_timeout = 3000ms;
  return o;
}

}  // namespace

TEST_CASE("Session sends the MRSP request in PROTOCOL.md 5.1 order and runs add1 calls") {
  auto peer = mini_naa(1);
  std::vector<std::uint8_t> a(1000, 10), b(5000), c(3000, 0xEE);
  std::iota(b.begin(), b.end(), std::uint8_t{0});
  const std::vector<std::uint8_t> b0 = b;
  auto opts = options(1);
  opts.path_mtu = 1024;
  host::Session s(opts,
                  {Region::internal(4096), Region::input(a), Region::inout(b), Region::output(c)});
  // The request: parameter regions in index order, then internal ones.
  const auto sends = peer->sends();
  REQUIRE(sends.size() == 1);
  auto req = protocol::decode_mrsp_request(sends[0]);
  REQUIRE(req);
  REQUIRE(req->count() == 4);
  CHECK(req->entry(0).flags == protocol::kMrspFlagInput);
  CHECK(req->entry(0).host_va == reinterpret_cast<std::uintptr_t>(a.data()));
  CHECK(req->entry(0).size == 1000);
  CHECK(req->entry(1).flags == (protocol::kMrspFlagInput | protocol::kMrspFlagOutput));
  CHECK(req->entry(2).flags == protocol::kMrspFlagOutput);
  CHECK(req->entry(2).host_rkey != 0);
  CHECK(req->entry(3).flags == protocol::kMrspFlagInternal);
  CHECK(req->entry(3).host_va == 0);
  CHECK(req->entry(3).host_rkey == 0);
  // Automatic placement: 4 KiB aligned, in declaration order.
  CHECK(req->entry(3).naa_address == 0);
  CHECK(req->entry(0).naa_address == 4096);
  CHECK(req->entry(1).naa_address == 8192);
  CHECK(req->entry(2).naa_address == 16384);
  // The MRSP SEND carried SE.
  const auto reqs = peer->requests();
  REQUIRE_FALSE(reqs.empty());
  CHECK(reqs.back().headers.bth.solicited_event);
  REQUIRE(s.placements().size() == 3);
  CHECK(s.placements()[1].naa_address == 8192);

  for (int i = 1; i <= 10; ++i) {
    const host::CallResult r = s.call(1, 0x123456);
    CHECK(r.return_code == 0);
    CHECK(r.fn == 1);
    CHECK(r.bytes_received == 8000);
    CHECK(r.output_bytes[2] == 5000);
    CHECK(r.output_bytes[3] == 3000);
    CHECK(r.bytes_sent == 6000);
  }
  for (std::size_t i = 0; i < b.size(); ++i) {
    REQUIRE(b[i] == static_cast<std::uint8_t>(b0[i] + 10));
  }
  CHECK(c[0] == 10);  // the output region lives on in NAA memory between calls
  CHECK(a[0] == 10);  // inputs are never written back
  const auto imms = peer->immediates();
  REQUIRE(imms.size() == 10);
  CHECK(imms[0] == 0x12345681U);  // [user 12 34 56 | 0x80|fn]
}

TEST_CASE("single-send regions are written by the first call only") {
  auto peer = mini_naa(2);
  std::vector<std::uint8_t> cfg(256, 1), in(256, 2), out(256);
  host::Session s(options(2), {Region::single_send(cfg), Region::input(in), Region::output(out)});
  const std::uint64_t cfg_addr = s.placements()[0].naa_address;
  auto writes_to_cfg = [&] {
    int n = 0;
    for (const auto& p : peer->requests()) {
      if (p.headers.reth && p.headers.reth->va == cfg_addr) ++n;
    }
    return n;
  };
  CHECK(s.call(1).return_code == 0);
  CHECK(writes_to_cfg() == 1);
  CHECK(s.call(1).return_code == 0);
  CHECK(s.call(1).return_code == 0);
  CHECK(writes_to_cfg() == 1);
  // The NAA kept the single-send data (add1 ran three times over it).
  CHECK(peer->memory(cfg_addr, 1)[0] == 4);
}

TEST_CASE("every MRSP error code is surfaced with its own error") {
  const std::pair<std::uint8_t, Errc> cases[] = {{1, Errc::mrsp_not_enough_memory},
                                                 {2, Errc::mrsp_invalid_address},
                                                 {3, Errc::mrsp_too_many_regions},
                                                 {9, Errc::mrsp_unknown_error}};
  int n = 3;
  for (const auto& [code, errc] : cases) {
    auto peer = mini_naa(n, code);
    std::vector<std::uint8_t> buf(64);
    try {
      host::Session s(options(n), {Region::inout(buf)});
      FAIL("no exception");
    } catch (const host::Error& e) {
      CHECK(e.code() == make_error_code(errc));
      CHECK(std::string(e.what()).find("MRSP error") != std::string::npos);
    }
    // The connection is closed after a failed MRSP.
    CHECK(naa::testbench::eventually([&] { return peer->dreq_received(); }));
    ++n;
  }
}

TEST_CASE("an unknown function code returns 0x03 and the session stays usable") {
  auto peer = mini_naa(8);
  std::vector<std::uint8_t> buf(64, 5);
  host::Session s(options(8), {Region::inout(buf)});
  const auto r = s.call(77);
  CHECK(r.return_code == 0x03);
  CHECK(r.fn == 77);
  CHECK(buf[0] == 5);
  CHECK(s.call(1).return_code == 0);
  CHECK(buf[0] == 6);
}

TEST_CASE("a call with no input sends one zero-length WRITE_WITH_IMM") {
  auto peer = mini_naa(9);
  std::vector<std::uint8_t> out(100);
  host::Session s(options(9), {Region::output(out)});
  CHECK(s.call(1).return_code == 0);
  CHECK(out[0] == 1);
  const auto reqs = peer->requests();
  REQUIRE_FALSE(reqs.empty());
  const auto& last = reqs.back().headers;
  CHECK(last.bth.opcode == protocol::opcode::kWriteOnlyImm);
  CHECK(last.reth->dma_length == 0);
  CHECK(last.bth.solicited_event);
}

TEST_CASE("invoke refuses bad function codes and a second outstanding call") {
  auto peer = mini_naa(10);
  std::vector<std::uint8_t> buf(64);
  host::Session s(options(10), {Region::inout(buf)});
  CHECK_THROWS_MATCHES(s.invoke(0), host::Error,
                       Catch::Predicate<host::Error>([](const host::Error& e) {
                         return e.code() == make_error_code(Errc::invalid_argument);
                       }));
  CHECK_THROWS_AS(s.invoke(128), host::Error);
  CHECK_THROWS_AS(s.invoke(1, 1U << 24), host::Error);
  auto call = s.invoke(1);
  try {
    (void)s.invoke(1);
    FAIL("no exception");
  } catch (const host::Error& e) {
    CHECK(e.code() == make_error_code(Errc::busy));
  }
  CHECK(call.get().return_code == 0);
  CHECK(s.call(1).return_code == 0);
  CHECK(buf[0] == 2);
}

TEST_CASE("calls survive lost and duplicated input packets") {
  auto peer = mini_naa(11);
  std::vector<std::uint8_t> buf(50000);
  std::iota(buf.begin(), buf.end(), std::uint8_t{3});
  const auto orig = buf;
  auto opts = options(11);
  opts.path_mtu = 1024;
  host::Session s(opts, {Region::inout(buf)});
  peer->set_fault([](const auto&, std::size_t i) {
    if (i % 17 == 5) return Fault{Fault::Kind::drop};
    if (i % 13 == 0) return Fault{Fault::Kind::duplicate};
    return Fault{};
  });
  for (int k = 1; k <= 3; ++k) {
    const auto r = s.call(1);
    CHECK(r.return_code == 0);
    CHECK(r.bytes_received == buf.size());
  }
  for (std::size_t i = 0; i < buf.size(); ++i)
    REQUIRE(buf[i] == static_cast<std::uint8_t>(orig[i] + 3));
}

TEST_CASE("a session with manual progress makes its calls inside wait") {
  auto peer = mini_naa(12);
  std::vector<std::uint8_t> buf(9000, 1);
  auto opts = options(12);
  opts.progress = host::Progress::manual;
  host::Session s(opts, {Region::inout(buf)});
  auto call = s.invoke(1);
  while (!call.ready()) {
  }
  CHECK(call.get().return_code == 0);
  CHECK(buf[8999] == 2);
}
