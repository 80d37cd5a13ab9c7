// icrc_check (rtl/icrc_check/icrc_check.sv) against its C++ model (naa/rtl/icrc_check.hpp) and
// against naa::protocol::compute_icrc / verify_icrc, the reference (itself checked against the
// vectors' ICRCs, computed by two independent implementations and one ConnectX-4 Lx): the model
// agrees with it on every vector (frame 11, corrupted, is bad) and on seeded random datagrams with
// random variant header fields; model and RTL agree every cycle at each Verilated width under
// random back-pressure; the packet-level driver counts packets, cycles and bad ICRCs; and the
// broken variant is caught by lockstep at the right block, port and cycle.
#include <catch2/catch.hpp>

#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "naa/protocol/icrc.hpp"
#include "naa/rtl/icrc_check.hpp"
#include "naa/rtl/icrc_check_broken_rtl.hpp"
#include "naa/rtl/icrc_check_headers.hpp"
#include "naa/rtl/icrc_check_rtl.hpp"
#include "naa/rtl/rtl_session.hpp"
#include "support/illegal_beat.hpp"
#include "support/receive_lockstep.hpp"
#include "support/roce_traffic.hpp"
#include "support/verilated_widths.hpp"

using namespace naa::rtl;
using namespace naa::testbench::rtl;

namespace {

// What naa::protocol says about a datagram under these headers.
IcrcResult reference(const naa::protocol::Ipv4UdpHeaders& h, const Bytes& d) {
  IcrcResult e;
  if (d.size() < 16) {
    e.short_datagram = true;
    return e;
  }
  const std::size_t n = d.size() - 4;
  e.icrc = naa::protocol::compute_icrc(h, naa::protocol::ByteView(d).first(n));
  e.received = naa::protocol::load_le32(d.data() + n);
  e.ok = naa::protocol::verify_icrc(h, d);
  return e;
}

std::string disagreement(const IcrcResult& expected, const IcrcResult& actual) {
  const IcrcCheckModel shape(8);
  const auto m = first_mismatch(shape, {true, true, expected}, {true, true, actual});
  return m ? m->port + ": expected " + m->expected + ", actual " + m->actual : "";
}

// The variant fields (masked by the ICRC) set at random, so a block that forgets a mask fails.
void scramble_variant_fields(Rng& rng, naa::protocol::Ipv4UdpHeaders& h) {
  h.ip.tos = uniform<std::uint8_t>(rng, 0, 255);
  h.ip.ttl = uniform<std::uint8_t>(rng, 0, 255);
  h.ip.checksum = uniform<std::uint16_t>(rng, 0, 0xFFFF);
  h.udp.checksum = uniform<std::uint16_t>(rng, 0, 0xFFFF);
}

// A random datagram under random headers; most carry their correct ICRC.
Datagram random_checked_datagram(Rng& rng, std::size_t max_payload) {
  Datagram d = random_datagram(rng, max_payload);
  scramble_variant_fields(rng, d.headers);
  if (d.bytes.size() >= 16 && chance(rng, 0.7)) naa::protocol::write_icrc(d.headers, d.bytes);
  if (d.bytes.size() >= 16 && chance(rng, 0.2)) d.bytes[4] ^= 0xC0;  // FECN/BECN: masked
  return d;
}

}  // namespace

TEST_CASE("icrc_check: the model agrees with protocol's ICRC on every vector",
          "[rtl][icrc_check]") {
  const auto vectors = vector_datagrams();
  REQUIRE(vectors.size() == 17);
  for (const Datagram& d : vectors) {
    INFO(d.name);
    const IcrcResult got = IcrcCheckModel::check(ip_udp_header_bytes(d.headers), d.bytes);
    CHECK(disagreement(reference(d.headers, d.bytes), got).empty());
    CHECK(got.ok == (d.name.rfind("frame 11 ", 0) != 0));  // frame 11's ICRC is corrupted
  }
  // Frame 1's ICRC is the bytes f8 68 62 8f (vectors README).
  CHECK(IcrcCheckModel::check(ip_udp_header_bytes(vectors[0].headers), vectors[0].bytes).icrc ==
        0x8f6268f8U);
}

TEST_CASE("icrc_check: the model agrees with protocol's ICRC on random datagrams",
          "[rtl][icrc_check]") {
  Rng rng = seeded_rng("icrc_check model vs protocol");
  int ok = 0;
  int bad = 0;
  for (int i = 0; i < 5000; ++i) {
    const Datagram d = random_checked_datagram(rng, 300);
    const IcrcResult expected = reference(d.headers, d.bytes);
    INFO(d.name << ", " << d.bytes.size() << " bytes: " << to_hex(d.bytes));
    REQUIRE(disagreement(expected, IcrcCheckModel::check(ip_udp_header_bytes(d.headers), d.bytes))
                .empty());
    (expected.ok ? ok : bad)++;
  }
  CHECK(ok > 1000);
  CHECK(bad > 500);
}

