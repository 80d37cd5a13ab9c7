// SessionCore (session_core.hpp): connect, MRSP (PROTOCOL.md 5.1), calls and their completions;
// the throwing C++ API over it is in session_api.cpp.
#include "naa/host/session.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "ipv4_socket.hpp"
#include "naa/host/error.hpp"
#include "naa/protocol/immediate.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/mrsp.hpp"
#include "session_core.hpp"

namespace naa::host {
namespace detail {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint64_t kNaaAlignment = 4096;  // as the NAAICE host library places regions
constexpr std::uint64_t kCallRecvTag = 1ULL << 63;

constexpr std::uint64_t kMaxMessageBytes = std::uint64_t{1} << 31;

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) {
  return (v + a - 1) / a * a;
}

// The source address the kernel would use towards `dst` (no packet is sent).
std::optional<std::uint32_t> route_source(std::uint32_t dst) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  const sockaddr_in a = detail::make_sockaddr(dst, protocol::kRoceUdpPort);
  std::optional<std::uint32_t> out;
  if (::connect(fd, detail::as_sockaddr(a), sizeof a) == 0) {
    sockaddr_in local{};
    socklen_t len = sizeof local;
    if (::getsockname(fd, detail::as_sockaddr(local), &len) == 0) out = detail::ipv4_of(local);
  }
  ::close(fd);
  return out;
}

}  // namespace

std::unique_ptr<SessionCore> SessionCore::open(std::shared_ptr<Transport> transport,
                                               const SessionOptions& options,
                                               std::vector<Region> regions, std::error_code& ec,
                                               std::string& detail) {
  std::unique_ptr<SessionCore> s(new SessionCore());
  s->opts_ = options;
  s->transport_ = std::move(transport);
  ec = s->setup(std::move(regions), detail);
  if (ec) return nullptr;
  return s;
}

SessionCore::~SessionCore() {
  (void)disconnect();
}

