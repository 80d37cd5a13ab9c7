// Building blocks shared by the NAA blocks: the packet buffer that travels between them, a pool
// that recycles packet buffers (no allocation per packet), a bounded channel between processes,
// cycle accounting, drop counters by reason and the statistics sink.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <systemc>

#include "naa/protocol/bytes.hpp"
#include "naa/protocol/packet.hpp"
#include "naa/sim/config.hpp"
#include "naa/sim/sim_time.hpp"

namespace naa::sim {

// Largest datagram we handle: BTH + RETH + ImmDt + 4096 B payload + pad + ICRC, with margin.
inline constexpr std::size_t kMaxDatagram = 4096 + 128;

// One RoCEv2 datagram (BTH .. ICRC) with the addressing the socket gave or will give it.
struct Packet {
  std::array<std::uint8_t, kMaxDatagram> data{};
  std::size_t size = 0;
  std::uint32_t peer_ip = 0;    // remote IPv4, host order
  std::uint16_t peer_port = 0;  // rx: the sender's UDP source port
  std::uint32_t local_ip = 0;   // rx: our address the datagram was sent to (IP_PKTINFO)
  std::uint16_t ip_id = 0;      // rx: the sender's IPv4 ID, recovered from the ICRC
  std::uint32_t src_qpn = 0;    // tx: our QP, selects the UDP source port (PROTOCOL.md 1)
  sc_core::sc_time arrival;     // rx: simulated arrival time
  // rx: RxPipe's decode of these bytes, handed to the Transport with the packet so that it is
  // not decoded twice (issue 31); meaningful only while `decoded` is set (RxPipe sets it, the
  // Transport clears it).
  protocol::PacketView view;
  bool decoded = false;

  [[nodiscard]] protocol::ByteView bytes() const { return {data.data(), size}; }
};

// A fixed set of packet buffers. get() waits (inside a process) until one is free.
class PacketPool {
 public:
  explicit PacketPool(std::size_t count);
  // Inline, a few per datagram (issue 31); the waits and notifications out of line.
  [[nodiscard]] Packet* try_get() {
    if (free_.empty()) {
      ++exhausted_;
      return nullptr;
    }
    Packet* p = free_.back();
    free_.pop_back();
    p->size = 0;
    p->ip_id = 0;
    p->src_qpn = 0;
    return p;
  }
  [[nodiscard]] Packet* get() {  // SC_THREAD context only
    if (free_.empty()) wait_for_free();
    return try_get();
  }
  void put(Packet* p) {
    if (p == nullptr) return;
    free_.push_back(p);  // never reallocates: reserved for every packet
    if (waiting_ != 0) notify_freed();
  }
  // Return a buffer taken by try_get() and never used, without waking anyone (nobody can be
  // waiting: the pool was not empty). Lets the runner probe the socket without creating work.
  void unget(Packet* p) { free_.push_back(p); }
  [[nodiscard]] std::size_t available() const { return free_.size(); }
  [[nodiscard]] std::uint64_t exhausted() const { return exhausted_; }

