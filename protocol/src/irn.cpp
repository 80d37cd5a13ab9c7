// IRN shared pieces (irn.hpp; docs/protocol.md "IRN").
#include "naa/protocol/irn.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace naa::protocol {

// ---- capability block ----

Result<CapabilityBlock> decode_capability_block(ByteView in) noexcept {
  if (in.size() < kCapabilityBlockSize) return Error::too_short;
  if (std::memcmp(in.data(), kCapabilityMagic, sizeof kCapabilityMagic) != 0) {
    return Error::bad_field;
  }
  CapabilityBlock b;
  b.version = in[4];
  if (b.version == 0) return Error::bad_field;
  if (in[5] < kCapabilityBlockSize) return Error::length_mismatch;
  b.flags = load_be16(in.data() + 6);
  b.bdp_cap = load_be16(in.data() + 8);
  b.rto_low = in[10];
  b.rto_high = in[11];
  b.low_threshold = in[12];
  if (b.bdp_cap == 0 || b.bdp_cap > kIrnMaxBdpCap) return Error::value_out_of_range;
  if (b.rto_low == 0 || b.rto_high == 0 || b.rto_low > 31 || b.rto_high > 31 ||
      b.rto_low > b.rto_high) {
    return Error::value_out_of_range;
  }
  // Reserved bytes of version 1 must be zero; a later version may use them.
  if (b.version == kCapabilityVersion && (in[13] | in[14] | in[15]) != 0) {
    return Error::value_out_of_range;
  }
  return b;
}

Result<std::size_t> encode_capability_block(const CapabilityBlock& b,
                                            MutableByteView out) noexcept {
  if (out.size() < kCapabilityBlockSize) return Error::buffer_too_small;
  if (b.bdp_cap == 0 || b.bdp_cap > kIrnMaxBdpCap || b.rto_low == 0 || b.rto_high == 0 ||
      b.rto_low > 31 || b.rto_high > 31 || b.rto_low > b.rto_high || b.version == 0) {
    return Error::value_out_of_range;
  }
  std::memcpy(out.data(), kCapabilityMagic, sizeof kCapabilityMagic);
  out[4] = b.version;
  out[5] = static_cast<std::uint8_t>(kCapabilityBlockSize);
  store_be16(out.data() + 6, b.flags);
  store_be16(out.data() + 8, b.bdp_cap);
  out[10] = b.rto_low;
  out[11] = b.rto_high;
  out[12] = b.low_threshold;
  out[13] = out[14] = out[15] = 0;
  return kCapabilityBlockSize;
}

std::optional<CapabilityBlock> find_capability_block(ByteView private_data,
                                                     std::size_t offset) noexcept {
  if (private_data.size() < offset) return std::nullopt;
  const auto b = decode_capability_block(private_data.subspan(offset));
  if (!b) return std::nullopt;
  return *b;
}

std::uint32_t irn_slot_count(std::uint32_t cap) noexcept {
  return std::bit_ceil(std::max<std::uint32_t>(cap, 1));
}

// ---- IrnReceiveWindow ----

void IrnReceiveWindow::reset(std::uint32_t epsn, std::uint32_t cap) {
  cap_ = std::max<std::uint32_t>(cap, 1);
  slots_.assign(irn_slot_count(cap_), 0);
  mask_ = irn_slot_count(cap_) - 1;
  epsn_ = epsn;
  beyond_ = 0;
}

IrnReceiveWindow::Arrival IrnReceiveWindow::classify(std::uint32_t psn) const noexcept {
  const std::uint32_t d = psn_diff(psn, epsn_);
  if (d >= 0x800000U) return Arrival::duplicate;  // before ePSN
  if (d >= cap_) return Arrival::beyond;
  return (slots_[slot(psn)] & kArrived) != 0 ? Arrival::duplicate : Arrival::fresh;
}

void IrnReceiveWindow::mark(std::uint32_t psn, bool last) noexcept {
  slots_[slot(psn)] = static_cast<std::uint8_t>(kArrived | (last ? kLast : 0));
  ++beyond_;
}

bool IrnReceiveWindow::arrived(std::uint32_t psn) const noexcept {
  const std::uint32_t d = psn_diff(psn, epsn_);
  if (d >= 0x800000U) return true;
  if (d >= cap_) return false;
  return (slots_[slot(psn)] & kArrived) != 0;
}

std::uint32_t IrnReceiveWindow::sack_bitmap() const noexcept {
  // Nothing marked and not yet popped: no slot has arrived, the bitmap is empty (the in-order
  // case of every ACK; issue 31: the scan was ~370 instructions per ACK).
  if (beyond_ == 0) return 0;
  std::uint32_t bits = 0;
  const std::uint32_t n = std::min<std::uint32_t>(32, cap_ > 1 ? cap_ - 1 : 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    if ((slots_[slot(psn_add(epsn_, i + 1))] & kArrived) != 0) bits |= 1U << i;
  }
  return bits;
}

