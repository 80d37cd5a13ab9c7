// The header handler's user header, the sPIN return codes and the counters (seed 004 3.2.1, B.3,
// B.6; docs/spin.md "User headers", "Return codes", "Counters"), with handlers/header_check.c on
// the model, RTL and lockstep cores: what the header handler saw, what the payload handlers got,
// the bytes in NAA memory, the completion's counts and the connection's counters.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "naa/host/session.hpp"
#include "naa/protocol/bytes.hpp"
#include "naa_sim.hpp"
#include "seed.hpp"
#include "session_against_sim.hpp"
#include "test_addresses.hpp"

using namespace std::chrono_literals;
using naa::host::Region;
using naa::testbench::NaaSim;
namespace host = naa::host;

namespace {

using naa::testbench::random_bytes;
using naa::testbench::sim_ip;

constexpr std::uint8_t kFn = 32;  // header_check.c
constexpr std::uint32_t kMagic = 0x48445221;
constexpr std::size_t kUserHeader = 16;  // sizeof(user_hdr_t)
enum Action : std::uint32_t {
  kProcess = 0,
  kDrop = 1,
  kProceed = 2,
  kProcessPending = 3,
  kSetCounter = 4,
  kPayloadProceed = 5
};

// header_check.c's report_t, word by word.
struct Report {
  std::uint32_t header_runs, header_length, user_hdr_length, message_offset, magic, action,
      payload_runs, payload_bytes, first_payload_offset, completion_bytes, completion_dropped,
      ct0_success, ct1_success, ct1_failure, bad_handle_result, user_hdr_present;
};
constexpr std::size_t kReportBytes = sizeof(Report);

Report report_of(const std::vector<std::uint8_t>& b) {
  REQUIRE(b.size() == kReportBytes);
  std::uint32_t w[kReportBytes / 4];
  for (std::size_t i = 0; i < kReportBytes / 4; ++i)
    w[i] = naa::protocol::load_le32(b.data() + 4 * i);
  Report r{};
  std::copy(std::begin(w), std::end(w), reinterpret_cast<std::uint32_t*>(&r));
  return r;
}

// The message: a user header {magic, action, value, 0} and then `data`.
void fill(std::vector<std::uint8_t>& io, const std::vector<std::uint8_t>& data, Action action,
          std::uint32_t value) {
  std::copy(data.begin(), data.end(), io.begin());
  naa::protocol::store_le32(io.data(), kMagic);
  naa::protocol::store_le32(io.data() + 4, action);
  naa::protocol::store_le32(io.data() + 8, value);
  naa::protocol::store_le32(io.data() + 12, 0);
}

std::vector<std::uint8_t> read_file(const char* path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f);
  return {std::istreambuf_iterator<char>(f), {}};
}

}  // namespace

