// Streaming handlers (issue 17) from the host library: Session with Region::stream(), the C API's
// naa_create_streaming and naa-call --stream against naa-sim. The host's RC requester retransmits,
// so flow control (RNR NAKs) and reordering are exercised here; the assertions are on result
// bytes and naa-sim's handler counters, never on wall time.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "naa/host/naa.h"
#include "naa/host/session.hpp"
#include "naa/protocol/crc32.hpp"
#include "naa_sim.hpp"
#include "seed.hpp"
#include "session_against_sim.hpp"
#include "test_addresses.hpp"

using namespace std::chrono_literals;
using naa::host::Region;
using naa::testbench::NaaSim;
namespace host = naa::host;

namespace {

using naa::testbench::host_ip;
using naa::testbench::random_bytes;
using naa::testbench::sim_ip;

host::SessionOptions opts(std::uint8_t stream_fn, int m = 1) {
  return naa::testbench::stream_session_options(stream_fn, m);
}

std::uint64_t stat(NaaSim& sim, const std::string& key) {
  return NaaSim::stat_in(sim.stats_text(), key);
}

}  // namespace

TEST_CASE("streaming add1 on 1 MiB gives the same bytes as store-and-forward") {
  NaaSim sim(sim_ip());
  REQUIRE(sim.ready());
  const std::uint64_t seed = naa::testbench::test_seed();
  INFO("NAA_TEST_SEED=" << seed);
  const auto in = random_bytes(1 << 20, seed);
  auto stored = in;
  auto streamed = in;
  {
    host::Session s(opts(0, 1), {Region::inout(stored)});
    CHECK(s.call(1).return_code == 0);
  }
  {
    host::Session s(opts(1, 2), {Region::inout(streamed).stream()});
    const auto r = s.call(1);
    CHECK(r.return_code == 0);
    CHECK(r.bytes_received == in.size());
  }
  CHECK(streamed == stored);
  for (std::size_t i = 0; i < in.size(); i += 4099)
    REQUIRE(streamed[i] == static_cast<std::uint8_t>(in[i] + 1));
  CHECK(stat(sim, "kernel.dispatches") == 1);
  CHECK(stat(sim, "handler.payloads") == 256);
  CHECK(stat(sim, "handler.completions") == 1);
}

TEST_CASE("streaming sessions offer IRN only with irn_streaming, both give the bytes") {
  // docs/protocol.md 8.3 "Streaming on IRN": a Session on its own UdpRoce endpoint offers IRN
  // with STREAM regions when SessionOptions::irn_streaming is set; by default they stay on
  // go-back-N (flow control by RNR NAK).
  NaaSim sim(sim_ip());
  REQUIRE(sim.ready());
  const auto in = random_bytes(256 * 1024, 5);
  for (const bool irn : {true, false}) {
    INFO("irn_streaming=" << irn);
    auto io = in;
    host::SessionOptions o = opts(1, irn ? 1 : 2);
    if (irn) o.irn_streaming = true;  // false: the default
    const std::uint64_t before = stat(sim, "cm.irn_accepted");
    {
      host::Session s(o, {Region::inout(io).stream()});
      CHECK(s.call(1).return_code == 0);
    }
    CHECK(stat(sim, "cm.irn_accepted") - before == (irn ? 1U : 0U));
    for (std::size_t i = 0; i < in.size(); ++i)
      REQUIRE(io[i] == static_cast<std::uint8_t>(in[i] + 1));
  }
  CHECK(stat(sim, "handler.payloads") == 128);
  CHECK(stat(sim, "handler.duplicates") == 0);
}

