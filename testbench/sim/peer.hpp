// A minimal RoCEv2 peer for the naa-sim integration tests, written from the protocol library only
// (host/ is not used: the two sides meet only on the wire). One unconnected UDP socket on
// <ip>:4791 with IP_PMTUDISC_DO (IPv4 ID 0, PROTOCOL.md 1); CM active side; an RC requester that
// sends what a test asks for, byte for byte, and a responder good enough to take the NAA's MRSP
// answers and result write-backs (ePSN, ACK on AckReq, one NAK 0x60 on a gap, re-ACK of
// duplicates, rkey/bounds check of writes into its "host memory"). ICRC both ways; every
// received datagram's ICRC is verified (a failure is recorded and fails the test).
// To test the NAA's requester (PROTOCOL.md 3) the responder can misbehave on purpose
// (ResponderFaults: withhold ACKs, lose packets, RNR-NAK) and logs every request packet it gets;
// the CM side can stop before the RTU and resend its REQ, and answers the NAA's DREQs.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "eventually.hpp"
#include "naa/protocol/cm.hpp"
#include "naa/protocol/irn.hpp"
#include "naa/protocol/mrsp.hpp"
#include "naa/protocol/packet.hpp"
#include "naa_sim.hpp"  // NaaSim (formerly NaaSim, defined here)

namespace naa::testbench {

using Ms = std::chrono::milliseconds;
using WallClock = std::chrono::steady_clock;
// How long the waits below give naa-sim by default: a liveness limit (eventually.hpp), never a
// measurement; tests that expect silence pass their own, short, duration.
inline constexpr Ms kWait = kLivenessLimit;

std::uint32_t parse_ipv4(const std::string& s);

struct AckRecord {
  std::uint32_t psn = 0;
  std::uint8_t syndrome = 0;
  std::uint32_t msn = 0;
};

struct Completion {  // a message the NAA sent to us, complete
  bool is_send = false;
  std::vector<std::uint8_t> data;  // SEND payload
  std::optional<std::uint32_t> imm;
  bool solicited = false;
};

// Misbehaviour of the peer's responder towards the NAA's requester.
struct ResponderFaults {
  static constexpr std::uint32_t kAll = std::numeric_limits<std::uint32_t>::max();
  // ACKs (including re-ACKs of duplicates) not sent: the packets are still accepted. kAll = all.
  std::uint32_t withhold_acks = 0;
  // ACK only the packets that complete a message carrying an immediate (ACK coalescing).
  bool ack_only_immediate = false;
  // PSNs whose first arrival is ignored, as if lost on the wire (the next one draws a NAK 0x60).
  std::set<std::uint32_t> lose_psns;
  // This many message starts (SEND FIRST/ONLY, the WRITE packet carrying the immediate) are
  // answered with an RNR NAK (code rnr_timer_code) instead of being accepted. kAll = all.
  std::uint32_t rnr_naks = 0;
  std::uint8_t rnr_timer_code = 1;
};

// A request packet the NAA sent us, as it arrived (duplicates and lost ones included).
struct RxRecord {
  std::uint32_t psn = 0;
  std::uint8_t opcode = 0;
  bool ack_req = false;
  std::size_t payload = 0;
  WallClock::time_point at;
};

// An ACK/NAK we sent the NAA.
struct AckSent {
  std::uint32_t psn = 0;
  std::uint8_t syndrome = 0;
  WallClock::time_point at;
};

struct Connection {
  std::uint32_t my_qpn = 0;
  std::uint32_t naa_qpn = 0;
  std::uint32_t my_comm_id = 0;
  std::uint32_t naa_comm_id = 0;
  std::uint32_t mtu = 1024;
  std::uint32_t send_psn = 0;  // our next PSN (REP starting PSN)
  std::uint32_t epsn = 0;      // expected from the NAA (REQ starting PSN)
  std::uint32_t msn = 0;
  bool nak_sent = false;
  // Host memory the NAA writes results into.
  std::uint64_t host_va = 0;
  std::uint32_t host_rkey = 0;
  std::vector<std::uint8_t> host_mem;
  // Responder state for incoming messages.
  bool in_send = false;
  bool in_write = false;
  std::vector<std::uint8_t> send_buf;
  std::uint64_t write_va = 0;
  std::uint64_t writes_bytes = 0;
  std::uint64_t write_errors = 0;
  // What arrived.
  std::deque<AckRecord> acks;  // ACK/NAK for our requests
  std::deque<Completion> completions;
  std::vector<std::uint8_t> read_data;
  std::uint32_t read_responses = 0;
  std::uint32_t duplicates_seen = 0;
  // Requester-path testing.
  ResponderFaults faults;
  std::vector<RxRecord> rx_log;
  std::vector<AckSent> acks_sent;
  // CM: the REQ (kept for resending) and its transaction ID; DREQs the NAA sent us.
  std::optional<protocol::CmMad> req;
  std::uint32_t dreqs_received = 0;
  // IRN: the REP carried the capability block; our ACKs are then IRN ACKs (in-order SACKs).
  bool irn = false;
};

class TestPeer {
 public:
  TestPeer(const std::string& my_ip, const std::string& naa_ip);
  ~TestPeer();
  TestPeer(const TestPeer&) = delete;
  TestPeer& operator=(const TestPeer&) = delete;

