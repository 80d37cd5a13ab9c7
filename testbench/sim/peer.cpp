#include "peer.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "naa/protocol/icrc.hpp"
#include "naa/protocol/immediate.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "seed.hpp"

namespace naa::testbench {
namespace p = naa::protocol;
namespace op = naa::protocol::opcode;

namespace {

// CM transaction IDs, comm IDs and starting PSNs: from the test seed (NAA_TEST_SEED).
std::mt19937& rng() {
  static std::mt19937 r(static_cast<std::uint32_t>(seed_for("TestPeer")));
  return r;
}

std::uint32_t packets_for(std::size_t len, std::uint32_t mtu) {
  return len == 0 ? 1U : static_cast<std::uint32_t>((len + mtu - 1) / mtu);
}

}  // namespace

std::uint32_t parse_ipv4(const std::string& s) {
  in_addr a{};
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) throw std::runtime_error("bad IP " + s);
  return ntohl(a.s_addr);
}

TestPeer::TestPeer(const std::string& my_ip, const std::string& naa_ip)
    : my_ip_(parse_ipv4(my_ip)), naa_ip_(parse_ipv4(naa_ip)) {
  fd_ = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (fd_ < 0) throw std::runtime_error("socket");
  int v = IP_PMTUDISC_DO;
  (void)::setsockopt(fd_, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof v);
  int buf = 4 << 20;
  if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf) != 0) {
    (void)::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(p::kRoceUdpPort);
  a.sin_addr.s_addr = htonl(my_ip_);
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    throw std::runtime_error("bind " + my_ip + ":4791: " + std::strerror(errno));
  }
}

TestPeer::~TestPeer() {
  if (fd_ >= 0) ::close(fd_);
}

void TestPeer::send_raw(p::ByteView d) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(p::kRoceUdpPort);
  to.sin_addr.s_addr = htonl(naa_ip_);
  for (int i = 0; i < 1000; ++i) {
    if (::sendto(fd_, d.data(), d.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to) >=
        0) {
      return;
    }
    if (errno != EAGAIN && errno != ENOBUFS) break;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  throw std::runtime_error(std::string("sendto: ") + std::strerror(errno));
}

void TestPeer::send_packet(const p::PacketHeaders& h, p::ByteView payload) {
  std::vector<std::uint8_t> buf(p::packet_size(h, payload.size()));
  const auto n = p::encode_packet(h, payload, buf);
  if (!n) throw std::runtime_error("encode_packet failed");
  buf.resize(*n);
  const auto ip = p::make_roce_headers(my_ip_, p::kRoceUdpPort, naa_ip_, buf.size());
  p::write_icrc(ip, buf);
  send_raw(buf);
}

bool TestPeer::pump(Ms timeout) {
  pollfd pfd{fd_, POLLIN, 0};
  if (::poll(&pfd, 1, static_cast<int>(timeout.count())) <= 0) return false;
  std::vector<std::uint8_t> buf(9000);
  sockaddr_in from{};
  socklen_t fl = sizeof from;
  const ssize_t r = ::recvfrom(fd_, buf.data(), buf.size(), MSG_DONTWAIT,
                               reinterpret_cast<sockaddr*>(&from), &fl);
  if (r < 0) return false;
  buf.resize(static_cast<std::size_t>(r));
  ++received_;
  const auto ip =
      p::make_roce_headers(ntohl(from.sin_addr.s_addr), ntohs(from.sin_port), my_ip_, buf.size());
  const auto id = p::recover_ipv4_id(ip, buf);
  if (!id) {
    ++icrc_failures_;
    return true;
  }
  if (*id != 0) ++nonzero_ids_;
  const auto v = p::decode_packet(buf);
  if (!v) {
    ++icrc_failures_;  // counts as a failure of the NAA's output too
    return true;
  }
  dispatch(*v);
  return true;
}

bool TestPeer::wait_for(const std::function<bool()>& pred, Ms timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    const auto left = std::chrono::duration_cast<Ms>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) return pred();
    (void)pump(std::min(left, Ms(50)));
  }
  return true;
}

void TestPeer::drain(Ms duration) {
  const auto end = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < end)
    (void)pump(Ms(10));
}

Connection* TestPeer::find(std::uint32_t my_qpn) {
  for (Connection* c : conns_) {
    if (c->my_qpn == my_qpn) return c;
  }
  return nullptr;
}