TEST_CASE("icrc_check: model and RTL agree every cycle under back-pressure", "[rtl][icrc_check]") {
  for (const std::uint32_t w : naa::testbench::verilated(icrc_check_rtl_widths())) {
    DYNAMIC_SECTION("W=" << w) {
      Rng rng = seeded_rng("icrc_check W=" + std::to_string(w));
      RtlOptions options;
      options.x_seed = static_cast<std::uint32_t>(rng());
      IcrcCheckLockstep dut(std::make_unique<IcrcCheckModel>(w), make_icrc_check_rtl(w, options));
      StreamSource src(rng);
      std::vector<IpUdpHeaderBytes> headers;  // per datagram, held with each of its beats
      std::vector<std::size_t> beats;
      std::vector<IcrcResult> expected;
      std::vector<IcrcResult> results;
      IcrcCheckInputs in;
      reset_randomly(dut, in, rng);
      std::size_t sent = 0;        // datagrams whose beats were all accepted
      std::size_t beat_index = 0;  // beats of datagram `sent` accepted so far
      for (const Phase& phase : kPhases) {
        src.set_rate(phase.p_valid);
        for (int p = 0; p < 300; ++p) {
          const Datagram d = random_checked_datagram(rng, 8 * w);
          const auto b = to_beats(d.bytes, w, BeatShape::full, rng);
          src.push(b);
          beats.push_back(b.size());
          headers.push_back(ip_udp_header_bytes(d.headers));
          expected.push_back(reference(d.headers, d.bytes));
        }
        const auto set_headers = [&](IcrcCheckInputs& i) {
          if (sent < headers.size()) {
            i.ip_udp = headers[sent];
          } else {
            for (auto& x : i.ip_udp)
              x = uniform<std::uint8_t>(rng, 0, 255);
          }
        };
        const auto count_beats = [&](const IcrcCheckInputs& i, const IcrcCheckOutputs& o) {
          if (i.in_valid && o.in_ready && ++beat_index == beats[sent]) {
            ++sent;
            beat_index = 0;
          }
        };
        run_phase(dut, in, src, rng, phase, expected.size(), results, set_headers, count_beats);
        if (dut.checker().diverged()) break;
      }
      check_lockstep_results(dut, w, expected, results, disagreement);
    }
  }
}

TEST_CASE("icrc_check: the packet-level driver, model, RTL and lockstep", "[rtl][icrc_check]") {
  const auto vectors = vector_datagrams();
  for (const std::uint32_t w : naa::testbench::verilated(icrc_check_rtl_widths())) {
    INFO("W=" << w);
    std::vector<std::unique_ptr<IcrcCheck>> checkers;
    checkers.push_back(icrc_check::make_model(w));
    checkers.push_back(icrc_check::make_rtl(w));
    checkers.push_back(icrc_check::make_lockstep(w));
    for (auto& checker : checkers) {
      REQUIRE(checker != nullptr);
      std::uint64_t cycles = 1;  // the reset cycle
      for (const Datagram& d : vectors) {
        // As naa-sim receives: the IPv4 ID is unknown on a UDP socket and recovered first.
        naa::protocol::Ipv4UdpHeaders h = d.headers;
        h.ip.id = 0;
        const auto id = naa::protocol::recover_ipv4_id(h, d.bytes);
        h.ip.id = id.value_or(0);
        const IcrcCheckResult r = checker->check(ip_udp_header_bytes(h), d.bytes);
        INFO(d.name);
        CHECK(disagreement(reference(h, d.bytes), r.result).empty());
        CHECK(r.result.ok == id.has_value());
        CHECK(r.cycles == (d.bytes.size() + w - 1) / w + 2);  // latency 2 (README "Timing")
        cycles += r.cycles;
      }
      CHECK(checker->check({}, Bytes(15, 0)).result.short_datagram);
      const IcrcCheckStats& s = checker->stats();
      CHECK(s.packets == vectors.size() + 1);
      CHECK(s.bad == 2);  // frame 11 and the short one
      CHECK(s.cycles == cycles + (15 + w - 1) / w + 2);
      CHECK(s.divergences == 0);
      CHECK(checker->divergence() == nullptr);
    }
  }
  CHECK(icrc_check::make_rtl(32) == nullptr);  // not Verilated at that width
  CHECK_THROWS_AS(icrc_check::make_model(12), std::invalid_argument);
}