// ---- IrnSendWindow ----

void IrnSendWindow::reset(std::uint32_t first_psn, std::uint32_t cap) {
  cap_ = std::max<std::uint32_t>(cap, 1);
  const std::uint32_t slots = irn_slot_count(cap_);
  mask_ = slots - 1;
  slots_.assign(slots, 0);
  resend_after_.assign(slots, 0);
  resend_order_.assign(slots, 0);
  resends_ = 0;
  sacks_ = 0;
  una_ = next_ = first_psn;
  recovery_ = probing_ = probe_answered_ = false;
  recovery_point_ = lost_below_ = scan_ = first_psn;
}

void IrnSendWindow::sent_new() noexcept {
  slots_[slot(next_)] = 0;
  next_ = psn_add(next_, 1);
}

std::uint32_t IrnSendWindow::unsacked() const noexcept {
  std::uint32_t n = 0;
  for (std::uint32_t i = 0, end = in_flight(); i < end; ++i)
    n += (slots_[slot(psn_add(una_, i))] & kSacked) == 0 ? 1U : 0U;
  return n;
}

bool IrnSendWindow::sacked(std::uint32_t psn) const noexcept {
  if (!outstanding(psn)) return psn_diff(una_, psn) < 0x800000U;  // acknowledged already
  return (slots_[slot(psn)] & kSacked) != 0;
}

void IrnSendWindow::resent(std::uint32_t psn) noexcept {
  slots_[slot(psn)] = static_cast<std::uint8_t>((slots_[slot(psn)] | kRetransmitted) & ~kLostAgain);
  resend_after_[slot(psn)] = sacks_ + in_flight() + 3;
  resend_order_[slot(psn)] = ++resends_;
}

void IrnSendWindow::mark_sacked(std::uint32_t psn) noexcept {
  if (!outstanding(psn)) return;
  if ((slots_[slot(psn)] & kSacked) == 0) ++sacks_;
  slots_[slot(psn)] |= kSacked;
  // Evidence of loss: every unSACKed PSN below a SACKed one (IRN 3.1: the receiver saw a later
  // packet first).
  if (psn_after(psn_add(psn, 1), lost_below_)) lost_below_ = psn_add(psn, 1);
}

void IrnSendWindow::clear_retransmitted() noexcept {
  for (auto& s : slots_)
    s = static_cast<std::uint8_t>(s & ~(kRetransmitted | kLostAgain));
}

IrnSendWindow::AckEffect IrnSendWindow::on_ack(std::uint32_t cumulative,
                                               const SackEth& sack) noexcept {
  const std::uint32_t new_una = psn_add(cumulative, 1);
  if (new_una != next_ || recovery_ || probing_) return on_ack_general(cumulative, sack);
  // Everything sent is acknowledged, outside recovery and probing (every ACK of a loss-free run
  // with one packet in flight, as a nop call's; issue 31: ~70 instructions less per ACK). Of
  // on_ack_general's steps only these change anything: nothing is outstanding after una moves,
  // so the SACK PSN and the bitmap mark nothing and the retransmission it may answer shows no
  // earlier one lost (no PSN in flight to scan).
  AckEffect e;
  if (psn_after(new_una, una_)) {
    e.newly_acked = psn_diff(new_una, una_);
    una_ = new_una;
  }
  if (psn_after(una_, lost_below_)) lost_below_ = una_;
  if (psn_after(una_, scan_)) scan_ = una_;
  if (psn_after(lost_below_, una_)) {
    recovery_ = true;
    recovery_point_ = next_;
    scan_ = una_;
  }
  return e;
}