TEST_CASE("spin: header handlers get the user header and return PROCESS_DATA DROP or PROCEED") {
  const std::uint64_t seed = naa::testbench::test_seed();
  INFO("NAA_TEST_SEED=" << seed);
  for (const std::string mode : {"model", "rtl", "lockstep"}) {
    SECTION(mode) {
      NaaSim sim(sim_ip(), {"--handler", SPIN_HEADER_CHECK_ELF, "--hpu=" + mode, "--hpus", "4"});
      REQUIRE(sim.ready());
      const std::uint8_t key = static_cast<std::uint8_t>(0x3C ^ (seed >> 8));
      const std::size_t size = 3 * 4096 + 100;  // 4 packets of the 4096-byte MTU
      const std::uint32_t body = size - kUserHeader;
      const auto data = random_bytes(size, seed);
      std::vector<std::uint8_t> io(size), out(kReportBytes);
      host::Session s(naa::testbench::stream_session_options(kFn, 1, key, 60000ms),
                      {Region::inout(io).stream(), Region::output(out)});
      const auto call = [&](Action a, std::uint32_t value, std::uint32_t want_rc = 0) {
        fill(io, data, a, value);
        const std::vector<std::uint8_t> sent = io;
        REQUIRE(s.call(kFn).return_code == want_rc);
        return sent;
      };
      const auto header_intact = [&](const std::vector<std::uint8_t>& sent) {
        // The header handler DMAed the user header to the message's place unchanged.
        return std::equal(sent.begin(), sent.begin() + kUserHeader, io.begin());
      };
      const auto xored = [&](const std::vector<std::uint8_t>& sent) {
        for (std::size_t i = kUserHeader; i < size; ++i) {
          if (io[i] != static_cast<std::uint8_t>(sent[i] ^ key)) return false;
        }
        return true;
      };

      // PROCESS_DATA: the payload handlers see the message behind the user header.
      auto sent = call(kProcess, 0);
      Report r = report_of(out);
      CHECK(r.header_runs == 1);
      CHECK(r.user_hdr_present == 1);
      CHECK(r.user_hdr_length == kUserHeader);
      CHECK(r.header_length == 4096);  // the header packet
      CHECK(r.message_offset == 0);
      CHECK(r.magic == kMagic);
      CHECK(r.action == kProcess);
      CHECK(r.payload_runs == 4);
      CHECK(r.payload_bytes == body);
      CHECK(r.first_payload_offset == kUserHeader);
      CHECK(r.completion_bytes == body);
      CHECK(r.completion_dropped == 0);
      CHECK(r.ct0_success == 1);
      CHECK(r.ct1_success == body);
      CHECK(r.ct1_failure == 0);
      CHECK(r.bad_handle_result == 0xFFFFFFFFU);
      CHECK(header_intact(sent));
      CHECK(xored(sent));

      // PROCESS_DATA_PENDING: the same (the NAA answers every call). The counters go on across
      // calls while the handler state restarts.
      sent = call(kProcessPending, 0);
      r = report_of(out);
      CHECK(r.header_runs == 1);
      CHECK(r.payload_bytes == body);
      CHECK(r.ct0_success == 2);
      CHECK(r.ct1_success == 2 * body);
      CHECK(xored(sent));

      // PtlHandlerCTSet in the header handler, then the payload handlers' increments.
      call(kSetCounter, 1000);
      r = report_of(out);
      CHECK(r.ct0_success == 3);
      CHECK(r.ct1_success == 1000 + body);
      CHECK(r.ct1_failure == 7);

      // DROP: no payload handler runs, the message's bytes are dropped; the header handler's own
      // DMA still happened.
      sent = call(kDrop, 0);
      r = report_of(out);
      CHECK(r.header_runs == 1);
      CHECK(r.payload_runs == 0);
      CHECK(r.completion_bytes == 0);
      CHECK(r.completion_dropped == body);
      CHECK(r.ct0_success == 4);
      CHECK(r.ct1_success == 1000 + body);  // no payload handler counted
      CHECK(header_intact(sent));

      // PROCEED: no payload handler; the message, user header included, lands in NAA memory as a
      // plain RDMA WRITE (the completion handler puts it back).
      sent = call(kProceed, 0);
      r = report_of(out);
      CHECK(r.payload_runs == 0);
      CHECK(r.completion_bytes == 0);
      CHECK(r.completion_dropped == 0);
      CHECK(r.ct0_success == 5);
      CHECK(io == sent);

      // PROCEED is not a payload handler's code: the call fails (0x7F).
      call(kPayloadProceed, 0, 0x7F);

      const std::string st = sim.stats_text();
      INFO(st);
      CHECK(NaaSim::stat_in(st, "handler.dropped_messages") == 1);
      CHECK(NaaSim::stat_in(st, "handler.proceeded_messages") == 1);
      CHECK(NaaSim::stat_in(st, "handler.proceeded_packets") == 4);
      CHECK(NaaSim::stat_in(st, "hpu.fn32.traps") == 0);
      if (mode == "lockstep") CHECK(NaaSim::stat_in(st, "rtl.lockstep.divergences") == 0);
    }
  }
}

TEST_CASE("spin: three messages in one call each go their header handler's way") {
  // Three STREAM regions, so three messages (RDMA WRITEs) per call: the first PROCEEDs, the
  // second is processed, the third DROPped; each packet must follow its own message's header.
  const std::uint64_t seed = naa::testbench::test_seed();
  INFO("NAA_TEST_SEED=" << seed);
  NaaSim sim(sim_ip(), {"--handler", SPIN_HEADER_CHECK_ELF, "--hpus", "4"});
  REQUIRE(sim.ready());
  const std::uint8_t key = 0xC3;
  const std::size_t sizes[3] = {3 * 4096 + 100, 2 * 4096 + 7, 5000};
  const Action actions[3] = {kProceed, kProcess, kDrop};
  std::vector<std::uint8_t> io[3], sent[3], out(kReportBytes);
  for (int i = 0; i < 3; ++i) {
    io[i].resize(sizes[i]);
    fill(io[i], random_bytes(sizes[i], seed + static_cast<std::uint64_t>(i)), actions[i], 0);
    sent[i] = io[i];
  }
  host::Session s(naa::testbench::stream_session_options(kFn, 1, key, 60000ms),
                  {Region::inout(io[0]).stream(), Region::inout(io[1]).stream(),
                   Region::inout(io[2]).stream(), Region::output(out)});
  REQUIRE(s.call(kFn).return_code == 0);
  const Report r = report_of(out);
  CHECK(r.header_runs == 3);
  CHECK(r.ct0_success == 3);
  CHECK(r.payload_runs == 3);  // the second message's packets only
  CHECK(r.payload_bytes == sizes[1] - kUserHeader);
  CHECK(r.completion_bytes == sizes[1] - kUserHeader);
  CHECK(r.completion_dropped == sizes[2] - kUserHeader);
  CHECK(io[0] == sent[0]);  // PROCEED: deposited as sent
  CHECK(std::equal(sent[1].begin(), sent[1].begin() + kUserHeader, io[1].begin()));
  bool xored = true;
  for (std::size_t i = kUserHeader; i < sizes[1]; ++i)
    xored = xored && io[1][i] == static_cast<std::uint8_t>(sent[1][i] ^ key);
  CHECK(xored);
  CHECK(std::equal(sent[2].begin(), sent[2].begin() + kUserHeader, io[2].begin()));
  const std::string st = sim.stats_text();
  INFO(st);
  CHECK(NaaSim::stat_in(st, "handler.proceeded_packets") == 4);
  CHECK(NaaSim::stat_in(st, "handler.dropped_messages") == 1);
}

