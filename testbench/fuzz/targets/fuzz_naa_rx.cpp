// Fuzz target: the NAA's receive path, bytes -> model, with the model's state carried across
// inputs. The whole SystemC model (naa::sim::Naa) runs in-process without sockets:
// NetPort::inject() feeds datagrams in, NetPort::set_tx_tap() hands back what the NAA sends, and
// the peer-wait timers fire in simulated time only. SystemC elaborates once per process, so one
// model serves every input; that is the point (a crash may need the state earlier inputs left
// behind), and it is why a regression input replays against a fresh model in the regression test,
// which runs each file in a fresh process-wide model only once per binary (see
// test_fuzz_regressions.cpp).
//
// A scripted peer keeps one connection alive (REQ/REP/RTU, MRSP with two regions; ACKs whatever
// the NAA sends) so that fuzzed packets reach the transport, MR checks, MRSP and kernels, not only
// the decoders. An input is a list of records:
//   flags (1) | length (2, big-endian) | datagram bytes
// flags: 0x01 write a valid ICRC; 0x02 set the destination QPN to the live connection's; 0x04 set
// the PSN to the next one the NAA expects; 0x08 point the RETH at advertised region (byte 0 of
// the VA selects it) with its rkey; 0x10 advance simulated time by 10 ms after it (timers fire);
// 0x20 send from another address (a stranger).
// Properties: nothing crashes or trips ASan/UBSan, and every datagram the NAA sends decodes and
// carries a valid ICRC.
#include <array>
#include <boost/asio/io_context.hpp>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "fuzz.hpp"
#include "naa/protocol/cm.hpp"
#include "naa/protocol/icrc.hpp"
#include "naa/protocol/mrsp.hpp"
#include "naa/protocol/packet.hpp"
#include "naa/sim/naa.hpp"

namespace naa::fuzz {
namespace {

namespace p = naa::protocol;
namespace s = naa::sim;

// Header fields only: the model runs in-process and binds no socket, so these addresses cannot
// collide with a test's.
constexpr std::uint32_t kNaaIp = 0x7F1EFA01;       // 127.30.250.1
constexpr std::uint32_t kPeerIp = 0x7F1EFA02;      // 127.30.250.2
constexpr std::uint32_t kStrangerIp = 0x7F1EFA03;  // 127.30.250.3
constexpr std::uint32_t kPeerQpn = 0x11;

// Peer-wait timers in simulated time alone (no wall clock: the harness is the only peer).
class SimTimers final : public s::PeerTimers {
 public:
  void arm(s::PeerTimerClient& c, std::uint32_t cookie, sc_core::sc_time after) override {
    cancel(c, cookie);
    list_.push_back({&c, cookie, sc_core::sc_time_stamp() + after});
  }
  void cancel(s::PeerTimerClient& c, std::uint32_t cookie) override {
    std::erase_if(list_, [&](const T& t) { return t.client == &c && t.cookie == cookie; });
  }
  std::optional<sc_core::sc_time> next() const {
    std::optional<sc_core::sc_time> n;
    for (const T& t : list_)
      if (!n || t.at < *n) n = t.at;
    return n;
  }
  void fire_due() {
    const auto now = sc_core::sc_time_stamp();
    std::vector<T> due;
    std::erase_if(list_, [&](const T& t) {
      if (t.at > now) return false;
      due.push_back(t);
      return true;
    });
    for (const T& t : due)
      t.client->on_peer_timer(t.cookie);
  }

 private:
  struct T {
    s::PeerTimerClient* client;
    std::uint32_t cookie;
    sc_core::sc_time at;
  };
  std::vector<T> list_;
};

struct Peer {
  bool connected = false;
  bool rep_seen = false;
  bool rej_seen = false;
  std::uint32_t comm_id = 0x1000;
  std::uint32_t naa_comm_id = 0;
  std::uint32_t naa_qpn = 0;
  std::uint32_t send_psn = 0;  // next PSN we send (the REP's)
  std::uint32_t naa_psn = 0;   // next PSN the NAA sends (our REQ's)
  std::vector<p::MrspAdvertisementEntry> regions;
  bool adv_seen = false;
};

class Harness {
 public:
  Harness() : cfg_(make_cfg()), log_(s::LogLevel::error) {
    naa_ = std::make_unique<s::Naa>("naa", cfg_, log_, timers_, io_,
                                    s::KernelRegistry::with_builtins());
    naa_->net().set_local_ip(kNaaIp);
    naa_->net().set_tx_tap([this](const s::Packet& pk, std::uint16_t port) { on_tx(pk, port); });
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
  }

