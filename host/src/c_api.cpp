// The NAAICE-compatible C API (naa/host/naa.h) on SessionCore.
//
// Process-wide state is unavoidable here (the C API is an environment-configured singleton in the
// reference too): the parsed NAA_SPEC, the endpoints shared by handles, and the NAA address
// allocator. All of it sits behind one mutex in CApiState.
#include "naa/host/naa.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "c_common.hpp"
#include "naa/host/error.hpp"
#include "naa/host/session.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/host/verbs.hpp"
#include "session_core.hpp"

// The state behind naa_handle::comm_ctx. The handle's field has the reference's type (a pointer to
// the AP1 context, compat/naaice.h); AP2 programs never look inside it, so it carries this instead.
struct Ap2Context {
  std::unique_ptr<naa::host::detail::SessionCore> session;
  std::size_t spec_index = 0;
  naaice_communication_state state = NAAICE_INIT;
  naa_status last{};
  bool have_last = false;
  std::string error;
};

namespace {

using naa::host::Errc;
using naa::host::Region;
namespace detail = naa::host::detail;
using detail::env;
using detail::env_long;

struct SpecItem {
  std::string address;
  std::uint16_t port = 12345;
  naa_function_code_t fn = 0;
  unsigned param_count = 0;
  bool in_use = false;
};

struct CApiState {
  std::mutex mu;
  std::string parsed_env;
  bool parsed = false;
  std::vector<SpecItem> spec;
  std::map<std::string, std::weak_ptr<naa::host::Transport>> endpoints;  // by local address
  std::map<std::string, std::uint64_t> next_naa_address;                 // by NAA address
};

CApiState& state() {
  static CApiState s;
  return s;
}

thread_local std::string t_last_error;

Ap2Context* ctx_of(const naa_handle* h) {
  return reinterpret_cast<Ap2Context*>(h->comm_ctx);
}

int fail(Ap2Context* ctx, const char* fn, const std::string& what) {
  const std::string line = std::string(fn) + ": " + what;
  std::fprintf(stderr, "naa: %s\n", line.c_str());
  if (ctx != nullptr) {
    ctx->error = line;
    ctx->state = NAAICE_ERROR;
  }
  t_last_error = line;
  return -1;
}

// <address>:<port>:<fn_code>:<param_count>[,...] (the reference's parse_naa_job_spec).
std::vector<SpecItem> parse_spec(const std::string& text, std::string& problems) {
  std::vector<SpecItem> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string chunk = text.substr(start, end - start);
    std::vector<std::string> f;
    std::size_t p = 0;
    for (;;) {
      const std::size_t q = chunk.find(':', p);
      f.push_back(chunk.substr(p, q == std::string::npos ? std::string::npos : q - p));
      if (q == std::string::npos) break;
      p = q + 1;
    }
    if (f.size() == 4 && !f[0].empty()) {
      SpecItem item;
      item.address = f[0];
      item.port = f[1].empty()
                      ? 12345
                      : static_cast<std::uint16_t>(std::strtoul(f[1].c_str(), nullptr, 10));
      item.fn = static_cast<naa_function_code_t>(std::strtoul(f[2].c_str(), nullptr, 10));
      item.param_count = static_cast<unsigned>(std::strtoul(f[3].c_str(), nullptr, 10));
      out.push_back(item);
    } else if (!chunk.empty()) {
      problems += " '" + chunk + "'";
    }
    start = end + 1;
  }
  return out;
}

void fill_status(naa_status* status, const Ap2Context& ctx) {
  if (status == nullptr) return;
  *status = ctx.last;
  status->state = ctx.state;
}

}  // namespace

