// softroce-probe: interop scenarios that Session never produces, run through the Transport
// interface against an NAA, so that a real RDMA stack (Linux rxe, with --transport verbs in the
// Soft-RoCE VM) and our UdpRoce endpoint (--transport udp, on loopback in CTest) see the same
// traffic. Every scenario opens its own connection and checks an observable outcome.
//
//   read        RDMA READ of NAA memory after an RDMA WRITE: a multi-packet READ response
//               (1 MiB + 123 bytes), a 1-byte READ and a zero-length READ (PROTOCOL.md 3)
//   rnr         the call's reply WRITE_WITH_IMM finds no receive: the host's RNR NAKs make the
//               NAA wait and retry; the reply arrives once the receive is posted (PROTOCOL.md 3)
//   unknown-fn  function 99 -> return code 0x03, the connection stays usable (PROTOCOL.md 5.2)
//   abort       immediate 0: no kernel, no reply; the next call still works (PROTOCOL.md 5.2)
//   bad-rkey    an RDMA WRITE with a wrong rkey -> remote access error (NAK 0x62), then the NAA
//               disconnects (its DREQ must name our QPN to reach us, PROTOCOL.md 4)
//   long-send   a SEND longer than the NAA's MRSP buffer -> invalid request (NAK 0x61)
//   idle        (not in "all") a call, then the connection idles for --idle-ms while the NAA's
//               idle-liveness probes (zero-length RDMA WRITEs, docs/sim/transport.md) are ACKed by
//               the host's RC responder; a second call must then still work on the same QP
//
// Exit status: 0 all scenarios passed, 1 one failed, 2 usage, 3 cannot open the transport.
#include <getopt.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "naa/host/error.hpp"
#include "naa/host/transport.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/host/verbs.hpp"
#include "naa/protocol/immediate.hpp"
#include "naa/protocol/mrsp.hpp"
#include "naa/tools/naa_address.hpp"

namespace {

using naa::host::Access;
using naa::host::Errc;
using naa::host::MemoryRegion;
using naa::host::RecvWr;
using naa::host::SendWr;
using naa::host::WcOpcode;
using naa::host::WorkCompletion;
using naa::host::WrOpcode;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct Options {
  naa::host::TransportKind kind = naa::host::TransportKind::udp;
  std::uint32_t naa_ip = 0;
  std::uint16_t cm_port = 12345;
  std::optional<std::uint32_t> local_ip;
  std::uint64_t naa_base = 0;
  std::uint32_t path_mtu = 4096;
  std::uint32_t idle_ms = 5000;  // the idle scenario's quiet period
};

class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void require(bool ok, const std::string& what) {
  if (!ok) throw Failure(what);
}

std::uint64_t va(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p);  // NOLINT: VAs go on the wire
}

