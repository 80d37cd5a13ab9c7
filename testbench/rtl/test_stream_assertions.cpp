// The stream port assertions (rtl/prim/naa_stream_assert.sv, Verilated with --assert) fire on a
// driver that breaks the valid/ready rule and stay quiet on one that keeps it: add_const at W = 16
// with its output held back, so that a beat has to wait on the input port. The session records
// the failure instead of ending the program (RtlSessionOptions::fatal_assertions = false).
#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>

#include "naa/rtl/add_const.hpp"
#include "naa/rtl/add_const_rtl.hpp"
#include "naa/rtl/rtl_session.hpp"

using namespace naa::rtl;

namespace {

constexpr std::uint32_t kWidth = 16;

StreamBeat beat(std::uint8_t fill) {
  StreamBeat b;
  for (std::uint32_t i = 0; i < kWidth; ++i)
    b.data[i] = static_cast<std::uint8_t>(fill + i);
  b.keep = keep_mask(kWidth);
  b.last = true;
  return b;
}

struct Dut {
  std::shared_ptr<RtlSession> session =
      std::make_shared<RtlSession>(RtlSessionOptions{{}, 1, 4000, /*fatal_assertions=*/false});
  std::unique_ptr<AddConstPort> port;

  Dut() {
    RtlOptions options;
    options.session = session;
    port = make_add_const_rtl(kWidth, options);
    REQUIRE(port != nullptr);
    AddConstInputs in;
    in.rst_n = false;
    (void)port->step(in);
  }

  // One cycle with the output held back (out_ready = 0).
  AddConstOutputs offer(bool valid, const StreamBeat& b) {
    AddConstInputs in;
    in.in_valid = valid;
    in.in = b;
    in.addend = 1;
    in.out_ready = false;
    return port->step(in);
  }
};

}  // namespace

TEST_CASE("stream assertions: a beat waiting for ready, then dropped, fails the assertion") {
  Dut dut;
  // Cycle 1: the output register is empty, beat A moves in. Cycle 2: the register is full and
  // held, so beat B waits (in_ready = 0).
  REQUIRE(dut.offer(true, beat(0x10)).in_ready);
  REQUIRE_FALSE(dut.offer(true, beat(0x20)).in_ready);
  CHECK_FALSE(dut.session->assertion_failed());
  // Cycle 3: the driver withdraws B before it moved: the valid/ready rule is broken.
  (void)dut.offer(false, StreamBeat{});
  CHECK(dut.session->assertion_failed());
}

TEST_CASE("stream assertions: a waiting beat whose payload changes fails the assertion") {
  Dut dut;
  REQUIRE(dut.offer(true, beat(0x10)).in_ready);
  REQUIRE_FALSE(dut.offer(true, beat(0x20)).in_ready);
  CHECK_FALSE(dut.session->assertion_failed());
  (void)dut.offer(true, beat(0x30));  // valid stays high, the data does not
  CHECK(dut.session->assertion_failed());
}

TEST_CASE("stream assertions: a driver that keeps the rule under back-pressure passes") {
  Dut dut;
  REQUIRE(dut.offer(true, beat(0x10)).in_ready);
  for (int i = 0; i < 8; ++i)
    REQUIRE_FALSE(dut.offer(true, beat(0x20)).in_ready);  // B waits, unchanged
  // Release the output: B moves in, then the driver may go idle.
  AddConstInputs in;
  in.in_valid = true;
  in.in = beat(0x20);
  in.addend = 1;  // part of the beat (sampled with it): unchanged too
  in.out_ready = true;
  REQUIRE(dut.port->step(in).in_ready);
  (void)dut.offer(false, StreamBeat{});
  (void)dut.offer(false, StreamBeat{});
  CHECK_FALSE(dut.session->assertion_failed());
}
