// IRN (Improved RoCE NIC, seed 001 "Implementation Considerations"; docs/protocol.md "IRN"):
// selective repeat, out-of-order placement and BDP flow control as a transport our two sides
// negotiate. This header holds what both sides share:
//   - the capability block the host puts in the CM REQ private data (after the 36-byte rdma_cm
//     header) and the NAA answers in the REP private data (offset 0);
//   - IrnReceiveWindow: the responder's 2-bitmap (arrived, last-of-message) sized at the BDP cap;
//   - IrnSendWindow: the requester's selective-repeat state (SACKed and retransmitted bits, loss
//     recovery, the two retransmit timeouts).
// Both windows allocate only in reset() (at connection time), never per packet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "naa/protocol/bytes.hpp"
#include "naa/protocol/headers.hpp"
#include "naa/protocol/result.hpp"

namespace naa::protocol {

// ---- capability block (docs/protocol.md "IRN: negotiation") ----------------------------------
inline constexpr std::size_t kCapabilityBlockSize = 16;
inline constexpr std::uint8_t kCapabilityMagic[4] = {'N', 'A', 'A', 'X'};
inline constexpr std::uint8_t kCapabilityVersion = 1;
inline constexpr std::uint16_t kCapabilityIrn = 0x0001;  // flags bit 0
// flags bit 1: coalesced ACKs (docs/protocol.md 8.2). A requester sets AckReq only on a
// message's last packet, every kIrnCoalescedAcks-th packet of a message, a retransmission and
// the last packet it can send for now; a responder answers those, duplicates and packets that
// leave or fill a gap, and lets an in-order packet without AckReq go unanswered. Offered by a
// host on the wall clock, where each ACK costs a system call on both sides; echoed by the NAA.
inline constexpr std::uint16_t kCapabilityCoalescedAcks = 0x0002;
inline constexpr std::uint32_t kIrnCoalescedAcks = 4;
inline constexpr std::uint16_t kIrnDefaultBdpCap = 128;  // packets
inline constexpr std::uint16_t kIrnMaxBdpCap = 4096;
inline constexpr std::uint8_t kIrnDefaultLowThreshold = 3;  // N of the IRN paper

// Offset of the block in the REQ private data (after the rdma_cm IP header) and in the REP's.
inline constexpr std::size_t kCapabilityReqOffset = 36;
inline constexpr std::size_t kCapabilityRepOffset = 0;

struct CapabilityBlock {
  std::uint8_t version = kCapabilityVersion;
  std::uint16_t flags = kCapabilityIrn;
  std::uint16_t bdp_cap = kIrnDefaultBdpCap;  // packets, 1..4096: the bitmap size
  std::uint8_t rto_low = 0;   // exponent: 4.096 us x 2^e, used with <= N packets in flight
  std::uint8_t rto_high = 0;  // exponent: 4.096 us x 2^e, used otherwise
  std::uint8_t low_threshold = kIrnDefaultLowThreshold;  // N
  friend bool operator==(const CapabilityBlock&, const CapabilityBlock&) = default;
  [[nodiscard]] bool irn() const noexcept { return (flags & kCapabilityIrn) != 0; }
  [[nodiscard]] bool coalesced_acks() const noexcept {
    return (flags & kCapabilityCoalescedAcks) != 0;
  }
};

// Layout (16 bytes, big-endian): magic "NAAX"(4) | version(1) | length(1) = 16 | flags(16) |
// bdp_cap(16) | rto_low(1) | rto_high(1) | N(1) | reserved(3) = 0.
// decode: too_short (< 16 bytes), bad_field (not the magic: no block, a standard peer; or
// version 0), length_mismatch (length < 16), value_out_of_range (bdp_cap 0 or > 4096, an rto
// exponent 0 or > 31, rto_low > rto_high, reserved bytes not 0). A newer version with a longer
// block decodes: its first 16 bytes keep this meaning.
[[nodiscard]] Result<CapabilityBlock> decode_capability_block(ByteView in) noexcept;
[[nodiscard]] Result<std::size_t> encode_capability_block(const CapabilityBlock& b,
                                                          MutableByteView out) noexcept;
// The block in a REQ's or REP's private data, if one is there and valid; nullopt otherwise (a
// standard peer, or a block we cannot read: both mean go-back-N).
[[nodiscard]] std::optional<CapabilityBlock> find_capability_block(ByteView private_data,
                                                                   std::size_t offset) noexcept;

// The per-PSN state of an IRN window of `cap` PSNs lives in this many slots, indexed by PSN mod
// the count: the next power of two. PSNs wrap at 2^24, which any power of two divides, so the
// PSNs of one window (at most `cap` consecutive ones, across the wrap too) never share a slot;
// with PSN mod cap they did for a cap that is not a power of two (e.g. 18: 0xFFFFF6 and 0).
[[nodiscard]] std::uint32_t irn_slot_count(std::uint32_t cap) noexcept;

// ---- responder: the 2-bitmap ------------------------------------------------------------------
class IrnReceiveWindow {
 public:
  enum class Arrival : std::uint8_t {
    fresh,      // in [ePSN, ePSN + cap), not seen before: place it
    duplicate,  // before ePSN, or already arrived: never re-executed
    beyond,     // at or past ePSN + cap: dropped and counted
  };

