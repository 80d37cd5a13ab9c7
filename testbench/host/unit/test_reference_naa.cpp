// The host library against an NAA that behaves like the NAAICE reference software NAA (issue 11):
// the fake peer's "reference NAA" personality answers success with immediate 0, places regions at
// addresses it chooses, never sends a DREP, and writes outputs back at their full registered
// length. Each behaviour through Session, the AP2 C API (naa.h), the AP1 C API (naaice.h),
// naa-call and the example programs. Addresses: the test's block (test_addresses.hpp): reference
// NAA n on .(100 + n), host on .n.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "fake_naa.hpp"
#include "fake_peer.hpp"
#include "naa/host/error.hpp"
#include "naa/host/naa.h"
#include "naa/host/session.hpp"
#include "naa/protocol/mrsp.hpp"
#include "naaice.h"
#include "test_addresses.hpp"

using namespace std::chrono_literals;
using naa::host::Region;
using naa::testbench::FakePeer;
using naa::testbench::run_program;

namespace {

constexpr std::uint64_t kPlacementBase = 0x80000;  // FakePeer::Options::reference_base

std::unique_ptr<FakePeer> reference_naa(int n) {
  return naa::testbench::make_fake_naa(n, {.kind = naa::testbench::FakeNaaKind::reference});
}
std::string peer(int n) {
  return naa::testbench::fake_naa_ip(n);
}
std::string local(int n) {
  return naa::testbench::fake_naa_host_ip(n);
}

naa::host::SessionOptions session_opts(int n) {
  naa::host::SessionOptions o;
  o.naa_address = peer(n);
  o.local_address = local(n);
  o.connect_timeout = 2000ms;
  o.mrsp_timeout = 2000ms;
  o.call_timeout = 10000ms;
  o.disconnect_timeout = 50ms;  // the reference NAA never answers the DREQ
  return o;
}

// Each CTest test is its own process, so setenv affects only this test case.
void use_env(int n, const std::string& spec_tail) {
  ::setenv("NAA_SPEC", (peer(n) + ":12345:" + spec_tail).c_str(), 1);
  ::setenv("NAA_LOCAL_IP", local(n).c_str(), 1);
  ::setenv("NAA_CONNECT_TIMEOUT_MS", "2000", 1);
  ::setenv("NAA_DISCONNECT_TIMEOUT_MS", "50", 1);
}

std::vector<std::string> child_env(int n, const std::string& spec_tail) {
  return {"NAA_SPEC=" + peer(n) + ":12345:" + spec_tail, "NAA_LOCAL_IP=" + local(n),
          "NAA_CONNECT_TIMEOUT_MS=2000", "NAA_DISCONNECT_TIMEOUT_MS=50"};
}

}  // namespace

TEST_CASE("reference NAA, Session: immediate 0, NAA-chosen placement, full-length outputs") {
  auto p = reference_naa(1);
  std::vector<std::uint8_t> a(3000, 5), b(9000);
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<std::uint8_t>(i);
  naa::host::Session s(session_opts(1), {Region::input(a), Region::inout(b)});
  // The request asked for 0 and 0x1000; the NAA chose its own addresses and the host uses them.
  const auto placed = p->placed_addresses();
  REQUIRE(placed.size() == 2);
  CHECK(placed[0] == kPlacementBase);
  CHECK(placed[1] == kPlacementBase + 0x1000);
  REQUIRE(s.placements().size() == 2);
  CHECK(s.placements()[0].naa_address == placed[0]);
  CHECK(s.placements()[1].naa_address == placed[1]);
  // Shorter send: the NAA still writes the whole registered output back.
  s.set_send_length(1, 10);
  const auto r = s.call(1);
  CHECK(p->immediates().size() == 1);
  CHECK(r.return_code == 0);
  CHECK(r.fn == 1);
  CHECK(r.bytes_received == b.size());
  // The inputs landed at the NAA's addresses, not at the requested ones.
  CHECK(p->memory(kPlacementBase, 4) == std::vector<std::uint8_t>(4, 6));
  CHECK(b[0] == 1);
  CHECK(b[9] == 10);
  CHECK(b[10] == 1);  // not sent: the NAA's memory (0) plus 1
  CHECK(a[0] == 5);
}

