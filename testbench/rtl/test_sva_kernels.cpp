// The SVA checkers of the kernels (rtl/kernel_shell/naa_kernel_sva.sv, the kernel contract the
// built-ins keep, and rtl/<kernel>/<kernel>_sva.sv; docs/rtl/README.md "Assertions"), each
// Verilated alone at W = 8 with its inputs as ports: every assertion fails on a trace that breaks
// it (named in Verilator's message), and legal traces pass. As test_sva.cpp for the other blocks.
#include <catch2/catch.hpp>

#include <cstdint>

#include "Vadd_const_sva.h"
#include "Vcrc32_sva.h"
#include "Vsum_u64_sva.h"
#include "Vvadd_i32_sva.h"
#include "support/sva_bench.hpp"

using namespace naa::testbench::rtl;

namespace {

// ---- The kernels (W = 8). A call of one src packet per SrcPackets (two beats: 8 bytes, then
// 4) and the kernel's outputs as a trace sets them.

template <class B>
void k_idle(B& b) {
  b->ap_start = 0;
  b->ap_idle = 1;
  b->ap_ready = 0;
  b->ap_done = 0;
  b->src_TVALID = 0;
  b->src_TREADY = 0;
  b->dst_TVALID = 0;
  b->dst_TREADY = 1;
}

// The call is offered and accepted in one cycle; the next cycle it runs.
template <class B>
void k_start(B& b) {
  k_idle(b);
  b->ap_start = 1;
  b->ap_ready = 1;
  b.cycle();
  b->ap_start = 0;
  b->ap_ready = 0;
  b->ap_idle = 0;
}

template <class B>
void k_src(B& b, bool valid, bool ready, std::uint8_t keep, bool last) {
  b->src_TVALID = valid;
  b->src_TREADY = ready;
  b->src_TKEEP = keep;
  b->src_TLAST = last;
  b->src_TDATA = 0x1122334455667788ULL;
}

template <class B>
void k_dst(B& b, bool valid, std::uint8_t keep, bool last) {
  b->dst_TVALID = valid;
  b->dst_TKEEP = keep;
  b->dst_TLAST = last;
  b->dst_TDATA = keep == 0x0F ? 0x55667788ULL : 0x1122334455667788ULL;
}

// ap_done for one cycle, then idle.
template <class B>
void k_done(B& b) {
  k_src(b, false, false, 0, false);
  k_dst(b, false, 0, false);
  b->ap_done = 1;
  b.cycle();
  k_idle(b);
  b.cycle();
}

using Add = Bench<Vadd_const_sva>;

// add_const: each src beat on dst the next cycle (dst always ready).
void add_call(Add& b) {
  k_start(b);
  k_src(b, true, true, 0xFF, false);
  b.cycle();
  k_dst(b, true, 0xFF, false);
  k_src(b, true, true, 0x0F, true);
  b.cycle();
  k_dst(b, true, 0x0F, true);
  k_src(b, false, false, 0, false);
  b.cycle();
  k_done(b);
}

}  // namespace

TEST_CASE("sva: the kernel checkers are quiet on legal traces", "[rtl][sva]") {
  check_quiet<Vadd_const_sva>([](Add& b) {
    add_call(b);
    add_call(b);
  });
  // crc32 at W = 8: the result beat log2(8) + 2 = 5 cycles after the last src beat.
  check_quiet<Vcrc32_sva>([](Bench<Vcrc32_sva>& b) {
    k_start(b);
    k_src(b, true, true, 0xFF, false);
    b.cycle();
    k_src(b, true, true, 0x0F, true);
    b.cycle();
    k_src(b, false, false, 0, false);
    for (int c = 1; c < 5; ++c)
      b.cycle();
    k_dst(b, true, 0x0F, true);
    b.cycle();
    k_done(b);
  });
  // vadd_i32 (MaxBytes 16): in0 of 12 bytes, in1 of 12 bytes, out0 of 12 bytes one cycle
  // behind in1.
  check_quiet<Vvadd_i32_sva>([](Bench<Vvadd_i32_sva>& b) {
    k_start(b);
    k_src(b, true, true, 0xFF, false);
    b.cycle();
    k_src(b, true, true, 0x0F, true);
    b.cycle();
    k_src(b, false, false, 0, false);
    b.cycle();  // the buffer's first entry is read
    k_src(b, true, true, 0xFF, false);
    b.cycle();
    k_dst(b, true, 0xFF, false);
    k_src(b, true, true, 0x0F, true);
    b.cycle();
    k_dst(b, true, 0x0F, true);
    k_src(b, false, false, 0, false);
    b.cycle();
    k_done(b);
  });
}

