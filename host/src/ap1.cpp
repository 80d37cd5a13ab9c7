// The NAAICE low-level C API (compat/naaice.h, "AP1") on SessionCore.
//
// The context's public members mirror the reference's (programs read state, naa_returncode,
// bytes_received, mr_peer_data, ...); naa_state holds the session. The reference connects with
// librdmacm in naaice_setup_connection and runs MRSP later; SessionCore connects and runs MRSP as
// one step, so the connection is made by naaice_init_mrsp (docs/host/README.md "AP1").
#include <netdb.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "ap1_state.hpp"
#include "c_common.hpp"
#include "ipv4_socket.hpp"
#include "naa/host/error.hpp"
#include "naa/host/session.hpp"
#include "naaice.h"
#include "session_core.hpp"

using naa::host::Region;
namespace detail = naa::host::detail;
using naa::host::ap1::Ctx;
using naa::host::ap1::fail;
using naa::host::ap1::fail_error_state;
using naa::host::ap1::finish_call;
using naa::host::ap1::kMaxRegionBytes;
using naa::host::ap1::kNaaPageWidth;
using naa::host::ap1::release_context;
using naa::host::ap1::resolve_ipv4;
using naa::host::ap1::start_call;
using naa::host::ap1::usable;
using naa::host::ap1::wait_call;