TEST_CASE("reference NAA, Session: a disconnect without DREP completes without error") {
  auto p = reference_naa(2);
  std::vector<std::uint8_t> b(100, 1);
  naa::host::Session s(session_opts(2), {Region::inout(b)});
  CHECK(s.call(1).return_code == 0);
  REQUIRE(s.connected());
  CHECK(p->dreqs_received() == 0);
  REQUIRE_NOTHROW(s.disconnect());
  // Order of events: the DREQ reached the NAA, the NAA stayed silent, the host closed anyway.
  CHECK(p->dreq_received());
  CHECK(p->dreqs_received() >= 1);
  CHECK_FALSE(s.connected());
  CHECK(b[0] == 2);
}

TEST_CASE("reference NAA, AP2 C API: success is 0, outputs full length, finalize returns 0") {
  auto p = reference_naa(3);
  use_env(3, "1:2");
  std::vector<unsigned char> a(100, 1), b(5000, 2);
  naa_param_t in[] = {{a.data(), a.size(), false}, {b.data(), b.size(), false}};
  naa_param_t out[] = {{b.data(), b.size(), false}};
  naa_handle h;
  REQUIRE(naa_create(1, in, 2, out, 1, &h) == 0);
  CHECK(p->placed_addresses() ==
        std::vector<std::uint64_t>{kPlacementBase, kPlacementBase + 0x1000});
  REQUIRE(naa_invoke(&h) == 0);
  naa_status st{};
  REQUIRE(naa_wait(&h, &st) == 0);
  CHECK(st.state == NAAICE_FINISHED);
  CHECK(st.naa_error == 0);
  CHECK(st.bytes_received == 5000);
  CHECK(b[4999] == 3);
  CHECK(a[0] == 1);
  CHECK(naa_finalize(&h) == 0);
  CHECK(p->dreqs_received() >= 1);
}

TEST_CASE("reference NAA, AP1 C API: placement read back, return code 0, cleanup without DREP") {
  auto p = reference_naa(4);
  use_env(4, "1:1");
  std::vector<char> a(2000, 4), b(6000, 9);
  char* params[] = {a.data(), b.data()};
  size_t sizes[] = {a.size(), b.size()};
  naaice_communication_context* ctx = nullptr;
  REQUIRE(naaice_init_communication_context(&ctx, 0, sizes, params, 2, 0, nullptr, 1,
                                            local(4).c_str(), peer(4).c_str(),
                                            SERVER_CONNECTION_PORT) == 0);
  CHECK(ctx->state == NAAICE_INIT);
  CHECK(ctx->mr_peer_data[1].addr == 0x1000);  // requested: sequential from addr_offset 0
  REQUIRE(naaice_setup_connection(ctx) == 0);
  CHECK(ctx->state == NAAICE_CONNECTED);
  REQUIRE(naaice_set_input_mr(ctx, 0) == 0);
  REQUIRE(naaice_set_input_mr(ctx, 1) == 0);
  REQUIRE(naaice_set_output_mr(ctx, 1) == 0);
  CHECK(ctx->no_input_mrs == 2);
  CHECK(ctx->no_output_mrs == 1);
  REQUIRE(naaice_register_mrs(ctx) == 0);
  REQUIRE(naaice_set_bytes_to_send(ctx, 1, 16) == 0);
  CHECK(ctx->mr_local_data[1].size == 16);
  REQUIRE(naaice_do_mrsp(ctx) == 0);
  CHECK(ctx->state == NAAICE_MRSP_DONE);
  CHECK(ctx->mr_peer_data[0].addr == kPlacementBase);
  CHECK(ctx->mr_peer_data[1].addr == kPlacementBase + 0x1000);
  CHECK(ctx->mr_peer_data[1].rkey == 0x1234);
  REQUIRE(naaice_do_data_transfer(ctx) == 0);
  CHECK(ctx->state == NAAICE_FINISHED);
  CHECK(ctx->naa_returncode == 0);
  CHECK(naaice_ap1_return_code(ctx) == 0);
  CHECK(ctx->bytes_received == 6000);  // the whole registered output, not the 16 bytes sent
  CHECK(ctx->no_rpc_calls == 1);
  CHECK(b[0] == 10);
  CHECK(b[5999] == 1);  // never sent: the NAA's memory (0) plus 1
  CHECK(a[0] == 4);
  REQUIRE(naaice_disconnect_and_cleanup(ctx) == 0);
  CHECK(p->dreqs_received() >= 1);
  // As in the reference, the context outlives the cleanup (programs read it afterwards).
  CHECK(ctx->state == NAAICE_DISCONNECTED);
  CHECK(ctx->naa_returncode == 0);
  CHECK(naaice_disconnect_and_cleanup(ctx) == -1);  // a second cleanup is refused, not a crash
  std::free(ctx);
}