TEST_CASE("sva: every naa_kernel_sva assertion fires on a trace that breaks it", "[rtl][sva]") {
  check_fires<Vadd_const_sva>("naa_kernel_sva a_src_hold", [](Add& b) {
    k_start(b);
    k_src(b, true, false, 0xFF, false);
    b.cycle();
    b->src_TKEEP = 0x0F;
    b->src_TLAST = 1;
    b.cycle();
  });
  check_fires<Vadd_const_sva>("naa_kernel_sva a_src_keep_full", [](Add& b) {
    k_start(b);
    k_src(b, true, false, 0x7F, false);
    b.cycle();
  });
  check_fires<Vadd_const_sva>("naa_kernel_sva a_src_keep_prefix", [](Add& b) {
    k_start(b);
    k_src(b, true, false, 0xF0, true);
    b.cycle();
  });
  check_fires<Vadd_const_sva>("naa_kernel_sva a_start_hold", [](Add& b) {
    k_start(b);
    b->ap_start = 1;  // offered while the call runs: not ready ...
    b.cycle();
    b->user = 5;  // ... and user changes before it is
    b.cycle();
  });
  check_fires<Vadd_const_sva>("naa_kernel_sva a_dst_hold", [](Add& b) {
    k_start(b);
    k_src(b, true, true, 0xFF, false);
    b.cycle();
    k_src(b, false, false, 0, false);
    k_dst(b, true, 0xFF, false);
    b->dst_TREADY = 0;
    b.cycle();
    k_dst(b, false, 0, false);
    b.cycle();
  });
  check_fires<Vadd_const_sva>("naa_kernel_sva a_dst_keep_full", [](Add& b) {
    k_start(b);
    k_src(b, true, true, 0xFF, false);
    b.cycle();
    k_dst(b, true, 0x3F, false);
    b.cycle();
  });
  check_fires<Vadd_const_sva>("naa_kernel_sva a_dst_keep_prefix", [](Add& b) {
    k_start(b);
    k_src(b, true, true, 0xFF, true);
    b.cycle();
    k_dst(b, true, 0xFE, true);
    b.cycle();
  });
  check_fires<Vadd_const_sva>("naa_kernel_sva a_ready", [](Add& b) {
    k_idle(b);
    b->ap_start = 1;  // offered while idle, not accepted
    b.cycle();
  });
  check_fires<Vadd_const_sva>("naa_kernel_sva a_done", [](Add& b) {
    k_start(b);
    b->ap_done = 1;
    b.cycle();
    b.cycle();  // two cycles
  });
  check_fires<Vadd_const_sva>("naa_kernel_sva a_done_busy", [](Add& b) {
    k_start(b);
    b->ap_done = 1;
    b->ap_idle = 1;
    b.cycle();
  });
  check_fires<Vadd_const_sva>("naa_kernel_sva a_src_in_call", [](Add& b) {
    k_idle(b);
    b->src_TREADY = 1;
    b.cycle();
  });
  check_fires<Vadd_const_sva>("naa_kernel_sva a_dst_in_call", [](Add& b) {
    k_idle(b);
    k_dst(b, true, 0xFF, true);
    b.cycle();
  });
  check_fires<Vadd_const_sva>("naa_kernel_sva a_done_complete", [](Add& b) {
    k_start(b);
    k_src(b, true, true, 0xFF, true);
    b.cycle();
    k_done(b);  // its dst packet never came
  });
  check_fires<Vadd_const_sva>("naa_kernel_sva a_dst_one_packet", [](Add& b) {
    add_call(b);
    b->ap_idle = 0;  // pretend a call is still running: a second packet
    k_dst(b, true, 0x0F, true);
    b.cycle();
  });
  check_fires<Vvadd_i32_sva>("naa_kernel_sva a_return", [](Bench<Vvadd_i32_sva>& b) {
    k_start(b);
    b->ap_return = 0x80;
    b->ap_done = 1;
    b.cycle();
  });
  check_fires<Vadd_const_sva>("naa_kernel_sva a_return_zero", [](Add& b) {
    k_start(b);
    b->ap_return = 0x10;
    b->ap_done = 1;
    b.cycle();
  });
}

