// rx_parser (rtl/rx_parser/rx_parser.sv) against its C++ model (naa/rtl/rx_parser.hpp) and against
// naa::protocol::decode_packet, the reference: the drop reasons are protocol::Error's values; the
// model agrees with decode_packet on every conformance vector and on seeded random and damaged
// datagrams; model and RTL agree every cycle at each Verilated width under random back-pressure;
// the packet-level driver (what naa-sim calls) counts packets, cycles and drops; and the broken
// variant is caught by lockstep at the right block, port and cycle.
#include <catch2/catch.hpp>

#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "naa/protocol/packet.hpp"
#include "naa/protocol/result.hpp"
#include "naa/rtl/rtl_session.hpp"
#include "naa/rtl/rx_parser.hpp"
#include "naa/rtl/rx_parser_broken_rtl.hpp"
#include "naa/rtl/rx_parser_rtl.hpp"
#include "support/illegal_beat.hpp"
#include "support/receive_lockstep.hpp"
#include "support/roce_traffic.hpp"
#include "support/verilated_widths.hpp"

using namespace naa::rtl;
using namespace naa::testbench::rtl;
using naa::protocol::Error;

namespace {

static_assert(static_cast<int>(RxDropReason::too_short) == static_cast<int>(Error::too_short));
static_assert(static_cast<int>(RxDropReason::too_long) == static_cast<int>(Error::too_long));
static_assert(static_cast<int>(RxDropReason::bad_tver) == static_cast<int>(Error::bad_tver));
static_assert(static_cast<int>(RxDropReason::bad_pad) == static_cast<int>(Error::bad_pad));
static_assert(static_cast<int>(RxDropReason::unknown_opcode) ==
              static_cast<int>(Error::unknown_opcode));
static_assert(static_cast<int>(RxDropReason::length_mismatch) ==
              static_cast<int>(Error::length_mismatch));
static_assert(kRxHasDeth == naa::protocol::kHasDeth && kRxHasReth == naa::protocol::kHasReth &&
              kRxHasAtomicEth == naa::protocol::kHasAtomicEth &&
              kRxHasAeth == naa::protocol::kHasAeth &&
              kRxHasAtomicAckEth == naa::protocol::kHasAtomicAckEth &&
              kRxHasImmDt == naa::protocol::kHasImmDt && kRxHasIeth == naa::protocol::kHasIeth &&
              kRxHasIrnEth == naa::protocol::kHasIrnEth &&
              kRxHasSackEth == naa::protocol::kHasSackEth);

// What decode_packet says about a datagram, as an RxParsed.
RxParsed reference(const Bytes& d) {
  RxParsed e;
  e.length = static_cast<std::uint16_t>(d.size());
  const auto v = naa::protocol::decode_packet(d);
  if (!v) {
    e.reason = static_cast<RxDropReason>(v.error());
    return e;
  }
  const naa::protocol::PacketHeaders& h = v->headers;
  e.opcode = h.bth.opcode;
  e.solicited_event = h.bth.solicited_event;
  e.mig_req = h.bth.mig_req;
  e.pad_count = h.bth.pad_count;
  e.tver = h.bth.tver;
  e.pkey = h.bth.pkey;
  e.fecn = h.bth.fecn;
  e.becn = h.bth.becn;
  e.dest_qpn = h.bth.dest_qpn;
  e.ack_req = h.bth.ack_req;
  e.psn = h.bth.psn;
  e.headers = v->info->headers;
  if (h.reth) e.reth_va = h.reth->va, e.reth_rkey = h.reth->rkey;
  if (h.reth) e.reth_dma_length = h.reth->dma_length;
  if (h.aeth) e.aeth_syndrome = h.aeth->syndrome, e.aeth_msn = h.aeth->msn;
  if (h.immediate) e.immediate = *h.immediate;
  if (h.ieth_rkey) e.immediate = *h.ieth_rkey;
  if (h.atomic_eth) {
    e.atomic_va = h.atomic_eth->va;
    e.atomic_rkey = h.atomic_eth->rkey;
    e.atomic_swap_add = h.atomic_eth->swap_add;
    e.atomic_compare = h.atomic_eth->compare;
  }
  if (h.atomic_ack_eth) e.atomic_ack_original = h.atomic_ack_eth->original_data;
  if (h.deth) e.deth_qkey = h.deth->qkey, e.deth_src_qpn = h.deth->src_qpn;
  if (h.irn_eth) {
    e.irn_recv_wqe_sn = h.irn_eth->recv_wqe_sn;
    e.irn_packet_offset = h.irn_eth->packet_offset;
  }
  if (h.sack_eth) {
    e.sack_reserved = h.sack_eth->reserved;
    e.sack_psn = h.sack_eth->sack_psn;
    e.sack_bitmap = h.sack_eth->bitmap;
  }
  e.payload_offset = static_cast<std::uint16_t>(v->header_size);
  e.payload_length = static_cast<std::uint16_t>(v->payload.size());
  return e;
}

// The first field where `actual` disagrees with `expected` (the lockstep comparison), or "".
std::string disagreement(const RxParsed& expected, const RxParsed& actual) {
  const RxParserModel shape(8);
  const auto m = first_mismatch(shape, {true, true, expected}, {true, true, actual});
  return m ? m->port + ": expected " + m->expected + ", actual " + m->actual : "";
}

}  // namespace