  void reset(std::uint32_t epsn, std::uint32_t cap);
  [[nodiscard]] Arrival classify(std::uint32_t psn) const noexcept;
  // Records a fresh packet; `last` marks the last packet of a message (an MSN update, and for
  // SEND / WRITE-with-immediate a receive completion).
  void mark(std::uint32_t psn, bool last) noexcept;
  // Pops the in-order prefix: for each PSN from ePSN on that has arrived, f(psn, last), then
  // ePSN moves past it. Returns the number popped.
  template <class F>
  std::uint32_t advance(F&& f) {
    std::uint32_t n = 0;
    while (n < cap_ && (slots_[slot(epsn_)] & kArrived) != 0) {
      const bool last = (slots_[slot(epsn_)] & kLast) != 0;
      slots_[slot(epsn_)] = 0;
      --beyond_;
      const std::uint32_t psn = epsn_;
      epsn_ = psn_add(epsn_, 1);
      ++n;
      f(psn, last);
    }
    return n;
  }
  [[nodiscard]] std::uint32_t epsn() const noexcept { return epsn_; }
  [[nodiscard]] std::uint32_t cumulative() const noexcept { return psn_add(epsn_, kMax24); }
  [[nodiscard]] std::uint32_t cap() const noexcept { return cap_; }
  // Some packet after ePSN has arrived: there is a hole at ePSN.
  [[nodiscard]] bool has_gap() const noexcept { return beyond_ != 0; }
  // SackETH bitmap: bit i set when PSN ePSN + 1 + i has arrived.
  [[nodiscard]] std::uint32_t sack_bitmap() const noexcept;
  [[nodiscard]] bool arrived(std::uint32_t psn) const noexcept;
  // After a fresh packet `psn` was marked and advance() ran: it arrived in order and left no
  // gap (with coalesced ACKs such a packet without AckReq needs no ACK of its own).
  [[nodiscard]] bool in_order(std::uint32_t psn) const noexcept {
    return !has_gap() && epsn_ == psn_add(psn, 1);
  }

 private:
  static constexpr std::uint8_t kArrived = 1;
  static constexpr std::uint8_t kLast = 2;
  // slot_count(cap_) slots, a power of two: PSN mod it stays unique across the 24-bit wrap.
  [[nodiscard]] std::size_t slot(std::uint32_t psn) const noexcept { return psn & mask_; }
  std::vector<std::uint8_t> slots_;  // 2 bits per PSN: arrived, last-of-message
  std::uint32_t cap_ = 1;
  std::uint32_t mask_ = 0;
  std::uint32_t epsn_ = 0;
  std::uint32_t beyond_ = 0;  // arrived packets not yet popped
};

// ---- requester: selective repeat --------------------------------------------------------------
class IrnSendWindow {
 public:
  void reset(std::uint32_t first_psn, std::uint32_t cap);
  [[nodiscard]] std::uint32_t una() const noexcept { return una_; }
  [[nodiscard]] std::uint32_t next() const noexcept { return next_; }
  [[nodiscard]] std::uint32_t in_flight() const noexcept { return psn_diff(next_, una_); }
  // BDP flow control: a new PSN may go out while next - una < cap.
  [[nodiscard]] bool can_send_new() const noexcept { return in_flight() < cap_; }
  void sent_new() noexcept;  // next() was transmitted for the first time
  // An IRN ACK: `cumulative` is its BTH PSN (everything <= it arrived), `sack` its SackETH.
  // Returns how far una moved (0: nothing new was acknowledged cumulatively); false `valid` for an
  // ACK that names PSNs never sent.
  struct AckEffect {
    bool valid = true;
    std::uint32_t newly_acked = 0;
  };
  AckEffect on_ack(std::uint32_t cumulative, const SackEth& sack) noexcept;
  // The same by the general rule alone, without on_ack()'s shortcut for an ACK of everything
  // sent outside recovery: for tests, which check that the two leave equal windows.
  AckEffect on_ack_general(std::uint32_t cumulative, const SackEth& sack) noexcept;
  // The next PSN to retransmit in loss recovery (lowest unSACKed below the highest SACKed, or
  // below next() after a timeout, not yet retransmitted in this recovery); marks it.
  // Inline: outside recovery (every packet of a loss-free run) it is one test (issue 31).
  [[nodiscard]] std::optional<std::uint32_t> take_retransmit() noexcept {
    if (!recovery_) return std::nullopt;
    return take_retransmit_in_recovery();
  }
  // The retransmit timer fired: the oldest unacknowledged PSN, and every PSN the SACKs show lost,
  // become eligible once more; if it fires again while since the first expiry only
  // retransmissions were answered, every PSN in flight that is not acknowledged and not SACKed
  // counts as lost (F-RTO, RFC 5682, then RFC 6675 5.1; docs/protocol.md 8.4).
  void on_timeout() noexcept;
  [[nodiscard]] bool in_recovery() const noexcept { return recovery_; }
  // PSNs in flight that no SACK has covered yet: the ones whose ACK could still arrive (the timer's
  // choice between RTO_low and RTO_high, irn_timeout_ns).
  [[nodiscard]] std::uint32_t unsacked() const noexcept;
  [[nodiscard]] bool sacked(std::uint32_t psn) const noexcept;
  friend bool operator==(const IrnSendWindow&, const IrnSendWindow&) = default;

