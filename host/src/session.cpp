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
constexpr std::uint64_t kMrspRecvId = 0x4D52535000000001ULL;  // "MRSP"
constexpr std::uint64_t kMrspSendId = 0x4D52535000000002ULL;
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

std::string wc_text(const WorkCompletion& wc) {
  return wc.status.message();
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
  if (std::any_of(regions.begin(), regions.end(),
                  [](const Region& r) { return (r.flags & Region::kStream) != 0; })) {
    if (opts_.stream_function < 1 || opts_.stream_function > 127) {
      detail = "streaming regions need SessionOptions::stream_function 1..127";
      return Errc::invalid_argument;
    }
    Region d = Region::internal(std::max<std::uint32_t>(opts_.stream_state_bytes, 1));
    d.flags |= Region::kStream;
    regions.push_back(d);
  }
  if (regions.size() > protocol::kMrspMaxEntries) {
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
  // Streaming regions need their payloads in order at the NAA's handlers, which only go-back-N
  // delivers (docs/protocol.md 8.5): such a session does not offer IRN.
  cp.irn = std::none_of(regions.begin(), regions.end(),
                        [](const Region& r) { return (r.flags & Region::kStream) != 0; });
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
  info_.mrsp_time = Clock::now() - t1;
  if (ec) {
    (void)qp_->disconnect(opts_.disconnect_timeout);
    return ec;
  }
  return {};
}

// PROTOCOL.md 5.1: post the receive for the answer BEFORE sending 0x01; both SENDs carry SE.
std::error_code SessionCore::run_mrsp(std::string& detail) {
  std::vector<protocol::MrspRequestEntry> entries;
  // Parameter regions in index order, then internal regions.
  for (int pass = 0; pass < 2; ++pass) {
    for (RegionState& st : regions_) {
      const bool internal = (st.region.flags & Region::kInternal) != 0;
      if (internal != (pass == 1)) continue;
      protocol::MrspRequestEntry e;
      e.flags = st.region.flags;
      e.naa_address = *st.region.naa_address;
      e.size = static_cast<std::uint32_t>(st.region.size);
      if (!internal) {
        e.host_va = reinterpret_cast<std::uintptr_t>(st.region.data);  // NOLINT: VAs on the wire
        e.host_rkey = st.mr.rkey;
        st.placement = entries.size();
      } else if ((st.region.flags & Region::kStream) != 0) {
        e.host_va = opts_.stream_argument;    // the stream descriptor's argument
        e.host_rkey = opts_.stream_function;  // and its function code
      }
      entries.push_back(e);
    }
  }
  auto n = protocol::encode_mrsp_request(entries, mrsp_tx_);
  if (!n) {
    detail = "cannot encode the MRSP request";
    return Errc::invalid_argument;
  }
  RecvWr rwr;
  rwr.wr_id = kMrspRecvId;
  rwr.sge = {reinterpret_cast<std::uintptr_t>(mrsp_rx_.data()),  // NOLINT
             static_cast<std::uint32_t>(mrsp_rx_.size()), mrsp_rx_mr_.lkey};
  if (auto ec = qp_->post_recv(rwr)) return ec;
  SendWr swr;
  swr.wr_id = kMrspSendId;
  swr.opcode = WrOpcode::send;
  swr.sge = {reinterpret_cast<std::uintptr_t>(mrsp_tx_.data()),  // NOLINT
             static_cast<std::uint32_t>(*n), mrsp_tx_mr_.lkey};
  swr.solicited = true;
  if (auto ec = qp_->post_send(swr)) return ec;

  bool sent = false;
  std::optional<WorkCompletion> answer;
  const auto deadline = Clock::now() + opts_.mrsp_timeout;
  while (!sent || !answer) {
    const auto now = Clock::now();
    if (now >= deadline) {
      detail = "no MRSP answer from the NAA within " + std::to_string(opts_.mrsp_timeout.count()) +
               " ms";
      return Errc::timeout;
    }
    WorkCompletion wc;
    if (qp_->wait_cq(std::span(&wc, 1), deadline - now) == 0) {
      if (auto qe = qp_->error()) {
        detail = "connection failed during MRSP: " + qe.message();
        return qe;
      }
      continue;
    }
    if (wc.status) {
      detail = "MRSP " + std::string(wc.wr_id == kMrspSendId ? "SEND" : "receive") +
               " failed: " + wc_text(wc);
      return wc.status;
    }
    if (wc.wr_id == kMrspSendId) sent = true;
    if (wc.wr_id == kMrspRecvId) answer = wc;
  }
  const protocol::ByteView reply(mrsp_rx_.data(), answer->byte_len);
  auto msg = protocol::decode_mrsp(reply);
  if (!msg) {
    detail = "MRSP answer does not decode: " + std::string(protocol::to_string(msg.error()));
    return Errc::mrsp_bad_reply;
  }
  if (const auto* err = std::get_if<protocol::MrspError>(&*msg)) {
    detail = "the NAA refused the regions: MRSP error 0x0" + std::to_string(err->code) + " (" +
             std::string(protocol::mrsp_error_name(err->code)) + ")";
    switch (err->code) {
      case protocol::kMrspErrorNotEnoughMemory:
        return Errc::mrsp_not_enough_memory;
      case protocol::kMrspErrorInvalidAddress:
        return Errc::mrsp_invalid_address;
      case protocol::kMrspErrorTooManyRegions:
        return Errc::mrsp_too_many_regions;
      default:
        return Errc::mrsp_unknown_error;
    }
  }
  const auto* adv = std::get_if<protocol::MrspAdvertisementView>(&*msg);
  if (adv == nullptr) {
    detail = "the NAA answered MRSP with a request (type 0x01)";
    return Errc::mrsp_bad_reply;
  }
  std::size_t expected = 0;
  for (const RegionState& st : regions_) {
    if ((st.region.flags & Region::kInternal) == 0) ++expected;
  }
  if (adv->count() != expected) {
    detail = "MRSP advertisement has " + std::to_string(adv->count()) + " entries, expected " +
             std::to_string(expected);
    return Errc::mrsp_bad_reply;
  }
  for (std::size_t i = 0; i < adv->count(); ++i) {
    const auto e = adv->entry(i);
    placements_.push_back(Placement{e.naa_address, e.rkey, e.size});
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
