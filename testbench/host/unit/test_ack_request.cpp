// UdpRoceOptions::ack_request_interval (PROTOCOL.md 3): the go-back-N requester asks for an ACK
// (BTH AckReq) on every Nth PSN and on each message's last, N = 64 by default and 1 for an ACK per
// packet (the IRN paper's RoCE, docs/fabric.md); values outside 1..64 are clamped.
#include <catch2/catch.hpp>

#include "naa/host/udp_roce.hpp"
#include "naa/protocol/opcode.hpp"
#include "udp_rig.hpp"

using namespace naa::testbench::udp_rig;
namespace host = naa::host;

namespace {

struct Sent {
  std::uint32_t psn;
  bool ack_req;
};

// Writes 200 packets of 1 KiB in one message and returns each packet's PSN and AckReq bit.
std::vector<Sent> write_200(std::uint32_t n, std::uint32_t interval) {
  host::ConnectParams params;
  params.path_mtu = 1024;
  host::UdpRoceOptions o;
  o.irn = false;  // go-back-N
  o.ack_request_interval = interval;
  Rig rig(n, {}, params, host::Progress::automatic, 1 << 20, o);
  const std::uint32_t len = 200 * 1024;
  rig.fill(len, 5);
  REQUIRE_FALSE(rig.qp->post_send(rig.write(len, 0, true)));
  const auto wc = rig.wait_one();
  REQUIRE(wc);
  CHECK_FALSE(wc->status);
  rig.expect_peer_memory(len);
  std::vector<Sent> sent;
  for (const auto& r : rig.peer->requests())
    sent.push_back({r.headers.bth.psn, r.headers.bth.ack_req});
  return sent;
}

}  // namespace

TEST_CASE("go-back-N asks for an ACK every ack_request_interval PSNs and on a message's last") {
  // 0 and 1000 are clamped to 1 and 64.
  for (const std::uint32_t interval : {1U, 8U, 64U, 0U, 1000U}) {
    INFO("ack_request_interval " << interval);
    const std::uint32_t effective = interval < 1 ? 1 : (interval > 64 ? 64 : interval);
    const std::vector<Sent> sent = write_200(10 + interval % 50, interval);
    REQUIRE(sent.size() == 200);
    std::size_t asked = 0;
    for (std::size_t i = 0; i < sent.size(); ++i) {
      INFO("packet " << i << " PSN " << sent[i].psn);
      CHECK(sent[i].psn == ((0xFFFFF0U + i) & 0xFFFFFFU));  // the fake peer's REP PSN, wrapping
      const bool want = i == 199 || sent[i].psn % effective == effective - 1;
      CHECK(sent[i].ack_req == want);
      asked += sent[i].ack_req ? 1U : 0U;
    }
    // PSNs 0xFFFFF0 .. 0xB7 (wrapped): 1 -> 200 ACK requests; 8 -> 0xFFFFF7, 0xFFFFFF and
    // 7, 15, .., 0xB7 (the last, also a multiple): 25; 64 -> 0xFFFFFF, 63, 127 and the last: 4.
    CHECK(asked == (effective == 1 ? 200U : effective == 8 ? 25U : 4U));
  }
}
