#include "naa/fabric/topology.hpp"

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

namespace naa::fabric {

namespace {

using nlohmann::json;

const char* kind_name(NodeKind k) {
  switch (k) {
    case NodeKind::host:
      return "host";
    case NodeKind::naa:
      return "naa";
    case NodeKind::switch_:
      return "switch";
  }
  return "?";
}

NodeKind kind_from(const std::string& s, const std::string& node) {
  if (s == "host") return NodeKind::host;
  if (s == "naa") return NodeKind::naa;
  if (s == "switch") return NodeKind::switch_;
  throw std::runtime_error("node " + node + ": kind must be host, naa or switch, not '" + s + "'");
}

std::uint32_t parse_ip(const std::string& s) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  char tail = 0;
  if (std::sscanf(s.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) != 4 || a > 255 || b > 255 ||
      c > 255 || d > 255) {
    throw std::runtime_error("bad IPv4 address '" + s + "'");
  }
  return (a << 24) | (b << 16) | (c << 8) | d;
}

std::string ip_text(std::uint32_t ip) {
  std::ostringstream os;
  os << (ip >> 24) << '.' << ((ip >> 16) & 255) << '.' << ((ip >> 8) & 255) << '.' << (ip & 255);
  return os.str();
}

template <class T>
void get_opt(const json& j, const char* key, T& out, const std::string& where) {
  if (!j.contains(key)) return;
  try {
    out = j.at(key).get<T>();
  } catch (const json::exception& e) {
    throw std::runtime_error(where + "." + key + ": " + e.what());
  }
}

void check_allowed(const json& j, std::initializer_list<const char*> keys,
                   const std::string& where) {
  if (!j.is_object()) throw std::runtime_error(where + ": must be an object");
  for (const auto& [k, v] : j.items()) {
    bool ok = false;
    for (const char* a : keys)
      ok = ok || k == a;
    if (!ok) throw std::runtime_error(where + ": unknown key '" + k + "'");
  }
}

}  // namespace

