// Puts to other nodes (issue 28, docs/spin.md "Puts to other nodes", docs/protocol.md "Peers"):
// one host and NAAs on a fabric star (fabric/broadcast.hpp), the host brokers NAA-to-NAA QPs with
// MRSP 0x06/0x08 (Session::bind_peer) and NAA 0's handler puts the message to the others (packet
// by packet, or store-and-forward from the completion handler). Every
// NAA's memory is read back and compared with the message; the counters of both sides are
// checked; a put to an unbound peer or past a peer's region fails the call with SEGV (0x7E) and
// reaches nobody; an NAA with no QP free and a connection that cannot be handed over (IRN) refuse
// with MRSP error 0x08. One fabric per test case (SystemC elaborates once per process).
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "naa/fabric/broadcast.hpp"
#include "naa/host/error.hpp"
#include "naa_sim.hpp"
#include "seed.hpp"

using naa::fabric::BroadcastConfig;
using naa::fabric::BroadcastResult;
using naa::testbench::NaaSim;

namespace {

std::vector<std::uint8_t> read_file(const char* path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

BroadcastConfig config(int naas, std::uint64_t bytes) {
  BroadcastConfig c;
  c.naas = naas;
  c.bytes = bytes;
  c.image = read_file(SPIN_BROADCAST_ELF);
  c.seed = naa::testbench::test_seed() % 100000 + 1;
  c.naa.hpus = 4;
  return c;
}

// The peer counters are printed only once one is non-zero (the digest of runs without peers
// stays as it was): absent, they read 0. Any other key must be there.
std::uint64_t stat(const std::string& stats, const std::string& key) {
  for (const char* sparse : {"handler.peer_", "handler.unanswered_calls", "mrsp.peers_",
                             "mrsp.handovers", "transport.handovers", "mrsp.error_8"}) {
    if (key.rfind(sparse, 0) == 0 && stats.find("\n" + key + "=") == std::string::npos &&
        stats.rfind(key + "=", 0) != 0) {
      return 0;
    }
  }
  return NaaSim::stat_in(stats, key);
}

}  // namespace

TEST_CASE("spin peers: NAA 0's handler puts the message to NAA 1, which holds it byte for byte") {
  INFO("NAA_TEST_SEED=" << naa::testbench::test_seed());
  const std::uint64_t bytes = 64 * 1024 + 13;  // 17 packets of at most 4 KiB
  const BroadcastResult r = naa::fabric::run_broadcast(config(2, bytes));
  INFO(r.bind_detail);
  REQUIRE_FALSE(r.bind_error);
  CHECK(r.return_code == 0);
  REQUIRE(r.naas.size() == 2);
  const std::string& root = r.naas[0].stats;
  const std::string& child = r.naas[1].stats;
  INFO(root << "----\n" << child);
  CHECK(r.naas[0].verified);
  CHECK(r.naas[1].verified);
  CHECK(r.last_holds_ps > r.start_ps);
  CHECK(stat(root, "mrsp.peers_bound") == 1);
  const std::uint64_t packets = stat(root, "handler.payloads");
  CHECK(packets == 17);
  CHECK(stat(root, "handler.peer_puts") == packets);
  CHECK(stat(root, "handler.peer_bytes") == bytes);
  CHECK(stat(root, "handler.peer_ends") == 1);
  CHECK(stat(root, "handler.segv") == 0);
  CHECK(stat(child, "mrsp.handovers") == 1);
  CHECK(stat(child, "transport.handovers") == 1);
  CHECK(stat(child, "handler.payloads") == packets);
  CHECK(stat(child, "handler.unanswered_calls") == 1);
  CHECK(stat(child, "transport.drop.wrong_peer") == 0);
  // The host's DREQs end both connections, the handed-over one too, and the peer QP with its
  // owner: no region or QP is left at either NAA.
  for (const auto& n : r.naas) {
    INFO(n.name << " after the disconnects:\n" << n.final_stats);
    CHECK(stat(n.final_stats, "mrsp.regions_held") == 0);
    CHECK(stat(n.final_stats, "cm.connections") == 0);
  }
}

TEST_CASE("spin peers: puts from NAA memory (PtlHandlerPutFromHostPeer) reach NAA 1 too") {
  const std::uint64_t bytes = 3 * 4096 + 100;
  BroadcastConfig c = config(2, bytes);
  c.image = read_file(SPIN_BROADCAST_MEMORY_ELF);
  const BroadcastResult r = naa::fabric::run_broadcast(c);
  REQUIRE_FALSE(r.bind_error);
  CHECK(r.return_code == 0);
  INFO(r.naas[0].stats << "----\n" << r.naas[1].stats);
  CHECK(r.all_verified());
  CHECK(stat(r.naas[0].stats, "handler.peer_puts") == 4);
  CHECK(stat(r.naas[0].stats, "handler.peer_bytes") == bytes);
  CHECK(stat(r.naas[1].stats, "handler.payloads") == 4);
}

TEST_CASE("spin peers: a binomial broadcast to 8 NAAs, every NAA holds the message") {
  INFO("NAA_TEST_SEED=" << naa::testbench::test_seed());
  const std::uint64_t bytes = 32 * 1024;
  const BroadcastResult r = naa::fabric::run_broadcast(config(8, bytes));
  INFO(r.bind_detail);
  REQUIRE_FALSE(r.bind_error);
  CHECK(r.return_code == 0);
  REQUIRE(r.naas.size() == 8);
  CHECK(r.all_verified());
  CHECK(r.naas[0].children == std::vector<int>{1, 2, 4});
  CHECK(r.naas[1].children == std::vector<int>{3, 5});
  CHECK(r.naas[3].children == std::vector<int>{7});
  CHECK(r.naas[4].children.empty());
  CHECK(r.naas[7].parent == 3);
  for (const auto& n : r.naas) {
    INFO(n.name << "\n" << n.stats);
    CHECK(stat(n.stats, "handler.payloads") == 8);
    CHECK(n.calls == 1);
    if (!n.children.empty()) {
      CHECK(stat(n.stats, "handler.peer_puts") == 8 * n.children.size());
      CHECK(stat(n.stats, "handler.peer_ends") == n.children.size());
    }
  }
}

TEST_CASE("spin peers: store-and-forward down the same tree, every NAA of 8 holds 1 MiB") {
  // The paper's baseline (seed 004 Fig. 5a, examples/spin/broadcast/broadcast_store.c): the
  // payload handlers only deposit, the completion handler puts the whole deposited message to
  // each child in 64 KiB pieces from NAA memory. That it takes longer than streaming is asserted
  // by the figure test below (two runs, two processes: SystemC elaborates once per process).
  INFO("NAA_TEST_SEED=" << naa::testbench::test_seed());
  const std::uint64_t bytes = 1024 * 1024;
  BroadcastConfig c = config(8, bytes);
  c.image = read_file(SPIN_BROADCAST_STORE_ELF);
  const BroadcastResult r = naa::fabric::run_broadcast(c);
  INFO(r.bind_detail);
  REQUIRE_FALSE(r.bind_error);
  CHECK(r.return_code == 0);
  REQUIRE(r.naas.size() == 8);
  CHECK(r.all_verified());
  CHECK(r.last_holds_ps > r.start_ps);
  for (const auto& n : r.naas) {
    INFO(n.name << "\n" << n.stats);
    CHECK(n.verified);
    CHECK(n.calls == 1);
    CHECK(stat(n.stats, "handler.payloads") == 256);
    // Whole pieces from the completion handler, not one put per packet as broadcast.c does.
    CHECK(stat(n.stats, "handler.peer_puts") == 16 * n.children.size());
    CHECK(stat(n.stats, "handler.peer_bytes") == bytes * n.children.size());
    CHECK(stat(n.stats, "handler.peer_ends") == n.children.size());
    // A child holds the message only after its parent held all of it (its call ended).
    if (n.parent >= 0) CHECK(n.end_ps > r.naas[static_cast<std::size_t>(n.parent)].end_ps);
  }
}

namespace {

// A root handler whose put is refused (the image `elf`): the call fails with SEGV (0x7E), no put
// leaves NAA 0 and NAA 1's handlers see no payload.
BroadcastResult run_refused_put(const char* elf) {
  BroadcastConfig c = config(2, 16 * 1024);
  c.root_image = read_file(elf);
  const BroadcastResult r = naa::fabric::run_broadcast(c);
  REQUIRE_FALSE(r.bind_error);
  CHECK(r.return_code == 0x7E);
  INFO(r.naas[0].stats << "----\n" << r.naas[1].stats);
  CHECK(stat(r.naas[0].stats, "handler.segv") >= 1);
  CHECK(stat(r.naas[0].stats, "handler.peer_puts") == 0);
  CHECK(stat(r.naas[1].stats, "handler.payloads") == 0);
  return r;
}

}  // namespace

TEST_CASE("spin peers: a put to an unbound peer fails the call with SEGV and reaches nobody") {
  const BroadcastResult r = run_refused_put(SPIN_PEER_UNBOUND_ELF);
  CHECK_FALSE(r.naas[1].verified);
}

TEST_CASE("spin peers: a put past the end of the peer's region fails the call with SEGV") {
  (void)run_refused_put(SPIN_PEER_OUT_OF_BOUNDS_ELF);
}

TEST_CASE("spin peers: a slow peer blocks its parent's HPUs, which RNR-NAK the host in turn") {
  // Flow control (docs/spin.md "Puts to other nodes" 4): NAA 1's handler is several times slower
  // than NAA 0 forwards, so NAA 1 RNR-NAKs the puts, NAA 0's peer QP fills its window, the puts
  // block NAA 0's HPUs, and NAA 0 RNR-NAKs the host. Nothing is lost: both hold the message.
  BroadcastConfig c = config(2, 2 * 1024 * 1024);
  c.naa.hpus = 8;
  c.child_image = read_file(SPIN_SLOW_SINK_ELF);
  const BroadcastResult r = naa::fabric::run_broadcast(c);
  REQUIRE_FALSE(r.bind_error);
  CHECK(r.return_code == 0);
  INFO(r.naas[0].stats << "----\n" << r.naas[1].stats);
  CHECK(r.all_verified());
  CHECK(stat(r.naas[1].stats, "handler.rnr_naks") > 0);
  CHECK(stat(r.naas[0].stats, "transport.rnr_naks_received") > 0);
  CHECK(stat(r.naas[0].stats, "handler.peer_blocked") > 0);
  // The puts waited for the window: never more than 128 packets outstanding on the peer QP.
  CHECK(stat(r.naas[0].stats, "handler.peer_max_outstanding") == 128);
  CHECK(stat(r.naas[0].stats, "handler.rnr_naks") > 0);
  CHECK(stat(r.naas[0].stats, "handler.peer_puts") == 512);
}

TEST_CASE("spin peers: an NAA with no QP free for the peer refuses with MRSP error 0x08") {
  BroadcastConfig c = config(2, 4096);
  c.naa.qps = 1;  // the host's own connection takes it
  const BroadcastResult r = naa::fabric::run_broadcast(c);
  INFO(r.bind_detail);
  CHECK(r.bind_error == naa::host::Errc::mrsp_bad_peer);
  CHECK(r.bind_detail.find("0x08 (bad peer)") != std::string::npos);
}

TEST_CASE("spin peers: an IRN connection is not handed over (MRSP error 0x08)") {
  BroadcastConfig c = config(2, 4096);
  c.irn_children = true;
  const BroadcastResult r = naa::fabric::run_broadcast(c);
  INFO(r.bind_detail);
  CHECK(r.bind_error == naa::host::Errc::mrsp_bad_peer);
  CHECK(r.bind_detail.find("hand-over") != std::string::npos);
  // The host took the peer back (0x06 with an empty region): NAA 0 holds only its connection.
  INFO(r.naas[0].stats);
  CHECK(stat(r.naas[0].stats, "mrsp.peers_bound") == 1);
  CHECK(stat(r.naas[0].stats, "mrsp.peers_released") == 1);
  CHECK(stat(r.naas[0].stats, "cm.connections") == 1);
  CHECK(stat(r.naas[1].stats, "mrsp.error_8") == 1);
}

TEST_CASE("spin peers: the baseline, the host sends the message to every NAA itself") {
  BroadcastConfig c = config(4, 32 * 1024);
  c.tree = false;
  const BroadcastResult r = naa::fabric::run_broadcast(c);
  REQUIRE_FALSE(r.bind_error);
  CHECK(r.return_code == 0);
  CHECK(r.all_verified());
  for (const auto& n : r.naas) {
    INFO(n.name << "\n" << n.stats);
    CHECK(stat(n.stats, "handler.peer_puts") == 0);
  }
}

// libsystemc's own main() refers to sc_main (naa::sim links SystemC); Catch brings this test's
// main, so this one is never called.
int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 0;
}