TEST_CASE("rx_parser: the model agrees with decode_packet on every vector", "[rtl][rx_parser]") {
  const auto vectors = vector_datagrams();
  REQUIRE(vectors.size() == 17);
  for (const Datagram& d : vectors) {
    INFO(d.name);
    const RxParsed got = RxParserModel::parse(d.bytes);
    CHECK(got.reason == RxDropReason::none);
    CHECK(disagreement(reference(d.bytes), got).empty());
  }
  // Spot checks against the vector README: frame 1 is an RDMA WRITE Only with a 13-byte payload.
  const RxParsed w = RxParserModel::parse(vectors[0].bytes);
  CHECK(w.opcode == 0x0A);
  CHECK(w.psn == 0x100);
  CHECK(w.dest_qpn == 0x11);
  CHECK(w.ack_req);
  CHECK(w.reth_va == 0x7f0000001000ULL);
  CHECK(w.reth_rkey == 0x1234);
  CHECK(w.pad_count == 3);
  CHECK(w.payload_offset == 28);
  CHECK(w.payload_length == 13);
}

TEST_CASE("rx_parser: the model agrees with decode_packet on random and damaged datagrams",
          "[rtl][rx_parser]") {
  Rng rng = seeded_rng("rx_parser model vs decode_packet");
  std::array<int, 7> by_reason{};
  std::array<int, 18> good_irn{};  // well-formed datagrams per IRN opcode 0xC0-0xD1
  for (int i = 0; i < 20000; ++i) {
    const Datagram d = random_datagram(rng);
    const RxParsed expected = reference(d.bytes);
    const std::string diff = disagreement(expected, RxParserModel::parse(d.bytes));
    INFO(d.name << ", " << d.bytes.size() << " bytes: " << to_hex(d.bytes));
    REQUIRE(diff.empty());
    ++by_reason[static_cast<std::size_t>(expected.reason)];
    if (expected.reason == RxDropReason::none && expected.opcode >= 0xC0 &&
        expected.opcode <= 0xD1) {
      ++good_irn[expected.opcode - 0xC0U];
    }
  }
  // Every IRN opcode (docs/protocol.md 8) was parsed well-formed.
  for (std::size_t c = 0; c < good_irn.size(); ++c) {
    INFO("IRN opcode 0x" << std::hex << 0xC0 + c);
    CHECK(good_irn[c] > 0);
  }
  // Every reason was exercised.
  for (std::size_t r = 0; r < by_reason.size(); ++r) {
    INFO("reason " << to_string(static_cast<RxDropReason>(r)));
    CHECK(by_reason[r] > 0);
  }
}