TEST_CASE("streaming flow control: one HPU and 8 KiB of HPU memory RNR-NAK, nothing is lost") {
  // The C++ add1 kernel's cycle cost (the RTL kernel, naa-sim's default, is cheaper than a
  // packet interval at 100 Gb/s, so one HPU would keep up and flow control would never start).
  NaaSim sim(sim_ip(), {"--hpus", "1", "--hpu-mem", "8K", "--kernels=model"});
  REQUIRE(sim.ready());
  const auto in = random_bytes(256 * 1024, 3);
  auto io = in;
  host::SessionOptions o = opts(1);
  o.irn_streaming = false;  // RNR NAKs are go-back-N's flow control (IRN drops instead)
  host::Session s(o, {Region::inout(io).stream()});
  const auto r = s.call(1);
  CHECK(r.return_code == 0);
  for (std::size_t i = 0; i < in.size(); ++i)
    REQUIRE(io[i] == static_cast<std::uint8_t>(in[i] + 1));
  const std::string st = sim.stats_text();
  INFO(st);
  CHECK(NaaSim::stat_in(st, "handler.rnr_naks") > 0);
  CHECK(NaaSim::stat_in(st, "handler.flow_control_calls") == 1);
  CHECK(NaaSim::stat_in(st, "handler.completion_saw_flow_control") == 1);
  CHECK(NaaSim::stat_in(st, "handler.payloads") == 64);
  CHECK(NaaSim::stat_in(st, "handler.headers") == 1);
  CHECK(NaaSim::stat_in(st, "handler.completions") == 1);
  CHECK(NaaSim::stat_in(st, "handler.dropped_packets") == 0);
}

TEST_CASE("streaming 256 KiB under duplication and reordering: 1 header 64 payload 1 completion") {
  const std::uint64_t seed = naa::testbench::test_seed();
  INFO("NAA_TEST_SEED=" << seed);
  NaaSim sim(sim_ip(), {"--fault-rx", "dup=0.15,reorder=0.15", "--seed", std::to_string(seed)});
  REQUIRE(sim.ready());
  const auto in = random_bytes(256 * 1024, seed);
  auto io = in;
  host::Session s(opts(2), {Region::inout(io).stream()});
  CHECK(s.call(2).return_code == 0);
  for (std::size_t i = 0; i < in.size(); ++i)
    REQUIRE(io[i] == static_cast<std::uint8_t>(in[i] + 2));
  const std::string st = sim.stats_text();
  INFO(st);
  CHECK(NaaSim::stat_in(st, "net_port.fault_rx.dup") > 0);
  CHECK(NaaSim::stat_in(st, "net_port.fault_rx.reorder") > 0);
  CHECK(NaaSim::stat_in(st, "handler.headers") == 1);
  CHECK(NaaSim::stat_in(st, "handler.payloads") == 64);
  CHECK(NaaSim::stat_in(st, "handler.completions") == 1);
}

TEST_CASE("streaming crc32 from the C API (naa_create_streaming) and naa-call --stream") {
  NaaSim sim(sim_ip());
  REQUIRE(sim.ready());
  const auto in = random_bytes(200 * 1024 + 8, 9);
  std::vector<std::uint8_t> out(4);
  ::setenv("NAA_SPEC", (sim_ip() + ":12345:6:1").c_str(), 1);
  ::setenv("NAA_LOCAL_IP", host_ip(3).c_str(), 1);
  naa_param_t input{const_cast<std::uint8_t*>(in.data()), in.size(), false};
  naa_param_t output{out.data(), out.size(), false};
  const bool stream[1] = {true};
  naa_handle h{};
  REQUIRE(naa_create_streaming(6, &input, 1, &output, 1, stream, 0, &h) == 0);
  REQUIRE(naa_invoke(&h) == 0);
  naa_status status{};
  REQUIRE(naa_wait(&h, &status) == 0);
  CHECK(status.naa_error == NAA_SUCCESS);
  CHECK(naa::protocol::load_le32(out.data()) == naa::protocol::crc32(in));
  CHECK(naa_finalize(&h) == 0);
  CHECK(stat(sim, "handler.completions") == 1);

  const auto r =
      naa::testbench::run_program(NAA_CALL_PATH,
                                  {"--naa", sim_ip(), "--local", host_ip(4), "--fn", "add1",
                                   "--stream", "--inout", "gen:256K:1", "--verify"},
                                  {}, 60s);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("verify: ok") != std::string::npos);
  CHECK(stat(sim, "handler.completions") == 2);
  CHECK(stat(sim, "handler.payloads") == 51 + 64);
}
