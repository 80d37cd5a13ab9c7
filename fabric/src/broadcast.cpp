// The binomial-tree broadcast across NAAs (broadcast.hpp; docs/spin.md "Puts to other nodes").
#include "naa/fabric/broadcast.hpp"

#include <algorithm>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>

#include "naa/fabric/topology.hpp"
#include "naa/host/error.hpp"
#include "naa/host/ipv4.hpp"
#include "naa/host/session.hpp"
#include "naa/sim/naa.hpp"

namespace naa::fabric {

bool BroadcastResult::all_verified() const {
  return !naas.empty() &&
         std::all_of(naas.begin(), naas.end(), [](const BroadcastNaa& n) { return n.verified; });
}

std::vector<int> binomial_children(int r, int n) {
  // In round k every node r < 2^k sends to r + 2^k (MPICH's binomial tree): node r's children
  // are r + 2^k for every 2^k > r, and the earliest one heads the largest subtree.
  std::vector<int> out;
  for (int k = 0; (1 << k) < n; ++k) {
    if ((1 << k) > r && r + (1 << k) < n) out.push_back(r + (1 << k));
  }
  return out;
}

namespace {

Topology star_of_naas(const BroadcastConfig& cfg) {
  Topology t;
  t.nodes.push_back({"sw0", NodeKind::switch_, 0, std::nullopt});
  t.nodes.push_back({"h0", NodeKind::host, 0, std::nullopt});
  t.links.push_back({"h0", "sw0", cfg.gbps, cfg.latency_ns});
  add_naas(t, cfg.naas, cfg.gbps, cfg.latency_ns);
  return t;
}

}  // namespace

BroadcastResult run_broadcast(const BroadcastConfig& cfg) {
  if (cfg.naas < 2 || cfg.naas > 8) throw std::runtime_error("broadcast: 2..8 NAAs");
  if (cfg.bytes == 0 || cfg.bytes > (std::uint64_t{1} << 30)) {
    throw std::runtime_error("broadcast: 1 byte .. 1 GiB");
  }
  if (cfg.image.empty()) throw std::runtime_error("broadcast: no handler image");
  NetworkConfig nc;
  nc.seed = cfg.seed;
  nc.naa = cfg.naa;
  Network net(star_of_naas(cfg), nc);
  const int host_node = net.node_index("h0");
  host::UdpRoceOptions ho;
  ho.seed = cfg.seed * 1000003ULL + 1;
  const std::shared_ptr<host::Transport> transport = net.open_host(host_node, ho);

  BroadcastResult r;
  std::mt19937_64 rng(cfg.seed ^ 0xB40ADCA57ULL);
  std::vector<std::uint8_t> message(cfg.bytes);
  for (auto& b : message)
    b = static_cast<std::uint8_t>(rng());
  const std::vector<int> naa_nodes = net.nodes_of(NodeKind::naa);
  const auto n = static_cast<int>(naa_nodes.size());
  // Host buffers: the root's (or, in the baseline, every NAA's) is the message.
  std::vector<std::vector<std::uint8_t>> buffers(static_cast<std::size_t>(n));
  std::vector<std::unique_ptr<host::Session>> sessions;
  for (int j = 0; j < n; ++j) {
    BroadcastNaa info;
    info.name =
        net.topology().nodes[static_cast<std::size_t>(naa_nodes[static_cast<std::size_t>(j)])].name;
    if (cfg.tree) {
      info.children = binomial_children(j, n);
      for (int p = 0; p < j; ++p) {
        const auto c = binomial_children(p, n);
        if (std::find(c.begin(), c.end(), j) != c.end()) info.parent = p;
      }
    }
    r.naas.push_back(info);
    auto& buf = buffers[static_cast<std::size_t>(j)];
    buf = (j == 0 || !cfg.tree) ? message : std::vector<std::uint8_t>(message.size(), 0);
    host::SessionOptions so;
    so.naa_address = host::format_ipv4(
        net.topology().nodes[static_cast<std::size_t>(naa_nodes[static_cast<std::size_t>(j)])].ip);
    so.path_mtu = cfg.mtu;
    so.stream_function = cfg.fn;
    so.stream_argument = info.children.size();
    so.handler_image = (j == 0 && !cfg.root_image.empty())    ? cfg.root_image
                       : (j != 0 && !cfg.child_image.empty()) ? cfg.child_image
                                                              : cfg.image;
    so.irn_streaming = j != 0 && cfg.irn_children;
    sessions.push_back(std::make_unique<host::Session>(
        transport, so, std::vector<host::Region>{host::Region::input(buf).stream()}));
  }
  // Each edge parent -> child, parents from the last: a child's own edges are bound before its
  // connection is handed over to its parent (the host can no longer speak on it afterwards).
  if (cfg.tree) {
    for (int p = n - 1; p >= 0; --p) {
      const auto& children = r.naas[static_cast<std::size_t>(p)].children;
      for (std::size_t k = 0; k < children.size(); ++k) {
        try {
          sessions[static_cast<std::size_t>(p)]->bind_peer(
              static_cast<std::uint8_t>(k), *sessions[static_cast<std::size_t>(children[k])], 0);
        } catch (const host::Error& e) {
          r.bind_error = e.code();
          r.bind_detail = e.what();
          for (int j = 0; j < n; ++j) {  // what the NAAs hold after the refusal
            std::ostringstream os;
            net.naa_model(naa_nodes[static_cast<std::size_t>(j)])->report(os);
            r.naas[static_cast<std::size_t>(j)].stats = os.str();
          }
          return r;
        }
      }
    }
  }
  r.start_ps = net.now();
  if (cfg.tree) {
    r.return_code = sessions[0]->call(cfg.fn).return_code;
  } else {
    std::vector<host::Call> calls;
    for (auto& s : sessions)
      calls.push_back(s->invoke(cfg.fn));
    for (auto& c : calls) {
      const std::uint32_t rc = c.get().return_code;
      if (r.return_code == 0) r.return_code = rc;
    }
  }
  auto ended = [&] {
    for (int j = 0; j < n; ++j) {
      if (net.naa_model(naa_nodes[static_cast<std::size_t>(j)])->handlers().calls_ended() == 0) {
        return false;
      }
    }
    return true;
  };
  const bool all_ended = net.run_until(net.now() + 1000 * kPsPerUs * 1000, ended);
  for (int j = 0; j < n; ++j) {
    const sim::Naa& model = *net.naa_model(naa_nodes[static_cast<std::size_t>(j)]);
    BroadcastNaa& info = r.naas[static_cast<std::size_t>(j)];
    info.calls = model.handlers().calls_ended();
    info.end_ps = model.handlers().last_call_end_ps();
    const host::Placement& p = sessions[static_cast<std::size_t>(j)]->placements().at(0);
    std::vector<std::uint8_t> held(message.size());
    model.peek_memory(p.naa_address, held.data(), held.size());
    info.verified = info.calls != 0 && held == message;
    std::ostringstream os;
    model.report(os);
    info.stats = os.str();
    if (all_ended) r.last_holds_ps = std::max<Ps>(r.last_holds_ps, static_cast<Ps>(info.end_ps));
  }
  if (!all_ended) r.last_holds_ps = 0;
  // Disconnect (DREQ) every session, the handed-over ones too: their NAAs release them, and the
  // peer QPs go with the connections that bound them (final_stats).
  for (auto& s : sessions)
    s.reset();
  for (int j = 0; j < n; ++j) {
    std::ostringstream os;
    net.naa_model(naa_nodes[static_cast<std::size_t>(j)])->report(os);
    r.naas[static_cast<std::size_t>(j)].final_stats = os.str();
  }
  net.clear_events();
  return r;
}

}  // namespace naa::fabric