std::error_code SessionCore::setup(std::vector<Region> regions, std::string& detail) {
  const auto naa_ip = parse_ipv4(opts_.naa_address);
  if (!naa_ip) {
    detail = "not an IPv4 address: '" + opts_.naa_address + "'";
    return Errc::invalid_argument;
  }
  // Validate the regions before touching the network.
  std::size_t non_internal = 0;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const Region& r = regions[i];
    const std::string where = "region " + std::to_string(i) + ": ";
    if ((r.flags & ~0x1FU) != 0) {
      detail = where + "unknown flags";
      return Errc::invalid_argument;
    }
    if ((r.flags & Region::kStream) != 0 &&
        ((r.flags & Region::kInternal) != 0 || (r.flags & Region::kInput) == 0)) {
      detail = where + "streaming applies to inputs";
      return Errc::invalid_argument;
    }
    if ((r.flags & Region::kInternal) != 0) {
      if (r.flags != Region::kInternal) {
        detail = where + "an internal region cannot also be input, output or single-send";
        return Errc::invalid_argument;
      }
    } else {
      if ((r.flags & (Region::kInput | Region::kOutput)) == 0) {
        detail = where + "must be input, output or internal";
        return Errc::invalid_argument;
      }
      if ((r.flags & Region::kSingleSend) != 0 && (r.flags & Region::kInput) == 0) {
        detail = where + "single-send applies to inputs";
        return Errc::invalid_argument;
      }
      if (r.data == nullptr && r.size != 0) {
        detail = where + "no host buffer";
        return Errc::invalid_argument;
      }
      ++non_internal;
    }
    // A region is written as one RDMA message, and a message is at most 2 GiB (PROTOCOL.md 7,
    // IBA C9-9): refuse it here, before connecting, not after the NAA accepted it in MRSP.
    if (r.size > kMaxMessageBytes) {
      detail = where + std::to_string(r.size) +
               " bytes is larger than 2 GiB, the largest RDMA message (PROTOCOL.md 7)";
      return Errc::invalid_argument;
    }
  }
  // The stream descriptor (docs/protocol.md "Streaming regions"): an INTERNAL|STREAM entry after
  // the internal regions, only when a region streams, so a stock call's MRSP is unchanged.
  const bool streams = std::any_of(regions.begin(), regions.end(), [](const Region& r) {
    return (r.flags & Region::kStream) != 0;
  });
  if (streams && (opts_.stream_function < 1 || opts_.stream_function > 127)) {
    detail = "streaming regions need SessionOptions::stream_function 1..127";
    return Errc::invalid_argument;
  }
  // sPIN code with the connection (docs/protocol.md "Handler images"): the HANDLER_IMAGE region
  // the image and the handlers' initial state are written into, the request's last entry.
  if (!opts_.handler_image.empty()) {
    if (!streams) {
      detail = "a handler image needs a stream() region (its handlers process it)";
      return Errc::invalid_argument;
    }
    if (opts_.handler_state.size() > opts_.stream_state_bytes) {
      detail = "the initial handler state is larger than SessionOptions::stream_state_bytes";
      return Errc::invalid_argument;
    }
    image_buf_ = opts_.handler_image;
    image_buf_.insert(image_buf_.end(), opts_.handler_state.begin(), opts_.handler_state.end());
    if (image_buf_.size() > kMaxMessageBytes) {
      detail = "the handler image is larger than 2 GiB";
      return Errc::invalid_argument;
    }
  } else if (!opts_.handler_state.empty()) {
    detail = "an initial handler state needs SessionOptions::handler_image";
    return Errc::invalid_argument;
  }
  if (regions.size() + (streams ? 1 : 0) + (image_buf_.empty() ? 0 : 1) >
      protocol::kMrspMaxEntries) {
    detail = "at most 255 regions fit an MRSP message";
    return Errc::invalid_argument;
  }
  std::uint64_t next = align_up(opts_.naa_base_address, kNaaAlignment);
  for (Region& r : regions) {
    if (!r.naa_address) {
      r.naa_address = next;
      next = align_up(next + std::max<std::uint64_t>(r.size, 1), kNaaAlignment);
    }
    if (*r.naa_address > protocol::kMrspMaxNaaAddress) {
      detail = "NAA address beyond 56 bits";
      return Errc::invalid_argument;
    }
  }
  // The regions the session adds go behind every other region, wherever the caller placed those
  // (AP1 places them all; with every region placed here that is where the next one would go).
  std::uint64_t end = align_up(opts_.naa_base_address, kNaaAlignment);
  for (const Region& r : regions)
    end =
        std::max(end, align_up(*r.naa_address + std::max<std::uint64_t>(r.size, 1), kNaaAlignment));
  const auto add = [&](Region r) {
    r.naa_address = end;
    end = align_up(end + std::max<std::uint64_t>(r.size, 1), kNaaAlignment);
    regions.push_back(r);
    return end - 1 <= protocol::kMrspMaxNaaAddress;
  };
  if (streams) {
    Region d = Region::internal(std::max<std::uint32_t>(opts_.stream_state_bytes, 1));
    d.flags |= Region::kStream;
    if (!add(d)) {
      detail = "NAA address beyond 56 bits";
      return Errc::invalid_argument;
    }
  }
  if (!image_buf_.empty() &&
      !add({image_buf_.data(), image_buf_.size(), protocol::kMrspFlagHandlerImage, {}})) {
    detail = "NAA address beyond 56 bits";
    return Errc::invalid_argument;
  }

  // Endpoint.
  if (!transport_) {
    UdpRoceOptions o;
    o.progress = opts_.progress;
    o.pcap_path = opts_.pcap_path;
    o.irn = opts_.irn;
    if (!opts_.local_address.empty()) {
      o.local_ip = parse_ipv4(opts_.local_address);
      if (!o.local_ip) {
        detail = "not an IPv4 address: '" + opts_.local_address + "'";
        return Errc::invalid_argument;
      }
    } else if ((*naa_ip >> 24) != 127) {
      o.local_ip = route_source(*naa_ip);
    }
    std::error_code ec;
    transport_ = open_udp_roce(o, ec, &detail);
    if (ec) return ec;
  }

  // Register the host buffers (PROTOCOL.md 5.1: outputs are written back with the host rkey).
  for (const Region& r : regions) {
    RegionState st;
    st.region = r;
    st.send_length = r.size;
    if ((r.flags & Region::kInternal) == 0) {
      Access access = Access::none;
      if ((r.flags & Region::kOutput) != 0) access = Access::local_write | Access::remote_write;
      if (auto ec = transport_->register_memory(r.data, r.size, access, st.mr)) {
        detail = "cannot register a host buffer";
        return ec;
      }
      st.registered = true;
    }
    regions_.push_back(st);
  }
  mrsp_tx_.resize(protocol::kMrspMaxMessageSize);
  mrsp_rx_.resize(protocol::kMrspMaxMessageSize);
  if (auto ec = transport_->register_memory(mrsp_tx_.data(), mrsp_tx_.size(), Access::none,
                                            mrsp_tx_mr_)) {
    return ec;
  }
  if (auto ec = transport_->register_memory(mrsp_rx_.data(), mrsp_rx_.size(), Access::local_write,
                                            mrsp_rx_mr_)) {
    return ec;
  }

  // Connect (PROTOCOL.md 4).
  ConnectParams cp;
  cp.remote_ip = *naa_ip;
  cp.cm_port = opts_.cm_port;
  cp.timeout = opts_.connect_timeout;
  cp.path_mtu = opts_.path_mtu;
  cp.local_ack_timeout = opts_.local_ack_timeout;
  cp.retry_count = opts_.retry_count;
  cp.rnr_retry_count = opts_.rnr_retry_count;
  // Streaming regions compose with IRN (docs/protocol.md 8.3 "Streaming on IRN"); a session may
  // still keep them on go-back-N (SessionOptions::irn_streaming).
  cp.irn = opts_.irn_streaming || std::none_of(regions.begin(), regions.end(), [](const Region& r) {
             return (r.flags & Region::kStream) != 0;
           });
  const auto t0 = Clock::now();
  std::error_code ec;
  qp_ = transport_->connect(cp, ec, &detail);
  if (ec) return ec;
  const auto t1 = Clock::now();
  info_.local_address = format_ipv4(transport_->local_ip());
  info_.naa_address = opts_.naa_address;
  info_.qpn = qp_->qp_num();
  info_.naa_qpn = qp_->remote_qp_num();
  info_.path_mtu = qp_->path_mtu();
  info_.connect_time = t1 - t0;
  ec = run_mrsp(detail);
  if (!ec) ec = install_handler(detail);
  info_.mrsp_time = Clock::now() - t1;
  if (ec) {
    (void)qp_->disconnect(opts_.disconnect_timeout);
    return ec;
  }
  return {};
}