  // ---- raw datagrams ----
  // Encodes, writes the ICRC for the real 4-tuple (our IP:4791 -> NAA:4791) and sends.
  void send_packet(const protocol::PacketHeaders& h, protocol::ByteView payload);
  void send_raw(protocol::ByteView datagram);
  // Receives and dispatches one datagram; false on timeout.
  bool pump(Ms timeout);
  // Pumps until pred() or the timeout; returns pred().
  bool wait_for(const std::function<bool()>& pred, Ms timeout = kWait);
  // Pumps for a while, for "nothing more arrives" checks.
  void drain(Ms duration);

  // ---- CM ----
  struct ConnectOptions {
    std::uint16_t cm_port = 12345;
    std::uint8_t mtu_enum = 3;            // 1024
    std::uint8_t local_ack_timeout = 14;  // ~67 ms retransmit timer at the NAA
    std::uint8_t initiator_depth = 1;
    std::uint32_t host_mem_size = 1 << 16;
    std::uint8_t retry_count = 7;
    std::uint8_t rnr_retry = 7;                 // 7 = infinite
    std::optional<std::uint32_t> starting_psn;  // the NAA's first send PSN (random if unset)
    std::uint8_t remote_cm_response_timeout = 20;
    std::uint8_t max_cm_retries = 15;
    bool send_rtu = true;
    // IRN (docs/protocol.md 8): offer it with this capability block after the rdma_cm header.
    std::optional<protocol::CapabilityBlock> irn_offer;
    // The REQ's local comm ID and QPN (drawn fresh when unset): a test impersonating another
    // peer's connection sends that peer's (test_adversarial.cpp, the cross-address REQ).
    std::optional<std::uint32_t> comm_id;
    std::optional<std::uint32_t> local_qpn;
  };
  // REQ -> REP -> RTU. Returns the REJ reason instead on rejection (0 = connected).
  std::uint16_t connect(Connection& c, const ConnectOptions& o);
  std::uint16_t connect(Connection& c) { return connect(c, ConnectOptions{}); }
  void disconnect(Connection& c);  // DREQ, waits for the DREP
  // The steps of connect(), for tests that break the sequence.
  void send_req(Connection& c, const ConnectOptions& o);  // fills c (REQ kept in c.req)
  void resend_req(const Connection& c);                   // the same REQ again (same TID)
  // Waits for a REP (or REJ: nullopt, reason in *rej) for c; fills c from a REP.
  std::optional<protocol::CmRep> wait_rep(Connection& c, std::uint16_t* rej = nullptr,
                                          Ms timeout = kWait);
  void send_rtu(const Connection& c);
  std::deque<protocol::CmMad>& cm_inbox() { return cm_inbox_; }
  void send_mad(const protocol::CmMad& mad);

  // ---- RC requester ----
  // Posts an RDMA WRITE (segmented at the MTU; ImmDt on the last packet if imm). AckReq on the
  // last packet. Returns the last PSN used.
  std::uint32_t post_write(Connection& c, std::uint64_t va, std::uint32_t rkey,
                           protocol::ByteView data, std::optional<std::uint32_t> imm = {},
                           bool solicited = false);
  std::uint32_t post_send(Connection& c, protocol::ByteView data, bool solicited = true);
  std::uint32_t post_read(Connection& c, std::uint64_t va, std::uint32_t rkey, std::uint32_t len);
  // Waits for an ACK/NAK on c covering `psn` (or any NAK); returns it.
  std::optional<AckRecord> wait_ack(Connection& c, Ms timeout = kWait);
  std::optional<Completion> wait_completion(Connection& c, Ms timeout = kWait);
  // An ACK/NAK to the NAA on c (logged in c.acks_sent; not subject to c.faults).
  void send_ack(Connection& c, std::uint32_t psn, std::uint8_t syndrome);

  // ---- NAA application protocol helpers ----
  struct MrspResult {
    std::optional<std::uint8_t> error;  // type 0x00 code
    std::vector<protocol::MrspAdvertisementEntry> regions;
  };
  std::optional<MrspResult> mrsp(Connection& c, const std::vector<protocol::MrspRequestEntry>& e);
  // One call: writes `inputs` (pairs of advertised region index and bytes), then the
  // WRITE_WITH_IMM; returns the result immediate.
  std::optional<std::uint32_t> call(
      Connection& c, const MrspResult& regions,
      const std::vector<std::pair<std::size_t, std::vector<std::uint8_t>>>& inputs, std::uint8_t fn,
      std::uint32_t user = 0, Ms timeout = kWait);

  std::uint32_t ip() const { return my_ip_; }
  std::uint64_t icrc_failures() const { return icrc_failures_; }
  std::uint64_t nonzero_ip_ids() const { return nonzero_ids_; }
  std::uint64_t received() const { return received_; }

 private:
  void dispatch(const protocol::PacketView& v);
  void responder(Connection& c, const protocol::PacketView& v);
  void reply(Connection& c, std::uint32_t psn, std::uint8_t syndrome, bool completes_imm);
  void answer_dreq(const protocol::CmMad& mad);
  Connection* find(std::uint32_t my_qpn);

  int fd_ = -1;
  std::uint32_t my_ip_ = 0;
  std::uint32_t naa_ip_ = 0;
  std::uint32_t next_qpn_ = 0x11;
  std::uint32_t ud_psn_ = 0;
  std::vector<Connection*> conns_;
  std::deque<protocol::CmMad> cm_inbox_;
  std::uint64_t icrc_failures_ = 0, nonzero_ids_ = 0, received_ = 0;
};

}  // namespace naa::testbench