TEST_CASE("reference NAA, AP1: non-blocking MRSP and data transfer, user immediate bytes") {
  auto p = reference_naa(5);
  use_env(5, "1:1");
  std::vector<char> b(300, 0);
  char* params[] = {b.data()};
  size_t sizes[] = {b.size()};
  naaice_communication_context* ctx = nullptr;
  REQUIRE(naaice_init_communication_context(&ctx, 0x10000, sizes, params, 1, 0, nullptr, 1,
                                            local(5).c_str(), peer(5).c_str(),
                                            SERVER_CONNECTION_PORT) == 0);
  CHECK(ctx->mr_peer_data[0].addr == 0x10000);
  REQUIRE(naaice_setup_connection(ctx) == 0);
  REQUIRE(naaice_set_input_mr(ctx, 0) == 0);
  REQUIRE(naaice_set_output_mr(ctx, 0) == 0);
  std::uint8_t imm[3] = {0x11, 0x22, 0x33};
  REQUIRE(naaice_set_immediate(ctx, imm) == 0);
  REQUIRE(naaice_register_mrs(ctx) == 0);
  REQUIRE(naaice_init_mrsp(ctx) == 0);
  for (int i = 0; i < 1000 && ctx->state < NAAICE_MRSP_DONE; ++i)
    REQUIRE(naaice_poll_cq_nonblocking(ctx) == 0);
  REQUIRE(ctx->state == NAAICE_MRSP_DONE);
  REQUIRE(naaice_init_data_transfer(ctx) == 0);
  for (int i = 0; i < 10000000 && ctx->state < NAAICE_FINISHED; ++i)
    REQUIRE(naaice_poll_cq_nonblocking(ctx) == 0);
  REQUIRE(ctx->state == NAAICE_FINISHED);
  CHECK(ctx->naa_returncode == 0);
  // Host -> NAA immediate: user bits 0-7, 8-15, 16-23 = the three bytes, on any host.
  const auto imms = p->immediates();
  REQUIRE(imms.size() == 1);
  CHECK(imms[0] == (0x332211U << 8 | 0x80U | 1U));
  CHECK(b[0] == 1);
  REQUIRE(naaice_disconnect_and_cleanup(ctx) == 0);
  std::free(ctx);
}

TEST_CASE("reference NAA, AP1: internal regions are requested first-addressed, sent last") {
  auto p = reference_naa(9);
  use_env(9, "1:1");
  std::vector<char> b(100, 7);
  char* params[] = {b.data()};
  size_t sizes[] = {b.size()};
  size_t internal[] = {8192};
  naaice_communication_context* ctx = nullptr;
  REQUIRE(naaice_init_communication_context(&ctx, 0, sizes, params, 1, 1, internal, 1,
                                            local(9).c_str(), peer(9).c_str(),
                                            SERVER_CONNECTION_PORT) == 0);
  CHECK(ctx->no_internal_mrs == 1);
  CHECK(ctx->mr_internal[0].addr == 0);
  CHECK(ctx->mr_peer_data[0].addr == 8192);
  REQUIRE(naaice_setup_connection(ctx) == 0);
  REQUIRE(naaice_set_singlesend_mr(ctx, 0) == 0);
  CHECK(ctx->no_input_mrs == 1);
  REQUIRE(naaice_set_output_mr(ctx, 0) == 0);
  REQUIRE(naaice_register_mrs(ctx) == 0);
  REQUIRE(naaice_do_mrsp(ctx) == 0);
  // The 0x01 message: the parameter first, then the internal region (as the reference).
  const auto sends = p->sends();
  REQUIRE(sends.size() == 1);
  const auto req = naa::protocol::decode_mrsp_request(sends[0]);
  REQUIRE(req);
  REQUIRE(req->count() == 2);
  CHECK(req->entry(0).naa_address == 8192);
  CHECK(req->entry(0).flags == (MRFLAG_SINGLESEND | MRFLAG_INPUT | MRFLAG_OUTPUT));
  CHECK(req->entry(0).size == 100);
  CHECK(req->entry(1).naa_address == 0);
  CHECK(req->entry(1).flags == MRFLAG_INTERNAL);
  CHECK(req->entry(1).size == 8192);
  REQUIRE(naaice_do_data_transfer(ctx) == 0);
  CHECK(ctx->naa_returncode == 0);
  CHECK(b[99] == 8);
  REQUIRE(naaice_disconnect_and_cleanup(ctx) == 0);
  std::free(ctx);
}