extern "C" {

int naaice_init_communication_context(Ctx** comm_ctx, uint64_t addr_offset, size_t* param_sizes,
                                      char** params, unsigned int params_amount,
                                      unsigned int internal_mr_amount, size_t* internal_mr_sizes,
                                      uint8_t fncode, const char* local_address,
                                      const char* remote_address, uint16_t remote_cm_port) {
  static const char* const kFn = "naaice_init_communication_context";
  if (comm_ctx == nullptr) return fail(nullptr, kFn, "comm_ctx is NULL");
  *comm_ctx = nullptr;
  if (fncode < 1 || fncode > 127) {
    return fail(nullptr, kFn, "function code " + std::to_string(fncode) + " is not 1..127");
  }
  if (params_amount + internal_mr_amount > MAX_MRS) {
    return fail(nullptr, kFn,
                std::to_string(params_amount + internal_mr_amount) +
                    " regions: at most MAX_MRS (32) parameters and internal regions");
  }
  if ((params_amount > 0 && (param_sizes == nullptr || params == nullptr)) ||
      (internal_mr_amount > 0 && internal_mr_sizes == nullptr)) {
    return fail(nullptr, kFn, "a parameter or size array is NULL");
  }
  for (unsigned i = 0; i < params_amount + internal_mr_amount; ++i) {
    const std::size_t size =
        i < params_amount ? param_sizes[i] : internal_mr_sizes[i - params_amount];
    if (size > kMaxRegionBytes) {
      return fail(nullptr, kFn,
                  "region " + std::to_string(i) + " of " + std::to_string(size) +
                      " bytes is larger than 2 GiB, the largest RDMA message (PROTOCOL.md 7)");
    }
    if (i < params_amount && params[i] == nullptr && size != 0) {
      return fail(nullptr, kFn, "parameter " + std::to_string(i) + " has no buffer");
    }
  }
  if (remote_address == nullptr) return fail(nullptr, kFn, "remote address is NULL");
  std::string remote;
  if (!resolve_ipv4(remote_address, remote)) {
    return fail(nullptr, kFn, "cannot resolve '" + std::string(remote_address) + "' (IPv4)");
  }
  std::string local;
  if (local_address != nullptr && *local_address != '\0') {
    if (!resolve_ipv4(local_address, local)) {
      return fail(nullptr, kFn, "cannot resolve '" + std::string(local_address) + "' (IPv4)");
    }
  } else if (const char* v = detail::env("NAA_LOCAL_IP")) {
    local = v;
  }

  // calloc, as the reference (an aggregate: an implicit-lifetime type), so C programs may free().
  auto* ctx = static_cast<Ctx*>(std::calloc(1, sizeof(Ctx)));
  if (ctx == nullptr) return fail(nullptr, kFn, "out of memory");
  ctx->naa_state = new (std::nothrow) naa_ap1_state{};
  if (ctx->naa_state == nullptr) {
    std::free(ctx);
    return fail(nullptr, kFn, "out of memory");
  }
  naa_ap1_state& st = *ctx->naa_state;
  st.opts.naa_address = remote;
  st.opts.local_address = local;
  st.opts.cm_port = remote_cm_port;
  detail::apply_env_options(st.opts);

  ctx->state = NAAICE_INIT;
  ctx->fncode = fncode;
  ctx->timeout = DEFAULT_TIMEOUT;
  ctx->retry_count = DEFAULT_RETRY_COUNT;

  // Requested NAA addresses: internal regions first, then the parameters, one after another from
  // addr_offset, each rounded up to 4 KiB (the reference's get_sequential_naa_addresses).
  std::vector<std::uint64_t> addrs(params_amount + internal_mr_amount);
  std::vector<std::size_t> sizes(addrs.size());
  std::uint64_t next = addr_offset;
  for (std::size_t i = 0; i < addrs.size(); ++i) {
    sizes[i] = i < internal_mr_amount ? internal_mr_sizes[i] : param_sizes[i - internal_mr_amount];
    addrs[i] = next;
    next += (sizes[i] + kNaaPageWidth - 1) / kNaaPageWidth * kNaaPageWidth;
  }
  std::vector<std::uint64_t> locals(params_amount);
  for (unsigned i = 0; i < params_amount; ++i)
    locals[i] = reinterpret_cast<std::uintptr_t>(params[i]);
  if (naaice_set_internal_mrs(ctx, internal_mr_amount, addrs.data(), sizes.data()) != 0 ||
      naaice_set_parameter_mrs(ctx, params_amount, locals.data(), addrs.data() + internal_mr_amount,
                               sizes.data() + internal_mr_amount) != 0) {
    release_context(ctx);
    std::free(ctx);
    return -1;
  }
  std::uint8_t imm[3] = {0, 0, 0};
  (void)naaice_set_immediate(ctx, imm);
  st.mrsp_buffer.assign(MR_SIZE_MRSP, 0);
  ctx->mr_local_message = new naaice_mr_local{};
  ctx->mr_local_message->addr = st.mrsp_buffer.data();
  ctx->mr_local_message->size = st.mrsp_buffer.size();
  *comm_ctx = ctx;
  return 0;
}

// librdmacm events: this library drives the connection itself, so no event ever arrives.
int naaice_poll_connection_event(Ctx* comm_ctx, struct rdma_cm_event*, struct rdma_cm_event*) {
  return usable(comm_ctx) ? 0 : fail(nullptr, "naaice_poll_connection_event", "no context");
}
int naaice_handle_addr_resolved(Ctx* comm_ctx, struct rdma_cm_event*) {
  return usable(comm_ctx) ? 0 : -1;
}
int naaice_handle_route_resolved(Ctx* comm_ctx, struct rdma_cm_event*) {
  return usable(comm_ctx) ? 0 : -1;
}
int naaice_handle_connection_established(Ctx* comm_ctx, struct rdma_cm_event*) {
  return usable(comm_ctx) ? 0 : -1;
}
int naaice_handle_error(Ctx* comm_ctx, struct rdma_cm_event*) {
  return usable(comm_ctx) ? 0 : -1;
}
int naaice_handle_other(Ctx* comm_ctx, struct rdma_cm_event*) {
  return usable(comm_ctx) ? 0 : -1;
}

// One step of connection setup: INIT -> READY (addresses resolved by init), READY -> CONNECTED
// (the local endpoint is open; the IB CM connection itself is made with MRSP).
int naaice_poll_and_handle_connection_event(Ctx* comm_ctx) {
  static const char* const kFn = "naaice_setup_connection";
  if (!usable(comm_ctx)) return fail(nullptr, kFn, "context not initialised");
  naa_ap1_state& st = *comm_ctx->naa_state;
  if (comm_ctx->state == NAAICE_INIT) {
    comm_ctx->state = NAAICE_READY;
    return 0;
  }
  if (comm_ctx->state == NAAICE_READY) {
    std::string error;
    st.transport = detail::shared_endpoint(st.opts, error);
    if (!st.transport && !error.empty()) return fail(comm_ctx, kFn, error);
    // A UdpRoce endpoint is opened here when its address is known (given, or loopback: the first
    // free 127.0.0.x); otherwise the session picks the address routed to the NAA (session.cpp).
    const auto naa_ip = naa::host::parse_ipv4(st.opts.naa_address);
    const bool address_known = !st.opts.local_address.empty() || (naa_ip && (*naa_ip >> 24) == 127);
    if (!st.transport && address_known) {
      naa::host::UdpRoceOptions o;
      o.progress = st.opts.progress;
      o.pcap_path = st.opts.pcap_path;
      o.irn = st.opts.irn;
      if (!st.opts.local_address.empty()) o.local_ip = naa::host::parse_ipv4(st.opts.local_address);
      std::error_code ec;
      std::string detail_text;
      st.transport = naa::host::open_udp_roce(o, ec, &detail_text);
      if (ec) {
        return fail_error_state(comm_ctx, kFn,
                                "cannot open the local endpoint: " +
                                    (detail_text.empty() ? ec.message() : detail_text));
      }
      detail::remember_endpoint(st.opts, st.transport);
    }
    comm_ctx->state = NAAICE_CONNECTED;
  }
  return 0;
}

int naaice_setup_connection(Ctx* comm_ctx) {
  if (!usable(comm_ctx)) return fail(nullptr, "naaice_setup_connection", "no context");
  if (comm_ctx->state == NAAICE_ERROR) {
    return fail(comm_ctx, "naaice_setup_connection", "the context is in NAAICE_ERROR");
  }
  while (comm_ctx->state < NAAICE_CONNECTED) {
    if (naaice_poll_and_handle_connection_event(comm_ctx) != 0) return -1;
  }
  return 0;
}

int naaice_register_mrs(Ctx* comm_ctx) {
  static const char* const kFn = "naaice_register_mrs";
  if (!usable(comm_ctx)) return fail(nullptr, kFn, "no context");
  naa_ap1_state& st = *comm_ctx->naa_state;
  // The buffers are registered with the transport when the session is created (naaice_init_mrsp);
  // here the sizes are fixed (naaice_set_bytes_to_send may only shorten them from now on).
  st.registered_sizes.clear();
  for (unsigned i = 0; i < comm_ctx->no_local_mrs; ++i)
    st.registered_sizes.push_back(comm_ctx->mr_local_data[i].size);
  st.registered = true;
  return 0;
}

int naaice_set_parameter_mrs(Ctx* comm_ctx, unsigned int n_parameter_mrs, uint64_t* local_addrs,
                             uint64_t* remote_addrs, size_t* sizes) {
  static const char* const kFn = "naaice_set_parameter_mrs";
  if (!usable(comm_ctx)) return fail(nullptr, kFn, "no context");
  if (n_parameter_mrs + comm_ctx->no_internal_mrs > MAX_MRS) {
    return fail(comm_ctx, kFn, "more than MAX_MRS (32) regions");
  }
  if (n_parameter_mrs > 0 && (local_addrs == nullptr || remote_addrs == nullptr || !sizes)) {
    return fail(comm_ctx, kFn, "an array is NULL");
  }
  delete[] comm_ctx->mr_local_data;
  delete[] comm_ctx->mr_peer_data;
  comm_ctx->mr_local_data = new naaice_mr_local[n_parameter_mrs]{};
  comm_ctx->mr_peer_data = new naaice_mr_peer[n_parameter_mrs]{};
  comm_ctx->no_local_mrs = static_cast<std::uint8_t>(n_parameter_mrs);
  comm_ctx->no_peer_mrs = static_cast<std::uint8_t>(n_parameter_mrs);
  comm_ctx->no_input_mrs = 0;
  comm_ctx->no_output_mrs = 0;
  for (unsigned i = 0; i < n_parameter_mrs; ++i) {
    comm_ctx->mr_local_data[i].addr = reinterpret_cast<char*>(local_addrs[i]);
    comm_ctx->mr_local_data[i].size = sizes[i];
    comm_ctx->mr_peer_data[i].addr = remote_addrs[i];
    comm_ctx->mr_peer_data[i].size = sizes[i];
  }
  return 0;
}

int naaice_set_input_mr(Ctx* comm_ctx, unsigned int input_mr_idx) {
  if (!usable(comm_ctx)) return fail(nullptr, "naaice_set_input_mr", "no context");
  if (input_mr_idx >= comm_ctx->no_local_mrs) {
    return fail(comm_ctx, "naaice_set_input_mr",
                "region " + std::to_string(input_mr_idx) + " does not exist (there are " +
                    std::to_string(comm_ctx->no_local_mrs) + ")");
  }
  if (!comm_ctx->mr_local_data[input_mr_idx].to_write) {
    comm_ctx->mr_local_data[input_mr_idx].to_write = true;
    comm_ctx->no_input_mrs++;
  }
  return 0;
}

int naaice_set_output_mr(Ctx* comm_ctx, unsigned int output_mr_idx) {
  if (!usable(comm_ctx)) return fail(nullptr, "naaice_set_output_mr", "no context");
  if (output_mr_idx >= comm_ctx->no_peer_mrs) {
    return fail(comm_ctx, "naaice_set_output_mr",
                "region " + std::to_string(output_mr_idx) + " does not exist (there are " +
                    std::to_string(comm_ctx->no_peer_mrs) + ")");
  }
  if (!comm_ctx->mr_peer_data[output_mr_idx].to_write) {
    comm_ctx->mr_peer_data[output_mr_idx].to_write = true;
    comm_ctx->no_output_mrs++;
  }
  return 0;
}

int naaice_set_singlesend_mr(Ctx* comm_ctx, unsigned int singlesend_mr_idx) {
  if (!usable(comm_ctx)) return fail(nullptr, "naaice_set_singlesend_mr", "no context");
  if (singlesend_mr_idx >= comm_ctx->no_peer_mrs) {
    return fail(comm_ctx, "naaice_set_singlesend_mr",
                "region " + std::to_string(singlesend_mr_idx) + " does not exist");
  }
  comm_ctx->mr_local_data[singlesend_mr_idx].single_send = true;
  comm_ctx->mr_peer_data[singlesend_mr_idx].single_send = true;
  return naaice_set_input_mr(comm_ctx, singlesend_mr_idx);
}

int naaice_set_internal_mrs(Ctx* comm_ctx, unsigned int n_internal_mrs, uint64_t* addrs,
                            size_t* sizes) {
  static const char* const kFn = "naaice_set_internal_mrs";
  if (!usable(comm_ctx)) return fail(nullptr, kFn, "no context");
  if (n_internal_mrs + comm_ctx->no_local_mrs > MAX_MRS) {
    return fail(comm_ctx, kFn, "more than MAX_MRS (32) regions");
  }
  if (n_internal_mrs > 0 && (addrs == nullptr || sizes == nullptr)) {
    return fail(comm_ctx, kFn, "an array is NULL");
  }
  delete[] comm_ctx->mr_internal;
  comm_ctx->mr_internal = new naaice_mr_internal[n_internal_mrs]{};
  comm_ctx->no_internal_mrs = static_cast<std::uint8_t>(n_internal_mrs);
  for (unsigned i = 0; i < n_internal_mrs; ++i) {
    comm_ctx->mr_internal[i].addr = addrs[i];
    comm_ctx->mr_internal[i].size = sizes[i];
  }
  return 0;
}

int naaice_set_immediate(Ctx* comm_ctx, uint8_t* imm_bytes) {
  if (!usable(comm_ctx)) return fail(nullptr, "naaice_set_immediate", "no context");
  if (imm_bytes == nullptr) return fail(comm_ctx, "naaice_set_immediate", "imm_bytes is NULL");
  comm_ctx->immediate_bytearr[0] = comm_ctx->fncode;
  for (unsigned i = 1; i < 4; ++i)
    comm_ctx->immediate_bytearr[i] = imm_bytes[i - 1];
  return 0;
}

// Connects (IB CM) and runs MRSP (PROTOCOL.md 4, 5.1); blocks up to NAA_CONNECT_TIMEOUT_MS.
int naaice_ap1_set_handler(Ctx* comm_ctx, const void* image, size_t image_size, const void* state,
                           size_t state_size, uint64_t stream_argument) {
  static const char* const kFn = "naaice_ap1_set_handler";
  if (!usable(comm_ctx)) return fail(nullptr, kFn, "no context");
  naa_ap1_state& st = *comm_ctx->naa_state;
  if (st.session) return fail(comm_ctx, kFn, "MRSP already done on this context");
  if ((image == nullptr && image_size != 0) || (state == nullptr && state_size != 0)) {
    return fail(comm_ctx, kFn, "a NULL buffer with a size");
  }
  if (image == nullptr && state_size != 0) return fail(comm_ctx, kFn, "a state needs an image");
  if (state_size > st.opts.stream_state_bytes) {
    return fail(
        comm_ctx, kFn,
        "the state is larger than " + std::to_string(st.opts.stream_state_bytes) + " bytes");
  }
  const auto* i = static_cast<const std::uint8_t*>(image);
  const auto* s = static_cast<const std::uint8_t*>(state);
  st.opts.handler_image.assign(i, i + image_size);
  st.opts.handler_state.assign(s, s + state_size);
  st.opts.stream_function = comm_ctx->fncode;
  st.opts.stream_argument = stream_argument;
  st.stream = true;
  return 0;
}

int naaice_init_mrsp(Ctx* comm_ctx) {
  static const char* const kFn = "naaice_init_mrsp";
  if (!usable(comm_ctx)) return fail(nullptr, kFn, "no context");
  naa_ap1_state& st = *comm_ctx->naa_state;
  if (st.session) return fail(comm_ctx, kFn, "MRSP already done on this context");
  if (comm_ctx->state < NAAICE_CONNECTED && naaice_setup_connection(comm_ctx) != 0) return -1;
  std::vector<Region> regions;
  for (unsigned i = 0; i < comm_ctx->no_local_mrs; ++i) {
    const naaice_mr_local& l = comm_ctx->mr_local_data[i];
    const naaice_mr_peer& p = comm_ctx->mr_peer_data[i];
    if (!l.to_write && !p.to_write) {
      return fail(comm_ctx, kFn,
                  "region " + std::to_string(i) +
                      " is neither input nor output (naaice_set_input_mr / naaice_set_output_mr)");
    }
    const std::size_t size = st.registered ? st.registered_sizes[i] : l.size;
    Region r{l.addr, size, 0, p.addr};
    if (l.to_write) r.flags |= Region::kInput;
    if (p.to_write) r.flags |= Region::kOutput;
    if (l.single_send) r.flags |= Region::kSingleSend;  // as the reference, outputs included
    if (st.stream && l.to_write) r.flags |= Region::kStream;
    regions.push_back(r);
  }
  for (unsigned i = 0; i < comm_ctx->no_internal_mrs; ++i) {
    regions.push_back(
        Region::internal(comm_ctx->mr_internal[i].size).at(comm_ctx->mr_internal[i].addr));
  }
  if (!st.registered) (void)naaice_register_mrs(comm_ctx);
  comm_ctx->state = NAAICE_MRSP_SENDING;
  std::error_code ec;
  std::string detail_text;
  st.session =
      detail::SessionCore::open(st.transport, st.opts, std::move(regions), ec, detail_text);
  if (!st.session) {
    return fail_error_state(
        comm_ctx, kFn,
        "cannot set up " + st.opts.naa_address + ":" + std::to_string(st.opts.cm_port) + ": " +
            (detail_text.empty() ? ec.message() : detail_text) + " [" +
            std::string(naa::host::errc_name(static_cast<naa::host::Errc>(ec.value()))) + "]");
  }
  detail::remember_endpoint(st.opts, st.session->transport());
  // Where the NAA placed the regions (its 0x02 advertisement; it may differ from the request).
  const auto& placed = st.session->placements();
  for (unsigned i = 0; i < comm_ctx->no_peer_mrs && i < placed.size(); ++i) {
    comm_ctx->mr_peer_data[i].addr = placed[i].naa_address;
    comm_ctx->mr_peer_data[i].rkey = placed[i].rkey;
    comm_ctx->mr_peer_data[i].size = placed[i].size;
  }
  comm_ctx->state = NAAICE_MRSP_DONE;
  return 0;
}

int naaice_init_data_transfer(Ctx* comm_ctx) {
  if (!usable(comm_ctx)) return fail(nullptr, "naaice_init_data_transfer", "no context");
  return start_call(comm_ctx, "naaice_init_data_transfer", comm_ctx->fncode);
}

int naaice_handle_work_completion(struct ibv_wc*, Ctx* comm_ctx) {
  return fail(usable(comm_ctx) ? comm_ctx : nullptr, "naaice_handle_work_completion",
              "work completions are handled inside this library (use naaice_poll_cq_*)");
}

int naaice_poll_cq_nonblocking(Ctx* comm_ctx) {
  static const char* const kFn = "naaice_poll_cq_nonblocking";
  if (!usable(comm_ctx)) return fail(nullptr, kFn, "no context");
  naa_ap1_state& st = *comm_ctx->naa_state;
  if (!st.session || !st.session->call_outstanding()) return 0;
  detail::CallOutcome o;
  if (!st.session->test(o)) return 0;
  return finish_call(comm_ctx, kFn, o);
}

int naaice_poll_cq_blocking(Ctx* comm_ctx) {
  if (!usable(comm_ctx)) return fail(nullptr, "naaice_poll_cq_blocking", "no context");
  return wait_call(comm_ctx, "naaice_poll_cq_blocking");
}

int naaice_poll_cq_busy(Ctx* comm_ctx) {
  static const char* const kFn = "naaice_poll_cq_busy";
  if (!usable(comm_ctx)) return fail(nullptr, kFn, "no context");
  naa_ap1_state& st = *comm_ctx->naa_state;
  if (!st.session || !st.session->call_outstanding()) return 0;
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::duration<double>(comm_ctx->timeout > 0 ? comm_ctx->timeout : 1e9));
  detail::CallOutcome o;
  while (!st.session->test(o)) {
    if (std::chrono::steady_clock::now() > deadline) return fail(comm_ctx, kFn, "timeout");
  }
  return finish_call(comm_ctx, kFn, o);
}

