// RDMA READ under faults (issue 30; docs/reliability.md "READ"): the host READs back bytes it
// first wrote, from naa-sim's memory (an MRSP region, raw verbs on the host's UdpRoce QP) and from
// another host endpoint's passive side, with loss, duplication or reordering injected on both
// sides; every byte of every READ is compared. On IRN (docs/protocol.md 8.5) the responses travel
// in the responder's stream, are placed out of order, NACKed by the requester's IRN ACKs and
// retransmitted by the responder; on go-back-N the same READs run as standard RoCEv2, and the
// captures show that such a connection never carries an IRN opcode. The oracle for "which
// transport ran" is the capture, read with the protocol library; it also shows that the IRN
// requester answered responses past a hole with NAK 0x60 and its SACK bitmap (it keeps them)
// rather than dropping them, and the counters that the responder resent about what was lost, not
// windows: a requester that kept only in-order responses still read every byte right, with
// 15-30x the retransmissions (docs/reliability.md "READ").
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <random>

#include "irn_bdp_check.hpp"
#include "naa/host/udp_listen.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/protocol/mrsp.hpp"
#include "pcap_packets.hpp"
#include "peer.hpp"
#include "seed.hpp"
#include "support.hpp"
#include "test_addresses.hpp"

using namespace std::chrono_literals;
using naa::host::FaultOptions;
using naa::testbench::NaaSim;
namespace host = naa::host;
namespace protocol = naa::protocol;

namespace {

constexpr std::uint64_t kNaaRegion = 0x200000;  // the NAA address of the region READ back
constexpr std::uint32_t kRegionSize = 1U << 20;
constexpr std::uint32_t kMaxRead = 256U << 10;

FaultOptions fo(double loss, double dup = 0, double reorder = 0) {
  FaultOptions f;
  f.loss = loss;
  f.dup = dup;
  f.reorder = reorder;
  return f;
}

struct ReadScenario {
  const char* name;
  FaultOptions host_rx, host_tx;
  std::string sim_faults;  // naa-sim's --fault-rx and --fault-tx
  bool irn = true;
};

// Opcodes seen in a capture: IRN READ requests and responses, standard READ packets, other IRN;
// and the IRN ACKs the requester (at requester_ip) sent as NAK 0x60, each with the SACK bitmap of
// the responses it kept past a hole (docs/protocol.md 8.5).
struct OpcodeCounts {
  std::uint64_t irn_read_requests = 0, irn_read_responses = 0, std_reads = 0, irn_other = 0;
  std::uint64_t requester_naks = 0;
};
OpcodeCounts count_opcodes(const std::string& pcap, std::uint32_t requester_ip) {
  OpcodeCounts c;
  naa::testbench::for_each_roce_packet(
      pcap, [&](const protocol::RoceFrame& f, const protocol::PacketView& v) {
        const protocol::OpcodeInfo& i = *v.info;
        const bool read = i.kind == protocol::OpKind::rdma_read_request ||
                          i.kind == protocol::OpKind::rdma_read_response;
        if (i.is_irn() && i.kind == protocol::OpKind::rdma_read_request) ++c.irn_read_requests;
        if (i.is_irn_read_response()) ++c.irn_read_responses;
        if (!i.is_irn() && read) ++c.std_reads;
        if (i.is_irn() && !read) ++c.irn_other;
        if (i.code == protocol::opcode::kIrnAcknowledge && f.headers.ip.src == requester_ip &&
            v.headers.aeth && v.headers.aeth->syndrome == protocol::kNakPsnSequenceError) {
          ++c.requester_naks;
        }
      });
  return c;
}

// Selective repeat resends about what was lost: the responder's retransmissions stay within 4x
// the losses injected on the path (both directions, both ends: a lost ACK can cost a resend too)
// plus a margin for timeouts of a descheduled peer (one packet each, F-RTO). A requester that
// dropped responses past a hole made the responder resend whole windows: 15-30x.
void check_resends_bounded(std::uint64_t responder_retransmits, std::uint64_t losses) {
  INFO("responder retransmissions " << responder_retransmits << ", losses injected " << losses);
  CHECK(responder_retransmits <= 4 * losses + 256);
}

// The READs: random offsets and log-uniform lengths (1 B .. 256 KiB) of `source`, up to 4 in
// flight, each into a fresh stretch of `sink` (filled with 0xEE first), every byte compared.
struct ReadLoad {
  std::uint64_t reads = 0, bytes = 0;
};
ReadLoad run_reads(host::QueuePair& qp, host::Transport& t, const std::vector<std::uint8_t>& source,
                   std::uint64_t remote_base, std::uint32_t rkey, std::uint64_t count,
                   std::mt19937_64& rng) {
  std::vector<std::uint8_t> sink(4 * kMaxRead);
  host::MemoryRegion mr;
  REQUIRE_FALSE(t.register_memory(sink.data(), sink.size(), host::Access::local_write, mr));
  ReadLoad load;
  const double hi = std::log(static_cast<double>(kMaxRead));
  std::uniform_real_distribution<double> size_dist(0, hi);
  struct Slot {
    std::size_t offset = 0;
    std::uint32_t len = 0;
  };
  std::vector<Slot> slots(4);
  std::uint64_t posted = 0, done = 0;
  auto post = [&](std::size_t s) {
    const auto len =
        std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::exp(size_dist(rng))));
    const std::size_t offset = rng() % (source.size() - len + 1);
    slots[s] = Slot{offset, len};
    std::fill_n(sink.begin() + static_cast<std::ptrdiff_t>(s * kMaxRead), len, 0xEE);
    host::SendWr wr;
    wr.wr_id = s;
    wr.opcode = host::WrOpcode::rdma_read;
    wr.sge = {reinterpret_cast<std::uint64_t>(sink.data() + s * kMaxRead), len, mr.lkey};
    wr.remote_addr = remote_base + offset;
    wr.rkey = rkey;
    REQUIRE_FALSE(qp.post_send(wr));
    ++posted;
  };
  for (std::size_t s = 0; s < slots.size() && posted < count; ++s)
    post(s);
  while (done < count) {
    host::WorkCompletion wc;
    INFO("READ " << done << " of " << count << "; QP error: " << qp.error().message());
    REQUIRE(qp.wait_cq(std::span(&wc, 1), 60s) == 1);
    REQUIRE_FALSE(wc.status);
    CHECK(wc.opcode == host::WcOpcode::rdma_read);
    const Slot& sl = slots[wc.wr_id];
    CHECK(wc.byte_len == sl.len);
    REQUIRE(std::memcmp(sink.data() + wc.wr_id * kMaxRead, source.data() + sl.offset, sl.len) == 0);
    ++done;
    ++load.reads;
    load.bytes += sl.len;
    if (posted < count) post(wc.wr_id);
  }
  (void)t.deregister_memory(mr);
  return load;
}