Topology parse_topology(const std::string& json_text) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(std::string("topology is not JSON: ") + e.what());
  }
  check_allowed(j, {"nodes", "links", "switch", "link"}, "topology");
  Topology t;
  LinkSpec link_default;
  if (j.contains("link")) {
    check_allowed(j["link"], {"gbps", "latency_ns"}, "link");
    get_opt(j["link"], "gbps", link_default.gbps, "link");
    get_opt(j["link"], "latency_ns", link_default.latency_ns, "link");
  }
  if (j.contains("switch")) {
    const json& s = j["switch"];
    check_allowed(
        s, {"buffer_bytes", "port_buffer_bytes", "dynamic_alpha", "lossy_ingress", "ecn", "pfc"},
        "switch");
    get_opt(s, "buffer_bytes", t.switches.buffer_bytes, "switch");
    get_opt(s, "port_buffer_bytes", t.switches.port_buffer_bytes, "switch");
    get_opt(s, "dynamic_alpha", t.switches.dynamic_alpha, "switch");
    get_opt(s, "lossy_ingress", t.switches.lossy_ingress, "switch");
    if (s.contains("ecn")) {
      check_allowed(s["ecn"], {"enabled", "kmin_bytes", "kmax_bytes", "pmax"}, "switch.ecn");
      get_opt(s["ecn"], "enabled", t.switches.ecn.enabled, "switch.ecn");
      get_opt(s["ecn"], "kmin_bytes", t.switches.ecn.kmin_bytes, "switch.ecn");
      get_opt(s["ecn"], "kmax_bytes", t.switches.ecn.kmax_bytes, "switch.ecn");
      get_opt(s["ecn"], "pmax", t.switches.ecn.pmax, "switch.ecn");
    }
    if (s.contains("pfc")) {
      check_allowed(s["pfc"], {"enabled", "xoff_bytes", "xon_bytes"}, "switch.pfc");
      get_opt(s["pfc"], "enabled", t.switches.pfc.enabled, "switch.pfc");
      get_opt(s["pfc"], "xoff_bytes", t.switches.pfc.xoff_bytes, "switch.pfc");
      get_opt(s["pfc"], "xon_bytes", t.switches.pfc.xon_bytes, "switch.pfc");
    }
  }
  if (!j.contains("nodes") || !j["nodes"].is_array())
    throw std::runtime_error("topology: 'nodes' must be an array");
  if (!j.contains("links") || !j["links"].is_array())
    throw std::runtime_error("topology: 'links' must be an array");
  std::size_t i = 0;
  for (const json& n : j["nodes"]) {
    const std::string where = "nodes[" + std::to_string(i++) + "]";
    check_allowed(n, {"name", "kind", "ip", "irn"}, where);
    NodeSpec spec;
    if (!n.contains("name") || !n["name"].is_string())
      throw std::runtime_error(where + ": needs a string 'name'");
    spec.name = n["name"].get<std::string>();
    std::string kind = "host";
    get_opt(n, "kind", kind, where);
    spec.kind = kind_from(kind, spec.name);
    if (n.contains("ip")) {
      if (spec.kind == NodeKind::switch_)
        throw std::runtime_error(where + ": a switch has no 'ip'");
      spec.ip = parse_ip(n["ip"].get<std::string>());
    }
    if (n.contains("irn")) {
      if (spec.kind == NodeKind::switch_ || !n["irn"].is_boolean())
        throw std::runtime_error(where + ": 'irn' is true or false, on a host or an NAA");
      spec.irn = n["irn"].get<bool>();
    }
    t.nodes.push_back(spec);
  }
  i = 0;
  for (const json& l : j["links"]) {
    const std::string where = "links[" + std::to_string(i++) + "]";
    check_allowed(l, {"a", "b", "gbps", "latency_ns"}, where);
    LinkSpec spec = link_default;
    if (!l.contains("a") || !l.contains("b"))
      throw std::runtime_error(where + ": needs 'a' and 'b'");
    get_opt(l, "a", spec.a, where);
    get_opt(l, "b", spec.b, where);
    get_opt(l, "gbps", spec.gbps, where);
    get_opt(l, "latency_ns", spec.latency_ns, where);
    if (!(spec.gbps > 0) || !(spec.latency_ns >= 0))
      throw std::runtime_error(where + ": gbps must be > 0 and latency_ns >= 0");
    t.links.push_back(spec);
  }
  assign_addresses(t);
  // Structure: unique names, links between known nodes, one link per endpoint.
  std::map<std::string, std::size_t> index;
  for (std::size_t n = 0; n < t.nodes.size(); ++n) {
    if (!index.emplace(t.nodes[n].name, n).second)
      throw std::runtime_error("node name '" + t.nodes[n].name + "' appears twice");
  }
  std::vector<int> degree(t.nodes.size(), 0);
  for (const LinkSpec& l : t.links) {
    auto a = index.find(l.a), b = index.find(l.b);
    if (a == index.end() || b == index.end())
      throw std::runtime_error("link " + l.a + "-" + l.b + " names an unknown node");
    if (a == b) throw std::runtime_error("link " + l.a + "-" + l.b + " is a loop");
    ++degree[a->second];
    ++degree[b->second];
  }
  for (std::size_t n = 0; n < t.nodes.size(); ++n) {
    if (t.nodes[n].kind != NodeKind::switch_ && degree[n] != 1)
      throw std::runtime_error(std::string(kind_name(t.nodes[n].kind)) + " " + t.nodes[n].name +
                               " must have exactly one link (has " + std::to_string(degree[n]) +
                               ")");
  }
  return t;
}

Topology load_topology(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read topology file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_topology(ss.str());
}

void assign_addresses(Topology& topo) {
  std::uint32_t next = 0x0A000001;
  std::set<std::uint32_t> used;
  for (const NodeSpec& n : topo.nodes)
    if (n.ip != 0 && !used.insert(n.ip).second)
      throw std::runtime_error("address " + ip_text(n.ip) + " appears twice");
  for (NodeSpec& n : topo.nodes) {
    if (n.kind == NodeKind::switch_ || n.ip != 0) continue;
    while (used.count(next) != 0)
      ++next;
    n.ip = next;
    used.insert(next);
  }
}

std::string topology_to_json(const Topology& topo) {
  json j;
  const SwitchConfig& s = topo.switches;
  j["switch"] = {{"buffer_bytes", s.buffer_bytes},
                 {"port_buffer_bytes", s.port_buffer_bytes},
                 {"dynamic_alpha", s.dynamic_alpha},
                 {"lossy_ingress", s.lossy_ingress},
                 {"ecn",
                  {{"enabled", s.ecn.enabled},
                   {"kmin_bytes", s.ecn.kmin_bytes},
                   {"kmax_bytes", s.ecn.kmax_bytes},
                   {"pmax", s.ecn.pmax}}},
                 {"pfc",
                  {{"enabled", s.pfc.enabled},
                   {"xoff_bytes", s.pfc.xoff_bytes},
                   {"xon_bytes", s.pfc.xon_bytes}}}};
  j["nodes"] = json::array();
  for (const NodeSpec& n : topo.nodes) {
    json o = {{"name", n.name}, {"kind", kind_name(n.kind)}};
    if (n.kind != NodeKind::switch_ && n.ip != 0) o["ip"] = ip_text(n.ip);
    if (n.irn) o["irn"] = *n.irn;
    j["nodes"].push_back(o);
  }
  j["links"] = json::array();
  for (const LinkSpec& l : topo.links)
    j["links"].push_back({{"a", l.a}, {"b", l.b}, {"gbps", l.gbps}, {"latency_ns", l.latency_ns}});
  return j.dump(1);
}