TEST_CASE("reference NAA, AP1: an unanswered call ends naaice_do_data_transfer with -1") {
  auto p = reference_naa(10);
  use_env(10, "1:1");
  // The NAA never sees the call: every write carrying an immediate is lost.
  p->set_fault([](const naa::testbench::SeenPacket& pkt, std::size_t) {
    naa::testbench::Fault f;
    if (pkt.headers.immediate) f.kind = naa::testbench::Fault::Kind::drop;
    return f;
  });
  std::vector<char> b(64, 1);
  char* params[] = {b.data()};
  size_t sizes[] = {b.size()};
  naaice_communication_context* ctx = nullptr;
  REQUIRE(naaice_init_communication_context(&ctx, 0, sizes, params, 1, 0, nullptr, 1,
                                            local(10).c_str(), peer(10).c_str(),
                                            SERVER_CONNECTION_PORT) == 0);
  ctx->timeout = 0.3;  // seconds, as the reference's field
  REQUIRE(naaice_setup_connection(ctx) == 0);
  REQUIRE(naaice_set_input_mr(ctx, 0) == 0);
  REQUIRE(naaice_set_output_mr(ctx, 0) == 0);
  REQUIRE(naaice_register_mrs(ctx) == 0);
  REQUIRE(naaice_do_mrsp(ctx) == 0);
  // Either the timeout or the exhausted retries end it; never a success.
  CHECK(naaice_do_data_transfer(ctx) == -1);
  CHECK(ctx->state != NAAICE_FINISHED);
  CHECK_FALSE(std::string(naaice_ap1_last_error(ctx)).empty());
  CHECK(b[0] == 1);
  CHECK(p->immediates().empty());
  CHECK(naaice_disconnect_and_cleanup(ctx) == 0);
  std::free(ctx);
}

TEST_CASE("AP1 C API: bad use gets a clear error") {
  const std::string nowhere = peer(99);  // never contacted: the transport is refused first
  naaice_communication_context* ctx = nullptr;
  std::vector<char> b(64);
  char* params[] = {b.data()};
  size_t sizes[] = {b.size()};
  CHECK(naaice_init_communication_context(&ctx, 0, sizes, params, 1, 0, nullptr, 0, nullptr,
                                          nowhere.c_str(), 12345) == -1);
  CHECK(ctx == nullptr);
  std::vector<size_t> many(MAX_MRS + 1, 8);
  std::vector<char*> many_params(MAX_MRS + 1, b.data());
  CHECK(naaice_init_communication_context(&ctx, 0, many.data(), many_params.data(), MAX_MRS + 1, 0,
                                          nullptr, 1, nullptr, nowhere.c_str(), 12345) == -1);
  REQUIRE(naaice_init_communication_context(&ctx, 0, sizes, params, 1, 0, nullptr, 1, nullptr,
                                            nowhere.c_str(), 12345) == 0);
  CHECK(naaice_set_input_mr(ctx, 1) == -1);
  CHECK(std::string(naaice_ap1_last_error(ctx)).find("region 1 does not exist") !=
        std::string::npos);
  CHECK(naaice_set_bytes_to_send(ctx, 0, 8) == -1);  // before naaice_register_mrs
  CHECK(naaice_do_data_transfer(ctx) == -1);         // before MRSP
  CHECK(naaice_send_message(ctx, MSG_MR_A, 0) == -1);
  // NAA_TRANSPORT selects the backend as for the AP2 API; a bad value is a clear error.
  ::setenv("NAA_TRANSPORT", "carrier-pigeon", 1);
  CHECK(naaice_setup_connection(ctx) == -1);
  CHECK(std::string(naaice_ap1_last_error(ctx)).find("NAA_TRANSPORT must be udp or verbs") !=
        std::string::npos);
  ::unsetenv("NAA_TRANSPORT");
  CHECK(naaice_disconnect_and_cleanup(ctx) == 0);
  std::free(ctx);
}