  void one_input(const std::uint8_t* data, std::size_t size) {
    ensure_connected();
    std::size_t off = 0;
    while (off + 3 <= size) {
      const std::uint8_t flags = data[off];
      std::size_t len = (std::size_t{data[off + 1]} << 8) | data[off + 2];
      off += 3;
      len = std::min({len, size - off, s::kMaxDatagram});
      std::vector<std::uint8_t> d(data + off, data + off + len);
      off += len;
      send_fuzzed(flags, d);
      run(sc_core::sc_time(1, sc_core::SC_MS));
      if ((flags & 0x10U) != 0) run(sc_core::sc_time(10, sc_core::SC_MS));
    }
  }

 private:
  static s::SimConfig make_cfg() {
    s::SimConfig c;
    // Seeded: unseeded, rkeys, comm IDs and PSNs come from the OS random source, and an input
    // that found a bug would not replay it.
    c.seed = 1;
    c.mem_size = 64ULL << 20;
    c.qps = 8;
    return c;
  }

  void send_fuzzed(std::uint8_t flags, std::vector<std::uint8_t>& d) {
    if (d.size() >= p::kBthSize) {
      if ((flags & 0x02U) != 0 && peer_.connected) {
        d[5] = static_cast<std::uint8_t>(peer_.naa_qpn >> 16);
        d[6] = static_cast<std::uint8_t>(peer_.naa_qpn >> 8);
        d[7] = static_cast<std::uint8_t>(peer_.naa_qpn);
      }
      if ((flags & 0x04U) != 0 && peer_.connected) {
        d[9] = static_cast<std::uint8_t>(peer_.send_psn >> 16);
        d[10] = static_cast<std::uint8_t>(peer_.send_psn >> 8);
        d[11] = static_cast<std::uint8_t>(peer_.send_psn);
        peer_.send_psn = p::psn_add(peer_.send_psn, 1);
      }
      // RC opcodes with a RETH carry it right after the BTH (no DETH on RC).
      const std::uint8_t opc = d[0];
      const bool has_reth = opc == p::opcode::kWriteFirst || opc == p::opcode::kWriteOnly ||
                            opc == p::opcode::kWriteOnlyImm || opc == p::opcode::kReadRequest;
      if ((flags & 0x08U) != 0 && has_reth && d.size() >= p::kBthSize + p::kRethSize &&
          !peer_.regions.empty()) {
        const auto& r = peer_.regions[d[p::kBthSize + 7] % peer_.regions.size()];
        const std::uint64_t va = r.naa_address + (d[p::kBthSize + 6] % 64U) * 64U;
        p::store_be64(&d[p::kBthSize], va);
        p::store_be32(&d[p::kBthSize + 8], r.rkey);
      }
    }
    const std::uint32_t from = (flags & 0x20U) != 0 ? kStrangerIp : kPeerIp;
    if ((flags & 0x01U) != 0 && d.size() >= p::kIcrcSize) {
      p::write_icrc(p::make_roce_headers(from, 0xC011, kNaaIp, d.size()), d);
    }
    (void)naa_->net().inject(d, from, 0xC011, kNaaIp);
  }