 private:
  void wait_for_free();  // get(): until a packet is free
  void notify_freed();   // put() while get() waits
  std::vector<std::unique_ptr<Packet>> store_;
  std::vector<Packet*> free_;
  sc_core::sc_event freed_;  // notified only while get() waits (see Channel)
  std::size_t waiting_ = 0;
  std::uint64_t exhausted_ = 0;
};

// Bounded FIFO between processes: put() blocks a writer while full (back-pressure), get() blocks
// a reader while empty. Any number of writers (the processes run cooperatively). try_put() may
// also be called between sc_start() calls (the runner injecting received datagrams).
//
// An event is notified only when a process may be waiting for it (issue 31: a notification
// nobody waits for still costs the kernel a delta-cycle entry and a trigger, per packet and per
// hop). get() and put() count their waiters; a caller of data_event() waits on it by itself, so
// from then on every put notifies as before. Which process runs when is unchanged: an event
// with no waiter makes no process runnable.
template <class T>
class Channel {
 public:
  explicit Channel(std::size_t capacity) : buf_(capacity) {}
  [[nodiscard]] bool try_put(T v) {
    if (full()) return false;
    buf_[(head_ + count_) % buf_.size()] = std::move(v);
    ++count_;
    if (readers_waiting_ != 0 || data_observed_) data_.notify(sc_core::SC_ZERO_TIME);
    return true;
  }
  void put(T v) {
    while (full()) {
      ++writers_waiting_;
      sc_core::wait(space_);
      --writers_waiting_;
    }
    (void)try_put(std::move(v));
  }
  [[nodiscard]] T get() {
    while (count_ == 0) {
      ++readers_waiting_;
      sc_core::wait(data_);
      --readers_waiting_;
    }
    T v = std::move(buf_[head_]);
    head_ = (head_ + 1) % buf_.size();
    --count_;
    if (writers_waiting_ != 0) space_.notify(sc_core::SC_ZERO_TIME);
    return v;
  }
  [[nodiscard]] bool empty() const { return count_ == 0; }
  [[nodiscard]] bool full() const { return count_ + reserved_ == buf_.size(); }
  [[nodiscard]] std::size_t size() const { return count_ + reserved_; }
  // A slot held for an item kept outside the buffer (StageQueue's chained packet): counted as
  // queued until release_slot(), which frees it as a get() would.
  void reserve_slot() { ++reserved_; }
  void release_slot() {
    --reserved_;
    if (writers_waiting_ != 0) space_.notify(sc_core::SC_ZERO_TIME);
  }
  // For a process that waits on the event itself (with others, or with a timeout).
  [[nodiscard]] const sc_core::sc_event& data_event() const {
    data_observed_ = true;
    return data_;
  }

 private:
  std::vector<T> buf_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  std::size_t reserved_ = 0;
  std::size_t readers_waiting_ = 0;
  std::size_t writers_waiting_ = 0;
  mutable bool data_observed_ = false;
  sc_core::sc_event data_;
  sc_core::sc_event space_;
};

// Busy-time accounting of one block: spend() advances the calling process by whole cycles and
// counts them, so "cycles per block" in the statistics is the time the block was busy.
class CycleMeter {
 public:
  explicit CycleMeter(const SimConfig& cfg) : cycle_(cfg.cycle()) {}
  void spend(std::uint64_t cycles) {
    busy_ += cycles;
    if (cycles != 0) sc_core::wait(times(cycles));
  }
  // cycle() * double(n) without the double arithmetic: the same value as long as the product is
  // exact in a double (below 2^53 units of the time resolution), which is always the case here.
  // The times of short counts are kept once computed (a stage's time for a short packet; issue
  // 31: from_value is a library call); a zero entry is one not computed yet.
  // Inline: the kept time; its computation out of line (issue 31: the compiler had made the
  // whole function a call at some callers).
  [[nodiscard]] sc_core::sc_time times(std::uint64_t n) const {
    if (n < kKept && known_[n] != sc_core::SC_ZERO_TIME) [[likely]]
      return known_[n];
    return compute_times(n);
  }
  void account(std::uint64_t cycles) { busy_ += cycles; }  // time waited elsewhere
  [[nodiscard]] std::uint64_t busy_cycles() const { return busy_; }
  [[nodiscard]] sc_core::sc_time cycle() const { return cycle_; }