// One connection with its completions.
class Conn {
 public:
  Conn(std::shared_ptr<naa::host::Transport> t, const Options& o) : t_(std::move(t)), o_(o) {
    naa::host::ConnectParams p;
    p.remote_ip = o.naa_ip;
    p.cm_port = o.cm_port;
    p.timeout = milliseconds(15000);
    p.path_mtu = o.path_mtu;
    p.local_ack_timeout = 17;  // 537 ms: TCG guests are slow (docs/softroce.md)
    std::error_code ec;
    std::string detail;
    qp_ = t_->connect(p, ec, &detail);
    require(qp_ != nullptr, "connect: " + detail);
    mrsp_tx_.resize(naa::protocol::kMrspMaxMessageSize);
    mrsp_rx_.resize(naa::protocol::kMrspMaxMessageSize);
    tx_mr_ = reg(mrsp_tx_.data(), mrsp_tx_.size(), Access::none);
    rx_mr_ = reg(mrsp_rx_.data(), mrsp_rx_.size(), Access::local_write);
  }
  ~Conn() {
    if (qp_) (void)qp_->disconnect(milliseconds(2000));
    qp_.reset();
    for (const MemoryRegion& mr : mrs_)
      (void)t_->deregister_memory(mr);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  MemoryRegion reg(void* p, std::size_t n, Access a) {
    MemoryRegion mr;
    require(!t_->register_memory(p, n, a, mr), "register_memory");
    mrs_.push_back(mr);
    return mr;
  }

  naa::host::QueuePair& qp() { return *qp_; }

  // MRSP (PROTOCOL.md 5.1) for the given entries; returns the placements.
  std::vector<naa::protocol::MrspAdvertisementEntry> mrsp(
      const std::vector<naa::protocol::MrspRequestEntry>& entries) {
    auto n = naa::protocol::encode_mrsp_request(entries, mrsp_tx_);
    require(n.has_value(), "encode MRSP");
    post_recv(
        {0xA1, {va(mrsp_rx_.data()), static_cast<std::uint32_t>(mrsp_rx_.size()), rx_mr_.lkey}});
    SendWr s;
    s.wr_id = 0xA2;
    s.sge = {va(mrsp_tx_.data()), static_cast<std::uint32_t>(*n), tx_mr_.lkey};
    s.solicited = true;
    post_send(s);
    const WorkCompletion sent = wait([](const WorkCompletion& w) { return w.wr_id == 0xA2; });
    require(!sent.status, "MRSP SEND: " + sent.status.message());
    const WorkCompletion got = wait([](const WorkCompletion& w) { return w.wr_id == 0xA1; });
    require(!got.status, "MRSP receive: " + got.status.message());
    auto adv = naa::protocol::decode_mrsp_advertisement(
        naa::protocol::ByteView(mrsp_rx_.data(), got.byte_len));
    require(adv.has_value(), "MRSP answer is not an advertisement");
    std::vector<naa::protocol::MrspAdvertisementEntry> out;
    for (std::size_t i = 0; i < adv->count(); ++i)
      out.push_back(adv->entry(i));
    return out;
  }

  void post_send(const SendWr& w) {
    const auto ec = qp_->post_send(w);
    require(!ec, "post_send: " + ec.message());
  }
  void post_recv(const RecvWr& w) {
    const auto ec = qp_->post_recv(w);
    require(!ec, "post_recv: " + ec.message());
  }

  // The first completion matching `match` (others are kept for later waits).
  WorkCompletion wait(const std::function<bool(const WorkCompletion&)>& match,
                      milliseconds timeout = milliseconds(30000)) {
    auto got = try_wait(match, timeout);
    require(got.has_value(), "no completion within " + std::to_string(timeout.count()) + " ms");
    return *got;
  }
  std::optional<WorkCompletion> try_wait(const std::function<bool(const WorkCompletion&)>& match,
                                         milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      for (auto it = pending_.begin(); it != pending_.end(); ++it) {
        if (match(*it)) {
          WorkCompletion w = *it;
          pending_.erase(it);
          return w;
        }
      }
      const auto now = Clock::now();
      if (now >= deadline) return std::nullopt;
      WorkCompletion wc[8];
      const std::size_t n = qp_->wait_cq(wc, deadline - now);
      for (std::size_t i = 0; i < n; ++i)
        pending_.push_back(wc[i]);
    }
  }

 private:
  std::shared_ptr<naa::host::Transport> t_;
  Options o_;
  std::unique_ptr<naa::host::QueuePair> qp_;
  std::vector<std::uint8_t> mrsp_tx_, mrsp_rx_;
  MemoryRegion tx_mr_, rx_mr_;
  std::vector<MemoryRegion> mrs_;
  std::deque<WorkCompletion> pending_;
};

std::vector<std::uint8_t> pattern(std::size_t n, std::uint64_t seed) {
  std::vector<std::uint8_t> v(n);
  std::mt19937_64 rng(seed);
  for (auto& b : v)
    b = static_cast<std::uint8_t>(rng());
  return v;
}

// One input-and-output region of `size` bytes at the probe's NAA base.
struct OneRegion {
  std::vector<std::uint8_t> data;
  MemoryRegion mr;
  naa::protocol::MrspAdvertisementEntry naa;
};