TEST_CASE("a region larger than 2 GiB is refused when the session is created") {
  auto p = reference_naa(6);
  use_env(6, "1:1");
  std::vector<std::uint8_t> small(16);
  const std::size_t huge = (std::size_t{1} << 31) + 1;  // never touched: refused first
  try {
    naa::host::Session s(session_opts(6), {Region::inout(small.data(), huge)});
    FAIL("a 2 GiB + 1 region was accepted");
  } catch (const naa::host::Error& e) {
    CHECK(e.code() == naa::host::Errc::invalid_argument);
    CHECK(std::string(e.what()).find("larger than 2 GiB") != std::string::npos);
  }
  naa_param_t in[] = {{small.data(), huge, false}};
  naa_handle h;
  CHECK(naa_create(1, in, 1, in, 1, &h) == -1);
  CHECK(std::string(naa_last_error(nullptr)).find("larger than 2 GiB") != std::string::npos);
  char* params[] = {reinterpret_cast<char*>(small.data())};
  size_t sizes[] = {huge};
  naaice_communication_context* ctx = nullptr;
  CHECK(naaice_init_communication_context(&ctx, 0, sizes, params, 1, 0, nullptr, 1, nullptr,
                                          peer(6).c_str(), 12345) == -1);
  // naa-call refuses it as a usage error, before allocating the buffer.
  const auto r = run_program(NAA_CALL_PATH, {"--naa", peer(6), "--local", local(6), "--fn", "add1",
                                             "--out", "2147483649"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("exceeds 2 GiB") != std::string::npos);
  // Nothing reached the NAA: no connection request, no MRSP.
  CHECK(p->reqs_received() == 0);
  CHECK(p->sends().empty());
}

TEST_CASE("reference NAA, naa-call: verified calls, the NAA's placement printed") {
  auto p = reference_naa(7);
  const auto r = run_program(
      NAA_CALL_PATH, {"--naa", peer(7), "--local", local(7), "--fn", "add1", "--inout", "gen:20K:3",
                      "-n", "3", "--verify", "--disconnect-timeout", "50"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("at NAA 0x80000 ") != std::string::npos);
  CHECK(r.out.find("return code 0x00 (success)") != std::string::npos);
  CHECK(r.out.find("verify: ok") != std::string::npos);
  CHECK(p->dreqs_received() >= 1);
  const auto bad = run_program(NAA_CALL_PATH, {"--fn", "add1", "--disconnect-timeout", "-1"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--disconnect-timeout must be") != std::string::npos);
}

TEST_CASE("reference NAA: our AP1 and AP2 example programs verify every byte") {
  auto p = reference_naa(8);
  auto r = run_program(NAAICE_AP1_CLIENT_PATH, {local(8), peer(8), "3", "1000 20000 5000", "3"},
                       child_env(8, "1:3"));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("region 0: NAA address 0x80000 ") != std::string::npos);
  CHECK(r.out.find("call 3: state 30 return code 0 bytes received 5000") != std::string::npos);
  CHECK(r.out.find("results verified") != std::string::npos);
  r = run_program(NAAICE_AP2_CLIENT_PATH, {"3", "100 5000 7000", "2"}, child_env(8, "1:3"));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Bytes received: 12000, RPC Return code: 0") != std::string::npos);
  CHECK(r.out.find("results verified") != std::string::npos);
}