TEST_CASE("icrc_check: lockstep catches the broken variant at the right block, port and cycle",
          "[rtl][icrc_check][lockstep]") {
  // The bug (NAA_ICRC_CHECK_BROKEN): the last beat's byte count wraps at W, so a datagram whose
  // length is a multiple of W loses its last beat. Datagrams of other lengths pass.
  Rng rng(7);
  const auto vectors = vector_datagrams();
  for (const std::uint32_t w : naa::testbench::verilated(icrc_check_rtl_widths())) {
    INFO("W=" << w);
    int handler_calls = 0;
    IcrcCheck checker(std::make_unique<IcrcCheckLockstep>(
        std::make_unique<IcrcCheckModel>(w), make_icrc_check_broken_rtl(w),
        [&handler_calls](const Divergence&) { ++handler_calls; }));
    std::uint64_t cycle = 1;  // after the reset cycle
    int passed = 0;
    for (const Datagram& d : vectors) {
      if (d.bytes.size() % w == 0) continue;
      cycle += checker.check(ip_udp_header_bytes(d.headers), d.bytes).cycles;
      ++passed;
    }
    CHECK(passed > 0);
    REQUIRE(checker.divergence() == nullptr);
    // 128 bytes: a multiple of every Verilated width.
    Datagram culprit = random_good_datagram(rng);
    while (culprit.bytes.size() < 16)
      culprit = random_good_datagram(rng);
    culprit.bytes.resize(128);
    naa::protocol::write_icrc(culprit.headers, culprit.bytes);
    const IcrcCheckResult r = checker.check(ip_udp_header_bytes(culprit.headers), culprit.bytes);
    CHECK(r.result.ok);  // the model's answer is what callers see
    REQUIRE(checker.divergence() != nullptr);
    const Divergence& d = *checker.divergence();
    INFO(d.to_string());
    CHECK(d.block == "icrc_check");
    CHECK(d.port == "out_icrc");
    CHECK(d.cycle == cycle + 128 / w + 1);  // two cycles after the last beat (latency 2)
    CHECK(handler_calls == 1);
    CHECK(checker.stats().divergences == 1);
  }
}

// A reset in the middle of a datagram (issue 25 item 4): model and RTL in lockstep through resets
// after part of a datagram and while a result waits, the headers changing per datagram; every
// datagram a reset did not cut gets protocol's ICRC verdict. The covers c_reset_mid_packet and
// c_reset_result_waits of rtl/icrc_check/icrc_check_sva.sv count these resets.
TEST_CASE("icrc_check: resets in the middle of a datagram, the datagrams after them check right",
          "[rtl][icrc_check]") {
  for (const std::uint32_t w : naa::testbench::verilated(icrc_check_rtl_widths())) {
    DYNAMIC_SECTION("W=" << w) {
      Rng rng = seeded_rng("icrc_check resets W=" + std::to_string(w));
      RtlOptions options;
      options.x_seed = static_cast<std::uint32_t>(rng());
      IcrcCheckLockstep dut(std::make_unique<IcrcCheckModel>(w), make_icrc_check_rtl(w, options));
      std::vector<std::vector<StreamBeat>> packets;
      std::vector<IpUdpHeaderBytes> headers;
      std::vector<IcrcResult> expected;
      for (int p = 0; p < 600; ++p) {
        const Datagram d = random_checked_datagram(rng, 8 * w);
        packets.push_back(to_beats(d.bytes, w, BeatShape::full, rng));
        headers.push_back(ip_udp_header_bytes(d.headers));
        expected.push_back(reference(d.headers, d.bytes));
      }
      IcrcCheckInputs in;
      reset_randomly(dut, in, rng);
      std::vector<std::pair<std::size_t, IcrcResult>> results;
      const ResetRunStats stats =
          run_with_resets(dut, in, rng, packets, results, [&](IcrcCheckInputs& i, std::size_t k) {
            if (k < headers.size()) i.ip_udp = headers[k];
          });
      check_reset_run(dut, w, stats, expected, results,
                      [](const auto& e, const auto& r) { return disagreement(e, r); });
    }
  }
}

// The largest datagram (65535 bytes: the cover c_maximal of icrc_check_sva.sv) with its correct
// ICRC, through the packet-level driver over model and RTL in lockstep.
TEST_CASE("icrc_check: a 65535-byte datagram, model and RTL in lockstep", "[rtl][icrc_check]") {
  Rng rng = seeded_rng("icrc_check maximal");
  const naa::protocol::Ipv4UdpHeaders h = vector_datagrams().front().headers;
  Bytes big = random_bytes(rng, 65535);
  naa::protocol::write_icrc(h, big);
  for (const std::uint32_t w : naa::testbench::verilated(icrc_check_rtl_widths())) {
    INFO("W=" << w);
    const std::unique_ptr<IcrcCheck> checker = icrc_check::make_lockstep(w);
    REQUIRE(checker != nullptr);
    const IcrcCheckResult r = checker->check(ip_udp_header_bytes(h), big);
    CHECK(r.result.ok);
    CHECK(disagreement(reference(h, big), r.result).empty());
    CHECK(checker->divergence() == nullptr);
  }
}

// Illegal input (issue 25 item 4): beats that break the port contract (README "Ports": every beat
// but the last full, the last a prefix) fail icrc_check_sva's assertions on the real block, named
// in Verilator's message, instead of being checked silently.
TEST_CASE("icrc_check: an input beat that breaks the contract fails the block's assertion",
          "[rtl][icrc_check]") {
  const std::uint32_t w = naa::testbench::verilated(icrc_check_rtl_widths()).front();
  const IllegalBeat cases[] = {
      {"icrc_check_sva a_in_keep_full", 1, 0, false},
      {"icrc_check_sva a_in_keep_prefix", 3, 1, true},
  };
  for (const IllegalBeat& c : cases) {
    DYNAMIC_SECTION(c.assertion) {
      check_illegal_beat(c, [w](const RtlOptions& o) { return make_icrc_check_rtl(w, o); });
    }
  }
}
