// What the two C APIs (naa.h, compat/naaice.h) share: options from the environment and one
// endpoint per local address for the whole process (c_api.cpp).
#pragma once

#include <cstdlib>
#include <memory>
#include <string>

#include "naa/host/session.hpp"
#include "naa/host/transport.hpp"

namespace naa::host::detail {

inline const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

inline long env_long(const char* name, long fallback) {
  const char* v = env(name);
  if (v == nullptr) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return end != v && *end == '\0' && x > 0 ? x : fallback;
}

// NAA_PROGRESS, NAA_PCAP, NAA_IRN (0|1), NAA_CONNECT_TIMEOUT_MS (connect and MRSP),
// NAA_CALL_TIMEOUT_MS, NAA_DISCONNECT_TIMEOUT_MS, NAA_PATH_MTU.
void apply_env_options(SessionOptions& opts);

// The endpoint for opts.local_address under NAA_TRANSPORT: an existing one of the right kind, a
// new Verbs endpoint, or null (then the session opens its own UdpRoce endpoint). Null with
// `error` set on failure.
std::shared_ptr<Transport> shared_endpoint(const SessionOptions& opts, std::string& error);
// Records a session's endpoint for reuse by later contexts on the same local address.
void remember_endpoint(const SessionOptions& opts, std::shared_ptr<Transport> transport);

}  // namespace naa::host::detail
