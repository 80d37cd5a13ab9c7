// The NAAICE-compatible C API, the C example program and naa-call, against the fake peer's mini
// NAA (so they run without naa-sim). Addresses: the test's block (test_addresses.hpp), host n on
// .n, peer n on .(100 + n).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <string>

#include "child_process.hpp"
#include "fake_naa.hpp"
#include "fake_peer.hpp"
#include "naa/host/naa.h"
#include "test_addresses.hpp"

using naa::testbench::FakePeer;
using naa::testbench::run_program;

namespace {

std::unique_ptr<FakePeer> mini_naa(int n) {
  return naa::testbench::make_fake_naa(n);
}
std::string peer(int n) {
  return naa::testbench::fake_naa_ip(n);
}
std::string local(int n) {
  return naa::testbench::fake_naa_host_ip(n);
}

// Each CTest test is its own process, so setenv here affects only this test case.
void use_naa(int n, const std::string& fn_params) {
  ::setenv("NAA_SPEC", (peer(n) + ":12345:" + fn_params).c_str(), 1);
  ::setenv("NAA_LOCAL_IP", local(n).c_str(), 1);
  ::setenv("NAA_CONNECT_TIMEOUT_MS", "2000", 1);
}

}  // namespace

TEST_CASE("C API: naa_create naa_invoke naa_test naa_wait naa_finalize") {
  auto p = mini_naa(1);
  use_naa(1, "1:2");
  std::vector<unsigned char> a(100, 1), b(5000, 2);
  naa_param_t in[] = {{a.data(), a.size(), false}, {b.data(), b.size(), false}};
  naa_param_t out[] = {{b.data(), b.size(), false}};
  naa_handle h;
  REQUIRE(naa_create(1, in, 2, out, 1, &h) == 0);
  CHECK(h.function_code == 1);
  REQUIRE(naa_invoke(&h) == 0);
  bool done = false;
  naa_status st{};
  for (int i = 0; i < 1000000 && !done; ++i)
    REQUIRE(naa_test(&h, &done, &st) == 0);
  REQUIRE(done);
  CHECK(st.state == NAAICE_FINISHED);
  CHECK(st.naa_error == NAA_SUCCESS);
  CHECK(st.bytes_received == 5000);
  CHECK(b[0] == 3);
  REQUIRE(naa_invoke(&h) == 0);
  REQUIRE(naa_wait(&h, &st) == 0);
  CHECK(st.user_immediate == 0);
  CHECK(b[4999] == 4);
  CHECK(a[0] == 1);
  CHECK(naa_finalize(&h) == 0);
  CHECK(h.comm_ctx == nullptr);
  // The NAA_SPEC item is free again.
  REQUIRE(naa_create(1, in, 2, out, 1, &h) == 0);
  CHECK(naa_finalize(&h) == 0);
}

TEST_CASE("C API: an unknown function code comes back as return code 3") {
  auto p = mini_naa(2);
  use_naa(2, "9:1");
  std::vector<unsigned char> a(64);
  naa_param_t in[] = {{a.data(), a.size(), false}};
  naa_handle h;
  REQUIRE(naa_create(9, in, 1, nullptr, 0, &h) == 0);
  REQUIRE(naa_invoke(&h) == 0);
  naa_status st{};
  REQUIRE(naa_wait(&h, &st) == 0);
  CHECK(st.user_immediate == NAA_UNKNOWN_FUNCTION);
  naa_finalize(&h);
}

TEST_CASE("C API: configuration errors fail naa_create with a clear message") {
  std::vector<unsigned char> a(64);
  naa_param_t in[] = {{a.data(), a.size(), false}};
  naa_handle h;
  ::unsetenv("NAA_SPEC");
  CHECK(naa_create(1, in, 1, nullptr, 0, &h) == -1);
  CHECK(std::string(naa_last_error(nullptr)).find("NAA_SPEC") != std::string::npos);
  ::setenv("NAA_SPEC", (peer(3) + ":12345:4:2").c_str(), 1);
  CHECK(naa_create(1, in, 1, nullptr, 0, &h) == -1);
  CHECK(std::string(naa_last_error(nullptr)).find("no unused NAA for function code 1") !=
        std::string::npos);
  CHECK(naa_create(4, in, 1, nullptr, 0, &h) == -1);
  CHECK(std::string(naa_last_error(nullptr)).find("configured with 2 parameters") !=
        std::string::npos);
  ::setenv("NAA_SPEC", (peer(3) + ":12345:1:1").c_str(), 1);
  ::setenv("NAA_LOCAL_IP", local(3).c_str(), 1);
  ::setenv("NAA_CONNECT_TIMEOUT_MS", "1000", 1);
  CHECK(naa_create(1, in, 1, nullptr, 0, &h) == -1);  // nothing listens there
  CHECK(std::string(naa_last_error(nullptr)).find("naa_unreachable") != std::string::npos);
}

TEST_CASE("the C example program runs against an NAA and verifies its results") {
  auto p = mini_naa(4);
  const auto r = run_program(NAA_EXAMPLE_C_PATH, {"3"},
                             {"NAA_SPEC=" + peer(4) + ":12345:1:2", "NAA_LOCAL_IP=" + local(4)});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("3 add1 calls, results verified") != std::string::npos);
}

TEST_CASE("naa-call --help prints usage a bad option exits 2 with usage on stderr") {
  auto r = run_program(NAA_CALL_PATH, {"--help"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("usage: naa-call") != std::string::npos);
  r = run_program(NAA_CALL_PATH, {"--bogus"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown option --bogus") != std::string::npos);
  CHECK(r.err.find("usage: naa-call") != std::string::npos);
  r = run_program(NAA_CALL_PATH, {"--in", "zero:16"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--fn is required") != std::string::npos);
}

TEST_CASE("naa-call refuses bad sizes with usage and exit 2 instead of crashing") {
  // Each of these once aborted naa-call (a negative or overflowing size became a huge buffer).
  for (const char* size : {"-5", "99999999999999999999", "20000000000G", "5X", "", "8G"}) {
    INFO("--out " << size);
    const auto r = run_program(NAA_CALL_PATH, {"--fn", "add1", "--out", size});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("usage: naa-call") != std::string::npos);
  }
  const auto r = run_program(NAA_CALL_PATH, {"--fn", "add1", "--in", "gen:-1"});
  CHECK(r.exit_code == 2);
}

TEST_CASE("naa-call makes calls prints the return code and timings verifies add1") {
  auto p = mini_naa(5);
  auto r =
      run_program(NAA_CALL_PATH, {"--naa", peer(5), "--local", local(5), "--fn", "add1", "--inout",
                                  "gen:100K:7", "--in", "seq:1K", "-n", "4", "--verify"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("return code 0x00 (success)") != std::string::npos);
  CHECK(r.out.find("naa-call: 4 call(s), rc 0x00, latency min") != std::string::npos);
  CHECK(r.out.find("verify: ok") != std::string::npos);
  r = run_program(NAA_CALL_PATH,
                  {"--naa", peer(5), "--local", local(5), "--fn", "9", "--in", "zero:8"});
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("return code 0x03 (unknown function code)") != std::string::npos);
}

TEST_CASE("naa-call reports an NAA that is not running with exit status 3") {
  const auto r = run_program(NAA_CALL_PATH, {"--naa", peer(6), "--local", local(6), "--fn", "3",
                                             "--in", "zero:64", "--timeout", "1500"});
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("naa_unreachable") != std::string::npos);
}