void TestPeer::dispatch(const p::PacketView& v) {
  const auto& bth = v.headers.bth;
  if (bth.dest_qpn == p::kCmQpn) {
    if (bth.opcode != op::kUdSendOnly) return;
    const auto mad = p::decode_cm_mad(v.payload);
    if (!mad) return;
    if (std::holds_alternative<p::CmDreq>(mad->body)) answer_dreq(*mad);
    cm_inbox_.push_back(*mad);
    return;
  }
  Connection* c = find(bth.dest_qpn);
  if (c == nullptr) return;
  if (v.info->kind == p::OpKind::acknowledge) {
    c->acks.push_back(AckRecord{bth.psn, v.headers.aeth->syndrome, v.headers.aeth->msn});
    return;
  }
  if (v.info->kind == p::OpKind::rdma_read_response) {
    c->read_data.insert(c->read_data.end(), v.payload.begin(), v.payload.end());
    ++c->read_responses;
    if (v.headers.aeth)
      c->acks.push_back(AckRecord{bth.psn, v.headers.aeth->syndrome, v.headers.aeth->msn});
    return;
  }
  responder(*c, v);
}

void TestPeer::answer_dreq(const p::CmMad& mad) {
  // As a CM does: a DREP for every DREQ (PROTOCOL.md 4), counted on the connection it names.
  const auto& dreq = std::get<p::CmDreq>(mad.body);
  for (Connection* c : conns_) {
    if (c->my_comm_id == dreq.remote_comm_id && c->my_qpn == dreq.remote_qpn) ++c->dreqs_received;
  }
  p::CmDrep drep;
  drep.local_comm_id = dreq.remote_comm_id;
  drep.remote_comm_id = dreq.local_comm_id;
  send_mad(p::CmMad{mad.header, drep});
}

void TestPeer::reply(Connection& c, std::uint32_t psn, std::uint8_t syndrome, bool completes_imm) {
  if (c.faults.ack_only_immediate && !completes_imm) return;
  if (c.faults.withhold_acks > 0) {
    if (c.faults.withhold_acks != ResponderFaults::kAll) --c.faults.withhold_acks;
    return;
  }
  send_ack(c, psn, syndrome);
}

void TestPeer::send_ack(Connection& c, std::uint32_t psn, std::uint8_t syndrome) {
  c.acks_sent.push_back(AckSent{psn, syndrome, WallClock::now()});
  p::PacketHeaders h;
  h.bth.opcode = op::kAcknowledge;
  h.bth.dest_qpn = c.naa_qpn;
  h.bth.psn = psn;
  h.aeth = p::Aeth{syndrome, c.msn};
  if (c.irn) {  // docs/protocol.md 8.2: cumulative ACK in the BTH, SACK of the packet answered
    h.bth.opcode = op::kIrnAcknowledge;
    h.bth.psn = p::psn_add(c.epsn, p::kMax24);
    h.sack_eth = p::SackEth{0, syndrome == p::kAethAck ? psn : h.bth.psn, 0};
  }
  send_packet(h, {});
}

