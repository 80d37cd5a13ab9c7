// AP1 internals: the state behind a naaice_communication_context and the helpers every entry point
// uses (errors, call start and finish), shared by ap1.cpp (the C entry points) and
// ap1_support.cpp (the helpers).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "naa/host/session.hpp"
#include "naaice.h"
#include "session_core.hpp"

struct naa_ap1_state {
  naa::host::SessionOptions opts;
  std::shared_ptr<naa::host::Transport> transport;
  std::unique_ptr<naa::host::detail::SessionCore> session;
  std::vector<std::size_t> registered_sizes;  // the parameter regions' full sizes
  std::vector<char> mrsp_buffer;              // behind mr_local_message->addr
  naa::host::detail::CallOutcome last;
  std::uint32_t return_code = 0;
  bool registered = false;
  bool stream = false;  // naaice_ap1_set_handler: the inputs stream to the handlers
  std::string error;
};

namespace naa::host::ap1 {

using Ctx = naaice_communication_context;

inline constexpr std::uint64_t kNaaPageWidth = 4096;          // the reference's NAA_PAGE_WIDTH
inline constexpr std::uint64_t kMaxRegionBytes = 1ULL << 31;  // one RDMA message (PROTOCOL.md 7)

// A refused request: the context stays as it was (as in the reference).
int fail(Ctx* ctx, const char* fn, const std::string& what);
// A failed connection, MRSP or call: the context goes to NAAICE_ERROR.
int fail_error_state(Ctx* ctx, const char* fn, const std::string& what);
bool usable(Ctx* ctx);
// getaddrinfo, IPv4 only (the UdpRoce endpoint and PROTOCOL.md 6 are IPv4).
bool resolve_ipv4(const char* name, std::string& out);
// The three naaice_set_immediate bytes as the call's 24 user bits.
std::uint32_t user_bits(const Ctx& ctx);
// Frees what the library allocated behind the context; the context itself stays.
void release_context(Ctx* ctx);
int start_call(Ctx* ctx, const char* fn_name, std::uint8_t fn);
int finish_call(Ctx* ctx, const char* fn_name, naa::host::detail::CallOutcome& o);
// Blocks up to comm_ctx->timeout (0: no limit) for the outstanding call.
int wait_call(Ctx* ctx, const char* fn_name);

}  // namespace naa::host::ap1
