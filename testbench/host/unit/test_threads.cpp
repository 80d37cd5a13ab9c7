// The UdpRoce endpoint's threads (issue 26, "Thread safety"): several callers share one endpoint
// and take turns driving it (caller-driven progress, docs/host/README.md "Progress"), completion
// callbacks come and go while others wait, statistics are read meanwhile. The assertions check
// that every message arrives; the point is the tsan preset (docs/building.md "ThreadSanitizer"),
// under which any data race among these threads fails the test. Endpoints on .41 and .42 of the
// test's own address block.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "naa/host/udp_listen.hpp"
#include "naa/host/udp_roce.hpp"
#include "open_endpoint.hpp"
#include "test_addresses.hpp"

using namespace std::chrono_literals;
namespace host = naa::host;

using naa::testbench::open_at;

namespace {

constexpr std::uint16_t kPort = 7471;

struct QpPair {
  std::unique_ptr<host::QueuePair> server, client;
};

// `count` connections from client to server: the client connects from a thread of its own while
// this one accepts.
std::vector<QpPair> connect_pairs(host::Transport& server, host::Transport& client, int count) {
  REQUIRE_FALSE(host::udp_roce_listen(server, kPort));
  std::vector<QpPair> pairs;
  for (int i = 0; i < count; ++i) {
    auto fut = std::async(std::launch::async, [&] {
      host::ConnectParams p;
      p.remote_ip = server.local_ip();
      p.cm_port = kPort;
      std::error_code ec;
      return client.connect(p, ec, nullptr);
    });
    auto req = host::udp_roce_next_request(server, 5s);
    REQUIRE(req);
    std::error_code ec;
    QpPair pair;
    pair.server = host::udp_roce_accept(server, req->id, {}, ec, nullptr);
    REQUIRE(pair.server);
    pair.client = fut.get();
    REQUIRE(pair.client);
    pairs.push_back(std::move(pair));
  }
  return pairs;
}

// Registered memory (Catch's assertions are not thread-safe: the threads count failures instead).
struct Buffer {
  std::vector<std::uint8_t> bytes;
  host::MemoryRegion mr;
  bool ok = false;
  Buffer(host::Transport& t, std::size_t n) : bytes(n) {
    ok = !t.register_memory(bytes.data(), n, host::Access::local_write, mr);
  }
  host::Sge sge(std::uint32_t len) const {
    return {reinterpret_cast<std::uint64_t>(bytes.data()), len, mr.lkey};
  }
};

// Waits for one completion; false on timeout or an error status.
bool wait_ok(host::QueuePair& qp, std::uint64_t wr_id) {
  host::WorkCompletion wc;
  if (qp.wait_cq(std::span(&wc, 1), 10s) != 1) return false;
  return !wc.status && wc.wr_id == wr_id;
}

// One pair's ping-pong: the client sends, the server echoes; each side on its own thread and
// each waiting in wait_cq, so up to 2 x pairs callers wait on the two endpoints at once.
void ping_pong(host::Transport& server, host::Transport& client, QpPair& pair, int rounds,
               std::atomic<int>& failures) {
  auto server_side = std::async(std::launch::async, [&] {
    Buffer buf(server, 2048);
    if (!buf.ok) ++failures;
    for (int r = 0; r < rounds && buf.ok; ++r) {
      const auto id = static_cast<std::uint64_t>(r);
      if (pair.server->post_recv({id, buf.sge(2048)}) || !wait_ok(*pair.server, id)) {
        ++failures;
        return;
      }
      host::SendWr echo;
      echo.wr_id = 1000 + id;
      echo.sge = buf.sge(512);
      if (pair.server->post_send(echo) || !wait_ok(*pair.server, echo.wr_id)) {
        ++failures;
        return;
      }
    }
  });
  Buffer out(client, 512), in(client, 2048);
  if (!out.ok || !in.ok) ++failures;
  for (int r = 0; r < rounds && failures == 0; ++r) {
    const auto id = static_cast<std::uint64_t>(r);
    host::SendWr send;
    send.wr_id = 2000 + id;
    send.sge = out.sge(512);
    // The receive for the echo first: a SEND that finds none gets an RNR NAK and waits.
    if (pair.client->post_recv({id, in.sge(2048)}) || pair.client->post_send(send)) {
      ++failures;
      break;
    }
    // The send's and the echo's completions, in either order.
    host::WorkCompletion wc[2];
    std::size_t got = 0;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (got < 2 && std::chrono::steady_clock::now() < deadline) {
      got += pair.client->wait_cq(std::span(wc + got, 2 - got), 100ms);
    }
    if (got != 2 || wc[0].status || wc[1].status) ++failures;
  }
  server_side.get();
}

}  // namespace

TEST_CASE("threads: callers on two endpoints take turns driving them, callbacks come and go",
          "[threads]") {
  const auto progress = GENERATE(host::Progress::automatic, host::Progress::manual);
  auto server = open_at(41, host::Progress::automatic);
  auto client = open_at(42, progress);
  constexpr int kPairs = 4;
  constexpr int kRounds = 200;
  auto pairs = connect_pairs(*server, *client, kPairs);
  std::atomic<int> failures{0};
  std::atomic<bool> done{false};
  std::atomic<int> callbacks{0};
  // Beside the ping-pongs: statistics read, and a completion callback set and cleared on the
  // last pair's server QP (with one set, completions are delivered by the progress thread, not
  // by a waiting caller: the handover both ways).
  std::thread observer([&] {
    bool on = false;
    while (!done) {
      (void)server->stats();
      (void)client->stats();
      on = !on;
      if (on) {
        pairs.back().server->set_completion_callback([&] { ++callbacks; });
      } else {
        pairs.back().server->set_completion_callback({});
      }
      std::this_thread::sleep_for(1ms);
    }
    pairs.back().server->set_completion_callback({});
  });
  std::vector<std::thread> threads;
  for (auto& pair : pairs) {
    threads.emplace_back([&] { ping_pong(*server, *client, pair, kRounds, failures); });
  }
  for (auto& t : threads)
    t.join();
  done = true;
  observer.join();
  CHECK(failures == 0);
  const host::TransportStats s = server->stats();
  CHECK(s.packets_received >= static_cast<std::uint64_t>(kPairs * kRounds));
  // Each side disconnects while the other endpoint's threads are still running.
  for (auto& pair : pairs) {
    CHECK_FALSE(pair.client->disconnect(500ms));
  }
}