  // Runs the model until it is idle, answering what it sends, and fires the timers due within
  // `horizon` of simulated time.
  void run(sc_core::sc_time horizon) {
    const sc_core::sc_time end = sc_core::sc_time_stamp() + horizon;
    for (int guard = 0; guard < 100000; ++guard) {
      timers_.fire_due();
      answer();
      const auto now = sc_core::sc_time_stamp();
      if (sc_core::sc_pending_activity()) {
        sc_core::sc_time step =
            std::max(sc_core::sc_time(100, sc_core::SC_US), sc_core::sc_time_to_pending_activity());
        auto policy = sc_core::SC_EXIT_ON_STARVATION;
        if (const auto t = timers_.next(); t && *t < now + step) {
          if (*t <= now) continue;
          step = *t - now;
          policy = sc_core::SC_RUN_TO_TIME;
        }
        sc_core::sc_start(step, policy);
        continue;
      }
      if (!replies_.empty()) continue;
      const auto t = timers_.next();
      if (!t || *t > end) break;
      if (*t > now) sc_core::sc_start(*t - now, sc_core::SC_RUN_TO_TIME);
    }
  }

  void on_tx(const s::Packet& pk, std::uint16_t port) {
    // Property: everything the NAA sends decodes and has a valid ICRC (ID 0: it sends ID 0).
    const auto h = p::make_roce_headers(kNaaIp, port, pk.peer_ip, pk.size);
    NAA_FUZZ_CHECK(p::verify_icrc(h, pk.bytes()));
    const auto v = p::decode_packet(pk.bytes());
    NAA_FUZZ_CHECK(v.has_value());
    if (pk.peer_ip != kPeerIp) return;
    if (v->headers.bth.dest_qpn == p::kCmQpn) {
      const auto mad = p::decode_cm_mad(v->payload);
      NAA_FUZZ_CHECK(mad.has_value());
      if (const auto* rep = std::get_if<p::CmRep>(&mad->body)) {
        if (rep->remote_comm_id == peer_.comm_id && !peer_.connected) {
          peer_.rep_seen = true;
          peer_.naa_comm_id = rep->local_comm_id;
          peer_.naa_qpn = rep->local_qpn;
          peer_.send_psn = rep->starting_psn;
        }
      } else if (std::get_if<p::CmRej>(&mad->body) != nullptr) {
        peer_.rej_seen = true;
      } else if (const auto* dreq = std::get_if<p::CmDreq>(&mad->body)) {
        if (dreq->remote_comm_id == peer_.comm_id) peer_.connected = false;
        p::CmMad out{mad->header, p::CmDrep{}};
        auto& drep = std::get<p::CmDrep>(out.body);
        drep.local_comm_id = dreq->remote_comm_id;
        drep.remote_comm_id = dreq->local_comm_id;
        queue_mad(out);
      }
      return;
    }
    if (v->headers.bth.dest_qpn != kPeerQpn || v->info->is_response()) return;
    // The NAA's requester (MRSP answers, result write-backs): accept and ACK, like a host.
    const std::uint32_t psn = v->headers.bth.psn;
    if (psn == peer_.naa_psn) {
      peer_.naa_psn = p::psn_add(psn, 1);
      if (v->info->kind == p::OpKind::send && v->info->ends_message()) {
        if (const auto adv = p::decode_mrsp_advertisement(v->payload)) {
          peer_.regions.clear();
          for (std::size_t i = 0; i < adv->count(); ++i)
            peer_.regions.push_back(adv->entry(i));
          peer_.adv_seen = true;
        }
      }
    }
    if (v->headers.bth.ack_req) {
      p::PacketHeaders a;
      a.bth.opcode = p::opcode::kAcknowledge;
      a.bth.dest_qpn = peer_.naa_qpn;
      a.bth.psn = p::psn_add(peer_.naa_psn, p::kMax24);
      a.aeth = p::Aeth{p::kAethAck, 0};
      queue(a, {});
    }
  }

  void queue(const p::PacketHeaders& h, p::ByteView payload) {
    std::vector<std::uint8_t> d(p::packet_size(h, payload.size()));
    const auto n = p::encode_packet(h, payload, d);
    NAA_FUZZ_CHECK(n.has_value());
    d.resize(*n);
    p::write_icrc(p::make_roce_headers(kPeerIp, 0xC011, kNaaIp, d.size()), d);
    replies_.push_back(std::move(d));
  }