OneRegion setup_region(Conn& c, const Options& o, std::size_t size, std::uint8_t flags,
                       std::uint64_t seed) {
  OneRegion r;
  r.data = pattern(size, seed);
  r.mr = c.reg(r.data.data(), r.data.size(), Access::local_write | Access::remote_write);
  naa::protocol::MrspRequestEntry e;
  e.flags = flags;
  e.naa_address = o.naa_base;
  e.host_va = va(r.data.data());
  e.host_rkey = r.mr.rkey;
  e.size = static_cast<std::uint32_t>(size);
  const auto adv = c.mrsp({e});
  require(adv.size() == 1, "MRSP: one placement expected");
  r.naa = adv[0];
  return r;
}

SendWr call_wr(std::uint64_t id, std::uint32_t imm, const OneRegion* in) {
  SendWr w;
  w.wr_id = id;
  w.opcode = WrOpcode::rdma_write_with_imm;
  w.imm = imm;
  w.solicited = true;
  if (in != nullptr) {
    w.sge = {va(in->data.data()), static_cast<std::uint32_t>(in->data.size()), in->mr.lkey};
    w.remote_addr = in->naa.naa_address;
    w.rkey = in->naa.rkey;
  }
  return w;
}

constexpr std::uint8_t kInOut = naa::protocol::kMrspFlagInput | naa::protocol::kMrspFlagOutput;

void scenario_read(const std::shared_ptr<naa::host::Transport>& t, const Options& o) {
  Conn c(t, o);
  const std::size_t size = (1U << 20) + 123;
  OneRegion r = setup_region(c, o, size, naa::protocol::kMrspFlagInput, 11);
  SendWr w;
  w.wr_id = 1;
  w.opcode = WrOpcode::rdma_write;
  w.sge = {va(r.data.data()), static_cast<std::uint32_t>(size), r.mr.lkey};
  w.remote_addr = r.naa.naa_address;
  w.rkey = r.naa.rkey;
  c.post_send(w);
  const auto wc = c.wait([](const WorkCompletion& x) { return x.wr_id == 1; });
  require(!wc.status, "WRITE: " + wc.status.message());
  std::vector<std::uint8_t> back(size + 1, 0xEE);
  const MemoryRegion bmr = c.reg(back.data(), back.size(), Access::local_write);
  SendWr rd;
  rd.wr_id = 2;
  rd.opcode = WrOpcode::rdma_read;
  rd.sge = {va(back.data()), static_cast<std::uint32_t>(size), bmr.lkey};
  rd.remote_addr = r.naa.naa_address;
  rd.rkey = r.naa.rkey;
  c.post_send(rd);
  SendWr one = rd;  // the last byte, into back[size]
  one.wr_id = 3;
  one.sge = {va(back.data() + size), 1, bmr.lkey};
  one.remote_addr = r.naa.naa_address + size - 1;
  c.post_send(one);
  SendWr zero = rd;
  zero.wr_id = 4;
  zero.sge = {};
  c.post_send(zero);
  for (std::uint64_t id = 2; id <= 4; ++id) {
    const auto x = c.wait([id](const WorkCompletion& y) { return y.wr_id == id; });
    require(!x.status, "READ " + std::to_string(id) + ": " + x.status.message());
    require(x.opcode == WcOpcode::rdma_read, "READ completion opcode");
  }
  require(std::equal(r.data.begin(), r.data.end(), back.begin()), "READ data differs");
  require(back[size] == r.data[size - 1], "1-byte READ data differs");
}

void scenario_rnr(const std::shared_ptr<naa::host::Transport>& t, const Options& o) {
  Conn c(t, o);
  OneRegion r = setup_region(c, o, 64 * 1024, kInOut, 12);
  const std::vector<std::uint8_t> before = r.data;
  c.post_send(call_wr(1, naa::protocol::encode_call_immediate(1, 0), &r));  // add1
  const auto w = c.wait([](const WorkCompletion& x) { return x.wr_id == 1; });
  require(!w.status, "call WRITE_WITH_IMM: " + w.status.message());
  // No receive yet: the NAA's reply WRITE_WITH_IMM is answered with RNR NAKs meanwhile.
  std::this_thread::sleep_for(milliseconds(1500));
  c.post_recv({7, {}});
  const auto rep = c.wait([](const WorkCompletion& x) { return x.wr_id == 7; });
  require(!rep.status, "reply: " + rep.status.message());
  require(rep.opcode == WcOpcode::recv_rdma_with_imm && rep.imm.has_value(), "reply has no imm");
  // PROTOCOL.md 5.2: success is immediate 0, exactly.
  require(*rep.imm == 0, "reply immediate " + std::to_string(*rep.imm) + ", expected 0");
  for (std::size_t i = 0; i < before.size(); ++i)
    require(r.data[i] == static_cast<std::uint8_t>(before[i] + 1), "add1 result differs");
}

