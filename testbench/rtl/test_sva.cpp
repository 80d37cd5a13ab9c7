// The SVA checkers of the receive blocks and the MR table (rtl/rx_parser/rx_parser_sva.sv,
// rtl/icrc_check/icrc_check_sva.sv, rtl/mr_table/mr_table_sva.sv; docs/rtl/README.md
// "Assertions"), each Verilated alone with its inputs as ports, so that a test can play the block
// too and break every property the reference RTL never breaks: for each assertion a short trace
// that violates it, and the test checks that that assertion's label is in Verilator's message;
// for each checker a legal trace that stays quiet. The kernels' checkers: test_sva_kernels.cpp.
// The caller's properties also fire on the real blocks (test_rx_parser.cpp, test_icrc_check.cpp,
// test_stream_assertions.cpp), and the regression runs every property on the
// reference RTL with failures fatal.
#include <catch2/catch.hpp>

#include <cstdint>

#include "Vicrc_check_sva.h"
#include "Vmr_table_sva.h"
#include "Vrx_parser_sva.h"
#include "support/sva_bench.hpp"

using namespace naa::testbench::rtl;

namespace {

// ---- rx_parser and icrc_check (W = 8): the same stream ports.

// A beat offered (in_ready_o as the block computes it from the output side).
template <class B>
void offer(B& b, bool valid, std::uint8_t keep, bool last) {
  b->in_valid_i = valid;
  b->in_keep_i = keep;
  b->in_last_i = last;
  b->in_data_i = 0x0706050403020100ULL;
  b->in_ready_o = !b->out_valid_o || b->out_ready_i;
}

// A 20-byte datagram at full rate (beats 8, 8, 4), its result out the cycle after, taken.
template <class B>
void datagram20(B& b) {
  b->out_ready_i = 1;
  offer(b, true, 0xFF, false);
  b.cycle();
  offer(b, true, 0xFF, false);
  b.cycle();
  offer(b, true, 0x0F, true);
  b.cycle();
  offer(b, false, 0, false);
}

using Rx = Bench<Vrx_parser_sva>;

// The result of datagram20 on rx_parser's port: well-formed, BTH only, 4 bytes of payload.
void rx_result20(Rx& b) {
  b->out_valid_o = 1;
  b->out_reason_o = 0;
  b->out_length_o = 20;
  b->out_payload_offset_o = 12;
  b->out_payload_length_o = 4;
  b->out_pad_o = 0;
  b->out_tver_o = 0;
  b->in_ready_o = b->out_ready_i;
}

}  // namespace

TEST_CASE("sva: rx_parser_sva is quiet on a legal trace", "[rtl][sva]") {
  check_quiet<Vrx_parser_sva>([](Rx& b) {
    datagram20(b);
    rx_result20(b);
    b.cycle();
    b->out_valid_o = 0;
    offer(b, false, 0, false);
    b.cycle();
    b.cycle();
  });
}

TEST_CASE("sva: every rx_parser_sva assertion fires on a trace that breaks it", "[rtl][sva]") {
  check_fires<Vrx_parser_sva>("rx_parser_sva a_in_hold", [](Rx& b) {
    rx_result20(b);  // a result waits (never mind where it came from: a_no_spurious may fire)
    b->out_ready_i = 0;
    offer(b, true, 0xFF, false);  // in_ready_o low: the beat must stay
    b.cycle();
    offer(b, false, 0, false);
    b.cycle();
  });
  check_fires<Vrx_parser_sva>("rx_parser_sva a_in_keep_full", [](Rx& b) {
    offer(b, true, 0x0F, false);
    b.cycle();
  });
  check_fires<Vrx_parser_sva>("rx_parser_sva a_in_keep_prefix", [](Rx& b) {
    offer(b, true, 0x05, true);
    b.cycle();
  });
  check_fires<Vrx_parser_sva>("rx_parser_sva a_ready", [](Rx& b) {
    offer(b, true, 0xFF, false);
    b->in_ready_o = 0;  // nothing is waiting on the output
    b.cycle();
  });
  check_fires<Vrx_parser_sva>("rx_parser_sva a_out_hold", [](Rx& b) {
    datagram20(b);
    rx_result20(b);
    b->out_ready_i = 0;
    b->in_ready_o = 0;
    b.cycle();
    b->out_length_o = 21;
    b.cycle();
  });
  check_fires<Vrx_parser_sva>("rx_parser_sva a_latency", [](Rx& b) {
    datagram20(b);
    b.cycle();  // no result
  });
  check_fires<Vrx_parser_sva>("rx_parser_sva a_no_spurious", [](Rx& b) {
    b.cycle();
    rx_result20(b);
    b.cycle();
  });
  check_fires<Vrx_parser_sva>("rx_parser_sva a_length", [](Rx& b) {
    datagram20(b);
    rx_result20(b);
    b->out_length_o = 24;
    b->out_payload_length_o = 8;
    b.cycle();
  });
  check_fires<Vrx_parser_sva>("rx_parser_sva a_too_short", [](Rx& b) {
    b->out_ready_i = 1;
    offer(b, true, 0xFF, true);  // 8 bytes
    b.cycle();
    rx_result20(b);
    b->out_length_o = 8;
    b->out_payload_offset_o = 0;
    b->out_payload_length_o = 4;  // adds up: only the reason is wrong
    b.cycle();
  });
  check_fires<Vrx_parser_sva>("rx_parser_sva a_reason", [](Rx& b) {
    datagram20(b);
    rx_result20(b);
    b->out_reason_o = 7;
    b.cycle();
  });
  check_fires<Vrx_parser_sva>("rx_parser_sva a_well_formed", [](Rx& b) {
    datagram20(b);
    rx_result20(b);
    b->out_payload_length_o = 8;
    b.cycle();
  });
}