void TestPeer::responder(Connection& c, const p::PacketView& v) {
  const auto& bth = v.headers.bth;
  c.rx_log.push_back(
      RxRecord{bth.psn, bth.opcode, bth.ack_req, v.payload.size(), WallClock::now()});
  if (const auto lost = c.faults.lose_psns.find(bth.psn); lost != c.faults.lose_psns.end()) {
    c.faults.lose_psns.erase(lost);
    return;
  }
  if (bth.psn != c.epsn) {
    if (p::psn_after(bth.psn, c.epsn)) {
      if (!c.nak_sent) {
        c.nak_sent = true;
        send_ack(c, c.epsn, p::kNakPsnSequenceError);
      }
    } else {
      ++c.duplicates_seen;
      reply(c, p::psn_add(c.epsn, p::kMax24), p::kAethAck, false);
    }
    return;
  }
  const auto& info = *v.info;
  const bool needs_receive = (info.kind == p::OpKind::send && info.starts_message()) ||
                             (info.kind == p::OpKind::rdma_write && v.headers.immediate);
  if (needs_receive && c.faults.rnr_naks > 0) {
    // No receive buffer: RNR NAK with this PSN, no state change; later packets are dropped
    // silently until this one comes again (as after a NAK 0x60).
    if (c.faults.rnr_naks != ResponderFaults::kAll) --c.faults.rnr_naks;
    c.nak_sent = true;
    send_ack(c, bth.psn, p::rnr_nak_syndrome(c.faults.rnr_timer_code));
    return;
  }
  c.nak_sent = false;
  if (info.kind == p::OpKind::send) {
    if (info.starts_message()) {
      c.send_buf.clear();
      c.in_send = true;
    }
    c.send_buf.insert(c.send_buf.end(), v.payload.begin(), v.payload.end());
    if (info.ends_message()) {
      c.in_send = false;
      c.msn = p::psn_add(c.msn, 1);
      c.completions.push_back(
          Completion{true, c.send_buf, v.headers.immediate, bth.solicited_event});
    }
  } else if (info.kind == p::OpKind::rdma_write) {
    if (info.starts_message()) {
      const auto& r = *v.headers.reth;
      if (r.dma_length != 0 && (r.rkey != c.host_rkey || r.va < c.host_va ||
                                r.va - c.host_va + r.dma_length > c.host_mem.size())) {
        ++c.write_errors;
        send_ack(c, bth.psn, p::kNakRemoteAccessError);
        return;
      }
      c.write_va = r.va;
      c.in_write = true;
    }
    if (!v.payload.empty()) {
      std::memcpy(c.host_mem.data() + (c.write_va - c.host_va), v.payload.data(), v.payload.size());
    }
    c.write_va += v.payload.size();
    c.writes_bytes += v.payload.size();
    if (info.ends_message()) {
      c.in_write = false;
      c.msn = p::psn_add(c.msn, 1);
      if (v.headers.immediate) {
        c.completions.push_back(Completion{false, {}, v.headers.immediate, bth.solicited_event});
      }
    }
  } else {
    return;
  }
  c.epsn = p::psn_add(bth.psn, 1);
  if (bth.ack_req) {
    reply(c, bth.psn, p::kAethAck, info.ends_message() && v.headers.immediate.has_value());
  }
}

void TestPeer::send_mad(const p::CmMad& mad) {
  std::vector<std::uint8_t> bytes(p::kMadSize);
  if (!p::encode_cm_mad(mad, bytes)) throw std::runtime_error("encode_cm_mad");
  p::PacketHeaders h;
  h.bth.opcode = op::kUdSendOnly;
  h.bth.dest_qpn = p::kCmQpn;
  h.bth.psn = ud_psn_++;
  h.bth.ack_req = true;  // as Linux does on CM datagrams; the NAA ignores it
  h.deth = p::Deth{p::kCmQKey, 0, p::kCmQpn};
  send_packet(h, bytes);
}

void TestPeer::send_req(Connection& c, const ConnectOptions& o) {
  c.my_qpn = o.local_qpn ? *o.local_qpn : next_qpn_++;
  c.my_comm_id = o.comm_id ? *o.comm_id : static_cast<std::uint32_t>(rng()());
  c.mtu = *p::ib_mtu_bytes(o.mtu_enum);
  c.epsn = o.starting_psn ? (*o.starting_psn & p::kMax24)
                          : static_cast<std::uint32_t>(rng()()) & p::kMax24;
  c.host_mem.assign(o.host_mem_size, 0);
  c.host_va = 0x7f0000000000ULL + (std::uint64_t{c.my_qpn} << 24);
  c.host_rkey = 0x5000 + c.my_qpn;
  conns_.push_back(&c);

  p::CmReq req;
  req.local_comm_id = c.my_comm_id;
  req.service_id = p::rdma_cm_service_id(o.cm_port);
  req.local_ca_guid = 0x0200000000000000ULL | my_ip_;
  req.local_qpn = c.my_qpn;
  req.responder_resources = 16;
  req.initiator_depth = o.initiator_depth;
  req.remote_cm_response_timeout = o.remote_cm_response_timeout;
  req.transport_service_type = p::kCmTransportRc;
  req.end_to_end_flow_control = true;
  req.starting_psn = c.epsn;  // the NAA sends starting here (PROTOCOL.md 4)
  req.local_cm_response_timeout = 20;
  req.retry_count = o.retry_count;
  req.pkey = 0xFFFF;
  req.path_mtu = o.mtu_enum;
  req.rnr_retry_count = o.rnr_retry;
  req.max_cm_retries = o.max_cm_retries;
  req.primary_local_lid = 0xFFFF;
  req.primary_remote_lid = 0xFFFF;
  req.primary_local_gid = p::ipv4_mapped_gid(my_ip_);
  req.primary_remote_gid = p::ipv4_mapped_gid(naa_ip_);
  req.primary_hop_limit = 64;
  req.primary_subnet_local = true;
  req.primary_local_ack_timeout = o.local_ack_timeout;
  p::RdmaCmIpHeader ch;
  ch.src_port = 40000;
  ch.src_ip = my_ip_;
  ch.dst_ip = naa_ip_;
  (void)p::encode_rdma_cm_ip_header(ch, req.private_data);
  if (o.irn_offer) {
    (void)p::encode_capability_block(*o.irn_offer,
                                     std::span(req.private_data).subspan(p::kCapabilityReqOffset));
  }
  p::MadHeader mh;
  mh.transaction_id = (std::uint64_t{rng()()} << 32) | rng()();
  c.req = p::CmMad{mh, req};
  send_mad(*c.req);
}