void scenario_unknown_fn(const std::shared_ptr<naa::host::Transport>& t, const Options& o) {
  Conn c(t, o);
  OneRegion r = setup_region(c, o, 4096, kInOut, 13);
  c.post_recv({7, {}});
  c.post_send(call_wr(1, naa::protocol::encode_call_immediate(99, 0), nullptr));
  auto rep = c.wait([](const WorkCompletion& x) { return x.wr_id == 7; });
  require(!rep.status && rep.imm.has_value(), "reply to fn 99");
  require((*rep.imm >> 8) == 0x03 && (*rep.imm & 0x7F) == 99,
          "fn 99: expected return code 0x03, imm " + std::to_string(*rep.imm));
  c.post_recv({8, {}});
  c.post_send(call_wr(2, naa::protocol::encode_call_immediate(3, 0), nullptr));  // nop
  rep = c.wait([](const WorkCompletion& x) { return x.wr_id == 8; });
  require(!rep.status && rep.imm.has_value() && *rep.imm == 0, "nop after fn 99");
}

void scenario_abort(const std::shared_ptr<naa::host::Transport>& t, const Options& o) {
  Conn c(t, o);
  OneRegion r = setup_region(c, o, 4096, kInOut, 14);
  const std::vector<std::uint8_t> before = r.data;
  c.post_recv({7, {}});
  c.post_send(call_wr(1, 0, &r));  // immediate 0: "host aborted this call"
  const auto w = c.wait([](const WorkCompletion& x) { return x.wr_id == 1; });
  require(!w.status, "aborted call's WRITE_WITH_IMM: " + w.status.message());
  require(!c.try_wait([](const WorkCompletion& x) { return x.wr_id == 7; }, milliseconds(1500)),
          "the NAA answered an aborted call");
  c.post_send(call_wr(2, naa::protocol::encode_call_immediate(2, 0), nullptr));  // add2
  const auto rep = c.wait([](const WorkCompletion& x) { return x.wr_id == 7; });
  require(!rep.status && rep.imm.has_value() && *rep.imm == 0, "add2 after abort");
  for (std::size_t i = 0; i < before.size(); ++i)
    require(r.data[i] == static_cast<std::uint8_t>(before[i] + 2), "add2 result differs");
}

// Waits until the QP reports `disconnected` (the NAA's DREQ reached us).
void expect_peer_dreq(Conn& c) {
  const auto deadline = Clock::now() + milliseconds(15000);
  while (Clock::now() < deadline) {
    WorkCompletion wc[4];
    (void)c.qp().wait_cq(wc, milliseconds(100));
    if (c.qp().error() == Errc::disconnected) return;
  }
  require(false,
          "no DREQ from the NAA within 15 s (error() is '" + c.qp().error().message() + "')");
}

void scenario_bad_rkey(const std::shared_ptr<naa::host::Transport>& t, const Options& o) {
  Conn c(t, o);
  OneRegion r = setup_region(c, o, 4096, kInOut, 15);
  SendWr w;
  w.wr_id = 1;
  w.opcode = WrOpcode::rdma_write;
  w.sge = {va(r.data.data()), 64, r.mr.lkey};
  w.remote_addr = r.naa.naa_address;
  w.rkey = r.naa.rkey ^ 0x5A5A0000U;
  c.post_send(w);
  const auto wc = c.wait([](const WorkCompletion& x) { return x.wr_id == 1; });
  require(wc.status == Errc::remote_access_error,
          "bad rkey: expected remote_access_error, got '" + wc.status.message() + "'");
  expect_peer_dreq(c);
}