TEST_CASE("rx_parser: model and RTL agree every cycle under back-pressure", "[rtl][rx_parser]") {
  for (const std::uint32_t w : naa::testbench::verilated(rx_parser_rtl_widths())) {
    DYNAMIC_SECTION("W=" << w) {
      Rng rng = seeded_rng("rx_parser W=" + std::to_string(w));
      RtlOptions options;
      options.x_seed = static_cast<std::uint32_t>(rng());
      RxParserLockstep dut(std::make_unique<RxParserModel>(w), make_rx_parser_rtl(w, options));
      StreamSource src(rng);
      std::vector<RxParsed> expected;
      std::vector<RxParsed> results;
      RxParserInputs in;
      reset_randomly(dut, in, rng);
      for (const Phase& phase : kPhases) {
        src.set_rate(phase.p_valid);
        for (int p = 0; p < 300; ++p) {
          const Datagram d = random_datagram(rng, 8 * w);
          src.push(to_beats(d.bytes, w, BeatShape::full, rng));
          expected.push_back(reference(d.bytes));
        }
        run_phase(
            dut, in, src, rng, phase, expected.size(), results, [](RxParserInputs&) {},
            [](const RxParserInputs&, const RxParserOutputs&) {});
        if (dut.checker().diverged()) break;
      }
      check_lockstep_results(dut, w, expected, results, disagreement);
    }
  }
}

TEST_CASE("rx_parser: the packet-level driver, model, RTL and lockstep", "[rtl][rx_parser]") {
  const auto vectors = vector_datagrams();
  for (const std::uint32_t w : naa::testbench::verilated(rx_parser_rtl_widths())) {
    INFO("W=" << w);
    std::vector<std::unique_ptr<RxParser>> parsers;
    parsers.push_back(rx_parser::make_model(w));
    parsers.push_back(rx_parser::make_rtl(w));
    parsers.push_back(rx_parser::make_lockstep(w));
    for (auto& parser : parsers) {
      REQUIRE(parser != nullptr);
      std::uint64_t cycles = 1;  // the reset cycle
      for (const Datagram& d : vectors) {
        const RxParseResult r = parser->parse(d.bytes);
        INFO(d.name);
        CHECK(disagreement(reference(d.bytes), r.parsed).empty());
        // ceil(length / W) beats, then the result one cycle later.
        CHECK(r.cycles == (d.bytes.size() + w - 1) / w + 1);
        cycles += r.cycles;
      }
      Bytes bad = vectors[0].bytes;
      bad[1] |= 0x01;  // TVer 1
      CHECK(parser->parse(bad).parsed.reason == RxDropReason::bad_tver);
      CHECK(parser->parse(Bytes{}).parsed.reason == RxDropReason::too_short);
      CHECK(parser->parse(Bytes{}).cycles == 2);  // one empty beat, then the result
      const RxParserStats& s = parser->stats();
      CHECK(s.packets == vectors.size() + 3);
      CHECK(s.drops == 3);
      CHECK(s.cycles == cycles + (bad.size() + w - 1) / w + 1 + 2 + 2);
      CHECK(s.divergences == 0);
      CHECK(parser->divergence() == nullptr);
    }
  }
  CHECK(rx_parser::make_rtl(32) == nullptr);  // not Verilated at that width
  CHECK_THROWS_AS(rx_parser::make_model(0), std::invalid_argument);
  CHECK_THROWS_AS(rx_parser::make_model(8)->parse(Bytes(kRxMaxDatagram + 1)),
                  std::invalid_argument);
}