host::WorkCompletion wait_one(host::QueuePair& qp) {
  host::WorkCompletion wc;
  INFO("QP error: " << qp.error().message());
  REQUIRE(qp.wait_cq(std::span(&wc, 1), 60s) == 1);
  REQUIRE_FALSE(wc.status);
  return wc;
}

// Against naa-sim: MRSP one INPUT+OUTPUT region (remote write and read), WRITE random bytes into
// it, READ them back.
void run_naa_scenario(const ReadScenario& sc) {
  const std::uint64_t seed = naa::testbench::seed_for(sc.name);
  // Go-back-N recovers a lost response only by the READ's retransmit timer (33.6 ms here), so its
  // case READs less to stay lean.
  const std::uint64_t count = naa::testbench::env_u64("NAA_RELIABILITY_READS", sc.irn ? 120 : 40);
  INFO("scenario " << sc.name << " seed " << seed);
  const auto& addr = naa::testbench::test_addresses();
  const std::string tag =
      std::string("/tmp/naa-read-") + sc.name + "-" + std::to_string(::getpid());
  const std::string host_pcap = tag + "-host.pcap";
  std::vector<std::string> args = {"--seed", std::to_string(seed & 0xFFFFFFFF)};
  if (!sc.sim_faults.empty()) {
    args.insert(args.end(), {"--fault-rx", sc.sim_faults, "--fault-tx", sc.sim_faults});
  }
  std::optional<NaaSim> sim;
  sim.emplace(addr.ip(1), args);
  REQUIRE(sim->ready());

  host::UdpRoceOptions uo;
  uo.local_ip = addr.ip_u32(2);
  uo.fault_rx = sc.host_rx;
  uo.fault_tx = sc.host_tx;
  uo.fault_seed = seed;
  uo.seed = seed | 1;
  uo.irn = sc.irn;
  uo.pcap_path = host_pcap;
  std::error_code ec;
  std::string detail;
  auto t = host::open_udp_roce(uo, ec, &detail);
  INFO(detail);
  REQUIRE(t);
  host::ConnectParams cp;
  cp.remote_ip = addr.ip_u32(1);
  cp.timeout = 20000ms;
  cp.local_ack_timeout = 13;
  cp.irn = sc.irn;
  auto qp = t->connect(cp, ec, &detail);
  INFO(detail);
  REQUIRE(qp);

  // MRSP (PROTOCOL.md 5.1): the receive first, then the request as a SEND with SE.
  std::vector<std::uint8_t> shadow(kRegionSize), mrsp_tx(512), mrsp_rx(512);
  host::MemoryRegion shadow_mr, tx_mr, rx_mr;
  REQUIRE_FALSE(t->register_memory(shadow.data(), shadow.size(),
                                   host::Access::local_write | host::Access::remote_write,
                                   shadow_mr));
  REQUIRE_FALSE(t->register_memory(mrsp_tx.data(), mrsp_tx.size(), host::Access::none, tx_mr));
  REQUIRE_FALSE(
      t->register_memory(mrsp_rx.data(), mrsp_rx.size(), host::Access::local_write, rx_mr));
  const protocol::MrspRequestEntry entry{protocol::kMrspFlagInput | protocol::kMrspFlagOutput,
                                         kNaaRegion, reinterpret_cast<std::uint64_t>(shadow.data()),
                                         shadow_mr.rkey, kRegionSize};
  const auto n = protocol::encode_mrsp_request(std::span(&entry, 1), mrsp_tx);
  REQUIRE(n);
  host::RecvWr rwr;
  rwr.wr_id = 100;
  rwr.sge = {reinterpret_cast<std::uint64_t>(mrsp_rx.data()), 512, rx_mr.lkey};
  REQUIRE_FALSE(qp->post_recv(rwr));
  host::SendWr swr;
  swr.wr_id = 101;
  swr.opcode = host::WrOpcode::send;
  swr.sge = {reinterpret_cast<std::uint64_t>(mrsp_tx.data()), static_cast<std::uint32_t>(*n),
             tx_mr.lkey};
  swr.solicited = true;
  REQUIRE_FALSE(qp->post_send(swr));
  host::WorkCompletion answer{};
  for (int i = 0; i < 2; ++i) {
    const auto wc = wait_one(*qp);
    if (wc.wr_id == 100) answer = wc;
  }
  const auto adv =
      protocol::decode_mrsp_advertisement(protocol::ByteView(mrsp_rx.data(), answer.byte_len));
  REQUIRE(adv);
  REQUIRE(adv->count() == 1);
  const std::uint32_t rkey = adv->entry(0).rkey;

  // Random bytes into the region, by RDMA WRITE (4 x 256 KiB).
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> source(kRegionSize);
  for (auto& b : source)
    b = static_cast<std::uint8_t>(rng());
  host::MemoryRegion src_mr;
  REQUIRE_FALSE(t->register_memory(source.data(), source.size(), host::Access::none, src_mr));
  for (std::uint32_t off = 0; off < kRegionSize; off += kMaxRead) {
    host::SendWr w;
    w.wr_id = 200 + off / kMaxRead;
    w.opcode = host::WrOpcode::rdma_write;
    w.sge = {reinterpret_cast<std::uint64_t>(source.data() + off), kMaxRead, src_mr.lkey};
    w.remote_addr = kNaaRegion + off;
    w.rkey = rkey;
    REQUIRE_FALSE(qp->post_send(w));
  }
  for (int i = 0; i < 4; ++i)
    (void)wait_one(*qp);

  const auto t0 = std::chrono::steady_clock::now();
  const ReadLoad load = run_reads(*qp, *t, source, kNaaRegion, rkey, count, rng);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const host::TransportStats hs = t->stats();
  const std::string st = sim->stats_text();
  auto stat = [&](const char* key) { return NaaSim::stat_in(st, key); };
  CHECK(stat("transport.reads") == count);  // each READ executed exactly once
  CHECK(stat("cm.irn_accepted") == (sc.irn ? 1U : 0U));
  qp.reset();
  t.reset();  // closes the capture
  sim.reset();
  const OpcodeCounts c = count_opcodes(host_pcap, addr.ip_u32(2));
  if (sc.irn) {
    CHECK(c.irn_read_requests >= count);
    // The requester's window is the responder's BDP window: nothing in it is dropped.
    CHECK(hs.dropped_out_of_order == 0);
    // Responses lost or reordered on the way: the requester kept those past the hole and said so.
    if (sc.host_rx.loss > 0 || sc.host_rx.reorder > 0) CHECK(c.requester_naks > 0);
    check_resends_bounded(stat("transport.retransmits"), hs.fault_rx_loss + hs.fault_tx_loss +
                                                             stat("net_port.fault_rx.loss") +
                                                             stat("net_port.fault_tx.loss"));
    CHECK(c.irn_read_responses > 0);
    CHECK(c.std_reads == 0);
    const naa::testbench::BdpCapReport cap = naa::testbench::check_bdp_cap(host_pcap, 128);
    CHECK(cap.violations == 0);
  } else {
    // A go-back-N connection is standard RoCEv2: no IRN opcode in either direction.
    CHECK(c.irn_read_requests + c.irn_read_responses + c.irn_other == 0);
    CHECK(c.std_reads > 0);
  }
  if (std::getenv("NAA_KEEP_PCAP") == nullptr) std::remove(host_pcap.c_str());
  naa::testbench::report_line(
      std::string("read-recovery ") + sc.name + ": reads_verified=" + std::to_string(load.reads) +
      " bytes=" + std::to_string(load.bytes) + " faults_host=" +
      std::to_string(hs.fault_rx_loss + hs.fault_tx_loss + hs.fault_rx_dup + hs.fault_tx_dup +
                     hs.fault_rx_reorder + hs.fault_tx_reorder) +
      " sim_retransmits=" + std::to_string(stat("transport.retransmits")) +
      " host_retransmits=" + std::to_string(hs.retransmitted_packets) +
      " host_duplicates=" + std::to_string(hs.duplicates_received) +
      " requester_naks=" + std::to_string(c.requester_naks) + " seconds=" + std::to_string(secs) +
      " seed=" + std::to_string(seed));
  if (sc.irn && sc.host_rx.loss > 0) {
    // Responses were lost on the way to the host: naa-sim resent them from its own stream
    // (responder-side retransmission; a go-back-N READ is re-requested by the host instead).
    CHECK(stat("transport.retransmits") > 0);
  }
}