namespace {

using Icrc = Bench<Vicrc_check_sva>;

void icrc_result(Icrc& b, bool ok) {
  b->out_valid_o = 1;
  b->out_short_o = 0;
  b->out_icrc_o = 0x12345678;
  b->out_received_o = ok ? 0x12345678 : 0x87654321;
  b->out_ok_o = ok;
  b->in_ready_o = b->out_ready_i;
}

}  // namespace

// icrc_check_sva at Latency 2, as it is bound (README "Timing"): the result two cycles after the
// last beat.
TEST_CASE("sva: icrc_check_sva is quiet on a legal trace", "[rtl][sva]") {
  check_quiet<Vicrc_check_sva>([](Icrc& b) {
    datagram20(b);
    b.cycle();  // the result stage
    icrc_result(b, true);
    b.cycle();
    b->out_valid_o = 0;
    datagram20(b);
    b.cycle();
    icrc_result(b, false);
    b.cycle();
    b->out_valid_o = 0;
    offer(b, false, 0, false);
    b.cycle();
  });
}

TEST_CASE("sva: every icrc_check_sva assertion fires on a trace that breaks it", "[rtl][sva]") {
  check_fires<Vicrc_check_sva>("icrc_check_sva a_in_hold", [](Icrc& b) {
    icrc_result(b, true);
    b->out_ready_i = 0;
    offer(b, true, 0xFF, false);
    b->in_ready_o = 0;
    b.cycle();
    b->in_ip_udp_i[3] = 0xFF;  // the headers change while the first beat waits
    b.cycle();
  });
  check_fires<Vicrc_check_sva>("icrc_check_sva a_in_keep_full", [](Icrc& b) {
    offer(b, true, 0x7F, false);
    b.cycle();
  });
  check_fires<Vicrc_check_sva>("icrc_check_sva a_in_keep_prefix", [](Icrc& b) {
    offer(b, true, 0x80, true);
    b.cycle();
  });
  check_fires<Vicrc_check_sva>("icrc_check_sva a_ready", [](Icrc& b) {
    offer(b, true, 0xFF, false);
    b->in_ready_o = 0;  // nothing waits anywhere, yet the input is not ready
    b.cycle();
  });
  check_fires<Vicrc_check_sva>("icrc_check_sva a_out_hold", [](Icrc& b) {
    datagram20(b);
    b.cycle();
    b->out_ready_i = 0;
    icrc_result(b, true);
    b.cycle();
    b->out_valid_o = 0;
    b.cycle();
  });
  check_fires<Vicrc_check_sva>("icrc_check_sva a_latency", [](Icrc& b) {
    datagram20(b);
    b.cycle();
    b.cycle();  // no result two cycles after the last beat
  });
  check_fires<Vicrc_check_sva>("icrc_check_sva a_no_spurious", [](Icrc& b) {
    b.cycle();
    icrc_result(b, true);
    b.cycle();
  });
  check_fires<Vicrc_check_sva>("icrc_check_sva a_short", [](Icrc& b) {
    datagram20(b);
    b.cycle();
    icrc_result(b, false);
    b->out_short_o = 1;  // 20 bytes are not short
    b.cycle();
  });
  check_fires<Vicrc_check_sva>("icrc_check_sva a_ok", [](Icrc& b) {
    datagram20(b);
    b.cycle();
    icrc_result(b, false);
    b->out_ok_o = 1;  // computed != received, yet ok
    b.cycle();
  });
}

namespace {

using Mr = Bench<Vmr_table_sva>;

// The search outputs of a table with the entries 0..n-1 valid.
void mr_free(Mr& b, std::uint8_t valid_entries) {
  b->free_count_o = static_cast<std::uint8_t>(32 - valid_entries);
  b->free_any_o = valid_entries < 32;
  b->free_index_o = valid_entries < 32 ? valid_entries : std::uint8_t{0};
}

// Programs entry 0 with rkey 0x100 (index 0), owner 7; the search outputs follow.
void mr_program0(Mr& b) {
  mr_free(b, 0);
  b->wr_valid_i = 1;
  b->wr_entry_valid_i = 1;
  b->wr_index_i = 0;
  b->wr_rkey_i = 0x100;
  b->wr_owner_qpn_i = 7;
  b.cycle();
  b->wr_valid_i = 0;
  mr_free(b, 1);
}

// A lookup of entry 0 with this key and QP in this cycle.
void mr_lookup(Mr& b, std::uint32_t rkey, std::uint32_t qpn) {
  b->lk_valid_i = 1;
  b->lk_rkey_i = rkey;
  b->lk_qpn_i = qpn;
  b.cycle();
  b->lk_valid_i = 0;
}

void mr_answer(Mr& b, std::uint8_t status) {
  b->rsp_valid_o = 1;
  b->rsp_status_o = status;
}

}  // namespace

