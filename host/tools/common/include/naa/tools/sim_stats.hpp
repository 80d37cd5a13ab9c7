// naa-sim's statistics snapshot, the one reader of it (naa-bench and the tests' naa-sim fixture).
// naa-sim writes a snapshot to its --stats-file on SIGUSR1 and on exit (sim/tools/naa_sim.cpp):
// "naa-sim.stats_seq=N" first, one "key=value" per line, "naa-sim.end=1" last; the file is
// replaced by a rename, so a reader sees a whole snapshot or the previous one. Header-only,
// standard library only.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>

namespace naa::tools {

// What is wrong with a snapshot's text, or nullopt if it is complete and well formed.
[[nodiscard]] inline std::optional<std::string> sim_stats_problem(const std::string& text) {
  if (text.rfind("naa-sim.stats_seq=", 0) != 0) return "does not start with naa-sim.stats_seq=";
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq == 0 || eq == std::string::npos || eq + 1 == line.size()) {
      return "malformed line \"" + line + "\"";
    }
    last = line;
  }
  if (last != "naa-sim.end=1") return "does not end with naa-sim.end=1";
  return std::nullopt;
}

// Families of counters naa-sim prints only once non-zero (ReasonCounters::report in
// sim/include/naa/sim/common.hpp, CmAgent::report's REJ reasons, NetPort's UDP GSO counters and
// its frames handed to the socket without the wire's process):
// absent means 0.
[[nodiscard]] inline bool sim_stat_sparse(const std::string& key) {
  // mrsp.error_4..7, mrsp.installs, mrsp.images_installed and handler.images_*: the handler-
  // image extension's (docs/protocol.md "Handler images"); hpu.fn<N>.* of the built-ins in C.
  for (const char* family :
       {"cm.rej_sent.reason_", "mr_table.result.", "rx_pipe.drop.", "transport.nak_sent.",
        "transport.drop.", "mrsp.error_", "mrsp.installs", "mrsp.images_", "handler.images_",
        "hpu.fn", "net_port.tx_gso_", "net_port.tx_wire_direct"}) {
    if (key.rfind(family, 0) == 0) return true;
  }
  return false;
}

// The value text of `key` in a snapshot, or nullopt if the key is not there.
[[nodiscard]] inline std::optional<std::string> sim_stat_text(const std::string& text,
                                                              const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 &&
        line[key.size()] == '=') {
      return line.substr(key.size() + 1);
    }
  }
  return std::nullopt;
}

// A counter: the whole value must be a decimal count. nullopt if absent (see sim_stat_sparse) or
// not a count.
[[nodiscard]] inline std::optional<std::uint64_t> sim_stat_count(const std::string& value) {
  if (value.empty() || value[0] < '0' || value[0] > '9') return std::nullopt;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(value.c_str(), &end, 10);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return static_cast<std::uint64_t>(v);
}

// Every key of a complete snapshot as a number (figures such as sim.clock_mhz are fractional);
// nullopt if the snapshot is incomplete (sim_stats_problem).
using SimStats = std::map<std::string, double>;
[[nodiscard]] inline std::optional<SimStats> parse_sim_stats(const std::string& text) {
  if (sim_stats_problem(text)) return std::nullopt;
  SimStats s;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t eq = line.find('=');
    s[line.substr(0, eq)] = std::strtod(line.c_str() + eq + 1, nullptr);
  }
  return s;
}

// A key of a parsed snapshot, 0 when absent.
[[nodiscard]] inline double sim_stat(const SimStats& s, const std::string& key) {
  const auto it = s.find(key);
  return it == s.end() ? 0.0 : it->second;
}

}  // namespace naa::tools