std::error_code SessionCore::set_send_length(std::size_t index, std::size_t bytes) {
  if (index >= regions_.size() || (regions_[index].region.flags & Region::kInput) == 0 ||
      bytes > regions_[index].region.size) {
    return Errc::invalid_argument;
  }
  regions_[index].send_length = bytes;
  return {};
}

bool SessionCore::connected() const {
  return qp_ && !qp_->error();
}

std::error_code SessionCore::start_call(std::uint8_t fn, std::uint32_t user24,
                                        std::string& detail) {
  auto imm = protocol::try_encode_call_immediate(fn, user24);
  if (!imm) {
    detail = "function code must be 1..127 and user bits fit 24 bits";
    return Errc::invalid_argument;
  }
  if (active_) {
    detail = "a call is still outstanding on this session";
    return Errc::busy;
  }
  if (!qp_) {
    detail = "the session is disconnected";
    return Errc::not_connected;
  }
  if (handed_over_) {
    detail = "the session's connection was handed over to a peer NAA (bind_peer)";
    return Errc::not_connected;
  }
  if (auto qe = qp_->error()) {
    detail = "the connection is down: " + qe.message();
    return Errc::not_connected;
  }
  ++seq_;
  // PROTOCOL.md 5.2: first the receive for the NAA's WRITE_WITH_IMM.
  if (auto ec = qp_->post_recv(RecvWr{kCallRecvTag | seq_, {}})) {
    detail = "cannot post the receive for the reply";
    return ec;
  }
  std::vector<const RegionState*> inputs;
  for (RegionState& st : regions_) {
    st.written_before = st.registered ? transport_->remote_bytes_written(st.mr) : 0;
    const std::uint8_t f = st.region.flags;
    if ((f & Region::kInput) == 0) continue;
    if ((f & Region::kSingleSend) != 0 && first_call_done_) continue;
    inputs.push_back(&st);
  }
  outcome_ = CallOutcome{};
  outcome_.result.output_bytes.assign(regions_.size(), 0);
  started_ = Clock::now();
  fn_ = fn;
  reply_received_ = false;
  writes_done_ = false;
  active_ = true;
  // Inputs in index order, the last as WRITE_WITH_IMM with SE; only the last is signaled (an
  // error completes whatever WR it hits). No input: a zero-length WRITE_WITH_IMM.
  const std::size_t count = std::max<std::size_t>(inputs.size(), 1);
  for (std::size_t i = 0; i < count; ++i) {
    SendWr wr;
    wr.wr_id = seq_;
    const bool last = i + 1 == count;
    wr.opcode = last ? WrOpcode::rdma_write_with_imm : WrOpcode::rdma_write;
    wr.signaled = last;
    if (last) {
      wr.imm = *imm;
      wr.solicited = true;
    }
    if (!inputs.empty()) {
      const RegionState& st = *inputs[i];
      const Placement& p = placements_[st.placement];
      wr.sge = {reinterpret_cast<std::uintptr_t>(st.region.data),  // NOLINT
                static_cast<std::uint32_t>(st.send_length), st.mr.lkey};
      wr.remote_addr = p.naa_address;
      wr.rkey = p.rkey;
      outcome_.result.bytes_sent += st.send_length;
    } else if (!placements_.empty()) {
      wr.remote_addr = placements_[0].naa_address;
      wr.rkey = placements_[0].rkey;
    }
    if (auto ec = qp_->post_send(wr)) {
      detail = "cannot post an RDMA WRITE: " + ec.message();
      active_ = false;
      return ec;
    }
  }
  first_call_done_ = true;
  return {};
}

