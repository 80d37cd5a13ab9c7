// An input beat that breaks a receive block's stream contract (every beat but the last full, the
// last's keep a prefix; docs/rtl/README.md "Assertions"), offered once after a reset: the block's
// bound checker must fail, with Verilator's message naming the assertion, instead of the beat
// being taken silently. Shared by the rx_parser and icrc_check testbenches.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "naa/rtl/rtl_session.hpp"
#include "naa/rtl/stream.hpp"
#include "support/captured_stdout.hpp"

namespace naa::testbench::rtl {

struct IllegalBeat {
  const char* assertion;  // "<checker> <assertion>", as Verilator prints it
  std::uint32_t bytes;    // keep = a prefix of this many bytes ...
  std::uint64_t hole;     // ... with these bits cleared
  bool last;
};

// make(options) builds the block (a port with Inputs {rst_n, in_valid, in, out_ready}) in the
// session it is given.
template <class Make>
void check_illegal_beat(const IllegalBeat& c, Make make) {
  auto session =
      std::make_shared<naa::rtl::RtlSession>(naa::rtl::RtlSessionOptions{{}, 1, 4000, false});
  naa::rtl::RtlOptions options;
  options.session = session;
  const auto port = make(options);
  REQUIRE(port != nullptr);
  const std::string out = captured_stdout([&] {
    typename std::remove_reference_t<decltype(*port)>::Inputs in;
    in.rst_n = false;
    port->step(in);
    in.rst_n = true;
    in.out_ready = true;
    port->step(in);
    port->step(in);
    in.in_valid = true;
    in.in.keep = naa::rtl::keep_mask(c.bytes) & ~c.hole;
    in.in.last = c.last;
    port->step(in);
    in.in_valid = false;
    port->step(in);
  });
  INFO("Verilator printed:\n" << out);
  CHECK(session->assertion_failed());
  CHECK(out.find(std::string(c.assertion) + ":") != std::string::npos);
}

}  // namespace naa::testbench::rtl
