// AP1 helpers (ap1_state.hpp).
#include <netdb.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "ap1_state.hpp"
#include "ipv4_socket.hpp"

namespace naa::host::ap1 {

// A refused request: the context stays as it was (as in the reference).
int fail(Ctx* ctx, const char* fn, const std::string& what) {
  std::fprintf(stderr, "naa: %s: %s\n", fn, what.c_str());
  if (ctx != nullptr && ctx->naa_state != nullptr) {
    ctx->naa_state->error = std::string(fn) + ": " + what;
  }
  return -1;
}

// A failed connection, MRSP or call: the context goes to NAAICE_ERROR.
int fail_error_state(Ctx* ctx, const char* fn, const std::string& what) {
  fail(ctx, fn, what);
  ctx->state = NAAICE_ERROR;
  return -1;
}

bool usable(Ctx* ctx) {
  return ctx != nullptr && ctx->naa_state != nullptr;
}

// getaddrinfo, IPv4 only (the UdpRoce endpoint and PROTOCOL.md 6 are IPv4).
bool resolve_ipv4(const char* name, std::string& out) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  if (::getaddrinfo(name, nullptr, &hints, &res) != 0 || res == nullptr) return false;
  sockaddr_in sin{};
  std::memcpy(&sin, res->ai_addr, sizeof sin);  // AF_INET: ai_addr is a sockaddr_in
  ::freeaddrinfo(res);
  out = naa::host::format_ipv4(naa::host::detail::ipv4_of(sin));
  return true;
}

// The three naaice_set_immediate bytes are user bits 0-7, 8-15, 16-23 on any host (the reference
// builds the immediate in host byte order: the same on little-endian hosts only).
std::uint32_t user_bits(const Ctx& ctx) {
  return static_cast<std::uint32_t>(ctx.immediate_bytearr[1]) |
         static_cast<std::uint32_t>(ctx.immediate_bytearr[2]) << 8 |
         static_cast<std::uint32_t>(ctx.immediate_bytearr[3]) << 16;
}

// Frees what the library allocated behind the context; the context itself stays (as in the
// reference, programs may still read its fields; it is calloc'ed, so they may free() it).
void release_context(Ctx* ctx) {
  delete[] ctx->mr_local_data;
  delete[] ctx->mr_peer_data;
  delete[] ctx->mr_internal;
  delete ctx->mr_local_message;
  delete ctx->naa_state;
  ctx->mr_local_data = nullptr;
  ctx->mr_peer_data = nullptr;
  ctx->mr_internal = nullptr;
  ctx->mr_local_message = nullptr;
  ctx->naa_state = nullptr;
  ctx->no_local_mrs = 0;
  ctx->no_peer_mrs = 0;
  ctx->no_internal_mrs = 0;
}

int start_call(Ctx* ctx, const char* fn_name, std::uint8_t fn) {
  if (!usable(ctx)) return fail(nullptr, fn_name, "context not initialised");
  naa_ap1_state& st = *ctx->naa_state;
  if (!st.session || ctx->state < NAAICE_MRSP_DONE) {
    return fail(ctx, fn_name, "MRSP not done (call naaice_do_mrsp first)");
  }
  if (fn < 1 || fn > 127) {
    return fail(ctx, fn_name, "function code " + std::to_string(fn) + " is not 1..127");
  }
  for (unsigned i = 0; i < ctx->no_local_mrs; ++i) {
    if (!ctx->mr_local_data[i].to_write) continue;
    if (auto ec = st.session->set_send_length(i, ctx->mr_local_data[i].size)) {
      return fail(ctx, fn_name, "region " + std::to_string(i) + ": " + ec.message());
    }
  }
  std::string detail;
  if (auto ec = st.session->start_call(fn, user_bits(*ctx), detail)) {
    return fail(ctx, fn_name, detail.empty() ? ec.message() : detail);
  }
  ctx->naa_returncode = 0;
  ctx->bytes_received = 0;
  ctx->rdma_writes_done = 0;
  ctx->no_rpc_calls++;
  ctx->state = NAAICE_DATA_SENDING;
  return 0;
}

int finish_call(Ctx* ctx, const char* fn_name, naa::host::detail::CallOutcome& o) {
  naa_ap1_state& st = *ctx->naa_state;
  st.return_code = o.result.return_code;
  ctx->naa_returncode = static_cast<std::uint8_t>(o.result.return_code & 0xFF);
  ctx->bytes_received = static_cast<std::uint32_t>(o.result.bytes_received);
  if (o.ec) return fail_error_state(ctx, fn_name, o.detail.empty() ? o.ec.message() : o.detail);
  if (o.result.return_code != 0) {
    // As the reference: the call finished; the program reads naa_returncode.
    std::fprintf(stderr, "naa: %s: the NAA returned code 0x%x\n", fn_name,
                 static_cast<unsigned>(o.result.return_code));
  }
  ctx->state = NAAICE_FINISHED;
  return 0;
}

// Blocks up to comm_ctx->timeout (0: no limit) for the outstanding call.
int wait_call(Ctx* ctx, const char* fn_name) {
  naa_ap1_state& st = *ctx->naa_state;
  if (!st.session || !st.session->call_outstanding()) return 0;
  const double limit = ctx->timeout > 0 ? ctx->timeout : 1e9;
  naa::host::detail::CallOutcome o;
  if (!st.session->wait(o, std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::duration<double>(limit)))) {
    return fail(ctx, fn_name,
                "timeout while waiting for the NAA (max " + std::to_string(ctx->timeout) + " s)");
  }
  return finish_call(ctx, fn_name, o);
}

}  // namespace naa::host::ap1
