#include "exchange.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>
#include <stdexcept>
#include <utility>

#include "naa/protocol/icrc.hpp"
#include "naa/protocol/immediate.hpp"
#include "naa/protocol/mrsp.hpp"

namespace naa::tools {

using namespace naa::protocol;

namespace {

constexpr std::uint32_t kHostIp = 0x7F000003;  // 127.0.0.3, PROTOCOL.md 6
constexpr std::uint32_t kNaaIp = 0x7F000002;   // 127.0.0.2
constexpr std::uint16_t kNaaCmPort = 12345;
constexpr std::uint32_t kMtu = 1024;  // what Linux rxe negotiates at Ethernet MTU 1500

PacketHeaders rc(std::uint8_t op, std::uint32_t dqpn, std::uint32_t psn, bool ack_req = false,
                 bool se = false) {
  PacketHeaders h;
  h.bth.opcode = op;
  h.bth.dest_qpn = dqpn;
  h.bth.psn = psn;
  h.bth.ack_req = ack_req;
  h.bth.solicited_event = se;
  return h;
}

template <class T>
void must(const Result<T>& r, const char* what) {
  if (!r) throw std::logic_error(std::string(what) + ": " + std::string(to_string(r.error())));
}

// One RC message from `src` to `dst`, segmented at the path MTU (PROTOCOL.md 1, 3): RETH on the
// first packet of a WRITE, ImmDt on the last, AckReq and SE on the last.
struct Qp {
  std::uint32_t ip;
  std::uint32_t qpn;
  std::uint32_t next_psn;
};

void rc_message(FrameLog& log, Qp& src, const Qp& dst, bool is_write,
                std::span<const std::uint8_t> data, std::optional<Reth> reth,
                std::optional<std::uint32_t> imm, bool se, const std::string& what) {
  const std::size_t packets = data.empty() ? 1 : (data.size() + kMtu - 1) / kMtu;
  for (std::size_t i = 0; i < packets; ++i) {
    const bool first = i == 0;
    const bool last = i + 1 == packets;
    std::uint8_t op = 0;
    if (is_write) {
      op = first && last ? (imm ? opcode::kWriteOnlyImm : opcode::kWriteOnly)
           : first       ? opcode::kWriteFirst
           : last        ? (imm ? opcode::kWriteLastImm : opcode::kWriteLast)
                         : opcode::kWriteMiddle;
    } else {
      op = first && last ? (imm ? opcode::kSendOnlyImm : opcode::kSendOnly)
           : first       ? opcode::kSendFirst
           : last        ? (imm ? opcode::kSendLastImm : opcode::kSendLast)
                         : opcode::kSendMiddle;
    }
    PacketHeaders h = rc(op, dst.qpn, src.next_psn, last, last && se);
    if (is_write && first) h.reth = reth;
    if (last) h.immediate = imm;
    const auto chunk =
        data.subspan(std::min(data.size(), i * kMtu),
                     std::min<std::size_t>(kMtu, data.size() - std::min(data.size(), i * kMtu)));
    std::string line = what;
    if (packets > 1) line += " (" + std::to_string(i + 1) + "/" + std::to_string(packets) + ")";
    log.add(src.ip, src.qpn, dst.ip, h, chunk, line);
    src.next_psn = psn_add(src.next_psn, 1);
  }
}

void ack(FrameLog& log, const Qp& src, const Qp& dst, std::uint32_t psn, std::uint32_t msn,
         std::uint8_t syndrome = kAethAck, const std::string& what = "ACK") {
  PacketHeaders h = rc(opcode::kAcknowledge, dst.qpn, psn);
  h.aeth = Aeth{syndrome, msn};
  log.add(src.ip, src.qpn, dst.ip, h, {}, what);
}

CmReq make_req(std::uint32_t comm_id, std::uint32_t host_qpn, std::uint32_t naa_send_psn) {
  CmReq req;
  req.local_comm_id = comm_id;
  req.service_id = rdma_cm_service_id(kNaaCmPort);
  req.local_ca_guid = 0x02000003fffe0000ULL;
  req.local_qkey = 0;
  req.local_qpn = host_qpn;
  req.responder_resources = 16;
  req.initiator_depth = 16;
  req.remote_cm_response_timeout = 20;
  req.transport_service_type = kCmTransportRc;
  req.starting_psn = naa_send_psn;  // PROTOCOL.md 4: the PSN the passive side sends with
  req.local_cm_response_timeout = 20;
  req.retry_count = 7;
  req.pkey = 0xFFFF;
  req.path_mtu = *ib_mtu_enum(kMtu);
  req.rnr_retry_count = 7;
  req.max_cm_retries = 15;
  req.primary_local_lid = 0xFFFF;
  req.primary_remote_lid = 0xFFFF;
  req.primary_local_gid = ipv4_mapped_gid(kHostIp);
  req.primary_remote_gid = ipv4_mapped_gid(kNaaIp);
  req.primary_hop_limit = 64;
  req.primary_packet_rate = 3;
  req.primary_local_ack_timeout = 19;
  RdmaCmIpHeader ip;
  ip.src_port = 0xB001;
  ip.src_ip = kHostIp;
  ip.dst_ip = kNaaIp;
  must(encode_rdma_cm_ip_header(ip, req.private_data), "rdma_cm header");
  return req;
}

CmRep make_rep(std::uint32_t comm_id, std::uint32_t remote_comm_id, std::uint32_t naa_qpn,
               std::uint32_t host_send_psn) {
  CmRep rep;
  rep.local_comm_id = comm_id;
  rep.remote_comm_id = remote_comm_id;
  rep.local_qpn = naa_qpn;
  rep.starting_psn = host_send_psn;  // PROTOCOL.md 4: the PSN the active side sends with
  rep.responder_resources = 16;
  rep.initiator_depth = 16;
  rep.target_ack_delay = 15;
  rep.rnr_retry_count = 7;
  rep.local_ca_guid = 0x02000002fffe0000ULL;
  return rep;
}

CmMad mad(std::uint64_t tid, const CmBody& body) {
  CmMad m;
  m.header.transaction_id = tid;
  m.body = body;
  return m;
}

std::vector<std::uint8_t> mrsp_request(std::span<const MrspRequestEntry> entries) {
  std::vector<std::uint8_t> b(mrsp_request_size(entries.size()));
  must(encode_mrsp_request(entries, b), "MRSP 0x01");
  return b;
}

std::vector<std::uint8_t> mrsp_advertisement(std::span<const MrspAdvertisementEntry> entries) {
  std::vector<std::uint8_t> b(mrsp_advertisement_size(entries.size()));
  must(encode_mrsp_advertisement(entries, b), "MRSP 0x02");
  return b;
}

std::vector<std::uint8_t> le_int32s(std::size_t n, std::int32_t start, std::int32_t step) {
  std::vector<std::uint8_t> b(n * 4);
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = static_cast<std::uint32_t>(start + static_cast<std::int32_t>(i) * step);
    store_le32(&b[i * 4], v);
  }
  return b;
}

}  // namespace