// Between two host endpoints: the passive side (udp_roce_listen, the host's IRN responder)
// serves a registered buffer; the active side READs it. Faults on both endpoints.
void run_host_scenario(const ReadScenario& sc) {
  const std::uint64_t seed = naa::testbench::seed_for(sc.name);
  const std::uint64_t count = naa::testbench::env_u64("NAA_RELIABILITY_READS", 120);
  INFO("scenario " << sc.name << " seed " << seed);
  const auto& addr = naa::testbench::test_addresses();
  const std::string pcap =
      std::string("/tmp/naa-read-") + sc.name + "-" + std::to_string(::getpid()) + ".pcap";
  auto open_at = [&](int n, std::uint64_t salt, const std::string& capture) {
    host::UdpRoceOptions o;
    o.local_ip = addr.ip_u32(n);
    o.fault_rx = sc.host_rx;
    o.fault_tx = sc.host_tx;
    o.fault_seed = seed + salt;
    o.seed = seed + salt + 1;
    o.irn = sc.irn;
    o.pcap_path = capture;
    std::error_code ec;
    std::string detail;
    auto t = host::open_udp_roce(o, ec, &detail);
    INFO(detail);
    REQUIRE(t);
    return t;
  };
  auto server = open_at(3, 10, "");
  auto client = open_at(4, 20, pcap);
  constexpr std::uint16_t kPort = 7471;
  REQUIRE_FALSE(host::udp_roce_listen(*server, kPort));
  host::ConnectParams cp;
  cp.remote_ip = addr.ip_u32(3);
  cp.cm_port = kPort;
  cp.timeout = 20000ms;
  cp.local_ack_timeout = 13;
  cp.irn = sc.irn;
  auto fut = std::async(std::launch::async, [&] {
    std::error_code ec;
    std::string detail;
    auto qp = client->connect(cp, ec, &detail);
    return std::make_tuple(std::move(qp), ec, detail);
  });
  auto req = host::udp_roce_next_request(*server, 20s);
  REQUIRE(req);
  std::error_code ec;
  std::string detail;
  auto sqp = host::udp_roce_accept(*server, req->id, host::AcceptParams{}, ec, &detail);
  INFO(detail);
  REQUIRE(sqp);
  auto [cqp, cec, cdetail] = fut.get();
  INFO(cdetail);
  REQUIRE_FALSE(cec);
  REQUIRE(cqp);

  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> source(kRegionSize);
  for (auto& b : source)
    b = static_cast<std::uint8_t>(rng());
  host::MemoryRegion mr;
  REQUIRE_FALSE(
      server->register_memory(source.data(), source.size(), host::Access::remote_read, mr));
  const ReadLoad load = run_reads(
      *cqp, *client, source, reinterpret_cast<std::uint64_t>(source.data()), mr.rkey, count, rng);
  const host::TransportStats ss = server->stats(), cs = client->stats();
  if (sc.irn && sc.host_tx.loss > 0) CHECK(ss.retransmitted_packets > 0);  // responses resent
  cqp.reset();
  sqp.reset();
  client.reset();  // closes the capture
  server.reset();
  const OpcodeCounts c = count_opcodes(pcap, addr.ip_u32(4));
  if (sc.irn) {
    CHECK(c.irn_read_requests >= count);
    CHECK(cs.dropped_out_of_order == 0);  // nothing in the window is dropped
    if (sc.host_rx.loss > 0 || sc.host_rx.reorder > 0) CHECK(c.requester_naks > 0);
    check_resends_bounded(ss.retransmitted_packets, ss.fault_rx_loss + ss.fault_tx_loss +
                                                        cs.fault_rx_loss + cs.fault_tx_loss);
    CHECK(c.irn_read_responses > 0);
    CHECK(c.std_reads == 0);
  } else {
    CHECK(c.irn_read_requests + c.irn_read_responses + c.irn_other == 0);
  }
  if (std::getenv("NAA_KEEP_PCAP") == nullptr) std::remove(pcap.c_str());
  naa::testbench::report_line(
      std::string("read-recovery ") + sc.name + ": reads_verified=" + std::to_string(load.reads) +
      " bytes=" + std::to_string(load.bytes) +
      " responder_retransmits=" + std::to_string(ss.retransmitted_packets) +
      " requester_retransmits=" + std::to_string(cs.retransmitted_packets) +
      " requester_duplicates=" + std::to_string(cs.duplicates_received) +
      " requester_drops=" + std::to_string(cs.dropped_unknown_qp) + "/" +
      std::to_string(cs.dropped_malformed) + "/" + std::to_string(cs.dropped_other) + "/" +
      std::to_string(cs.dropped_out_of_order) + "/" + std::to_string(cs.fault_rx_loss) +
      " requester_naks=" + std::to_string(c.requester_naks) + " losses=" +
      std::to_string(ss.fault_rx_loss + ss.fault_tx_loss + cs.fault_rx_loss + cs.fault_tx_loss) +
      " seed=" + std::to_string(seed));
}

}  // namespace