TEST_CASE("rx_parser: IRN's IrnETH and SackETH at their offsets (docs/protocol.md 8)",
          "[rtl][rx_parser]") {
  namespace p = naa::protocol;
  const auto encode = [](const p::PacketHeaders& h, std::size_t payload_len) {
    Bytes out(p::packet_size(h, payload_len));
    const Bytes payload(payload_len, 0xAB);
    REQUIRE(p::encode_packet(h, payload, out));
    return out;
  };
  // IRN RDMA WRITE Only with Immediate: BTH, RETH, IrnETH at 28, ImmDt at 36, payload at 40.
  p::PacketHeaders w;
  w.bth.opcode = p::opcode::kIrnWriteOnlyImm;
  w.bth.psn = 0x123456;
  w.reth = p::Reth{0x1122334455667788ULL, 0xAABBCCDD, 5};
  w.irn_eth = p::IrnEth{0x01020304, 0x05060708};
  w.immediate = 0xCAFEF00D;
  const Bytes write = encode(w, 5);
  // IRN SEND Last with Immediate: IrnETH at 12, ImmDt at 20.
  p::PacketHeaders s;
  s.bth.opcode = p::opcode::kIrnSendLastImm;
  s.irn_eth = p::IrnEth{7, 3};
  s.immediate = 0x0BADBEEF;
  const Bytes send = encode(s, 64);
  // IRN Acknowledge: AETH at 12, SackETH at 16, no payload.
  p::PacketHeaders a;
  a.bth.opcode = p::opcode::kIrnAcknowledge;
  a.aeth = p::Aeth{p::kAethAck, 0x000042};
  a.sack_eth = p::SackEth{0x5A, 0xABCDEF, 0x80000001};
  const Bytes ack = encode(a, 0);
  for (const std::uint32_t width : naa::testbench::verilated(rx_parser_rtl_widths())) {
    INFO("W=" << width);
    std::vector<std::unique_ptr<RxParser>> parsers;
    parsers.push_back(rx_parser::make_model(width));
    parsers.push_back(rx_parser::make_rtl(width));
    parsers.push_back(rx_parser::make_lockstep(width));
    for (auto& parser : parsers) {
      REQUIRE(parser != nullptr);
      const RxParsed pw = parser->parse(write).parsed;
      CHECK(disagreement(reference(write), pw).empty());
      CHECK(pw.reason == RxDropReason::none);
      CHECK(pw.headers == (kRxHasReth | kRxHasIrnEth | kRxHasImmDt));
      CHECK(pw.reth_va == 0x1122334455667788ULL);
      CHECK(pw.irn_recv_wqe_sn == 0x01020304);
      CHECK(pw.irn_packet_offset == 0x05060708);
      CHECK(pw.immediate == 0xCAFEF00D);
      CHECK(pw.payload_offset == 40);
      CHECK(pw.payload_length == 5);
      const RxParsed ps = parser->parse(send).parsed;
      CHECK(disagreement(reference(send), ps).empty());
      CHECK(ps.headers == (kRxHasIrnEth | kRxHasImmDt));
      CHECK(ps.irn_recv_wqe_sn == 7);
      CHECK(ps.irn_packet_offset == 3);
      CHECK(ps.immediate == 0x0BADBEEF);
      CHECK(ps.payload_offset == 24);
      CHECK(ps.payload_length == 64);
      const RxParsed pa = parser->parse(ack).parsed;
      CHECK(disagreement(reference(ack), pa).empty());
      CHECK(pa.reason == RxDropReason::none);
      CHECK(pa.headers == (kRxHasAeth | kRxHasSackEth));
      CHECK(pa.aeth_msn == 0x42);
      CHECK(pa.sack_reserved == 0x5A);
      CHECK(pa.sack_psn == 0xABCDEF);
      CHECK(pa.sack_bitmap == 0x80000001);
      CHECK(pa.payload_offset == 24);
      // A payload on the IRN ACK is too_long, as decode_packet says.
      Bytes long_ack = ack;
      long_ack.insert(long_ack.end() - 4, 4, 0);
      CHECK(parser->parse(long_ack).parsed.reason == RxDropReason::too_long);
      CHECK(parser->divergence() == nullptr);
    }
  }
}

TEST_CASE("rx_parser: lockstep catches the broken variant at the right block, port and cycle",
          "[rtl][rx_parser][lockstep]") {
  // The bug (NAA_RX_PARSER_BROKEN): only the first pad byte is checked. Frame 1 has 3 pad bytes;
  // a non-zero last pad byte (just before the ICRC) must be bad_pad.
  const auto vectors = vector_datagrams();
  Bytes culprit = vectors[0].bytes;
  REQUIRE(RxParserModel::parse(culprit).pad_count == 3);
  culprit[culprit.size() - 5] = 0x01;
  REQUIRE(reference(culprit).reason == RxDropReason::bad_pad);
  for (const std::uint32_t w : naa::testbench::verilated(rx_parser_rtl_widths())) {
    INFO("W=" << w);
    int handler_calls = 0;
    RxParser parser(std::make_unique<RxParserLockstep>(
        std::make_unique<RxParserModel>(w), make_rx_parser_broken_rtl(w),
        [&handler_calls](const Divergence&) { ++handler_calls; }));
    // Good traffic first: the bug does not show on well-formed datagrams.
    std::uint64_t cycle = 1;  // after the reset cycle
    for (const Datagram& d : vectors)
      cycle += parser.parse(d.bytes).cycles;
    REQUIRE(parser.divergence() == nullptr);
    const RxParseResult r = parser.parse(culprit);
    CHECK(r.parsed.reason == RxDropReason::bad_pad);  // the model's answer is what callers see
    REQUIRE(parser.divergence() != nullptr);
    const Divergence& d = *parser.divergence();
    INFO(d.to_string());
    CHECK(d.block == "rx_parser");
    CHECK(d.port == "out_reason");
    CHECK(d.expected == "bad_pad");
    CHECK(d.actual == "none");
    // The result is on the output in the cycle after the last beat: ceil(L / W) cycles in.
    CHECK(d.cycle == cycle + (culprit.size() + w - 1) / w);
    CHECK(handler_calls == 1);
    CHECK(parser.stats().divergences == 1);
    (void)parser.parse(culprit);  // reported once only
    CHECK(handler_calls == 1);
  }
}

