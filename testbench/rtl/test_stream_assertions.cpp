// The kernel shell's protocol assertions (rtl/kernel_shell/naa_kernel_shell.sv.in, Verilated with
// --assert): naa_stream_assert on src and dst (rtl/prim/naa_stream_assert.sv) and
// naa_ap_ctrl_assert (rtl/kernel_shell/naa_ap_ctrl_assert.sv) fire on a driver that breaks the
// valid/ready rule or the ap_ctrl_hs handshake, and stay quiet on one that keeps them: add_const
// at W = 16 with dst held back, so that a src beat has to wait. The session records the failure
// instead of ending the program (RtlSessionOptions::fatal_assertions = false).
#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>

#include "naa/rtl/add_const_rtl.hpp"
#include "naa/rtl/kernel_driver.hpp"
#include "naa/rtl/kernel_port.hpp"
#include "naa/rtl/rtl_session.hpp"
#include "support/captured_stdout.hpp"

using namespace naa::rtl;

namespace {

constexpr std::uint32_t kWidth = 16;

StreamBeat beat(std::uint8_t fill) {
  StreamBeat b;
  for (std::uint32_t i = 0; i < kWidth; ++i)
    b.data[i] = static_cast<std::uint8_t>(fill + i);
  b.keep = keep_mask(kWidth);
  b.last = false;
  return b;
}

struct Dut {
  std::shared_ptr<RtlSession> session =
      std::make_shared<RtlSession>(RtlSessionOptions{{}, 1, 4000, /*fatal_assertions=*/false});
  std::unique_ptr<KernelPort> port;

  // Reset, then a call accepted (ap_start until ap_ready): src is taken from the next cycle on.
  Dut() {
    RtlOptions options;
    options.session = session;
    port = make_add_const_rtl(kWidth, options);
    REQUIRE(port != nullptr);
    reset_kernel(*port);
    KernelInputs in;
    in.ap_start = true;
    in.user = 1;
    REQUIRE(port->step(in).ap_ready);
  }

  // One cycle of the running call with dst held back (dst_TREADY = 0).
  KernelOutputs offer(bool valid, const StreamBeat& b, bool ap_start = false) {
    KernelInputs in;
    in.ap_start = ap_start;
    in.user = 1;
    in.src_valid = valid;
    in.src = b;
    in.dst_ready = false;
    return port->step(in);
  }
};

}  // namespace

TEST_CASE("stream assertions: a src beat waiting for ready, then dropped, fails the assertion") {
  Dut dut;
  // Beat A moves into the empty output register; the register is then full and held, so beat B
  // waits (src_TREADY = 0).
  REQUIRE(dut.offer(true, beat(0x10)).src_ready);
  REQUIRE_FALSE(dut.offer(true, beat(0x20)).src_ready);
  CHECK_FALSE(dut.session->assertion_failed());
  // The driver withdraws B before it moved: the valid/ready rule is broken.
  (void)dut.offer(false, StreamBeat{});
  CHECK(dut.session->assertion_failed());
}

TEST_CASE("stream assertions: a waiting src beat whose payload changes fails the assertion") {
  Dut dut;
  REQUIRE(dut.offer(true, beat(0x10)).src_ready);
  REQUIRE_FALSE(dut.offer(true, beat(0x20)).src_ready);
  CHECK_FALSE(dut.session->assertion_failed());
  (void)dut.offer(true, beat(0x30));  // TVALID stays high, TDATA does not
  CHECK(dut.session->assertion_failed());
}

TEST_CASE("stream assertions: ap_start withdrawn before ap_ready fails the ap_ctrl_hs assertion") {
  Dut dut;
  // The call runs, so a new ap_start is not accepted (ap_ready low) ...
  REQUIRE_FALSE(dut.offer(false, StreamBeat{}, /*ap_start=*/true).ap_ready);
  CHECK_FALSE(dut.session->assertion_failed());
  // ... and must stay until it is: dropping it breaks ap_ctrl_hs.
  (void)dut.offer(false, StreamBeat{}, /*ap_start=*/false);
  CHECK(dut.session->assertion_failed());
}

TEST_CASE("stream assertions: a driver that keeps the rules under back-pressure passes") {
  Dut dut;
  REQUIRE(dut.offer(true, beat(0x10)).src_ready);
  for (int i = 0; i < 8; ++i)
    REQUIRE_FALSE(dut.offer(true, beat(0x20)).src_ready);  // B waits, unchanged
  // Release dst: B moves in; then the last beat, and the call runs to ap_done with dst ready.
  KernelInputs in;
  in.user = 1;
  in.src_valid = true;
  in.src = beat(0x20);
  in.dst_ready = true;
  REQUIRE(dut.port->step(in).src_ready);
  in.src = beat(0x30);
  in.src.last = true;
  REQUIRE(dut.port->step(in).src_ready);
  in.src_valid = false;
  bool done = false;
  for (int c = 0; c < 10 && !done; ++c)
    done = dut.port->step(in).ap_done;
  CHECK(done);
  // A driver that holds ap_start until ap_ready: the next call is accepted, no assertion.
  in.ap_start = true;
  bool ready = false;
  for (int c = 0; c < 10 && !ready; ++c)
    ready = dut.port->step(in).ap_ready;
  CHECK(ready);
  CHECK_FALSE(dut.session->assertion_failed());
}

// Illegal input (issue 25 item 4): the kernel contract's own rules (docs/rtl/kernel-shell.md
// "Streams", "Control"), which the built-in kernels' bind files check (naa_kernel_sva,
// rtl/kernel_shell/naa_kernel_sva.sv): each breach fails its assertion, named in Verilator's
// message, instead of the kernel taking it silently.
TEST_CASE("stream assertions: a src beat before the last that is not full fails naa_kernel_sva") {
  Dut dut;
  StreamBeat b = beat(0x10);
  b.keep = keep_mask(kWidth - 1);
  const std::string out = naa::testbench::rtl::captured_stdout([&] {
    REQUIRE(dut.offer(true, b).src_ready);
    (void)dut.offer(false, StreamBeat{});
  });
  INFO("Verilator printed:\n" << out);
  CHECK(dut.session->assertion_failed());
  CHECK(out.find("naa_kernel_sva a_src_keep_full:") != std::string::npos);
}

TEST_CASE("stream assertions: a last src beat whose TKEEP is no prefix fails naa_kernel_sva") {
  Dut dut;
  StreamBeat b = beat(0x10);
  b.keep = keep_mask(kWidth) & ~std::uint64_t{4};
  b.last = true;
  const std::string out = naa::testbench::rtl::captured_stdout([&] {
    REQUIRE(dut.offer(true, b).src_ready);
    (void)dut.offer(false, StreamBeat{});
  });
  INFO("Verilator printed:\n" << out);
  CHECK(dut.session->assertion_failed());
  CHECK(out.find("naa_kernel_sva a_src_keep_prefix:") != std::string::npos);
}

TEST_CASE("stream assertions: user changed while ap_start waits fails naa_kernel_sva") {
  Dut dut;
  // The call runs, so a new ap_start is not accepted; ap_start stays (naa_ap_ctrl_assert is
  // content) but user changes before ap_ready.
  const std::string out = naa::testbench::rtl::captured_stdout([&] {
    KernelInputs in;
    in.ap_start = true;
    in.user = 1;
    REQUIRE_FALSE(dut.port->step(in).ap_ready);
    in.user = 2;
    (void)dut.port->step(in);
  });
  INFO("Verilator printed:\n" << out);
  CHECK(dut.session->assertion_failed());
  CHECK(out.find("naa_kernel_sva a_start_hold:") != std::string::npos);
}