TEST_CASE("spin: a message shorter than the user header and a new connection's counters") {
  NaaSim sim(sim_ip(), {"--handler", SPIN_HEADER_CHECK_ELF, "--hpus", "2"});
  REQUIRE(sim.ready());
  // A call with one full message on connection 1 counts it in counter 0.
  {
    std::vector<std::uint8_t> io(64), out(kReportBytes);
    fill(io, std::vector<std::uint8_t>(64, 1), kProcess, 0);
    host::Session s(naa::testbench::stream_session_options(kFn, 1, 0, 60000ms),
                    {Region::inout(io).stream(), Region::output(out)});
    REQUIRE(s.call(kFn).return_code == 0);
    CHECK(report_of(out).ct0_success == 1);
  }
  // A 10-byte message on connection 2: the header handler gets all 10 bytes, no payload handler
  // runs, and the new connection's counter 0 starts at zero.
  std::vector<std::uint8_t> io(10, 0xAB), out(kReportBytes);
  host::Session s(naa::testbench::stream_session_options(kFn, 2, 0, 60000ms),
                  {Region::inout(io).stream(), Region::output(out)});
  REQUIRE(s.call(kFn).return_code == 0);
  const Report r = report_of(out);
  CHECK(r.header_runs == 1);
  CHECK(r.user_hdr_length == 10);
  CHECK(r.header_length == 10);
  CHECK(r.payload_runs == 0);
  CHECK(r.completion_bytes == 0);
  CHECK(r.ct0_success == 0);
}

TEST_CASE(
    "spin: an ABI 1 image without a user header still runs and too large a header is refused") {
  // naa_spin_info as ABI 1 wrote it: the same fields without user_hdr_bytes.
  auto image = read_file(SPIN_HEADER_CHECK_ELF);
  std::uint8_t info[12];
  naa::protocol::store_le32(info, 0x4E535049U);
  naa::protocol::store_le32(info + 4, 2);
  naa::protocol::store_le32(info + 8, kFn);
  const auto at = std::search(image.begin(), image.end(), std::begin(info), std::end(info));
  REQUIRE(at != image.end());
  naa::protocol::store_le32(&*at + 4, 1);
  NaaSim sim(sim_ip(), {"--hpus", "2"});
  REQUIRE(sim.ready());
  const auto data = random_bytes(5000, 7);
  std::vector<std::uint8_t> io(data.size()), out(kReportBytes);
  fill(io, data, kProcess, 0);
  host::SessionOptions o = naa::testbench::stream_session_options(kFn, 1, 0x11, 60000ms);
  o.handler_image = image;
  host::Session s(o, {Region::inout(io).stream(), Region::output(out)});
  REQUIRE(s.call(kFn).return_code == 0);
  const Report r = report_of(out);
  CHECK(r.user_hdr_present == 0);
  CHECK(r.user_hdr_length == 0);
  CHECK(r.payload_bytes == data.size());
  CHECK(r.first_payload_offset == 0);

  // A user header larger than NAA_SPIN_MAX_USER_HDR is refused (MRSP 0x07, bad image).
  naa::protocol::store_le32(&*at + 4, 2);
  naa::protocol::store_le32(&*at + 28, 257);
  host::SessionOptions bad = naa::testbench::stream_session_options(kFn, 2, 0, 60000ms);
  bad.handler_image = image;
  std::vector<std::uint8_t> io2(100), out2(kReportBytes);
  CHECK_THROWS(host::Session(bad, {Region::inout(io2).stream(), Region::output(out2)}));
}

TEST_CASE("spin: a user header on an IRN connection is refused with 0x7C") {
  NaaSim sim(sim_ip(), {"--handler", SPIN_HEADER_CHECK_ELF, "--hpus", "2", "--irn", "on"});
  REQUIRE(sim.ready());
  std::vector<std::uint8_t> io(9000), out(kReportBytes);
  fill(io, random_bytes(io.size(), 3), kProcess, 0);
  host::SessionOptions o = naa::testbench::stream_session_options(kFn, 1, 0, 60000ms);
  o.irn_streaming = true;
  host::Session s(o, {Region::inout(io).stream(), Region::output(out)});
  CHECK(s.call(kFn).return_code == 0x7C);
  const std::string st = sim.stats_text();
  INFO(st);
  CHECK(NaaSim::stat_in(st, "cm.irn_accepted") == 1);
  CHECK(NaaSim::stat_in(st, "handler.unordered_refused") >= 1);
  CHECK(NaaSim::stat_in(st, "handler.payloads") == 0);
}