// A reset in the middle of a datagram (issue 25 item 4): model and RTL in lockstep through resets
// after part of a datagram and while a result waits; every datagram a reset did not cut is parsed
// as decode_packet says. The covers c_reset_mid_packet and c_reset_result_waits of
// rtl/rx_parser/rx_parser_sva.sv count these resets.
TEST_CASE("rx_parser: resets in the middle of a datagram, the datagrams after them parse correctly",
          "[rtl][rx_parser]") {
  for (const std::uint32_t w : naa::testbench::verilated(rx_parser_rtl_widths())) {
    DYNAMIC_SECTION("W=" << w) {
      Rng rng = seeded_rng("rx_parser resets W=" + std::to_string(w));
      RtlOptions options;
      options.x_seed = static_cast<std::uint32_t>(rng());
      RxParserLockstep dut(std::make_unique<RxParserModel>(w), make_rx_parser_rtl(w, options));
      std::vector<std::vector<StreamBeat>> packets;
      std::vector<RxParsed> expected;
      for (int p = 0; p < 600; ++p) {
        const Datagram d = random_datagram(rng, 8 * w);
        packets.push_back(to_beats(d.bytes, w, BeatShape::full, rng));
        expected.push_back(reference(d.bytes));
      }
      RxParserInputs in;
      reset_randomly(dut, in, rng);
      std::vector<std::pair<std::size_t, RxParsed>> results;
      const ResetRunStats stats =
          run_with_resets(dut, in, rng, packets, results, [](RxParserInputs&, std::size_t) {});
      check_reset_run(dut, w, stats, expected, results,
                      [](const auto& e, const auto& r) { return disagreement(e, r); });
    }
  }
}

// The largest datagram the port takes (65535 bytes: the cover c_maximal of rx_parser_sva.sv) and
// an empty one, through the packet-level driver over model and RTL in lockstep.
TEST_CASE("rx_parser: a 65535-byte datagram and an empty one, model and RTL in lockstep",
          "[rtl][rx_parser]") {
  Rng rng = seeded_rng("rx_parser maximal");
  Bytes big = random_bytes(rng, kRxMaxDatagram);
  big[0] = 0x04;  // SEND Only
  big[1] = 0x00;  // TVer 0, no pad
  for (const std::uint32_t w : naa::testbench::verilated(rx_parser_rtl_widths())) {
    INFO("W=" << w);
    const std::unique_ptr<RxParser> parser = rx_parser::make_lockstep(w);
    REQUIRE(parser != nullptr);
    for (const Bytes& d : {big, Bytes{}}) {
      const RxParseResult r = parser->parse(d);
      CHECK(disagreement(reference(d), r.parsed).empty());
      CHECK(r.parsed.length == d.size());
    }
    CHECK(parser->divergence() == nullptr);
  }
}

// Illegal input (issue 25 item 4): beats that break the port contract (README "Ports": every beat
// but the last full, the last a prefix) fail rx_parser_sva's assertions on the real block, named
// in Verilator's message, instead of being parsed silently.
TEST_CASE("rx_parser: an input beat that breaks the contract fails the block's assertion",
          "[rtl][rx_parser]") {
  const auto widths = naa::testbench::verilated(rx_parser_rtl_widths());
  const std::uint32_t w = widths.front();
  const IllegalBeat cases[] = {
      {"rx_parser_sva a_in_keep_full", w - 1, 0, false},
      {"rx_parser_sva a_in_keep_prefix", w, 2, true},
  };
  for (const IllegalBeat& c : cases) {
    DYNAMIC_SECTION(c.assertion) {
      check_illegal_beat(c, [w](const RtlOptions& o) { return make_rx_parser_rtl(w, o); });
    }
  }
}
