#include "fake_peer.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

#include "naa/protocol/headers.hpp"
#include "naa/protocol/icrc.hpp"
#include "naa/protocol/immediate.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/opcode.hpp"

namespace naa::testbench {

namespace op = protocol::opcode;
using protocol::psn_add;
using protocol::psn_diff;

namespace {
sockaddr_in make_addr(std::uint32_t ip, std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(ip);
  return a;
}
}  // namespace

FakePeer::FakePeer(const Options& options) : opts_(options), mem_(options.memory_size) {
  if (opts_.reference_naa) opts_.mini_naa = true;
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(fd_, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
  int pmtu = IP_PMTUDISC_DO;
  ::setsockopt(fd_, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);
  int buf = 8 << 20;
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf);
  const sockaddr_in a = make_addr(opts_.ip, protocol::kRoceUdpPort);
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    throw std::runtime_error("fake peer: cannot bind its address: " + std::string(strerror(errno)));
  }
  epsn_ = opts_.start_psn & protocol::kMax24;
  cm_psn_ = 0x777;
  thread_ = std::thread([this] { run(); });
}

FakePeer::~FakePeer() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  thread_.join();
  ::close(fd_);
}

void FakePeer::set_fault(std::function<Fault(const SeenPacket&, std::size_t)> script) {
  std::lock_guard lock(mu_);
  script_ = std::move(script);
}

std::vector<SeenPacket> FakePeer::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}
std::vector<std::uint8_t> FakePeer::memory(std::size_t offset, std::size_t length) const {
  std::lock_guard lock(mu_);
  return {mem_.begin() + static_cast<std::ptrdiff_t>(offset),
          mem_.begin() + static_cast<std::ptrdiff_t>(offset + length)};
}
void FakePeer::fill_memory(std::size_t offset, const std::vector<std::uint8_t>& bytes) {
  std::lock_guard lock(mu_);
  std::copy(bytes.begin(), bytes.end(), mem_.begin() + static_cast<std::ptrdiff_t>(offset));
}
std::vector<std::vector<std::uint8_t>> FakePeer::sends() const {
  std::lock_guard lock(mu_);
  return sends_;
}
std::vector<std::uint32_t> FakePeer::immediates() const {
  std::lock_guard lock(mu_);
  return imms_;
}
std::optional<protocol::CmReq> FakePeer::last_req() const {
  std::lock_guard lock(mu_);
  return req_;
}
int FakePeer::reqs_received() const {
  std::lock_guard lock(mu_);
  return reqs_;
}
bool FakePeer::rtu_received() const {
  std::lock_guard lock(mu_);
  return rtu_;
}
int FakePeer::dreqs_received() const {
  std::lock_guard lock(mu_);
  return dreqs_;
}

std::vector<std::uint64_t> FakePeer::placed_addresses() const {
  std::lock_guard lock(mu_);
  return placed_;
}

bool FakePeer::dreq_received() const {
  std::lock_guard lock(mu_);
  return dreq_;
}
std::optional<protocol::CmRej> FakePeer::last_rej() const {
  std::lock_guard lock(mu_);
  return rej_;
}
std::uint64_t FakePeer::nonzero_ip_ids() const {
  std::lock_guard lock(mu_);
  return nonzero_ids_;
}
std::uint64_t FakePeer::bad_icrc() const {
  std::lock_guard lock(mu_);
  return bad_icrc_;
}
std::uint32_t FakePeer::host_qpn() const {
  std::lock_guard lock(mu_);
  return req_ ? req_->local_qpn : 0;
}
std::uint32_t FakePeer::host_ip() const {
  std::lock_guard lock(mu_);
  return host_ip_;
}
std::uint32_t FakePeer::host_start_psn() const {
  std::lock_guard lock(mu_);
  return req_ ? req_->starting_psn : 0;
}