void SessionCore::handle(const WorkCompletion& wc) {
  if (!active_) return;
  if (wc.status) {
    if (!outcome_.ec) {
      outcome_.ec = wc.status;
      outcome_.detail =
          std::string(wc.opcode == WcOpcode::recv ? "the reply's receive" : "an input RDMA WRITE") +
          " failed: " + wc.status.message();
    }
    return;
  }
  if (wc.wr_id == (kCallRecvTag | seq_) && wc.opcode == WcOpcode::recv_rdma_with_imm) {
    reply_received_ = true;
    reply_dma_length_ = wc.byte_len;
    auto r = protocol::decode_result_immediate(wc.imm.value_or(0));
    if (!r) {
      outcome_.ec = Errc::remote_invalid_request;
      outcome_.detail =
          "the NAA's reply immediate is not a result (bit 7 set: a host -> NAA value)";
      return;
    }
    outcome_.result.return_code = r->return_code;
    // A success carries no function code: report the call's own.
    outcome_.result.fn = r->fn != 0 ? r->fn : fn_;
    return;
  }
  if (wc.wr_id == seq_ && wc.opcode == WcOpcode::rdma_write) writes_done_ = true;
}

bool SessionCore::finished(CallOutcome& out) {
  const bool done = outcome_.ec || (reply_received_ && writes_done_);
  if (!done) return false;
  outcome_.result.wall = Clock::now() - started_;
  for (std::size_t i = 0; i < regions_.size(); ++i) {
    const RegionState& st = regions_[i];
    if (!st.registered || (st.region.flags & Region::kOutput) == 0) continue;
    const std::uint64_t n = transport_->remote_bytes_written(st.mr) - st.written_before;
    outcome_.result.output_bytes[i] = n;
    outcome_.result.bytes_received += n;
  }
  if (!transport_->observes_remote_writes()) {
    // The reply WRITE_WITH_IMM targets the last output region (PROTOCOL.md 5.2); earlier output
    // writes are invisible to this backend.
    for (std::size_t i = regions_.size(); i-- > 0;) {
      if ((regions_[i].region.flags & Region::kOutput) == 0) continue;
      outcome_.result.output_bytes[i] = reply_dma_length_;
      outcome_.result.bytes_received = reply_dma_length_;
      break;
    }
  }
  // Success (immediate 0) names no function; only a failure echoes it (PROTOCOL.md 5.2).
  if (!outcome_.ec && outcome_.result.fn != 0 && outcome_.result.fn != fn_) {
    outcome_.detail = "warning: the reply echoes function " + std::to_string(outcome_.result.fn) +
                      ", the call was " + std::to_string(fn_);
  }
  out = std::move(outcome_);
  active_ = false;
  return true;
}

bool SessionCore::test(CallOutcome& out) {
  if (!active_) return false;
  WorkCompletion wcs[8];
  std::size_t n = 0;
  while ((n = qp_->poll_cq(wcs)) > 0) {
    for (std::size_t i = 0; i < n; ++i)
      handle(wcs[i]);
  }
  if (!outcome_.ec && !reply_received_) {
    if (auto qe = qp_->error()) {
      outcome_.ec = qe;
      outcome_.detail = "the connection went down during the call: " + qe.message();
    }
  }
  return finished(out);
}

bool SessionCore::wait(CallOutcome& out, std::chrono::nanoseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (test(out)) return true;
    if (!active_) return false;
    const auto now = Clock::now();
    if (now >= deadline) return false;
    WorkCompletion wc;
    if (qp_->wait_cq(std::span(&wc, 1), std::min<std::chrono::nanoseconds>(
                                            deadline - now, std::chrono::milliseconds(200))) == 1) {
      handle(wc);
    }
  }
}

std::error_code SessionCore::disconnect() {
  std::error_code ec;
  if (qp_) {
    ec = qp_->disconnect(opts_.disconnect_timeout);
    qp_.reset();
  }
  active_ = false;
  if (transport_) {
    for (RegionState& st : regions_) {
      if (st.registered) (void)transport_->deregister_memory(st.mr);
      st.registered = false;
    }
    if (mrsp_tx_mr_.lkey != 0) (void)transport_->deregister_memory(mrsp_tx_mr_);
    if (mrsp_rx_mr_.lkey != 0) (void)transport_->deregister_memory(mrsp_rx_mr_);
    mrsp_tx_mr_ = {};
    mrsp_rx_mr_ = {};
  }
  return ec;
}

}  // namespace detail

}  // namespace naa::host
