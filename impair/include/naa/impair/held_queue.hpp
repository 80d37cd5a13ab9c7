// The reorder queue and the order in which a port applies a decision (docs/adr/0003), shared by
// naa-sim's NetPort (simulated time, Packet pointers) and the host endpoint (wall-clock time,
// copied datagrams): both are templates over what is held and the clock it is held by.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <utility>

#include "naa/impair/injector.hpp"

namespace naa::impair {

// Datagrams held back for reordering, oldest first. Each waits until `overtakes` later datagrams
// of its direction went past it, or until its deadline if fewer come.
template <class Held, class Time>
class HeldQueue {
 public:
  [[nodiscard]] bool empty() const noexcept { return q_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return q_.size(); }
  // The earliest deadline (the oldest entry's). Not empty.
  [[nodiscard]] const Time& next_deadline() const { return q_.front().deadline; }

  void hold(Held item, std::uint32_t overtakes, Time deadline) {
    q_.push_back(Entry{std::move(item), overtakes, std::move(deadline)});
  }

  // One datagram went past: every held one counts it, and those it was the last to overtake
  // (oldest first, stopping at one that still waits) go to release(Held&).
  template <class Release>
  void overtaken(Release&& release) {
    for (Entry& e : q_)
      --e.overtakes_left;
    while (!q_.empty() && q_.front().overtakes_left == 0)
      release_front(release);
  }

  // Releases the oldest entry if its deadline is not after `now`; false if none was due.
  template <class Release>
  bool release_first_due(const Time& now, Release&& release) {
    if (q_.empty() || now < q_.front().deadline) return false;
    release_front(release);
    return true;
  }

  // Releases every entry whose deadline is not after `now`, oldest first.
  template <class Release>
  void release_due(const Time& now, Release&& release) {
    while (release_first_due(now, release)) {
    }
  }

 private:
  struct Entry {
    Held item;
    std::uint32_t overtakes_left;
    Time deadline;
  };
  template <class Release>
  void release_front(Release& release) {
    // Out of the queue before release runs: a release may impair more datagrams.
    Held item = std::move(q_.front().item);
    q_.pop_front();
    release(item);
  }
  std::deque<Entry> q_;
};

// What a port does with one datagram's fate, supplied by the port (see pass()).
template <class Discard, class DeliverCopy, class Corrupt, class Keep, class Deliver, class Release>
struct Steps {
  Discard discard;           // (Datagram&): lost
  DeliverCopy deliver_copy;  // (Datagram&): send an intact copy now
  Corrupt corrupt;           // (Datagram&, std::uint64_t bit): flip a bit (Injector::corrupt)
  Keep keep;                 // (Datagram&) -> Held: what the held queue stores
  Deliver deliver;           // (Datagram&): send it on
  Release release;           // (Held&): send on a held datagram
};

// Steps from its six parts, in member order. A function rather than class template argument
// deduction from designated initializers, which clang before 17 does not implement for aggregates
// (the fuzz build, scripts/fuzz.sh, uses clang 14).
template <class Discard, class DeliverCopy, class Corrupt, class Keep, class Deliver, class Release>
[[nodiscard]] Steps<Discard, DeliverCopy, Corrupt, Keep, Deliver, Release> make_steps(
    Discard discard, DeliverCopy deliver_copy, Corrupt corrupt, Keep keep, Deliver deliver,
    Release release) {
  return {std::move(discard), std::move(deliver_copy), std::move(corrupt),
          std::move(keep),    std::move(deliver),      std::move(release)};
}

// One datagram through one impaired direction, in the one order both naa-sim and the host use:
//   1. the injector decides (only while a fault is configured: else nothing happens to it but 6);
//   2. lost: discard, done;
//   3. duplicated: an intact copy goes first (it does not count as overtaking held datagrams);
//   4. corrupted: one bit flipped;
//   5. reordered: held until overtaken by reorder_delay datagrams or until `hold_deadline`;
//   6. otherwise delivered, then the held datagrams it was the last to overtake follow.
// `bytes` is the datagram (BTH first), for decisions keyed on the packet (FaultKey::packet).
template <class Datagram, class Held, class Time, class... S>
void pass(Injector& injector, HeldQueue<Held, Time>& held, Datagram& datagram,
          std::span<const std::uint8_t> bytes, Time hold_deadline, Steps<S...> steps) {
  Injector::Decision d;
  if (injector.active()) d = injector.decide(bytes);
  if (d.drop) {
    steps.discard(datagram);
    return;
  }
  if (d.duplicate) steps.deliver_copy(datagram);
  if (d.corrupt) steps.corrupt(datagram, d.bit);
  if (d.reorder) {
    held.hold(steps.keep(datagram), injector.spec().reorder_delay, std::move(hold_deadline));
    return;
  }
  steps.deliver(datagram);
  held.overtaken(steps.release);
}

// The same, decided by the datagram sequence only (FaultKey::sequence whatever the spec says).
template <class Datagram, class Held, class Time, class... S>
void pass(Injector& injector, HeldQueue<Held, Time>& held, Datagram& datagram, Time hold_deadline,
          Steps<S...> steps) {
  pass(injector, held, datagram, std::span<const std::uint8_t>{}, std::move(hold_deadline),
       std::move(steps));
}

}  // namespace naa::impair