void FakePeer::run() {
  std::array<std::uint8_t, 9216> buf{};
  for (;;) {
    {
      std::unique_lock lock(mu_);
      if (stop_) return;
      // Delayed packets whose time has come.
      const auto now = Clock::now();
      std::vector<SeenPacket> due;
      for (auto it = delayed_.begin(); it != delayed_.end();) {
        if (it->first <= now) {
          due.push_back(it->second);
          it = delayed_.erase(it);
        } else {
          ++it;
        }
      }
      for (const auto& p : due)
        process_request(p);
    }
    pollfd pfd{fd_, POLLIN, 0};
    if (::poll(&pfd, 1, 2) <= 0) continue;
    std::array<std::uint8_t, CMSG_SPACE(sizeof(in_pktinfo))> ctrl{};
    sockaddr_in from{};
    iovec iov{buf.data(), buf.size()};
    msghdr mh{};
    mh.msg_name = &from;
    mh.msg_namelen = sizeof from;
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctrl.data();
    mh.msg_controllen = ctrl.size();
    const ssize_t n = ::recvmsg(fd_, &mh, MSG_DONTWAIT);
    if (n <= 0) continue;
    std::uint32_t dst = opts_.ip;
    for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr; c = CMSG_NXTHDR(&mh, c)) {
      if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
        in_pktinfo pi{};
        std::memcpy(&pi, CMSG_DATA(c), sizeof pi);
        dst = ntohl(pi.ipi_addr.s_addr);
      }
    }
    std::lock_guard lock(mu_);
    on_datagram(buf.data(), static_cast<std::size_t>(n), ntohl(from.sin_addr.s_addr),
                ntohs(from.sin_port), dst);
  }
}

void FakePeer::on_datagram(const std::uint8_t* data, std::size_t n, std::uint32_t src_ip,
                           std::uint16_t src_port, std::uint32_t dst_ip) {
  const protocol::ByteView bytes(data, n);
  const auto ctx = protocol::make_roce_headers(src_ip, src_port, dst_ip, n);
  const auto id = protocol::recover_ipv4_id(ctx, bytes);
  if (!id) {
    ++bad_icrc_;
    return;
  }
  if (*id != 0) ++nonzero_ids_;
  auto pkt = protocol::decode_packet(bytes);
  if (!pkt) return;
  host_ip_ = src_ip;
  SeenPacket p;
  p.headers = pkt->headers;
  p.payload.assign(pkt->payload.begin(), pkt->payload.end());
  p.src_port = src_port;
  p.ip_id = *id;
  p.at = Clock::now();
  if (p.headers.bth.dest_qpn == protocol::kCmQpn) {
    auto mad = protocol::decode_cm_mad(pkt->payload);
    if (mad) on_cm(*mad);
    return;
  }
  if (p.headers.bth.dest_qpn != opts_.qpn) return;
  if (pkt->info->is_response()) {
    responses_.push_back(p);
    cv_.notify_all();
    return;
  }
  on_request(p);
}

