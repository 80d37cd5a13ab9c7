// Building blocks shared by the NAA blocks: the packet buffer that travels between them, a pool
// that recycles packet buffers (no allocation per packet), a bounded channel between processes,
// cycle accounting, drop counters by reason and the statistics sink.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
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
  [[nodiscard]] Packet* try_get();
  [[nodiscard]] Packet* get();  // SC_THREAD context only
  void put(Packet* p);
  // Return a buffer taken by try_get() and never used, without waking anyone (nobody can be
  // waiting: the pool was not empty). Lets the runner probe the socket without creating work.
  void unget(Packet* p) { free_.push_back(p); }
  [[nodiscard]] std::size_t available() const { return free_.size(); }
  [[nodiscard]] std::uint64_t exhausted() const { return exhausted_; }

 private:
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
    if (count_ == buf_.size()) return false;
    buf_[(head_ + count_) % buf_.size()] = std::move(v);
    ++count_;
    if (readers_waiting_ != 0 || data_observed_) data_.notify(sc_core::SC_ZERO_TIME);
    return true;
  }
  void put(T v) {
    while (count_ == buf_.size()) {
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
  [[nodiscard]] bool full() const { return count_ == buf_.size(); }
  [[nodiscard]] std::size_t size() const { return count_; }
  // For a process that waits on the event itself (with others, or with a timeout).
  [[nodiscard]] const sc_core::sc_event& data_event() const {
    data_observed_ = true;
    return data_;
  }

 private:
  std::vector<T> buf_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
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
  [[nodiscard]] sc_core::sc_time times(std::uint64_t n) const {
    const std::uint64_t v = cycle_.value();
    if (v != 0 && n < (std::uint64_t{1} << 53) / v) return sc_core::sc_time::from_value(v * n);
    return cycle_ * static_cast<double>(n);
  }
  void account(std::uint64_t cycles) { busy_ += cycles; }  // time waited elsewhere
  [[nodiscard]] std::uint64_t busy_cycles() const { return busy_; }
  [[nodiscard]] sc_core::sc_time cycle() const { return cycle_; }

 private:
  sc_core::sc_time cycle_;
  std::uint64_t busy_ = 0;
};

// The input of a pipeline stage that takes one packet at a time and is then busy for a time
// known from the packet when it takes it (RxPipe, TxPipe, NetPort's port stages). Behaves as a
// Channel the stage reads with get() followed by a wait of that time: same order, same times,
// same back-pressure. What differs (issue 31): when the stage is idle and a packet arrives, the
// producer starts the service itself (a timed notification at its end), so the stage wakes once,
// when the packet is through, instead of once for the packet and once more after its service.
class StageQueue {
 public:
  // The stage's time for a packet from the moment the stage takes it (the function also counts
  // the stage's busy cycles); SC_ZERO_TIME: no wait at all.
  using Service = sc_core::sc_time (*)(void* stage, const Packet& p);
  StageQueue(std::size_t capacity, void* stage, Service service)
      : fifo_(capacity), stage_(stage), service_(service) {}
  // Producer side: put() blocks a process while full (back-pressure), as Channel::put;
  // try_put() does not block (false: full), and may be called between sc_start() calls.
  void put(Packet* p) {
    if (!start_if_idle(p)) fifo_.put(p);
  }
  [[nodiscard]] bool try_put(Packet* p) { return start_if_idle(p) || fifo_.try_put(p); }
  // Consumer side: the next packet once its service time has passed.
  [[nodiscard]] Packet* next() {
    if (fifo_.empty()) {
      idle_ = true;
      while (in_service_ == nullptr)
        sc_core::wait(served_);
      idle_ = false;
      Packet* p = in_service_;
      in_service_ = nullptr;
      return p;  // what arrived during its service queued behind it, as before
    }
    return serve(fifo_.get());
  }
  // For a stage that sometimes waits on other things too (NetPort's fault hold queue): it reads
  // the FIFO itself and then calls serve(); while it does, no producer starts a service.
  [[nodiscard]] Channel<Packet*>& fifo() { return fifo_; }
  Packet* serve(Packet* p) {
    if (const sc_core::sc_time d = service_(stage_, *p); d != sc_core::SC_ZERO_TIME) {
      sc_core::wait(d);
    }
    return p;
  }
  [[nodiscard]] bool empty() const { return fifo_.empty(); }
  [[nodiscard]] bool full() const { return fifo_.full(); }
  [[nodiscard]] std::size_t size() const { return fifo_.size(); }

 private:
  bool start_if_idle(Packet* p) {
    if (!idle_ || in_service_ != nullptr || !fifo_.empty()) return false;
    in_service_ = p;
    served_.notify(service_(stage_, *p));  // SC_ZERO_TIME: the next delta, as a get() was
    return true;
  }
  Channel<Packet*> fifo_;
  void* stage_;
  Service service_;
  bool idle_ = false;             // the stage waits in next() with nothing queued
  Packet* in_service_ = nullptr;  // started by a producer; the stage takes it at the end
  sc_core::sc_event served_;
};

// A FIFO whose items each become due at a simulated time known when they are put (NetPort's
// wire: a frame is handed on when its last bit has left). The reader gets each item at
// max(its due time, when the reader asks), in order; back-pressure as Channel. As StageQueue: an
// idle reader is woken once, at the due time, instead of once for the item and once more at
// its time (issue 31).
template <class T>
class ReadyQueue {
 public:
  explicit ReadyQueue(std::size_t capacity) : fifo_(capacity) {}
  void put(T v, sc_core::sc_time due) {
    if (idle_ && !ready_ && fifo_.empty()) {
      const sc_core::sc_time now = sc_core::sc_time_stamp();
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
      while (!ready_)
        sc_core::wait(served_);
      idle_ = false;
      ready_ = false;
      return std::move(held_);
    }
    Item it = fifo_.get();
    if (const sc_core::sc_time now = sc_core::sc_time_stamp(); it.due > now) {
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