 private:
  static constexpr std::uint8_t kSacked = 1;
  static constexpr std::uint8_t kRetransmitted = 2;
  static constexpr std::uint8_t kLostAgain = 4;  // its retransmission was lost: resend it once more
  // slot_count(cap_) slots, a power of two: PSN mod it stays unique across the 24-bit wrap.
  [[nodiscard]] std::size_t slot(std::uint32_t psn) const noexcept { return psn & mask_; }
  [[nodiscard]] bool outstanding(std::uint32_t psn) const noexcept {
    return psn_diff(psn, una_) < in_flight();
  }
  [[nodiscard]] std::optional<std::uint32_t> take_retransmit_in_recovery() noexcept;
  void mark_sacked(std::uint32_t psn) noexcept;
  void clear_retransmitted() noexcept;
  void resent(std::uint32_t psn) noexcept;  // bookkeeping of a retransmission of `psn`
  std::vector<std::uint8_t> slots_;
  std::uint32_t mask_ = 0;
  // Per PSN, for a retransmitted one: the SACK count after which it counts as lost again (its
  // retransmission lost too): the SACKs of everything in flight when it was resent, plus 3.
  std::vector<std::uint32_t> resend_after_;
  // Per PSN, for a retransmitted one: the number of its latest retransmission (1, 2, ... in the
  // order they were sent): an ACK answering a later retransmission that shows this PSN missing
  // means its retransmission was lost (docs/protocol.md 8.4).
  std::vector<std::uint32_t> resend_order_;
  std::uint32_t resends_ = 0;  // retransmissions so far
  std::uint32_t sacks_ = 0;    // PSNs newly SACKed so far
  std::uint32_t cap_ = 1;
  std::uint32_t una_ = 0;
  std::uint32_t next_ = 0;
  bool recovery_ = false;
  bool probing_ = false;         // a timeout fired and no first transmission was answered since
  bool probe_answered_ = false;  // ... but a retransmission was (on_timeout)
  std::uint32_t recovery_point_ = 0;  // recovery ends when una reaches it
  std::uint32_t lost_below_ = 0;      // PSNs in [una, lost_below) unSACKed count as lost
  std::uint32_t scan_ = 0;            // take_retransmit() resumes here
};

// The retransmit timeout the requester arms: RTO_low while at most N packets are in flight
// (callers pass IrnSendWindow::unsacked(): a SACKed packet can no longer trigger recovery), so a
// lost tail (no later packet to SACK it) is recovered quickly; RTO_high otherwise (IRN 3.1.1).
// Inline: the requester computes it on every packet that arms the timer (issue 31).
[[nodiscard]] constexpr std::uint64_t irn_timeout_ns(const CapabilityBlock& b,
                                                     std::uint32_t in_flight) noexcept {
  return local_ack_timeout_ns(in_flight <= b.low_threshold ? b.rto_low : b.rto_high);
}

}  // namespace naa::protocol