TEST_CASE("sva: every kernel's own assertions fire on a trace that breaks them", "[rtl][sva]") {
  check_fires<Vadd_const_sva>("add_const_sva a_beat_latency", [](Add& b) {
    k_start(b);
    k_src(b, true, true, 0x0F, true);
    b.cycle();
    k_src(b, false, false, 0, false);
    k_dst(b, true, 0xFF, true);  // TKEEP is not the src beat's
    b.cycle();
  });
  check_fires<Vadd_const_sva>("add_const_sva a_no_spurious", [](Add& b) {
    k_start(b);
    b.cycle();
    k_dst(b, true, 0xFF, false);
    b.cycle();
  });
  using Crc = Bench<Vcrc32_sva>;
  const auto crc_last = [](Crc& b) {
    k_idle(b);
    for (int c = 0; c < 5; ++c)
      b.cycle();  // the latency check looks back 5 cycles: none of them in reset
    k_start(b);
    k_src(b, true, true, 0x0F, true);
    b.cycle();
    k_src(b, false, false, 0, false);
  };
  check_fires<Vcrc32_sva>("naa_kernel_sva a_result_latency", [&](Crc& b) {
    crc_last(b);
    for (int c = 0; c < 6; ++c)
      b.cycle();  // no result beat
  });
  check_fires<Vcrc32_sva>("naa_kernel_sva a_result_no_spurious", [&](Crc& b) {
    crc_last(b);
    k_dst(b, true, 0x0F, true);  // 1 cycle after the last beat, not 5
    b.cycle();
  });
  check_fires<Vsum_u64_sva>("naa_kernel_sva a_result_beat", [](Bench<Vsum_u64_sva>& b) {
    k_start(b);
    k_dst(b, true, 0x0F, true);  // sum_u64's result has 8 bytes
    b.cycle();
  });
  using Vadd = Bench<Vvadd_i32_sva>;
  const auto in0 = [](Vadd& b, std::uint8_t keep) {
    k_start(b);
    k_src(b, true, true, keep, true);
    b.cycle();
    k_src(b, false, false, 0, false);
    b.cycle();
  };
  check_fires<Vvadd_i32_sva>("vadd_i32_sva a_out0_latency", [&](Vadd& b) {
    in0(b, 0xFF);
    k_src(b, true, true, 0xFF, true);  // in1
    b.cycle();
    k_src(b, false, false, 0, false);
    b.cycle();  // no out0 beat
  });
  check_fires<Vvadd_i32_sva>("vadd_i32_sva a_no_spurious", [&](Vadd& b) {
    k_start(b);
    k_dst(b, true, 0xFF, true);  // during in0
    b.cycle();
    b.cycle();
  });
  check_fires<Vvadd_i32_sva>("vadd_i32_sva a_refused_empty", [&](Vadd& b) {
    k_start(b);
    for (int beat = 0; beat < 3; ++beat) {  // 24 bytes > MaxBytes 16
      k_src(b, true, true, 0xFF, beat == 2);
      b.cycle();
    }
    k_src(b, true, true, 0xFF, true);
    b.cycle();
    k_src(b, false, false, 0, false);
    k_dst(b, true, 0xFF, true);  // refused, yet 8 bytes of out0
    b.cycle();
    k_dst(b, false, 0, false);
    b->ap_return = 0x10;
    b->ap_done = 1;
    b.cycle();
  });
  check_fires<Vvadd_i32_sva>("vadd_i32_sva a_return", [&](Vadd& b) {
    in0(b, 0xFF);  // 8 bytes fit: 0x10 is wrong
    b->ap_return = 0x10;
    b->ap_done = 1;
    b.cycle();
  });
}