  void queue_mad(const p::CmMad& mad) {
    std::array<std::uint8_t, p::kMadSize> bytes{};
    NAA_FUZZ_CHECK(p::encode_cm_mad(mad, bytes).has_value());
    p::PacketHeaders h;
    h.bth.opcode = p::opcode::kUdSendOnly;
    h.bth.dest_qpn = p::kCmQpn;
    h.deth = p::Deth{p::kCmQKey, 0, p::kCmQpn};
    queue(h, bytes);
  }

  void answer() {
    while (!replies_.empty()) {
      if (!naa_->net().inject(replies_.front(), kPeerIp, 0xC011, kNaaIp)) return;
      replies_.pop_front();
    }
  }

  void ensure_connected() {
    for (int attempt = 0; attempt < 4 && !peer_.connected; ++attempt) {
      connect();
      // Half-open connections left by earlier inputs may hold every QP: let them expire.
      if (!peer_.connected) run(sc_core::sc_time(120, sc_core::SC_SEC));
    }
  }

  void connect() {
    const std::uint32_t next_comm_id = peer_.comm_id + 1;
    peer_ = Peer{};
    peer_.comm_id = next_comm_id;
    p::CmReq req;
    req.local_comm_id = peer_.comm_id;
    req.service_id = p::rdma_cm_service_id(cfg_.cm_port);
    req.local_qpn = kPeerQpn;
    req.responder_resources = 16;
    req.initiator_depth = 1;
    req.remote_cm_response_timeout = 10;
    req.transport_service_type = p::kCmTransportRc;
    req.starting_psn = peer_.naa_psn = 0x100;
    req.local_cm_response_timeout = 10;
    req.retry_count = 7;
    req.pkey = 0xFFFF;
    req.path_mtu = 3;  // 1024
    req.rnr_retry_count = 7;
    req.max_cm_retries = 3;
    req.primary_local_lid = 0xFFFF;
    req.primary_remote_lid = 0xFFFF;
    req.primary_local_gid = p::ipv4_mapped_gid(kPeerIp);
    req.primary_remote_gid = p::ipv4_mapped_gid(kNaaIp);
    req.primary_local_ack_timeout = 14;
    p::MadHeader mh;
    mh.transaction_id = peer_.comm_id;
    queue_mad(p::CmMad{mh, req});
    run(sc_core::sc_time(1, sc_core::SC_MS));
    if (!peer_.rep_seen) return;
    p::CmRtu rtu;
    rtu.local_comm_id = peer_.comm_id;
    rtu.remote_comm_id = peer_.naa_comm_id;
    queue_mad(p::CmMad{mh, rtu});
    peer_.connected = true;
    // MRSP: an input region and an output region.
    const std::array<p::MrspRequestEntry, 2> e = {
        p::MrspRequestEntry{p::kMrspFlagInput, 0x10000, 0x7f0000000000, 0x1234, 4096},
        p::MrspRequestEntry{p::kMrspFlagOutput, 0x20000, 0x7f0000001000, 0x1234, 4096}};
    std::array<std::uint8_t, p::mrsp_request_size(2)> msg{};
    NAA_FUZZ_CHECK(p::encode_mrsp_request(e, msg).has_value());
    p::PacketHeaders h;
    h.bth.opcode = p::opcode::kSendOnly;
    h.bth.solicited_event = true;
    h.bth.ack_req = true;
    h.bth.dest_qpn = peer_.naa_qpn;
    h.bth.psn = peer_.send_psn;
    peer_.send_psn = p::psn_add(peer_.send_psn, 1);
    queue(h, msg);
    run(sc_core::sc_time(1, sc_core::SC_MS));
  }

  s::SimConfig cfg_;
  s::Log log_;
  SimTimers timers_;
  boost::asio::io_context io_;
  std::unique_ptr<s::Naa> naa_;
  Peer peer_;
  std::deque<std::vector<std::uint8_t>> replies_;
};

}  // namespace

int naa_rx(const std::uint8_t* data, std::size_t size) {
  static Harness* h = new Harness();  // lives for the process: SystemC elaborates once
  h->one_input(data, size);
  return 0;
}

}  // namespace naa::fuzz

// libsystemc's own main() refers to sc_main; the fuzzer (or test) brings its own main.
int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 0;
}