void scenario_long_send(const std::shared_ptr<naa::host::Transport>& t, const Options& o) {
  Conn c(t, o);
  std::vector<std::uint8_t> big(naa::protocol::kMrspMaxMessageSize + 2048, 0);
  big[0] = 0x01;  // an MRSP request that claims 255 entries and is far too long
  big[1] = 0xFF;
  const MemoryRegion mr = c.reg(big.data(), big.size(), Access::none);
  SendWr s;
  s.wr_id = 1;
  s.sge = {va(big.data()), static_cast<std::uint32_t>(big.size()), mr.lkey};
  s.solicited = true;
  c.post_send(s);
  const auto wc = c.wait([](const WorkCompletion& x) { return x.wr_id == 1; });
  require(wc.status == Errc::remote_invalid_request,
          "long SEND: expected remote_invalid_request, got '" + wc.status.message() + "'");
}

// Issue 12 finding 9: a host that is merely idle must keep its connection. The NAA probes it with
// zero-length RDMA WRITEs (no rkey check at length 0, IBTA C9-88) that any RC responder ACKs;
// naa-sim's statistics (transport.idle_probes, transport.idle_releases) tell the script that the
// probes happened and released nothing.
void scenario_idle(const std::shared_ptr<naa::host::Transport>& t, const Options& o) {
  Conn c(t, o);
  OneRegion r = setup_region(c, o, 4096, kInOut, 17);
  const std::vector<std::uint8_t> before = r.data;
  for (std::uint64_t call = 1; call <= 2; ++call) {
    c.post_recv({10 + call, {}});
    c.post_send(call_wr(call, naa::protocol::encode_call_immediate(1, 0), &r));  // add1
    const auto rep = c.wait([call](const WorkCompletion& x) { return x.wr_id == 10 + call; });
    require(!rep.status && rep.imm.has_value() && *rep.imm == 0,
            "add1 call " + std::to_string(call) + ": " + rep.status.message());
    for (std::size_t i = 0; i < before.size(); ++i)
      require(r.data[i] == static_cast<std::uint8_t>(before[i] + call), "add1 result differs");
    if (call == 1) {
      // Quiet, but keep the endpoint's progress running (UdpRoce with manual progress ACKs only
      // inside a poll); no completion is expected meanwhile.
      require(!c.try_wait([](const WorkCompletion& x) { return x.status.value() != 0; },
                          milliseconds(o.idle_ms)),
              "an error completion while idle: the NAA dropped the connection");
    }
  }
}

constexpr const char* kUsage =
    "usage: softroce-probe [--transport udp|verbs] -a NAA[:PORT] [-l LOCAL] [--naa-base ADDR]\n"
    "                      [--mtu N] [--idle-ms N] SCENARIO...\n"
    "scenarios: read rnr unknown-fn abort bad-rkey long-send all; idle (not in all)\n";

// The command line: the transport options plus the scenarios to run, in order.
struct ProbeOptions {
  Options transport;
  std::vector<std::string> scenarios;
};

[[noreturn]] void usage_exit(int code) {
  std::fputs(kUsage, code == 0 ? stdout : stderr);
  std::exit(code);
}