 private:
  [[gnu::noinline]] sc_core::sc_time compute_times(std::uint64_t n) const {
    const std::uint64_t v = cycle_.value();
    const sc_core::sc_time t = v != 0 && n < (std::uint64_t{1} << 53) / v
                                   ? sc_core::sc_time::from_value(v * n)
                                   : cycle_ * static_cast<double>(n);
    if (n < kKept) known_[n] = t;
    return t;
  }
  sc_core::sc_time cycle_;
  std::uint64_t busy_ = 0;
  static constexpr std::uint64_t kKept = 64;
  mutable std::array<sc_core::sc_time, kKept> known_{};
};

// The input of a pipeline stage that takes one packet at a time and is then busy for a time
// known from the packet when it takes it (RxPipe, TxPipe, NetPort's port stages). Behaves as a
// Channel the stage reads with get() followed by a wait of that time: same order, same times,
// same back-pressure. What differs (issue 31): when the stage is idle and a packet arrives, the
// producer starts the service itself (a timed notification at its end), so the stage wakes once,
// when the packet is through, instead of once for the packet and once more after its service.
//
// Passing a stage without its process (issue 31, second form): a stage whose work on a packet
// reads nothing but the packet (TxPipe's ICRC; NetPort's port stages without faults) can be
// crossed by a call: while the stage's process is parked with nothing queued, its producer does
// the stage's work itself and reserve() books the stage for the packet's service time, from when
// the packet is ready (or the end of the previous booking) to when it leaves, which reserve()
// returns; the producer hands the packet to the next stage with that time (put_at()). The
// stage's process does not wake for it. A packet put() while the stage is still booked waits in
// the FIFO, and the process is woken when the booking ends to serve it. A packet booked behind
// a booking counts as queued until its start (size(), full()), as it would have been in the FIFO.
// The next stage takes a packet with a ready time if it is idle then, or (chained) if it is
// parked with one packet in service that ends by then: the chained packet's slot in the FIFO is
// held until the process takes it. Every time, order and FIFO count is that of a stage whose
// process took each packet itself.
class StageQueue {
 public:
  // The stage's time for a packet taken at `start` (SC_ZERO_TIME: now) (the function also counts
  // the stage's busy cycles); SC_ZERO_TIME: no wait at all.
  using Service = sc_core::sc_time (*)(void* stage, const Packet& p, sc_core::sc_time start);
  StageQueue(std::size_t capacity, void* stage, Service service)
      : fifo_(capacity), capacity_(capacity), stage_(stage), service_(service) {}
  // Producer side: put() blocks a process while full (back-pressure), as Channel::put;
  // try_put() does not block (false: full), and may be called between sc_start() calls.
  void put(Packet* p) {
    if (start_if_idle_now(p)) return;
    fifo_.put(p);
    wake_after_booking();
  }
  [[nodiscard]] bool try_put(Packet* p) {
    if (start_if_idle_now(p)) return true;
    if ((!ahead_.empty() && full()) || !fifo_.try_put(p)) return false;
    wake_after_booking();
    return true;
  }
  // Whether a packet ready at `ready` (not before now) would be taken by the stage at once:
  // its process parked with nothing queued and no booking that ends later, and either nothing in
  // service or (chained) one packet whose service ends by `ready`. put_at() then hands it over.
  [[nodiscard]] bool accepts_at(sc_core::sc_time ready) const {
    if (!parked_empty() || chained_ != nullptr || booked_until_ > ready) return false;
    return in_service_ == nullptr || in_service_end_ <= ready;
  }
  // accepts_at() and put_at() in one: hands `p` over if the stage would take it at once, else
  // returns false and leaves it with the caller (a block's PacketSink::try_put_at, issue 31).
  [[nodiscard]] bool try_put_at(Packet* p, sc_core::sc_time ready) {
    if (!accepts_at(ready)) return false;
    put_at(p, ready);
    return true;
  }
  void put_at(Packet* p, sc_core::sc_time ready) {
    if (in_service_ == nullptr) {
      (void)start_if_idle(p, ready, sim_now());
      return;
    }
    chained_ = p;
    chained_ready_ = ready;
    fifo_.reserve_slot();
  }
  // Whether reserve() may book the stage: its process parked, nothing in service or queued. A
  // booking may still run (the packet is then booked behind it); for a stage whose producers
  // never block (try_put(), full(), size()), as NetPort's receive stage.
  [[nodiscard]] bool can_book() const { return parked_empty() && in_service_ == nullptr; }
  // Whether reserve() may book the stage for a packet ready at `ready` with no wait behind a
  // booking (the stage's FIFO then sees nothing of it, whatever its producers).
  [[nodiscard]] bool can_book_at(sc_core::sc_time ready) const {
    return can_book() && booked_until_ <= ready;
  }
  // When a packet ready at `ready` would start in a stage that can_book().
  [[nodiscard]] sc_core::sc_time start_for(sc_core::sc_time ready) const {
    return std::max(ready, booked_until_);
  }
  // Books the stage (can_book()) for `p`, ready at `ready`, whose work the caller does; returns
  // when the packet leaves the stage.
  sc_core::sc_time reserve(const Packet& p, sc_core::sc_time ready) {
    const sc_core::sc_time start = start_for(ready);
    return book(ready, start, start + service_(stage_, p, start));
  }
  // reserve() for a caller that computed the packet's service time itself (and counted the
  // stage's busy cycles, as the service function would have): the packet, ready at `ready`,
  // starts at `start` (start_for(ready)) and leaves at `until`, which is returned. The same
  // booking as reserve(), without the service function's second computation (issue 31).
  // Inline, with the rare queueing behind a booking out of line (note_ahead).
  sc_core::sc_time book(sc_core::sc_time ready, sc_core::sc_time start, sc_core::sc_time until) {
    if (!ahead_.empty() || start > ready) note_ahead(ready, start);
    booked_until_ = until;
    return until;
  }
  // Consumer side: the next packet once its service time has passed.
  [[nodiscard]] Packet* next() {
    for (;;) {
      if (chained_ != nullptr) {  // handed over while the previous one was in service
        Packet* p = chained_;
        chained_ = nullptr;
        fifo_.release_slot();
        return serve_from(p, chained_ready_);
      }
      if (!fifo_.empty()) return serve_from(fifo_.get(), sc_core::SC_ZERO_TIME);
      idle_ = true;
      while (in_service_ == nullptr && !recheck_)
        sc_core::wait(served_);
      idle_ = false;
      if (recheck_) {  // a booking ended with packets queued behind it
        recheck_ = false;
        continue;
      }
      Packet* p = in_service_;
      in_service_ = nullptr;
      return p;  // what arrived during its service queued behind it, as before
    }
  }
  // For a stage that sometimes waits on other things too (NetPort's fault hold queue): it reads
  // the FIFO itself and then calls serve(); while it does, no producer starts a service.
  [[nodiscard]] Channel<Packet*>& fifo() { return fifo_; }
  Packet* serve(Packet* p) { return serve_from(p, sc_core::SC_ZERO_TIME); }
  [[nodiscard]] bool empty() const { return size() == 0; }
  [[nodiscard]] bool full() const { return size() >= capacity(); }
  // Queued packets: the FIFO's, and those booked behind a booking until they start.
  [[nodiscard]] std::size_t size() const {
    if (ahead_.empty()) return fifo_.size();
    const sc_core::sc_time now = sim_now();
    std::size_t n = fifo_.size();
    for (std::size_t i = 0; i < ahead_.count(); ++i) {
      const Ahead& a = ahead_.at(i);
      if (a.ready <= now && now < a.start) ++n;
    }
    return n;
  }