void TestPeer::resend_req(const Connection& c) {
  if (!c.req) throw std::logic_error("resend_req before send_req");
  send_mad(*c.req);
}

std::optional<p::CmRep> TestPeer::wait_rep(Connection& c, std::uint16_t* rej, Ms timeout) {
  std::optional<p::CmRep> result;
  (void)wait_for(
      [&] {
        for (auto it = cm_inbox_.begin(); it != cm_inbox_.end(); ++it) {
          if (const auto* rep = std::get_if<p::CmRep>(&it->body);
              rep && rep->remote_comm_id == c.my_comm_id) {
            c.naa_qpn = rep->local_qpn;
            c.naa_comm_id = rep->local_comm_id;
            c.send_psn = rep->starting_psn;
            c.irn =
                p::find_capability_block(rep->private_data, p::kCapabilityRepOffset).has_value();
            result = *rep;
            cm_inbox_.erase(it);
            return true;
          }
          if (const auto* r = std::get_if<p::CmRej>(&it->body);
              r && r->remote_comm_id == c.my_comm_id) {
            if (rej != nullptr) *rej = r->reason;
            cm_inbox_.erase(it);
            return true;
          }
        }
        return false;
      },
      timeout);
  return result;
}

void TestPeer::send_rtu(const Connection& c) {
  p::CmRtu rtu;
  rtu.local_comm_id = c.my_comm_id;
  rtu.remote_comm_id = c.naa_comm_id;
  send_mad(p::CmMad{c.req ? c.req->header : p::MadHeader{}, rtu});
}

std::uint16_t TestPeer::connect(Connection& c, const ConnectOptions& o) {
  send_req(c, o);
  std::uint16_t rej = 0xFFFF;
  if (!wait_rep(c, &rej)) return rej;
  if (o.send_rtu) send_rtu(c);
  return 0;
}

void TestPeer::disconnect(Connection& c) {
  p::CmDreq dreq;
  dreq.local_comm_id = c.my_comm_id;
  dreq.remote_comm_id = c.naa_comm_id;
  dreq.remote_qpn = c.naa_qpn;
  p::MadHeader mh;
  mh.transaction_id = (std::uint64_t{rng()()} << 32) | rng()();
  send_mad(p::CmMad{mh, dreq});
  (void)wait_for([&] {
    for (auto it = cm_inbox_.begin(); it != cm_inbox_.end(); ++it) {
      if (const auto* d = std::get_if<p::CmDrep>(&it->body);
          d && d->remote_comm_id == c.my_comm_id) {
        cm_inbox_.erase(it);
        return true;
      }
    }
    return false;
  });
  std::erase(conns_, &c);
}

std::uint32_t TestPeer::post_write(Connection& c, std::uint64_t va, std::uint32_t rkey,
                                   p::ByteView data, std::optional<std::uint32_t> imm,
                                   bool solicited) {
  const std::uint32_t n = packets_for(data.size(), c.mtu);
  std::uint32_t psn = c.send_psn;
  for (std::uint32_t i = 0; i < n; ++i) {
    const bool first = i == 0;
    const bool last = i + 1 == n;
    p::PacketHeaders h;
    if (first && last) {
      h.bth.opcode = imm ? op::kWriteOnlyImm : op::kWriteOnly;
    } else if (first) {
      h.bth.opcode = op::kWriteFirst;
    } else if (last) {
      h.bth.opcode = imm ? op::kWriteLastImm : op::kWriteLast;
    } else {
      h.bth.opcode = op::kWriteMiddle;
    }
    if (first) h.reth = p::Reth{va, rkey, static_cast<std::uint32_t>(data.size())};
    if (last && imm) h.immediate = *imm;
    h.bth.solicited_event = last && solicited;
    h.bth.ack_req = last;
    h.bth.dest_qpn = c.naa_qpn;
    h.bth.psn = psn;
    const std::size_t off = std::size_t{i} * c.mtu;
    const std::size_t len = std::min<std::size_t>(c.mtu, data.size() - off);
    send_packet(h, data.subspan(off, len));
    if (!last) psn = p::psn_add(psn, 1);
  }
  c.send_psn = p::psn_add(psn, 1);
  return psn;
}