// Reads the command line; a bad option prints usage and exits 2, --help prints it and exits 0.
ProbeOptions parse_options(int argc, char** argv) {
  ProbeOptions po;
  Options& o = po.transport;
  static const option long_opts[] = {{"transport", required_argument, nullptr, 't'},
                                     {"naa", required_argument, nullptr, 'a'},
                                     {"local", required_argument, nullptr, 'l'},
                                     {"naa-base", required_argument, nullptr, 'b'},
                                     {"mtu", required_argument, nullptr, 'm'},
                                     {"idle-ms", required_argument, nullptr, 'i'},
                                     {"help", no_argument, nullptr, 'h'},
                                     {nullptr, 0, nullptr, 0}};
  int ch;
  bool have_naa = false;
  while ((ch = getopt_long(argc, argv, "t:a:l:b:m:i:h", long_opts, nullptr)) != -1) {
    const std::string arg = optarg != nullptr ? optarg : "";
    switch (ch) {
      case 't': {
        const auto k = naa::host::parse_transport_kind(arg);
        if (!k) usage_exit(2);
        o.kind = *k;
        break;
      }
      case 'a': {
        const auto naa = naa::tools::parse_naa_address(arg);
        if (!naa) usage_exit(2);
        o.naa_ip = naa::host::parse_ipv4(naa->ip).value_or(0);
        if (naa->cm_port) o.cm_port = *naa->cm_port;
        have_naa = true;
        break;
      }
      case 'l':
        o.local_ip = naa::host::parse_ipv4(arg);
        break;
      case 'b':
        o.naa_base = std::strtoull(arg.c_str(), nullptr, 0);
        break;
      case 'm':
        o.path_mtu = static_cast<std::uint32_t>(std::strtoul(arg.c_str(), nullptr, 10));
        break;
      case 'i': {
        char* end = nullptr;
        const unsigned long ms = std::strtoul(arg.c_str(), &end, 10);
        if (arg.empty() || *end != '\0' || ms == 0 || ms > 600000) usage_exit(2);
        o.idle_ms = static_cast<std::uint32_t>(ms);
        break;
      }
      case 'h':
        usage_exit(0);
      default:
        usage_exit(2);
    }
  }
  po.scenarios.assign(argv + optind, argv + argc);
  if (!have_naa || po.scenarios.empty()) usage_exit(2);
  return po;
}

int run(ProbeOptions po) {
  const Options& o = po.transport;
  std::vector<std::string>& names = po.scenarios;
  std::vector<std::pair<std::string,
                        void (*)(const std::shared_ptr<naa::host::Transport>&, const Options&)>>
      all = {{"read", scenario_read},
             {"rnr", scenario_rnr},
             {"unknown-fn", scenario_unknown_fn},
             {"abort", scenario_abort},
             {"bad-rkey", scenario_bad_rkey},
             {"long-send", scenario_long_send}};
  if (names.size() == 1 && names[0] == "all") {
    names.clear();
    for (const auto& [n, f] : all)
      names.push_back(n);
  }
  all.emplace_back("idle", scenario_idle);  // slow by design: only when asked for by name

  std::error_code ec;
  std::string detail;
  std::shared_ptr<naa::host::Transport> t;
  if (o.kind == naa::host::TransportKind::verbs) {
    naa::host::VerbsOptions vo;
    vo.local_ip = o.local_ip;
    vo.remote_ip = o.naa_ip;
    t = naa::host::open_verbs(vo, ec, &detail);
  } else {
    naa::host::UdpRoceOptions uo;
    uo.local_ip = o.local_ip;
    // The same go-back-N RC that Linux rxe speaks in the VM (IRN is for our two sides only,
    // docs/protocol.md 8), whose READ scenarios this probe exercises.
    uo.irn = false;
    t = naa::host::open_udp_roce(uo, ec, &detail);
  }
  if (!t) {
    std::fprintf(stderr, "softroce-probe: %s\n", detail.c_str());
    return 3;
  }
  std::printf("softroce-probe: %s -> %s\n", t->name().c_str(),
              naa::host::format_ipv4(o.naa_ip).c_str());
  int failed = 0;
  for (const std::string& n : names) {
    auto it = std::find_if(all.begin(), all.end(), [&](const auto& p) { return p.first == n; });
    if (it == all.end()) {
      std::fprintf(stderr, "softroce-probe: unknown scenario '%s'\n%s", n.c_str(), kUsage);
      return 2;
    }
    const auto t0 = Clock::now();
    try {
      it->second(t, o);
      std::printf("PASS %-10s (%.0f ms)\n", n.c_str(),
                  std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    } catch (const Failure& f) {
      std::printf("FAIL %-10s %s\n", n.c_str(), f.what());
      ++failed;
    }
    std::fflush(stdout);
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return run(parse_options(argc, argv));
}