 private:
  struct Ahead {
    sc_core::sc_time ready, start;  // queued from ready to start
  };
  // The packets booked behind a booking, oldest first: a ring that doubles when full (a deque
  // allocated and freed a node every few bookings; issue 31). Rarely holds more than a few; it
  // starts small so that the unit test's short FIFOs (sim_stage_queue) make it grow too.
  class AheadRing {
   public:
    [[nodiscard]] bool empty() const { return count_ == 0; }
    [[nodiscard]] std::size_t count() const { return count_; }
    [[nodiscard]] const Ahead& front() const { return items_[head_]; }
    [[nodiscard]] const Ahead& at(std::size_t i) const { return items_[(head_ + i) & mask_]; }
    void pop_front() {
      head_ = (head_ + 1) & mask_;
      --count_;
    }
    void push_back(Ahead a) {
      if (count_ == items_.size()) grow();
      items_[(head_ + count_) & mask_] = a;
      ++count_;
    }

   private:
    [[gnu::noinline]] void grow() {
      std::vector<Ahead> bigger(items_.empty() ? 2 : items_.size() * 2);
      for (std::size_t i = 0; i < count_; ++i)
        bigger[i] = at(i);
      items_ = std::move(bigger);
      head_ = 0;
      mask_ = items_.size() - 1;
    }
    std::vector<Ahead> items_;  // a power of two long
    std::size_t head_ = 0, count_ = 0, mask_ = 0;
  };
  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  // book(): forgets the packets booked behind a booking that have started by now, and notes
  // one that starts after it is ready.
  [[gnu::noinline]] void note_ahead(sc_core::sc_time ready, sc_core::sc_time start) {
    const sc_core::sc_time now = sim_now();
    while (!ahead_.empty() && ahead_.front().start <= now)
      ahead_.pop_front();
    if (start > ready) ahead_.push_back({ready, start});
  }
  [[nodiscard]] bool parked_empty() const { return idle_ && !recheck_ && fifo_.empty(); }
  // Serves p from max(now, ready, the end of a booking): one wait.
  inline Packet* serve_from(Packet* p, sc_core::sc_time ready) {
    sc_core::sc_time d;
    if (ready == sc_core::SC_ZERO_TIME && booked_until_ == sc_core::SC_ZERO_TIME) {
      d = service_(stage_, *p, sc_core::SC_ZERO_TIME);  // from now
    } else {
      const sc_core::sc_time now = sim_now();
      while (!ahead_.empty() && ahead_.front().start <= now)
        ahead_.pop_front();
      const sc_core::sc_time start = std::max({now, ready, booked_until_});
      d = (start - now) + service_(stage_, *p, start);
      // The booking is over once this packet starts; until the process parks again nothing
      // books the stage, so "no booking" (zero) is the same from here (and cheaper to test).
      booked_until_ = sc_core::SC_ZERO_TIME;
    }
    if (d != sc_core::SC_ZERO_TIME) sc_core::wait(d);
    return p;
  }
  bool start_if_idle_now(Packet* p) {
    if (!parked_empty() || in_service_ != nullptr) return false;
    const sc_core::sc_time now = sim_now();
    return start_if_idle(p, now, now);
  }
  bool start_if_idle(Packet* p, sc_core::sc_time ready, sc_core::sc_time now) {
    // Booked: the packet queues behind the booking (wake_after_booking).
    if (!parked_empty() || in_service_ != nullptr || booked_until_ > ready) return false;
    in_service_ = p;
    in_service_end_ = ready + service_(stage_, *p, ready);
    // SC_ZERO_TIME: the next delta, as a get() was
    served_.notify(in_service_end_ - now);
    return true;
  }
  // A packet went into the FIFO of a stage whose process is parked while a booking runs: wake
  // the process when the booking ends, to serve it.
  void wake_after_booking() {
    if (!idle_ || in_service_ != nullptr || recheck_) return;
    const sc_core::sc_time now = sim_now();
    recheck_ = true;
    served_.notify(booked_until_ > now ? booked_until_ - now : sc_core::SC_ZERO_TIME);
  }
  Channel<Packet*> fifo_;
  std::size_t capacity_ = 0;
  void* stage_;
  Service service_;
  bool idle_ = false;             // the stage waits in next() with nothing queued
  bool recheck_ = false;          // the stage is woken at the end of a booking to read the FIFO
  Packet* in_service_ = nullptr;  // started by a producer; the stage takes it at the end
  sc_core::sc_time in_service_end_ = sc_core::SC_ZERO_TIME;
  Packet* chained_ = nullptr;  // put_at() behind in_service_; its FIFO slot is held
  sc_core::sc_time chained_ready_ = sc_core::SC_ZERO_TIME;
  sc_core::sc_time booked_until_ = sc_core::SC_ZERO_TIME;  // reserve(): busy with a passing packet
  AheadRing ahead_;  // reserve(): booked behind a booking, not started yet
  sc_core::sc_event served_;
};

// A FIFO whose items each become due at a simulated time known when they are put (NetPort's
// wire: a frame is handed on when its last bit has left). The reader gets each item at
// max(its due time, when the reader asks), in order; back-pressure as Channel. As StageQueue: an
// idle reader is woken once, at the due time, instead of once for the item and once more at
// its time (issue 31). An item whose handing-on the producer can do itself (try_book) does not
// wake the reader at all: the queue only counts as busy until its due time.
template <class T>
class ReadyQueue {
 public:
  explicit ReadyQueue(std::size_t capacity) : fifo_(capacity) {}
  // Nothing queued, booked or handed over, the reader waiting in next(): a put() now is the next
  // item.
  [[nodiscard]] bool idle_now() const {
    return idle_ && !ready_ && fifo_.empty() && booked_until_ <= sim_now();
  }
  // The item the caller is about to put, due at `due`, would reach an idle reader with nothing
  // before it: true if so, and the caller hands it on itself (now, without the reader's
  // activation; issue 31) while the queue counts as busy until `due`, exactly as a reader
  // waiting for that item's time would be. False (nothing changed): put() it.
  [[nodiscard]] bool full() const { return fifo_.full(); }
  [[nodiscard]] bool try_book(sc_core::sc_time due) {
    if (!idle_now()) return false;
    booked_until_ = due;
    return true;
  }
  void put(T v, sc_core::sc_time due) {
    if (idle_ && !ready_ && fifo_.empty()) {
      const sc_core::sc_time now = sim_now();
      if (booked_until_ > now) {
        // The reader would still be waiting for the booked item's time: this item waits in the
        // FIFO (a slot, as behind an item in hand) and the reader takes it at the booking's end.
        fifo_.put(Item{std::move(v), due});
        served_.notify(booked_until_ - now);
        return;
      }
      held_ = std::move(v);
      ready_ = true;
      served_.notify(due > now ? due - now : sc_core::SC_ZERO_TIME);
      return;
    }
    fifo_.put(Item{std::move(v), due});
  }
  [[nodiscard]] T next() {
    if (fifo_.empty()) {
      idle_ = true;
      while (!ready_ && fifo_.empty())
        sc_core::wait(served_);
      idle_ = false;
      if (ready_) {
        ready_ = false;
        return std::move(held_);
      }
    }
    Item it = fifo_.get();
    if (const sc_core::sc_time now = sim_now(); it.due > now) {
      sc_core::wait(it.due - now);
    }
    return std::move(it.value);
  }

