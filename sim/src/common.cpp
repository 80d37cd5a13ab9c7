#include "naa/sim/common.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace naa::sim {

namespace {

void os_random_fill(void* buf, std::size_t len) {
  auto* p = static_cast<std::uint8_t*>(buf);
  while (len > 0) {
    const ssize_t n = ::getrandom(p, len, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      model_fatal("random", std::string("getrandom failed: ") + std::strerror(errno));
    }
    p += n;
    len -= static_cast<std::size_t>(n);
  }
}

}  // namespace

std::uint64_t os_random_u64() {
  std::uint64_t v = 0;
  os_random_fill(&v, sizeof v);
  return v;
}

SecretSource::SecretSource(std::optional<std::uint64_t> seed) {
  if (seed) prng_.emplace(*seed);
}

std::uint64_t SecretSource::operator()() {
  if (prng_) return (*prng_)();
  if (left_ == 0) {
    os_random_fill(pool_.data(), sizeof pool_);
    left_ = pool_.size();
  }
  const std::uint64_t v = pool_[--left_];
  pool_[left_] = 0;  // a drawn secret does not stay in the pool
  return v;
}

PacketPool::PacketPool(std::size_t count) {
  store_.reserve(count);
  free_.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    store_.push_back(std::make_unique<Packet>());
    free_.push_back(store_.back().get());
  }
}

void PacketPool::wait_for_free() {
  while (free_.empty()) {
    ++waiting_;
    sc_core::wait(freed_);
    --waiting_;
  }
}

void PacketPool::notify_freed() {
  freed_.notify(sc_core::SC_ZERO_TIME);
}

void Log::write(LogLevel l, std::string_view block, const std::string& message) const {
  if (!enabled(l)) return;
  static constexpr const char* kNames[] = {"error", "warn", "info", "debug"};
  std::cerr << "naa-sim [" << sc_core::sc_time_stamp().to_seconds() * 1e9 << " ns] "
            << kNames[static_cast<int>(l)] << ' ' << block << ": " << message << std::endl;
}

void model_fatal(std::string_view block, const std::string& message) {
  std::cerr << "naa-sim: FATAL model invariant at " << sc_core::sc_time_stamp().to_string()
            << " in " << block << ": " << message << std::endl;
  std::abort();
}

}  // namespace naa::sim