TEST_CASE("sva: mr_table_sva is quiet on a legal trace", "[rtl][sva]") {
  check_quiet<Vmr_table_sva>([](Mr& b) {
    mr_program0(b);
    mr_lookup(b, 0x100, 7);
    mr_answer(b, 4);  // bounds (not recomputed by the checker)
    mr_lookup(b, 0x101, 7);
    mr_answer(b, 1);  // no_entry: entry 1 is free
    mr_lookup(b, 0x200, 7);
    mr_answer(b, 2);  // key_mismatch
    mr_lookup(b, 0x100, 8);
    mr_answer(b, 3);  // owner_mismatch
    b->rd_valid_i = 1;
    b->rd_index_i = 0;
    b.cycle();
    b->rd_valid_i = 0;
    b->rsp_valid_o = 0;
    b->rsp_status_o = 0;
    b->rd_valid_o = 1;
    b->rd_entry_valid_o = 1;
    b->rd_rkey_o = 0x100;
    b->rd_owner_qpn_o = 7;
    b->rd_base_o = 0x1000;
    b.cycle();
    b->rd_valid_o = 0;
    b->rd_entry_valid_o = 0;
    b->rd_rkey_o = 0;
    b->rd_owner_qpn_o = 0;
    b->rd_base_o = 0;
    b.cycle();
  });
}

TEST_CASE("sva: every mr_table_sva assertion fires on a trace that breaks it", "[rtl][sva]") {
  check_fires<Vmr_table_sva>("mr_table_sva a_rsp_latency", [](Mr& b) {
    mr_free(b, 0);
    mr_lookup(b, 0x100, 7);
    b.cycle();  // no answer
  });
  check_fires<Vmr_table_sva>("mr_table_sva a_rsp_no_spurious", [](Mr& b) {
    mr_free(b, 0);
    b.cycle();
    mr_answer(b, 1);
    b.cycle();
  });
  check_fires<Vmr_table_sva>("mr_table_sva a_rsp_idle_ok", [](Mr& b) {
    mr_free(b, 0);
    b->rsp_status_o = 4;
    b.cycle();
  });
  check_fires<Vmr_table_sva>("mr_table_sva a_rsp_status", [](Mr& b) {
    mr_free(b, 0);
    mr_lookup(b, 0x100, 7);
    mr_answer(b, 6);
    b.cycle();
  });
  check_fires<Vmr_table_sva>("mr_table_sva a_rsp_first_checks", [](Mr& b) {
    mr_program0(b);
    mr_lookup(b, 0x200, 7);  // key mismatch ...
    mr_answer(b, 3);         // ... answered owner_mismatch
    b.cycle();
  });
  check_fires<Vmr_table_sva>("mr_table_sva a_rsp_later_checks", [](Mr& b) {
    mr_program0(b);
    mr_lookup(b, 0x100, 7);  // entry, key and owner match ...
    mr_answer(b, 1);         // ... answered no_entry
    b.cycle();
  });
  check_fires<Vmr_table_sva>("mr_table_sva a_rd_latency", [](Mr& b) {
    mr_free(b, 0);
    b->rd_valid_i = 1;
    b.cycle();
    b->rd_valid_i = 0;
    b.cycle();
  });
  check_fires<Vmr_table_sva>("mr_table_sva a_rd_no_spurious", [](Mr& b) {
    mr_free(b, 0);
    b.cycle();
    b->rd_valid_o = 1;
    b.cycle();
  });
  check_fires<Vmr_table_sva>("mr_table_sva a_rd_entry", [](Mr& b) {
    mr_program0(b);
    b->rd_valid_i = 1;
    b->rd_index_i = 0;
    b.cycle();
    b->rd_valid_i = 0;
    b->rd_valid_o = 1;
    b->rd_entry_valid_o = 1;
    b->rd_rkey_o = 0x120;  // not the key written
    b->rd_owner_qpn_o = 7;
    b.cycle();
  });
  check_fires<Vmr_table_sva>("mr_table_sva a_rd_zero", [](Mr& b) {
    mr_free(b, 0);
    b->rd_base_o = 1;  // no valid entry read, yet a field is not 0
    b.cycle();
  });
  check_fires<Vmr_table_sva>("mr_table_sva a_free", [](Mr& b) {
    mr_program0(b);
    mr_free(b, 0);  // still says entry 0 is free
    b.cycle();
  });
}
