// A binomial-tree broadcast across the NAAs of a fabric with sPIN handlers (seed 004 Fig. 5a and
// C.3.3; docs/spin.md "Puts to other nodes"): one host and N NAAs on a star; the host opens a
// streaming session to every NAA with the same handler image, binds each tree edge parent -> child
// (host::Session::bind_peer: the child's session is handed over to the parent's NAA) and streams
// the message to NAA 0, whose payload handler puts every packet to its children while it deposits
// it, and so on down the tree (or, with a store-and-forward image such as
// examples/spin/broadcast/broadcast_store.c, puts the whole message from its completion handler:
// the paper's baseline over the same tree). The other baseline (tree = false): the host sends the
// message to every NAA itself (RDMA in, no peers). The result says when every NAA held the
// message and whether its memory holds exactly the message. SystemC elaborates once per process:
// one run per process.
#pragma once

#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

#include "naa/fabric/network.hpp"
#include "naa/sim/config.hpp"

namespace naa::fabric {

struct BroadcastConfig {
  int naas = 4;                     // 2..8
  std::uint64_t bytes = 64 * 1024;  // the message
  std::vector<std::uint8_t> image;  // every NAA's handler image (function `fn`, argument: children)
  std::vector<std::uint8_t> root_image;   // if not empty: NAA 0's image instead (tests)
  std::vector<std::uint8_t> child_image;  // if not empty: every other NAA's image (tests)
  std::uint8_t fn = 33;
  bool tree = true;  // false: the host sends the message to every NAA itself
  double gbps = 100;
  double latency_ns = 1000;
  std::uint32_t mtu = 4096;
  std::uint64_t seed = 1;     // the message bytes and the fabric's
  sim::SimConfig naa;         // every NAA's model (HPUs, QPs, ...)
  bool irn_children = false;  // the children's sessions on IRN (which cannot be handed over)
};

struct BroadcastNaa {
  std::string name;
  int parent = -1;  // -1: the root (the host streams to it), or the host (baseline)
  std::vector<int> children;
  bool verified = false;     // its STREAM region holds exactly the message
  std::uint64_t end_ps = 0;  // simulated time its (last) streaming call ended
  std::uint64_t calls = 0;   // streaming calls ended there
  std::string stats;         // its model's statistics (naa-sim's keys)
  std::string final_stats;   // the same once the host disconnected every session
};

struct BroadcastResult {
  std::uint32_t return_code = 0;  // of the host's call(s): the first non-zero one
  Ps start_ps = 0;                // the host starts sending
  Ps last_holds_ps = 0;           // the last NAA's streaming call ended (0 if one never did)
  std::error_code bind_error;     // bind_peer failed (host::Errc); the run stopped there
  std::string bind_detail;
  std::vector<BroadcastNaa> naas;
  [[nodiscard]] bool all_verified() const;
};

// The binomial tree on n nodes rooted at 0: node r's children, largest subtree first.
[[nodiscard]] std::vector<int> binomial_children(int r, int n);
[[nodiscard]] BroadcastResult run_broadcast(const BroadcastConfig& cfg);

}  // namespace naa::fabric