namespace naa::host::detail {

void apply_env_options(SessionOptions& opts) {
  if (const char* v = env("NAA_PROGRESS")) {
    opts.progress = std::string(v) == "manual" ? Progress::manual : Progress::automatic;
  }
  if (const char* v = env("NAA_PCAP")) opts.pcap_path = v;
  // NAA_IRN=0: no IRN offer (go-back-N); unset or 1: offered (shared_endpoint refuses others).
  if (const char* v = env("NAA_IRN")) opts.irn = std::string(v) != "0";
  opts.connect_timeout = std::chrono::milliseconds(env_long("NAA_CONNECT_TIMEOUT_MS", 5000));
  opts.mrsp_timeout = opts.connect_timeout;
  opts.call_timeout = std::chrono::milliseconds(env_long("NAA_CALL_TIMEOUT_MS", 60000));
  opts.disconnect_timeout = std::chrono::milliseconds(env_long("NAA_DISCONNECT_TIMEOUT_MS", 1000));
  opts.path_mtu = static_cast<std::uint32_t>(env_long("NAA_PATH_MTU", 4096));
}

std::shared_ptr<Transport> shared_endpoint(const SessionOptions& opts, std::string& error) {
  error.clear();
  CApiState& st = state();
  std::shared_ptr<Transport> transport;
  {
    std::lock_guard lock(st.mu);
    // One endpoint per local address, shared by the contexts that use it (PROTOCOL.md 6: an
    // endpoint owns <ip>:4791). A pcap applies to a new endpoint only.
    if (opts.pcap_path.empty()) {
      auto it = st.endpoints.find(opts.local_address);
      if (it != st.endpoints.end()) transport = it->second.lock();
    }
  }
  // NAA_TRANSPORT=verbs: the Verbs backend (a RoCE NIC or Soft-RoCE, docs/real-nic.md) instead
  // of the default UdpRoce endpoint; an endpoint of the other kind is not reused.
  if (const char* irn = env("NAA_IRN");
      irn != nullptr && std::string(irn) != "0" && std::string(irn) != "1") {
    error = "NAA_IRN must be 0 or 1, not '" + std::string(irn) + "'";
    return nullptr;
  }
  const char* transport_env = env("NAA_TRANSPORT");
  const auto kind = parse_transport_kind(transport_env != nullptr ? transport_env : "udp");
  if (!kind) {
    error = "NAA_TRANSPORT must be udp or verbs, not '" + std::string(transport_env) + "'";
    return nullptr;
  }
  if (transport && (transport->name().rfind("verbs", 0) == 0) != (*kind == TransportKind::verbs)) {
    transport.reset();
  }
  if (!transport && *kind == TransportKind::verbs) {
    VerbsOptions vo;
    if (!opts.local_address.empty()) vo.local_ip = parse_ipv4(opts.local_address);
    vo.remote_ip = parse_ipv4(opts.naa_address);
    std::error_code vec;
    std::string vdetail;
    transport = open_verbs(vo, vec, &vdetail);
    if (!transport) {
      error = "cannot open the Verbs backend: " + vdetail;
      return nullptr;
    }
  }
  return transport;  // null with no error: the session opens its own UdpRoce endpoint
}

void remember_endpoint(const SessionOptions& opts, std::shared_ptr<Transport> transport) {
  if (!opts.pcap_path.empty() || !transport) return;
  CApiState& st = state();
  std::lock_guard lock(st.mu);
  st.endpoints[opts.local_address] = transport;
}

}  // namespace naa::host::detail