Topology fat_tree(int k, double gbps, double latency_ns) {
  if (k < 2 || k % 2 != 0) throw std::runtime_error("fat tree: k must be even and >= 2");
  Topology t;
  const int h = k / 2;
  auto add = [&](std::string name, NodeKind kind) {
    t.nodes.push_back({std::move(name), kind, 0, std::nullopt});
  };
  auto link = [&](const std::string& a, const std::string& b) {
    t.links.push_back({a, b, gbps, latency_ns});
  };
  for (int c = 0; c < h * h; ++c)
    add("core" + std::to_string(c), NodeKind::switch_);
  int host = 0;
  for (int p = 0; p < k; ++p) {
    for (int s = 0; s < h; ++s) {
      add("agg" + std::to_string(p) + "_" + std::to_string(s), NodeKind::switch_);
      add("edge" + std::to_string(p) + "_" + std::to_string(s), NodeKind::switch_);
    }
    for (int a = 0; a < h; ++a) {
      const std::string agg = "agg" + std::to_string(p) + "_" + std::to_string(a);
      for (int c = 0; c < h; ++c)
        link(agg, "core" + std::to_string(a * h + c));  // aggregation a reaches core group a
      for (int e = 0; e < h; ++e)
        link(agg, "edge" + std::to_string(p) + "_" + std::to_string(e));
    }
    for (int e = 0; e < h; ++e) {
      for (int x = 0; x < h; ++x) {
        const std::string name = "h" + std::to_string(host++);
        add(name, NodeKind::host);
        link(name, "edge" + std::to_string(p) + "_" + std::to_string(e));
      }
    }
  }
  assign_addresses(t);
  return t;
}

Topology leaf_spine(int leaves, int spines, int hosts_per_leaf, double gbps, double latency_ns) {
  if (leaves < 1 || spines < 1 || hosts_per_leaf < 1)
    throw std::runtime_error("leaf-spine: leaves, spines and hosts per leaf must be >= 1");
  Topology t;
  for (int s = 0; s < spines; ++s)
    t.nodes.push_back({"spine" + std::to_string(s), NodeKind::switch_, 0, std::nullopt});
  int host = 0;
  for (int l = 0; l < leaves; ++l) {
    const std::string leaf = "leaf" + std::to_string(l);
    t.nodes.push_back({leaf, NodeKind::switch_, 0, std::nullopt});
    for (int s = 0; s < spines; ++s)
      t.links.push_back({leaf, "spine" + std::to_string(s), gbps, latency_ns});
    for (int x = 0; x < hosts_per_leaf; ++x) {
      const std::string name = "h" + std::to_string(host++);
      t.nodes.push_back({name, NodeKind::host, 0, std::nullopt});
      t.links.push_back({name, leaf, gbps, latency_ns});
    }
  }
  assign_addresses(t);
  return t;
}

void add_naas(Topology& topo, int count, double gbps, double latency_ns) {
  if (count <= 0) return;
  std::string sw;  // the switch the first host hangs off
  for (const LinkSpec& l : topo.links) {
    for (const NodeSpec& n : topo.nodes) {
      if (n.kind == NodeKind::host && (n.name == l.a || n.name == l.b)) {
        sw = n.name == l.a ? l.b : l.a;
        break;
      }
    }
    if (!sw.empty()) break;
  }
  if (sw.empty()) throw std::runtime_error("no switch with hosts to attach NAAs to");
  for (int i = 0; i < count; ++i) {
    const std::string name = "naa" + std::to_string(i);
    topo.nodes.push_back({name, NodeKind::naa, 0, std::nullopt});
    topo.links.push_back({name, sw, gbps, latency_ns});
  }
  assign_addresses(topo);
}

Topology star(int n, double gbps, double latency_ns) {
  if (n < 2) throw std::runtime_error("star: needs at least 2 hosts");
  Topology t;
  t.nodes.push_back({"sw0", NodeKind::switch_, 0, std::nullopt});
  for (int x = 0; x < n; ++x) {
    const std::string name = "h" + std::to_string(x);
    t.nodes.push_back({name, NodeKind::host, 0, std::nullopt});
    t.links.push_back({name, "sw0", gbps, latency_ns});
  }
  assign_addresses(t);
  return t;
}

}  // namespace naa::fabric