 private:
  struct Item {
    T value{};
    sc_core::sc_time due;
  };
  Channel<Item> fifo_;
  bool idle_ = false;   // the reader waits in next() with nothing queued
  bool ready_ = false;  // held_ was handed over by put(); the reader takes it when served_
  T held_{};
  sc_core::sc_time booked_until_ = sc_core::SC_ZERO_TIME;  // try_book(): an item handed on early
  sc_core::sc_event served_;
};

// Counters keyed by a small enum, printed with names.
template <std::size_t N>
class ReasonCounters {
 public:
  explicit ReasonCounters(std::array<std::string_view, N> names) : names_(names) {}
  void add(std::size_t reason, std::uint64_t n = 1) { counts_.at(reason) += n; }
  [[nodiscard]] std::uint64_t get(std::size_t reason) const { return counts_.at(reason); }
  [[nodiscard]] std::uint64_t total() const {
    std::uint64_t t = 0;
    for (auto c : counts_)
      t += c;
    return t;
  }
  void report(std::ostream& os, std::string_view prefix) const {
    for (std::size_t i = 0; i < N; ++i) {
      if (counts_[i] != 0) os << prefix << names_[i] << '=' << counts_[i] << '\n';
    }
  }

 private:
  std::array<std::string_view, N> names_;
  std::array<std::uint64_t, N> counts_{};
};

// A 64-bit value from the OS random source (getrandom(2)); aborts if the kernel cannot give one.
[[nodiscard]] std::uint64_t os_random_u64();

// The source of the NAA's secrets: rkey tags, CM comm IDs, the host's starting PSNs
// (docs/sim/naa-sim.md "Secrets and --seed"). Unseeded it reads the OS random source, so a peer
// that saw earlier rkeys cannot predict the next (a generator seeded from the OS would do: its
// state can be recovered from enough outputs). Seeded (--seed) it is a fixed generator, for
// reproducible runs.
class SecretSource {
 public:
  explicit SecretSource(std::optional<std::uint64_t> seed);
  std::uint64_t operator()();
  [[nodiscard]] bool seeded() const { return prng_.has_value(); }

 private:
  std::optional<std::mt19937_64> prng_;
  std::array<std::uint64_t, 32> pool_{};  // getrandom() in batches: one syscall per 32 draws
  std::size_t left_ = 0;
};

// Logging: one threshold for the whole model, passed around in the context.
enum class LogLevel : std::uint8_t { error = 0, warn = 1, info = 2, debug = 3 };

class Log {
 public:
  explicit Log(LogLevel level) : level_(level) {}
  [[nodiscard]] bool enabled(LogLevel l) const { return l <= level_; }
  // Prints "[time] block: message" to stderr.
  void write(LogLevel l, std::string_view block, const std::string& message) const;

 private:
  LogLevel level_;
};

// Fatal model invariant: names the simulated time and the block, then aborts (STYLE.md).
[[noreturn]] void model_fatal(std::string_view block, const std::string& message);

}  // namespace naa::sim