extern "C" {

namespace {

int create_handle(const char* kFn, const naa_function_code_t function_code,
                  naa_param_t* input_params, unsigned int input_amount, naa_param_t* output_params,
                  unsigned int output_amount, const bool* stream_inputs,
                  std::uint64_t stream_argument, naa_handle* handle) {
  if (handle == nullptr) return fail(nullptr, kFn, "handle is NULL");
  handle->function_code = function_code;
  handle->comm_ctx = nullptr;
  if ((input_amount > 0 && input_params == nullptr) ||
      (output_amount > 0 && output_params == nullptr)) {
    return fail(nullptr, kFn, "parameter array is NULL");
  }
  if (function_code < 1 || function_code > 127) {
    return fail(nullptr, kFn, "function code " + std::to_string(function_code) + " is not 1..127");
  }
  CApiState& st = state();
  SpecItem item;
  std::size_t index = 0;
  std::string problems;
  {
    std::lock_guard lock(st.mu);
    const char* spec_env = env("NAA_SPEC");
    if (spec_env == nullptr) {
      return fail(
          nullptr, kFn,
          "environment variable NAA_SPEC is not set (<address>:<port>:<fn_code>:<param_count>)");
    }
    if (!st.parsed || st.parsed_env != spec_env) {
      // Keep in-use marks of items that are still there (a changed NAA_SPEC starts afresh).
      st.spec = parse_spec(spec_env, problems);
      st.parsed_env = spec_env;
      st.parsed = true;
    }
    for (; index < st.spec.size(); ++index) {
      if (!st.spec[index].in_use && st.spec[index].fn == function_code) break;
    }
    if (index == st.spec.size()) {
      return fail(nullptr, kFn,
                  "no unused NAA for function code " + std::to_string(function_code) +
                      " in NAA_SPEC='" + spec_env + "'" +
                      (problems.empty() ? "" : " (unparsable:" + problems + ")"));
    }
    item = st.spec[index];
    if (item.param_count != input_amount) {
      return fail(nullptr, kFn,
                  "NAA at " + item.address + " (fn " + std::to_string(function_code) +
                      ") is configured with " + std::to_string(item.param_count) +
                      " parameters, the program passes " + std::to_string(input_amount));
    }
    st.spec[index].in_use = true;
  }
  auto release = [&] {
    std::lock_guard lock(st.mu);
    if (index < st.spec.size()) st.spec[index].in_use = false;
  };

  // Regions: inputs in order, then outputs that are not also inputs (the reference's order).
  std::vector<Region> regions;
  std::uint64_t total = 0;
  for (unsigned i = 0; i < input_amount; ++i) {
    const naa_param_t& p = input_params[i];
    regions.push_back(p.single_send ? Region::single_send(p.addr, p.size)
                                    : Region::input(p.addr, p.size));
    if (stream_inputs != nullptr && stream_inputs[i]) regions.back().stream();
  }
  for (unsigned i = 0; i < output_amount; ++i) {
    const naa_param_t& p = output_params[i];
    bool merged = false;
    for (unsigned j = 0; j < input_amount; ++j) {
      if (input_params[j].addr == p.addr) {
        regions[j].flags |= Region::kOutput;
        regions[j].flags &= static_cast<std::uint8_t>(~Region::kSingleSend);
        merged = true;
        break;
      }
    }
    if (!merged) regions.push_back(Region::output(p.addr, p.size));
  }
  for (const Region& r : regions)
    total += (r.size + 4095) / 4096 * 4096 + (r.size == 0 ? 4096 : 0);

  naa::host::SessionOptions opts;
  if (stream_inputs != nullptr) {
    // The stream descriptor (docs/protocol.md "Streaming regions"): the handle's function.
    opts.stream_function = static_cast<std::uint8_t>(function_code);
    opts.stream_argument = stream_argument;
    total += 4096;
  }
  opts.naa_address = item.address;
  opts.cm_port = item.port;
  if (const char* v = env("NAA_LOCAL_IP")) opts.local_address = v;
  detail::apply_env_options(opts);

  {
    std::lock_guard lock(st.mu);
    std::uint64_t& next = st.next_naa_address[item.address];
    opts.naa_base_address = next;
    next += total;
  }
  std::string terr;
  std::shared_ptr<naa::host::Transport> transport = detail::shared_endpoint(opts, terr);
  if (!transport && !terr.empty()) {
    release();
    return fail(nullptr, kFn, terr);
  }
  auto ctx = std::unique_ptr<Ap2Context>(new (std::nothrow) Ap2Context());
  if (!ctx) {
    release();
    return fail(nullptr, kFn, "out of memory");
  }
  ctx->spec_index = index;
  std::error_code ec;
  std::string detail;
  ctx->session = detail::SessionCore::open(transport, opts, std::move(regions), ec, detail);
  if (!ctx->session) {
    release();
    return fail(nullptr, kFn,
                "cannot set up " + item.address + ":" + std::to_string(item.port) + ": " +
                    (detail.empty() ? ec.message() : detail) + " [" +
                    std::string(naa::host::errc_name(static_cast<Errc>(ec.value()))) + "]");
  }
  detail::remember_endpoint(opts, ctx->session->transport());
  ctx->state = NAAICE_MRSP_DONE;
  handle->comm_ctx = reinterpret_cast<naaice_communication_context*>(ctx.release());
  t_last_error.clear();
  return 0;
}

}  // namespace

int naa_create(const naa_function_code_t function_code, naa_param_t* input_params,
               unsigned int input_amount, naa_param_t* output_params, unsigned int output_amount,
               naa_handle* handle) {
  return create_handle("naa_create", function_code, input_params, input_amount, output_params,
                       output_amount, nullptr, 0, handle);
}

int naa_create_streaming(const naa_function_code_t function_code, naa_param_t* input_params,
                         unsigned int input_amount, naa_param_t* output_params,
                         unsigned int output_amount, const bool* stream_inputs,
                         uint64_t stream_argument, naa_handle* handle) {
  if (stream_inputs == nullptr) {
    return fail(nullptr, "naa_create_streaming", "stream_inputs is NULL");
  }
  return create_handle("naa_create_streaming", function_code, input_params, input_amount,
                       output_params, output_amount, stream_inputs, stream_argument, handle);
}

int naa_invoke(naa_handle* handle) {
  static const char* const kFn = "naa_invoke";
  if (handle == nullptr || handle->comm_ctx == nullptr || !ctx_of(handle)->session) {
    return fail(nullptr, kFn, "handle not created (naa_create failed or naa_finalize called)");
  }
  Ap2Context& ctx = *ctx_of(handle);
  if (handle->function_code < 1 || handle->function_code > 127) {
    return fail(&ctx, kFn,
                "function code " + std::to_string(handle->function_code) + " is not 1..127");
  }
  std::string detail;
  if (auto ec =
          ctx.session->start_call(static_cast<std::uint8_t>(handle->function_code), 0, detail)) {
    return fail(&ctx, kFn, detail.empty() ? ec.message() : detail);
  }
  ctx.state = NAAICE_DATA_SENDING;
  ctx.have_last = false;
  return 0;
}

namespace {
int finish(Ap2Context& ctx, const char* fn, detail::CallOutcome& o, naa_status* status) {
  ctx.have_last = true;
  ctx.last = naa_status{};
  ctx.last.user_immediate = o.result.return_code;
  ctx.last.bytes_received = o.result.bytes_received;
  if (o.ec) {
    fail(&ctx, fn, o.detail.empty() ? o.ec.message() : o.detail);
    fill_status(status, ctx);
    return -1;
  }
  ctx.state = NAAICE_FINISHED;
  fill_status(status, ctx);
  return 0;
}
}  // namespace

int naa_test(naa_handle* handle, bool* flag, naa_status* status) {
  static const char* const kFn = "naa_test";
  if (flag != nullptr) *flag = false;
  if (handle == nullptr || handle->comm_ctx == nullptr || !ctx_of(handle)->session) {
    return fail(nullptr, kFn, "handle not created");
  }
  if (flag == nullptr) return fail(ctx_of(handle), kFn, "flag is NULL");
  Ap2Context& ctx = *ctx_of(handle);
  if (!ctx.session->call_outstanding()) {
    if (!ctx.have_last) return fail(&ctx, kFn, "no call in progress (call naa_invoke first)");
    *flag = true;
    fill_status(status, ctx);
    return ctx.state == NAAICE_ERROR ? -1 : 0;
  }
  detail::CallOutcome o;
  if (!ctx.session->test(o)) {
    ctx.state = NAAICE_CALCULATING;
    fill_status(status, ctx);
    return 0;
  }
  *flag = true;
  return finish(ctx, kFn, o, status);
}

int naa_wait(naa_handle* handle, naa_status* status) {
  static const char* const kFn = "naa_wait";
  if (handle == nullptr || handle->comm_ctx == nullptr || !ctx_of(handle)->session) {
    return fail(nullptr, kFn, "handle not created");
  }
  Ap2Context& ctx = *ctx_of(handle);
  if (!ctx.session->call_outstanding()) {
    if (!ctx.have_last) return fail(&ctx, kFn, "no call in progress (call naa_invoke first)");
    fill_status(status, ctx);
    return ctx.state == NAAICE_ERROR ? -1 : 0;
  }
  detail::CallOutcome o;
  const auto timeout = ctx.session->options().call_timeout;
  if (!ctx.session->wait(o, timeout)) {
    return fail(&ctx, kFn,
                "the NAA did not answer within " + std::to_string(timeout.count()) +
                    " ms (NAA_CALL_TIMEOUT_MS); the call is still outstanding");
  }
  return finish(ctx, kFn, o, status);
}

int naa_finalize(naa_handle* handle) {
  if (handle == nullptr || handle->comm_ctx == nullptr) return 0;
  std::unique_ptr<Ap2Context> ctx(ctx_of(handle));
  handle->comm_ctx = nullptr;
  std::error_code ec;
  if (ctx->session) ec = ctx->session->disconnect();
  ctx->session.reset();
  {
    CApiState& st = state();
    std::lock_guard lock(st.mu);
    if (ctx->spec_index < st.spec.size()) st.spec[ctx->spec_index].in_use = false;
  }
  return 0;
}

const char* naa_last_error(const naa_handle* handle) {
  if (handle != nullptr && handle->comm_ctx != nullptr) return ctx_of(handle)->error.c_str();
  return t_last_error.c_str();
}

}  // extern "C"