int naaice_disconnect_and_cleanup(Ctx* comm_ctx) {
  if (!usable(comm_ctx)) return fail(nullptr, "naaice_disconnect_and_cleanup", "no context");
  naa_ap1_state& st = *comm_ctx->naa_state;
  // No DREP within NAA_DISCONNECT_TIMEOUT_MS is not an error (the reference NAA sends none).
  std::error_code ec;
  if (st.session) ec = st.session->disconnect();
  st.session.reset();
  st.transport.reset();
  release_context(comm_ctx);
  comm_ctx->state = NAAICE_DISCONNECTED;
  if (ec) {
    std::fprintf(stderr, "naa: naaice_disconnect_and_cleanup: %s\n", ec.message().c_str());
    return -1;
  }
  return 0;
}

int naaice_send_message(Ctx* comm_ctx, enum message_id message_type, uint8_t) {
  if (message_type == MSG_MR_AAR) return naaice_init_mrsp(comm_ctx);
  return fail(usable(comm_ctx) ? comm_ctx : nullptr, "naaice_send_message",
              "a host sends only MSG_MR_AAR (PROTOCOL.md 5.1)");
}

int naaice_write_data(Ctx* comm_ctx, uint8_t fncode) {
  return start_call(comm_ctx, "naaice_write_data", fncode);
}