void FrameLog::add(std::uint32_t src_ip, std::uint32_t src_qpn, std::uint32_t dst_ip,
                   const PacketHeaders& h, ByteView payload, std::string what) {
  Frame f;
  f.timestamp_ns = now_ns_;
  now_ns_ += step_ns_;
  f.roce.resize(packet_size(h, payload.size()));
  must(encode_packet(h, payload, f.roce), "encode_packet");
  f.headers = make_roce_headers(src_ip, roce_udp_source_port(src_qpn), dst_ip, f.roce.size());
  write_icrc(f.headers, f.roce);
  f.what = std::move(what);
  frames_.push_back(std::move(f));
}

void FrameLog::add_cm(std::uint32_t src_ip, std::uint32_t dst_ip, const CmMad& m,
                      std::string what) {
  std::array<std::uint8_t, kMadSize> bytes{};
  must(encode_cm_mad(m, bytes), "encode_cm_mad");
  PacketHeaders h = rc(opcode::kUdSendOnly, kCmQpn, 0);
  h.deth = Deth{kCmQKey, 0, kCmQpn};
  add(src_ip, kCmQpn, dst_ip, h, bytes, std::move(what));
}

std::vector<Frame> realistic_exchange() {
  FrameLog log(2000);
  Qp host{kHostIp, 0x000011, 0x00B000};
  Qp naa{kNaaIp, 0x000002, 0x00A000};
  const std::uint32_t host_comm = 0x1A2B3C4D;
  const std::uint32_t naa_comm = 0x5E6F7081;
  const std::uint64_t tid = 0x0000000100000001ULL;

  log.add_cm(kHostIp, kNaaIp, mad(tid, make_req(host_comm, host.qpn, naa.next_psn)),
             "CM REQ: connect to service port 12345");
  log.add_cm(kNaaIp, kHostIp, mad(tid, make_rep(naa_comm, host_comm, naa.qpn, host.next_psn)),
             "CM REP: NAA QP 2 accepts");
  CmRtu rtu;
  rtu.local_comm_id = host_comm;
  rtu.remote_comm_id = naa_comm;
  log.add_cm(kHostIp, kNaaIp, mad(tid, rtu), "CM RTU");

  // vadd_i32 over 512 elements: two 2 KiB inputs, one 2 KiB output (two MTUs each).
  constexpr std::uint32_t kBytes = 2048;
  const std::array<MrspRequestEntry, 3> regions = {{
      {kMrspFlagInput, 0x000000, 0x00007F0000100000ULL, 0x00001101, kBytes},
      {kMrspFlagInput, 0x100000, 0x00007F0000200000ULL, 0x00001202, kBytes},
      {kMrspFlagOutput, 0x200000, 0x00007F0000300000ULL, 0x00001303, kBytes},
  }};
  // MRSP 0x01 SEND with SE (PROTOCOL.md 5.1); the host has posted its receive for the answer.
  rc_message(log, host, naa, false, mrsp_request(regions), std::nullopt, std::nullopt, true,
             "MRSP 0x01: 3 regions");
  ack(log, naa, host, psn_add(host.next_psn, kMax24), 1);
  const std::array<MrspAdvertisementEntry, 3> placed = {{
      {0x000000, 0x9C3E2A00, kBytes},  // rkey = random tag << 8 | MR table index
      {0x100000, 0x51D07701, kBytes},
      {0x200000, 0xE4A91B02, kBytes},
  }};
  rc_message(log, naa, host, false, mrsp_advertisement(placed), std::nullopt, std::nullopt, true,
             "MRSP 0x02: placed, rkeys");
  ack(log, host, naa, psn_add(naa.next_psn, kMax24), 1);

  // The call: inputs by RDMA WRITE to the advertised addresses, the last WRITE_WITH_IMM with SE.
  const auto in0 = le_int32s(kBytes / 4, 1, 1);
  const auto in1 = le_int32s(kBytes / 4, 1000, -3);
  rc_message(log, host, naa, true, in0, Reth{placed[0].naa_address, placed[0].rkey, kBytes},
             std::nullopt, false, "input 0 by RDMA WRITE");
  rc_message(log, host, naa, true, in1, Reth{placed[1].naa_address, placed[1].rkey, kBytes},
             encode_call_immediate(4, 0x000001), true, "input 1 by RDMA WRITE_WITH_IMM: vadd_i32");
  ack(log, naa, host, psn_add(host.next_psn, kMax24), 3);

  std::vector<std::uint8_t> out(kBytes);
  for (std::size_t i = 0; i < kBytes; i += 4) {
    store_le32(&out[i], load_le32(&in0[i]) + load_le32(&in1[i]));
  }
  rc_message(log, naa, host, true, out, Reth{regions[2].host_va, regions[2].host_rkey, kBytes},
             encode_result_immediate(4, ReturnCode::success), true,
             "result by RDMA WRITE_WITH_IMM: return code 0");
  ack(log, host, naa, psn_add(naa.next_psn, kMax24), 2);

  CmDreq dreq;
  dreq.local_comm_id = host_comm;
  dreq.remote_comm_id = naa_comm;
  dreq.remote_qpn = naa.qpn;
  log.add_cm(kHostIp, kNaaIp, mad(tid + 1, dreq), "CM DREQ");
  CmDrep drep;
  drep.local_comm_id = naa_comm;
  drep.remote_comm_id = host_comm;
  log.add_cm(kNaaIp, kHostIp, mad(tid + 1, drep), "CM DREP");
  return log.frames();
}

