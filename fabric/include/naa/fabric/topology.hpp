// The fabric's topology (docs/adr/0005-fabric.md, docs/fabric.md "Topology"): nodes (hosts: host
// library endpoints; NAAs: NAA model instances; switches) and full-duplex links with a rate and a
// propagation latency. Read from a JSON file (nlohmann-json) or built by the generators below.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace naa::fabric {

enum class NodeKind : std::uint8_t { host, naa, switch_ };

// RED-style ECN marking on an egress queue (DCQCN paper, Zhu et al. SIGCOMM 2015, section 5:
// Kmin 5 KB, Kmax 200 KB, Pmax 1 %): a frame that finds q bytes queued is marked CE with
// probability 0 below Kmin, Pmax (q - Kmin) / (Kmax - Kmin) between, 1 above Kmax. Only frames
// sent ECN-capable (ECT) are marked.
struct EcnConfig {
  bool enabled = true;
  std::uint64_t kmin_bytes = 5 * 1000;
  std::uint64_t kmax_bytes = 200 * 1000;
  double pmax = 0.01;
};

// IEEE 802.1Qbb priority flow control, per ingress port and priority: PAUSE (quanta 0xFFFF, so
// refreshed) when the bytes buffered from that port cross xoff, RESUME (quanta 0) below xon.
// xoff 0 (the default): the port's buffer less the headroom that what is in flight when the
// pause goes out needs (2 x rate x latency + 3 maximum frames); xon 0: xoff - 2 frames.
struct PfcConfig {
  bool enabled = false;
  std::uint64_t xoff_bytes = 0;
  std::uint64_t xon_bytes = 0;
};

struct SwitchConfig {
  // Bytes per port (the IRN paper: 240 KB, twice the 120 KB bandwidth-delay product of its fat
  // tree): lossy traffic is dropped beyond it on its egress queue (or its ingress port, below);
  // lossless traffic is counted on its ingress port for PFC (PfcConfig).
  std::uint64_t port_buffer_bytes = 240'000;
  // Lossy traffic is dropped when the bytes buffered from its ingress port would exceed
  // port_buffer_bytes, the same per-input-port budget PFC's XOFF counts against, instead of
  // when its egress queue would (docs/fabric.md "Why RoCE with PFC is not hurt").
  bool lossy_ingress = false;
  // The shared buffer of the whole switch; 0: ports x port_buffer_bytes.
  std::uint64_t buffer_bytes = 0;
  // > 0: lossy egress queues are limited by the dynamic threshold alpha x (free shared buffer)
  // (Choudhury and Hahne 1998, as shared-buffer switch ASICs do) instead of port_buffer_bytes.
  double dynamic_alpha = 0;
  EcnConfig ecn;
  PfcConfig pfc;
};

struct NodeSpec {
  std::string name;
  NodeKind kind = NodeKind::host;
  std::uint32_t ip = 0;  // hosts and NAAs (host order); 0: assigned 10.0.0.1 + endpoint index
  // Hosts and NAAs: go-back-N or IRN for this node ("irn": true|false); unset: the run's choice
  // (--transport). A connection is IRN when both ends are (the CM negotiation, ADR 0005).
  std::optional<bool> irn;
};

struct LinkSpec {
  std::string a, b;          // node names
  double gbps = 40;          // each direction
  double latency_ns = 1000;  // one-way propagation
};

struct Topology {
  std::vector<NodeSpec> nodes;
  std::vector<LinkSpec> links;
  SwitchConfig switches;  // every switch (the file's "switch" object)
};

// Parses a topology (docs/fabric.md "Topology file"); throws std::runtime_error naming the bad
// field. Checks that names are unique, links name existing nodes, hosts and NAAs have one link.
[[nodiscard]] Topology parse_topology(const std::string& json_text);
[[nodiscard]] Topology load_topology(const std::string& path);
[[nodiscard]] std::string topology_to_json(const Topology& topo);
// Gives every host and NAA without an address 10.0.0.1 + its index among them; throws on
// duplicates.
void assign_addresses(Topology& topo);

// A k-ary fat tree (Al-Fares et al. 2008): k pods of k/2 edge and k/2 aggregation switches,
// (k/2)^2 core switches, k/2 hosts per edge switch: k^3/4 hosts (k = 6: the IRN paper's 54).
[[nodiscard]] Topology fat_tree(int k, double gbps, double latency_ns);
// Two tiers: `leaves` leaf switches with `hosts_per_leaf` hosts each, every leaf linked to every
// one of `spines` spine switches.
[[nodiscard]] Topology leaf_spine(int leaves, int spines, int hosts_per_leaf, double gbps,
                                  double latency_ns);
// Adds `count` NAAs ("naa0", ...), each on the switch of the first host (the first edge or
// leaf switch, or the star's switch).
void add_naas(Topology& topo, int count, double gbps, double latency_ns);
// N:1 incast: n hosts on one switch.
[[nodiscard]] Topology star(int n, double gbps, double latency_ns);

}  // namespace naa::fabric