// Receives are posted by the session itself (before MRSP and before every call).
int naaice_post_recv_mrsp(Ctx* comm_ctx) {
  return usable(comm_ctx) ? 0 : -1;
}
int naaice_post_recv_data(Ctx* comm_ctx) {
  return usable(comm_ctx) ? 0 : -1;
}
int naaice_init_rdma_resources(Ctx* comm_ctx) {
  return usable(comm_ctx) ? 0 : -1;
}

int naaice_do_mrsp(Ctx* comm_ctx) {
  return naaice_init_mrsp(comm_ctx);
}

int naaice_do_data_transfer(Ctx* comm_ctx) {
  if (naaice_init_data_transfer(comm_ctx) != 0) return -1;
  return wait_call(comm_ctx, "naaice_do_data_transfer");
}

int naaice_set_bytes_to_send(Ctx* comm_ctx, int mr_idx, int number_bytes) {
  static const char* const kFn = "naaice_set_bytes_to_send";
  if (!usable(comm_ctx)) return fail(nullptr, kFn, "no context");
  naa_ap1_state& st = *comm_ctx->naa_state;
  if (mr_idx < 0 || mr_idx >= comm_ctx->no_local_mrs) {
    return fail(comm_ctx, kFn, "region " + std::to_string(mr_idx) + " does not exist");
  }
  if (!st.registered) return fail(comm_ctx, kFn, "call naaice_register_mrs first");
  const auto i = static_cast<std::size_t>(mr_idx);
  // Negative (the reference's code) or 0 (its documentation): back to the full size.
  if (number_bytes <= 0) {
    comm_ctx->mr_local_data[i].size = st.registered_sizes[i];
    return 0;
  }
  if (static_cast<std::size_t>(number_bytes) > st.registered_sizes[i]) {
    return fail(comm_ctx, kFn, "more bytes than region " + std::to_string(mr_idx) + " holds");
  }
  comm_ctx->mr_local_data[i].size = static_cast<std::size_t>(number_bytes);
  return 0;
}

uint32_t naaice_ap1_return_code(const Ctx* comm_ctx) {
  return comm_ctx != nullptr && comm_ctx->naa_state != nullptr ? comm_ctx->naa_state->return_code
                                                               : 0;
}

const char* naaice_ap1_last_error(const Ctx* comm_ctx) {
  return comm_ctx != nullptr && comm_ctx->naa_state != nullptr ? comm_ctx->naa_state->error.c_str()
                                                               : "";
}

}  // extern "C"