TEST_CASE("IRN READ between host endpoints, loss 5%: every byte verified",
          "[reliability][irn][read]") {
  run_host_scenario({"irn-read-host-loss5", fo(0.05), fo(0.05), "", true});
}
TEST_CASE("IRN READ between host endpoints, duplication and reordering 5%: every byte verified",
          "[reliability][irn][read]") {
  run_host_scenario({"irn-read-host-dup-reorder5", fo(0, 0.05, 0.05), fo(0, 0.05, 0.05), "", true});
}

TEST_CASE("IRN READ from naa-sim, loss 5%: every byte verified, each READ executed once",
          "[reliability][irn][read]") {
  run_naa_scenario({"irn-read-loss5", fo(0.05), fo(0.05), "loss=0.05", true});
}
TEST_CASE("IRN READ from naa-sim, duplication 5%: every byte verified, each READ executed once",
          "[reliability][irn][read]") {
  run_naa_scenario({"irn-read-dup5", fo(0, 0.05), fo(0, 0.05), "dup=0.05", true});
}
TEST_CASE("IRN READ from naa-sim, reordering 5%: every byte verified, each READ executed once",
          "[reliability][irn][read]") {
  run_naa_scenario(
      {"irn-read-reorder5", fo(0, 0, 0.05), fo(0, 0, 0.05), "reorder=0.05,reorder-delay=3", true});
}
TEST_CASE("go-back-N READ from naa-sim, loss 5%: every byte verified, no IRN opcode on the wire",
          "[reliability][read]") {
  run_naa_scenario({"gbn-read-loss5", fo(0.05), fo(0.05), "loss=0.05", false});
}