std::vector<Frame> catalog() {
  FrameLog log(1000);
  const std::uint32_t a = 0x0A4D0001;  // 10.77.0.1
  const std::uint32_t b = 0x0A4D0002;
  const std::uint32_t dq = 0x00ABCD;
  std::uint32_t psn = 0xFFFFF0;  // crosses the 24-bit wrap
  std::vector<std::uint8_t> full(kMtu);
  for (std::size_t i = 0; i < full.size(); ++i)
    full[i] = static_cast<std::uint8_t>(i);
  const std::vector<std::uint8_t> odd = {0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x02, 0x03};
  const std::vector<std::uint8_t> one = {0x5A};
  const Reth reth{0x00007F00DEAD0000ULL, 0xC0FFEE01, 2 * kMtu + 7};
  const std::uint32_t imm = encode_call_immediate(6, 0xABCDEF);

  auto next = [&] {
    const std::uint32_t p = psn;
    psn = psn_add(psn, 1);
    return p;
  };
  auto add = [&](std::uint8_t op, std::span<const std::uint8_t> pl, auto&& fill, const char* w) {
    PacketHeaders h = rc(op, dq, next(), find_opcode(op)->ends_message(), false);
    fill(h);
    log.add(a, 0x000123, b, h, pl, w);
  };
  auto none = [](PacketHeaders&) {};
  add(opcode::kSendFirst, full, none, "SEND First");
  add(opcode::kSendMiddle, full, none, "SEND Middle");
  add(opcode::kSendLast, odd, none, "SEND Last");
  add(
      opcode::kSendLastImm, odd, [&](PacketHeaders& h) { h.immediate = imm; }, "SEND Last Imm");
  add(
      opcode::kSendOnly, one, [](PacketHeaders& h) { h.bth.solicited_event = true; }, "SEND Only");
  add(
      opcode::kSendOnlyImm, {}, [&](PacketHeaders& h) { h.immediate = imm; }, "SEND Only Imm");
  add(
      opcode::kWriteFirst, full, [&](PacketHeaders& h) { h.reth = reth; }, "WRITE First");
  add(opcode::kWriteMiddle, full, none, "WRITE Middle");
  add(opcode::kWriteLast, odd, none, "WRITE Last");
  add(
      opcode::kWriteLastImm, odd, [&](PacketHeaders& h) { h.immediate = imm; }, "WRITE Last Imm");
  add(
      opcode::kWriteOnly, one,
      [&](PacketHeaders& h) {
        h.reth = Reth{0x1000, 0x4242, 1};
      },
      "WRITE Only, 1 byte");
  add(
      opcode::kWriteOnlyImm, {},
      [&](PacketHeaders& h) {
        h.reth = Reth{0x2000, 0x4343, 0};
        h.immediate = imm;
        h.bth.solicited_event = true;
      },
      "WRITE Only Imm, zero length");
  add(
      opcode::kReadRequest, {}, [&](PacketHeaders& h) { h.reth = reth; }, "READ Request");
  auto aeth = [](std::uint8_t syn, std::uint32_t msn) {
    return [=](PacketHeaders& h) { h.aeth = Aeth{syn, msn}; };
  };
  add(opcode::kReadResponseFirst, full, aeth(kAethAck, 0x10), "READ Response First");
  add(opcode::kReadResponseMiddle, full, none, "READ Response Middle");
  add(opcode::kReadResponseLast, odd, aeth(kAethAck, 0x11), "READ Response Last");
  add(opcode::kReadResponseOnly, odd, aeth(kAethAck, 0x12), "READ Response Only");
  add(opcode::kAcknowledge, {}, aeth(kAethAck, 0x123456), "ACK");
  add(opcode::kAcknowledge, {}, aeth(kNakPsnSequenceError, 7), "NAK PSN sequence error");
  add(opcode::kAcknowledge, {}, aeth(kNakInvalidRequest, 7), "NAK invalid request");
  add(opcode::kAcknowledge, {}, aeth(kNakRemoteAccessError, 7), "NAK remote access error");
  add(opcode::kAcknowledge, {}, aeth(rnr_nak_syndrome(14), 7), "RNR NAK 1.28 ms");

  // MRSP messages inside SENDs.
  const std::array<MrspRequestEntry, 2> req = {{
      {kMrspFlagInput | kMrspFlagSingleSend, 0x1000, 0x7F0000001000ULL, 0x11, 64},
      {kMrspFlagInternal, 0x2000, 0, 0, 4096},
  }};
  const std::array<MrspAdvertisementEntry, 1> adv = {{{0x1000, 0xA5A5A500, 64}}};
  std::array<std::uint8_t, kMrspErrorSize> err{};
  must(encode_mrsp_error(kMrspErrorTooManyRegions, err), "MRSP 0x00");
  auto se = [](PacketHeaders& h) { h.bth.solicited_event = true; };
  add(opcode::kSendOnly, mrsp_request(req), se, "MRSP 0x01 in SEND Only");
  add(opcode::kSendOnly, mrsp_advertisement(adv), se, "MRSP 0x02 in SEND Only");
  add(opcode::kSendOnly, err, se, "MRSP 0x00 in SEND Only");

  // Every CM message.
  const std::uint64_t tid = 0x00000000DEADBEEFULL;
  log.add_cm(a, b, mad(tid, make_req(0x11111111, 0x000123, 0x00C0DE)), "CM REQ");
  CmMra mra;
  mra.local_comm_id = 0x22222222;
  mra.remote_comm_id = 0x11111111;
  mra.message_mraed = kCmMraMessageReq;
  mra.service_timeout = 18;
  log.add_cm(b, a, mad(tid, mra), "CM MRA");
  log.add_cm(b, a, mad(tid, make_rep(0x22222222, 0x11111111, 0x000456, 0x00BEEF)), "CM REP");
  CmRtu rtu;
  rtu.local_comm_id = 0x11111111;
  rtu.remote_comm_id = 0x22222222;
  log.add_cm(a, b, mad(tid, rtu), "CM RTU");
  CmRej rej;
  rej.local_comm_id = 0x33333333;
  rej.remote_comm_id = 0x11111111;
  rej.message_rejected = kCmRejMessageReq;
  rej.reason = kCmRejConsumerDefined;
  const char reason[] = "out of QPs";
  std::memcpy(rej.private_data.data(), reason, sizeof reason - 1);
  log.add_cm(b, a, mad(tid + 1, rej), "CM REJ 28 (consumer defined)");
  CmDreq dreq;
  dreq.local_comm_id = 0x11111111;
  dreq.remote_comm_id = 0x22222222;
  dreq.remote_qpn = 0x000456;
  log.add_cm(a, b, mad(tid + 2, dreq), "CM DREQ");
  CmDrep drep;
  drep.local_comm_id = 0x22222222;
  drep.remote_comm_id = 0x11111111;
  log.add_cm(b, a, mad(tid + 2, drep), "CM DREP");
  return log.frames();
}

}  // namespace naa::tools