void FakePeer::send_packet(const protocol::PacketHeaders& h, protocol::ByteView payload) {
  std::vector<std::uint8_t> out(protocol::packet_size(h, payload.size()));
  auto n = protocol::encode_packet(h, payload, out);
  if (!n) return;
  const auto ctx = protocol::make_roce_headers(opts_.ip, protocol::kRoceUdpPort, host_ip_, *n);
  protocol::write_icrc(ctx, protocol::MutableByteView(out.data(), *n));
  const sockaddr_in to = make_addr(host_ip_, protocol::kRoceUdpPort);
  ::sendto(fd_, out.data(), *n, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
}

void FakePeer::send_mad(const protocol::CmMad& mad) {
  std::array<std::uint8_t, protocol::kMadSize> b{};
  if (!protocol::encode_cm_mad(mad, b)) return;
  protocol::PacketHeaders h;
  h.bth.opcode = op::kUdSendOnly;
  h.bth.dest_qpn = protocol::kCmQpn;
  h.bth.psn = cm_psn_;
  cm_psn_ = psn_add(cm_psn_, 1);
  h.deth = protocol::Deth{protocol::kCmQKey, 0, protocol::kCmQpn};
  send_packet(h, b);
}

void FakePeer::on_cm(const protocol::CmMad& mad) {
  if (const auto* req = std::get_if<protocol::CmReq>(&mad.body)) {
    ++reqs_;
    if (!req_ || req_->local_comm_id != req->local_comm_id) {
      // A new connection: fresh responder state (a retried REQ keeps it).
      epsn_ = opts_.start_psn & protocol::kMax24;
      msn_ = 0;
      nak_sent_ = false;
      in_write_ = false;
      in_send_ = false;
      ++local_comm_id_;
    }
    req_ = *req;
    remote_comm_id_ = req->local_comm_id;
    send_psn_ = req->starting_psn;
    if (opts_.cm_mode == CmMode::ignore) return;
    protocol::CmMad reply;
    reply.header.transaction_id = mad.header.transaction_id;
    if (opts_.cm_mode == CmMode::reject) {
      protocol::CmRej rej;
      rej.local_comm_id = local_comm_id_;
      rej.remote_comm_id = req->local_comm_id;
      rej.message_rejected = protocol::kCmRejMessageReq;
      rej.reason = opts_.reject_reason;
      std::copy_n(opts_.reject_text.begin(),
                  std::min(opts_.reject_text.size(), rej.private_data.size()),
                  rej.private_data.begin());
      reply.body = rej;
    } else {
      protocol::CmRep rep;
      rep.local_comm_id = local_comm_id_;
      rep.remote_comm_id = req->local_comm_id;
      rep.local_qpn = opts_.qpn;
      rep.starting_psn = opts_.start_psn;
      rep.responder_resources = std::min<std::uint8_t>(req->initiator_depth, 4);
      rep.initiator_depth = std::min<std::uint8_t>(req->responder_resources, 4);
      rep.rnr_retry_count = opts_.rep_rnr_retry;
      rep.target_ack_delay = 0;
      reply.body = rep;
    }
    send_mad(reply);
    return;
  }
  if (std::get_if<protocol::CmRtu>(&mad.body) != nullptr) {
    rtu_ = true;
    return;
  }
  if (const auto* dreq = std::get_if<protocol::CmDreq>(&mad.body)) {
    dreq_ = true;
    ++dreqs_;
    if (opts_.reference_naa) return;  // the reference NAA never sends a DREP
    protocol::CmDrep drep;
    drep.local_comm_id = dreq->remote_comm_id;
    drep.remote_comm_id = dreq->local_comm_id;
    protocol::CmMad reply;
    reply.header.transaction_id = mad.header.transaction_id;
    reply.body = drep;
    send_mad(reply);
    return;
  }
  if (const auto* rej = std::get_if<protocol::CmRej>(&mad.body)) {
    rej_ = *rej;
  }
}

void FakePeer::send_dreq() {
  std::lock_guard lock(mu_);
  protocol::CmDreq dreq;
  dreq.local_comm_id = local_comm_id_;
  dreq.remote_comm_id = remote_comm_id_;
  dreq.remote_qpn = req_ ? req_->local_qpn : 0;
  protocol::CmMad mad;
  mad.header.transaction_id = 0xD0D0;
  mad.body = dreq;
  send_mad(mad);
}

void FakePeer::send_raw(protocol::PacketHeaders headers, const std::vector<std::uint8_t>& payload) {
  std::lock_guard lock(mu_);
  headers.bth.dest_qpn = req_ ? req_->local_qpn : 0;
  send_packet(headers, payload);
}

std::optional<SeenPacket> FakePeer::next_response(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  if (!cv_.wait_for(lock, timeout, [&] { return !responses_.empty(); })) return std::nullopt;
  SeenPacket p = responses_.front();
  responses_.pop_front();
  return p;
}

void FakePeer::send_ack(std::uint8_t syndrome, std::uint32_t psn) {
  protocol::PacketHeaders h;
  h.bth.opcode = op::kAcknowledge;
  h.bth.dest_qpn = req_ ? req_->local_qpn : 0;
  h.bth.psn = psn & protocol::kMax24;
  h.aeth = protocol::Aeth{syndrome, msn_};
  send_packet(h, {});
}

void FakePeer::on_request(const SeenPacket& p) {
  const std::size_t index = requests_.size();
  requests_.push_back(p);
  Fault f;
  if (script_) f = script_(p, index);
  switch (f.kind) {
    case Fault::Kind::deliver:
      process_request(p);
      break;
    case Fault::Kind::drop:
      break;
    case Fault::Kind::duplicate:
      process_request(p);
      process_request(p);
      break;
    case Fault::Kind::rnr_nak:
      if (p.headers.bth.psn == epsn_)
        send_ack(protocol::rnr_nak_syndrome(f.rnr_code), p.headers.bth.psn);
      break;
    case Fault::Kind::delay:
      delayed_.emplace_back(Clock::now() + std::chrono::milliseconds(f.delay_ms), p);
      break;
  }
}

// A deliberately plain responder (PROTOCOL.md 3): in-order only, one NAK per gap, re-ACK of
// duplicates, writes into the flat memory, sends collected whole.
void FakePeer::process_request(const SeenPacket& p) {
  const auto& h = p.headers;
  const std::uint32_t psn = h.bth.psn;
  const std::uint32_t d = psn_diff(psn, epsn_);
  if (d != 0) {
    if (d < 0x800000) {
      if (!nak_sent_) {
        send_ack(protocol::kNakPsnSequenceError, epsn_);
        nak_sent_ = true;
      }
    } else {
      send_ack(protocol::kAethAck, psn_add(epsn_, protocol::kMax24));
    }
    return;
  }
  nak_sent_ = false;
  const auto* info = protocol::find_opcode(h.bth.opcode);
  if (info == nullptr) return;
  if (info->kind == protocol::OpKind::rdma_write) {
    if (info->starts_message()) {
      const auto& r = *h.reth;
      if (r.dma_length > 0 && (r.rkey != opts_.rkey || r.va < opts_.memory_va ||
                               r.va + r.dma_length > opts_.memory_va + mem_.size())) {
        send_ack(protocol::kNakRemoteAccessError, psn);
        return;
      }
      write_off_ = r.va - opts_.memory_va;
      in_write_ = true;
    }
    std::copy(p.payload.begin(), p.payload.end(),
              mem_.begin() + static_cast<std::ptrdiff_t>(write_off_));
    write_off_ += p.payload.size();
    if (info->ends_message()) {
      in_write_ = false;
      msn_ = psn_add(msn_, 1);
      if (h.immediate) imms_.push_back(*h.immediate);
      if (opts_.mini_naa && h.immediate) {
        epsn_ = psn_add(psn, 1);
        if (h.bth.ack_req) send_ack(protocol::kAethAck, psn);
        mini_naa_call(*h.immediate);
        return;
      }
    }
  } else if (info->kind == protocol::OpKind::send) {
    if (info->starts_message()) {
      send_buf_.clear();
      in_send_ = true;
    }
    send_buf_.insert(send_buf_.end(), p.payload.begin(), p.payload.end());
    if (info->ends_message()) {
      in_send_ = false;
      msn_ = psn_add(msn_, 1);
      sends_.push_back(send_buf_);
      if (h.immediate) imms_.push_back(*h.immediate);
      if (opts_.mini_naa) {
        epsn_ = psn_add(psn, 1);
        if (h.bth.ack_req) send_ack(protocol::kAethAck, psn);
        mini_naa_send(send_buf_);
        return;
      }
    }
  } else if (info->kind == protocol::OpKind::rdma_read_request) {
    const auto& r = *h.reth;
    const std::uint32_t mtu = 4096 >> (5 - std::min<int>(5, req_ ? req_->path_mtu : 5));
    const std::uint32_t n = r.dma_length == 0 ? 1 : (r.dma_length + mtu - 1) / mtu;
    msn_ = psn_add(msn_, 1);
    for (std::uint32_t k = 0; k < n; ++k) {
      protocol::PacketHeaders rh;
      rh.bth.dest_qpn = req_->local_qpn;
      rh.bth.psn = psn_add(psn, k);
      rh.bth.opcode = n == 1      ? op::kReadResponseOnly
                      : k == 0    ? op::kReadResponseFirst
                      : k + 1 < n ? op::kReadResponseMiddle
                                  : op::kReadResponseLast;
      if (rh.bth.opcode != op::kReadResponseMiddle)
        rh.aeth = protocol::Aeth{protocol::kAethAck, msn_};
      const std::uint64_t off = r.va - opts_.memory_va + std::uint64_t{k} * mtu;
      const std::size_t len = std::min<std::uint64_t>(mtu, r.dma_length - std::uint64_t{k} * mtu);
      send_packet(rh, protocol::ByteView(mem_.data() + off, r.dma_length == 0 ? 0 : len));
    }
    epsn_ = psn_add(psn, n);
    return;
  }
  epsn_ = psn_add(psn, 1);
  if (h.bth.ack_req) send_ack(protocol::kAethAck, psn);
}

void FakePeer::send_message(bool write, std::uint64_t va, std::uint32_t rkey,
                            protocol::ByteView data, std::optional<std::uint32_t> imm) {
  const std::uint32_t mtu = 4096 >> (5 - std::min<int>(5, req_ ? req_->path_mtu : 5));
  const std::size_t n = data.empty() ? 1 : (data.size() + mtu - 1) / mtu;
  for (std::size_t k = 0; k < n; ++k) {
    protocol::PacketHeaders h;
    h.bth.dest_qpn = req_->local_qpn;
    h.bth.psn = send_psn_;
    send_psn_ = psn_add(send_psn_, 1);
    const bool first = k == 0;
    const bool last = k + 1 == n;
    if (write) {
      h.bth.opcode = n == 1  ? (imm ? op::kWriteOnlyImm : op::kWriteOnly)
                     : first ? op::kWriteFirst
                     : !last ? op::kWriteMiddle
                             : (imm ? op::kWriteLastImm : op::kWriteLast);
      if (first) h.reth = protocol::Reth{va, rkey, static_cast<std::uint32_t>(data.size())};
    } else {
      h.bth.opcode = n == 1  ? (imm ? op::kSendOnlyImm : op::kSendOnly)
                     : first ? op::kSendFirst
                     : !last ? op::kSendMiddle
                             : (imm ? op::kSendLastImm : op::kSendLast);
    }
    if (last && imm) h.immediate = *imm;
    h.bth.ack_req = last;
    h.bth.solicited_event = last;
    const std::size_t off = k * mtu;
    send_packet(h, data.empty() ? protocol::ByteView{}
                                : data.subspan(off, std::min<std::size_t>(mtu, data.size() - off)));
  }
}

void FakePeer::mini_naa_send(const std::vector<std::uint8_t>& msg) {
  std::vector<std::uint8_t> reply(protocol::kMrspMaxMessageSize);
  auto req = protocol::decode_mrsp_request(msg);
  std::size_t n = 0;
  if (opts_.mrsp_error != 0 || !req) {
    n = *protocol::encode_mrsp_error(opts_.mrsp_error != 0 ? opts_.mrsp_error : 0x02, reply);
  } else {
    regions_.clear();
    placed_.clear();
    std::vector<protocol::MrspAdvertisementEntry> adv;
    std::uint64_t next = opts_.memory_va + opts_.reference_base;
    for (std::size_t i = 0; i < req->count(); ++i) {
      auto e = req->entry(i);
      if (opts_.reference_naa) {
        // The NAA chooses: the requested address is ignored (issue 11).
        e.naa_address = next;
        next += (std::max<std::uint64_t>(e.size, 1) + 4095) / 4096 * 4096;
      }
      regions_.push_back(e);
      if ((e.flags & protocol::kMrspFlagInternal) == 0) {
        adv.push_back({e.naa_address, opts_.rkey, e.size});
        placed_.push_back(e.naa_address);
      }
    }
    n = *protocol::encode_mrsp_advertisement(adv, reply);
  }
  send_message(false, 0, 0, protocol::ByteView(reply.data(), n), std::nullopt);
}

void FakePeer::mini_naa_call(std::uint32_t imm) {
  const auto call = protocol::decode_call_immediate(imm);
  if (!call || call->aborted) return;
  std::uint32_t rc = 0;
  if (call->fn != 1) {
    rc = 3;
  } else {
    for (const auto& e : regions_) {
      if ((e.flags & protocol::kMrspFlagInternal) != 0) continue;
      for (std::uint64_t i = 0; i < e.size; ++i)
        ++mem_[e.naa_address - opts_.memory_va + i];
    }
  }
  std::vector<const protocol::MrspRequestEntry*> outs;
  if (rc == 0) {
    for (const auto& e : regions_) {
      if ((e.flags & protocol::kMrspFlagOutput) != 0) outs.push_back(&e);
    }
  }
  const std::uint32_t reply = protocol::encode_result_immediate(call->fn, rc);
  if (outs.empty()) {
    send_message(true, 0, 0, {}, reply);
    return;
  }
  for (std::size_t i = 0; i < outs.size(); ++i) {
    const auto& e = *outs[i];
    const protocol::ByteView bytes(mem_.data() + (e.naa_address - opts_.memory_va), e.size);
    send_message(true, e.host_va, e.host_rkey, bytes,
                 i + 1 == outs.size() ? std::optional<std::uint32_t>(reply) : std::nullopt);
  }
}

}  // namespace naa::testbench
