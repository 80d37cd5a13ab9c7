// A scripted RoCEv2 peer for the host library's unit tests, built from the protocol library only
// (it shares no code with host/, so it is a second implementation of PROTOCOL.md, not a mirror).
//
// It plays the passive side of the IB CM (REQ -> REP, RTU, DREQ -> DREP, or REJ / silence on
// request) and a simple RC responder over a flat memory (one rkey), and lets the test send raw
// requests to the host and read the host's responses. A fault script decides, per received data
// packet, whether it is delivered, dropped, duplicated, answered with an RNR NAK or delayed.
// Every received packet is recorded with its UDP source port and recovered IPv4 ID.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "naa/protocol/cm.hpp"
#include "naa/protocol/mrsp.hpp"
#include "naa/protocol/packet.hpp"

namespace naa::testbench {

using Clock = std::chrono::steady_clock;

struct SeenPacket {
  protocol::PacketHeaders headers;
  std::vector<std::uint8_t> payload;
  std::uint16_t src_port = 0;
  std::uint16_t ip_id = 0;
  Clock::time_point at{};
};

struct Fault {
  enum class Kind { deliver, drop, duplicate, rnr_nak, delay } kind = Kind::deliver;
  int delay_ms = 0;
  std::uint8_t rnr_code = 1;  // 0.01 ms
};

class FakePeer {
 public:
  enum class CmMode { accept, ignore, reject };
  struct Options {
    std::uint32_t ip = 0;
    std::uint32_t qpn = 0x40;
    std::uint32_t start_psn = 0xFFFFF0;  // the REP's starting PSN: near the wrap on purpose
    std::size_t memory_size = 1 << 20;
    std::uint64_t memory_va = 0x100000;
    std::uint32_t rkey = 0x1234;
    CmMode cm_mode = CmMode::accept;
    std::uint16_t reject_reason = protocol::kCmRejConsumerDefined;
    std::string reject_text;
    std::uint8_t rep_rnr_retry = 7;
    // Mini NAA: answers an MRSP 0x01 SEND (placing regions at the requested addresses, NAA
    // address = offset in the flat memory), runs add1 (fn 1) on a call and writes the outputs
    // back, the last as WRITE_WITH_IMM with SE; any other fn answers return code 0x03.
    bool mini_naa = false;
    std::uint8_t mrsp_error = 0;  // non-zero: answer MRSP with this error code
    // "Reference NAA" personality (the NAAICE reference software NAA, issue 11), implies
    // mini_naa: places every region at an address it chooses (memory_va + reference_base, packed
    // 4 KiB aligned: the 0x02 advertisement differs from the request), never answers a DREQ
    // (no DREP), and answers a successful call with immediate 0 (PROTOCOL.md 5.2). Outputs are
    // written back at their full registered length, as the mini NAA always does.
    bool reference_naa = false;
    std::uint64_t reference_base = 0x80000;
  };

  explicit FakePeer(const Options& options);
  ~FakePeer();
  FakePeer(const FakePeer&) = delete;
  FakePeer& operator=(const FakePeer&) = delete;

  // index counts data packets (requests) received, from 0.
  void set_fault(std::function<Fault(const SeenPacket&, std::size_t index)> script);

  [[nodiscard]] std::vector<SeenPacket> requests() const;  // data packets received, in order
  [[nodiscard]] std::vector<std::uint8_t> memory(std::size_t offset, std::size_t length) const;
  void fill_memory(std::size_t offset, const std::vector<std::uint8_t>& bytes);
  [[nodiscard]] std::vector<std::vector<std::uint8_t>> sends() const;  // SEND messages received
  [[nodiscard]] std::vector<std::uint32_t> immediates() const;         // immediates delivered
  [[nodiscard]] std::optional<protocol::CmReq> last_req() const;
  [[nodiscard]] int reqs_received() const;
  [[nodiscard]] bool rtu_received() const;
  [[nodiscard]] bool dreq_received() const;
  [[nodiscard]] int dreqs_received() const;  // a host retries an unanswered DREQ
  // The NAA addresses the peer placed the last MRSP's non-internal regions at (request order).
  [[nodiscard]] std::vector<std::uint64_t> placed_addresses() const;
  [[nodiscard]] std::optional<protocol::CmRej> last_rej() const;
  [[nodiscard]] std::uint64_t nonzero_ip_ids() const;  // datagrams whose recovered ID was not 0
  [[nodiscard]] std::uint64_t bad_icrc() const;

  // Requester side: the host QP and the PSN the peer must send with (the REQ's starting PSN).
  [[nodiscard]] std::uint32_t host_qpn() const;
  [[nodiscard]] std::uint32_t host_ip() const;
  [[nodiscard]] std::uint32_t host_start_psn() const;
  // Sends one raw request to the host QP (the ICRC is added here).
  void send_raw(protocol::PacketHeaders headers, const std::vector<std::uint8_t>& payload);
  // The next response (ACK, NAK, READ RESPONSE) the host sent to the peer's QP.
  [[nodiscard]] std::optional<SeenPacket> next_response(std::chrono::milliseconds timeout);
  // Sends a DREQ for the connection (the peer closes it).
  void send_dreq();

 private:
  void run();
  void on_datagram(const std::uint8_t* data, std::size_t n, std::uint32_t src_ip,
                   std::uint16_t src_port, std::uint32_t dst_ip);
  void on_cm(const protocol::CmMad& mad);
  void on_request(const SeenPacket& p);
  void process_request(const SeenPacket& p);
  void send_ack(std::uint8_t syndrome, std::uint32_t psn);
  void send_packet(const protocol::PacketHeaders& h, protocol::ByteView payload);
  void send_mad(const protocol::CmMad& mad);
  void send_message(bool write, std::uint64_t va, std::uint32_t rkey, protocol::ByteView data,
                    std::optional<std::uint32_t> imm);
  void mini_naa_send(const std::vector<std::uint8_t>& msg);
  void mini_naa_call(std::uint32_t imm);

  Options opts_;
  int fd_ = -1;
  std::thread thread_;
  bool stop_ = false;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::function<Fault(const SeenPacket&, std::size_t)> script_;
  std::vector<SeenPacket> requests_;
  std::deque<SeenPacket> responses_;
  std::vector<std::pair<Clock::time_point, SeenPacket>> delayed_;
  std::vector<std::uint8_t> mem_;
  std::vector<std::vector<std::uint8_t>> sends_;
  std::vector<std::uint32_t> imms_;
  std::optional<protocol::CmReq> req_;
  std::optional<protocol::CmRej> rej_;
  int reqs_ = 0;
  bool rtu_ = false;
  bool dreq_ = false;
  int dreqs_ = 0;
  std::vector<std::uint64_t> placed_;
  std::uint64_t nonzero_ids_ = 0;
  std::uint64_t bad_icrc_ = 0;
  std::uint32_t host_ip_ = 0;
  std::uint32_t local_comm_id_ = 0x5EED0001;
  std::uint32_t remote_comm_id_ = 0;
  std::uint32_t cm_psn_ = 0;
  std::uint32_t send_psn_ = 0;  // requester side
  // Responder.
  std::uint32_t epsn_ = 0;
  std::uint32_t msn_ = 0;
  bool nak_sent_ = false;
  bool in_write_ = false;
  bool in_send_ = false;
  std::uint64_t write_off_ = 0;
  std::vector<std::uint8_t> send_buf_;
  std::vector<protocol::MrspRequestEntry> regions_;
};

}  // namespace naa::testbench