std::uint32_t TestPeer::post_send(Connection& c, p::ByteView data, bool solicited) {
  const std::uint32_t n = packets_for(data.size(), c.mtu);
  std::uint32_t psn = c.send_psn;
  for (std::uint32_t i = 0; i < n; ++i) {
    const bool first = i == 0;
    const bool last = i + 1 == n;
    p::PacketHeaders h;
    h.bth.opcode = (first && last) ? op::kSendOnly
                   : first         ? op::kSendFirst
                   : last          ? op::kSendLast
                                   : op::kSendMiddle;
    h.bth.solicited_event = last && solicited;
    h.bth.ack_req = last;
    h.bth.dest_qpn = c.naa_qpn;
    h.bth.psn = psn;
    const std::size_t off = std::size_t{i} * c.mtu;
    send_packet(h, data.subspan(off, std::min<std::size_t>(c.mtu, data.size() - off)));
    if (!last) psn = p::psn_add(psn, 1);
  }
  c.send_psn = p::psn_add(psn, 1);
  return psn;
}

std::uint32_t TestPeer::post_read(Connection& c, std::uint64_t va, std::uint32_t rkey,
                                  std::uint32_t len) {
  p::PacketHeaders h;
  h.bth.opcode = op::kReadRequest;
  h.bth.dest_qpn = c.naa_qpn;
  h.bth.psn = c.send_psn;
  h.bth.ack_req = true;
  h.reth = p::Reth{va, rkey, len};
  c.read_data.clear();
  c.read_responses = 0;
  send_packet(h, {});
  const std::uint32_t psn = c.send_psn;
  c.send_psn = p::psn_add(c.send_psn, packets_for(len, c.mtu));
  return psn;
}

std::optional<AckRecord> TestPeer::wait_ack(Connection& c, Ms timeout) {
  if (!wait_for([&] { return !c.acks.empty(); }, timeout)) return std::nullopt;
  AckRecord a = c.acks.front();
  c.acks.pop_front();
  return a;
}

std::optional<Completion> TestPeer::wait_completion(Connection& c, Ms timeout) {
  if (!wait_for([&] { return !c.completions.empty(); }, timeout)) return std::nullopt;
  Completion x = c.completions.front();
  c.completions.pop_front();
  return x;
}

std::optional<TestPeer::MrspResult> TestPeer::mrsp(Connection& c,
                                                   const std::vector<p::MrspRequestEntry>& e) {
  std::vector<std::uint8_t> msg(p::mrsp_request_size(e.size()));
  if (!p::encode_mrsp_request(e, msg)) return std::nullopt;
  (void)post_send(c, msg, true);
  const auto done = wait_completion(c);
  if (!done || !done->is_send) return std::nullopt;
  c.acks.clear();  // the ACK of our SEND came before the answer; callers look at later ones
  const auto m = p::decode_mrsp(done->data);
  if (!m) return std::nullopt;
  MrspResult r;
  if (const auto* err = std::get_if<p::MrspError>(&*m)) {
    r.error = err->code;
  } else if (const auto* adv = std::get_if<p::MrspAdvertisementView>(&*m)) {
    for (std::size_t i = 0; i < adv->count(); ++i)
      r.regions.push_back(adv->entry(i));
  } else {
    return std::nullopt;
  }
  return r;
}

std::optional<std::uint32_t> TestPeer::call(
    Connection& c, const MrspResult& regions,
    const std::vector<std::pair<std::size_t, std::vector<std::uint8_t>>>& inputs, std::uint8_t fn,
    std::uint32_t user, Ms timeout) {
  for (const auto& [idx, bytes] : inputs) {
    const auto& r = regions.regions.at(idx);
    (void)post_write(c, r.naa_address, r.rkey, bytes);
  }
  const auto& r0 = regions.regions.empty() ? p::MrspAdvertisementEntry{} : regions.regions.front();
  (void)post_write(c, r0.naa_address, r0.rkey, {}, p::encode_call_immediate(fn, user), true);
  const auto done = wait_completion(c, timeout);
  if (!done || !done->imm) return std::nullopt;
  return done->imm;
}

}  // namespace naa::testbench