IrnSendWindow::AckEffect IrnSendWindow::on_ack_general(std::uint32_t cumulative,
                                                       const SackEth& sack) noexcept {
  AckEffect e;
  const std::uint32_t new_una = psn_add(cumulative, 1);
  // new_una must lie in [una - 2^23, next]: anything else names PSNs never sent.
  if (psn_after(new_una, next_)) {
    e.valid = false;
    return e;
  }
  // The retransmission this ACK answers, if it answers one (its SACK PSN is the packet that
  // arrived).
  const std::uint32_t answered = sack.sack_psn & kMax24;
  const std::uint32_t answered_order =
      outstanding(answered) && (slots_[slot(answered)] & kRetransmitted) != 0
          ? resend_order_[slot(answered)]
          : 0;
  if (probing_ && outstanding(answered)) {
    // After a timeout (on_timeout): an ACK answering a first transmission ends the probe (the
    // timeout was spurious, or the SACKs show the losses as after a NAK); one answering a
    // retransmission may answer its original (a slow path), so it decides nothing yet.
    if (answered_order == 0) {
      probing_ = false;
    } else {
      probe_answered_ = true;
    }
  }
  if (psn_after(new_una, una_)) {
    e.newly_acked = psn_diff(new_una, una_);
    una_ = new_una;
  }
  if (psn_after(una_, lost_below_)) lost_below_ = una_;
  if (psn_after(una_, scan_)) scan_ = una_;
  mark_sacked(sack.sack_psn);
  // The bitmap's set bits, lowest first (issue 31: not a test of each of the 32).
  for (std::uint32_t bits = sack.bitmap; bits != 0; bits &= bits - 1) {
    mark_sacked(psn_add(cumulative, 2 + static_cast<std::uint32_t>(std::countr_zero(bits))));
  }
  if (answered_order != 0) {
    // RACK (RFC 8985) by transmission order, the rule IRN 3.1 applies to first transmissions ("a
    // higher PSN was SACKed") applied to retransmissions: this ACK answers a retransmission and
    // shows one resent before it still missing (una and the 32 PSNs of its bitmap; an ACK says
    // nothing of PSNs beyond them), so that earlier retransmission was lost. Without the rule only
    // the timer finds it, RTO_high when the BDP window is full.
    const std::uint32_t end = std::min<std::uint32_t>(in_flight(), 33);
    for (std::uint32_t i = 0; i < end; ++i) {
      std::uint8_t& s = slots_[slot(psn_add(una_, i))];
      if ((s & (kSacked | kRetransmitted)) == kRetransmitted &&
          static_cast<std::int32_t>(answered_order - resend_order_[slot(psn_add(una_, i))]) > 0) {
        s |= kLostAgain;
      }
    }
  }
  if (recovery_ && !psn_after(recovery_point_, una_)) {
    // Everything sent before the recovery began is acknowledged, so are its retransmissions.
    recovery_ = false;
    probing_ = probe_answered_ = false;
    clear_retransmitted();
    scan_ = una_;
  }
  if (!recovery_ && psn_after(lost_below_, una_)) {
    recovery_ = true;
    recovery_point_ = next_;
    scan_ = una_;
  }
  return e;
}

std::optional<std::uint32_t> IrnSendWindow::take_retransmit_in_recovery() noexcept {
  for (std::uint32_t psn = psn_after(scan_, una_) ? scan_ : una_; psn_after(lost_below_, psn);
       psn = psn_add(psn, 1)) {
    std::uint8_t& s = slots_[slot(psn)];
    if ((s & (kSacked | kRetransmitted)) == 0) {
      resent(psn);
      scan_ = psn_add(psn, 1);
      return psn;
    }
  }
  scan_ = lost_below_;
  // A retransmission lost as well (without these rules only the timer would find it): an ACK of
  // a later retransmission showed it missing (on_ack), or it is still unSACKed after every packet
  // in flight when it was resent, and 3 more, were SACKed.
  for (std::uint32_t psn = una_; psn_after(lost_below_, psn); psn = psn_add(psn, 1)) {
    const std::uint8_t s = slots_[slot(psn)];
    if ((s & kSacked) == 0 && (s & kRetransmitted) != 0 &&
        ((s & kLostAgain) != 0 ||
         static_cast<std::int32_t>(sacks_ - resend_after_[slot(psn)]) >= 0)) {
      resent(psn);
      return psn;
    }
  }
  return std::nullopt;
}

void IrnSendWindow::on_timeout() noexcept {
  if (una_ == next_) return;
  // The timer fired (docs/protocol.md 8.4). A first expiry starts loss recovery with the oldest
  // unacknowledged PSN (and whatever the SACKs show lost) and probes (F-RTO, RFC 5682, with the
  // SACK PSN naming the packet that arrived): if an ACK then answers a packet sent before the
  // timeout and never resent, the peer was only slow (naa-sim in a long memory copy, a
  // descheduled host) and the timeout cost one packet, not a window. If the timer expires again
  // while only retransmissions were answered, the first expiry was a loss: every PSN in flight
  // that is neither acknowledged nor SACKed counts as lost and is resent once (TCP's timeout with
  // SACK, RFC 6675 5.1). A burst of k tail losses (an incast overflowing a queue) so costs two
  // timeouts, not k.
  const bool loss = probing_ && probe_answered_;
  clear_retransmitted();
  recovery_ = true;
  recovery_point_ = next_;
  probing_ = !loss;
  probe_answered_ = false;
  if (loss) {
    lost_below_ = next_;
  } else if (psn_after(psn_add(una_, 1), lost_below_)) {
    lost_below_ = psn_add(una_, 1);
  }
  scan_ = una_;
}

}  // namespace naa::protocol
