// IRN offered by default (issue 30 item 2; docs/protocol.md 8.1): every API's REQ carries the
// capability block unless told not to (UdpRoceOptions::irn, SessionOptions::irn, NAA_IRN for the
// C APIs, naa-call --irn on|off), and a peer that answers without the block (the fake peer, as
// Linux rxe or the NAAICE reference) gets standard go-back-N RoCEv2 opcodes. The oracle is the
// REQ the fake peer decoded (its own CM decoder, protocol library only) and the opcodes it saw.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <string>
#include <variant>

#include "child_process.hpp"
#include "fake_naa.hpp"
#include "fake_peer.hpp"
#include "naa/host/naa.h"
#include "naa/host/transport.hpp"
#include "naa/host/udp_listen.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/protocol/cm.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/irn.hpp"
#include "naa/protocol/opcode.hpp"
#include "naa/protocol/packet.hpp"
#include "naa/protocol/pcap.hpp"
#include "pcap_packets.hpp"
#include "test_addresses.hpp"

using namespace std::chrono_literals;
using naa::testbench::FakePeer;
using naa::testbench::run_program;
namespace host = naa::host;
namespace protocol = naa::protocol;

namespace {

std::optional<protocol::CapabilityBlock> offered(const FakePeer& p) {
  const auto req = p.last_req();
  REQUIRE(req);
  return protocol::find_capability_block(req->private_data, protocol::kCapabilityReqOffset);
}

// Connects endpoint n (options `o`) to a plain fake peer, writes 10000 bytes and checks them.
struct Link {
  std::unique_ptr<FakePeer> peer;
  std::shared_ptr<host::Transport> ep;
  std::unique_ptr<host::QueuePair> qp;
  Link(int n, host::UdpRoceOptions o, std::vector<std::uint8_t> private_data) {
    const auto& a = naa::testbench::test_addresses();
    FakePeer::Options po;
    po.ip = a.ip_u32(100 + n);
    peer = std::make_unique<FakePeer>(po);
    o.local_ip = a.ip_u32(n);
    o.seed = 3000 + static_cast<std::uint64_t>(n);
    std::error_code ec;
    std::string detail;
    ep = host::open_udp_roce(o, ec, &detail);
    INFO(detail);
    REQUIRE(ep);
    host::ConnectParams cp;
    cp.remote_ip = po.ip;
    cp.timeout = 2000ms;
    cp.private_data = std::move(private_data);
    qp = ep->connect(cp, ec, &detail);
    INFO(detail);
    REQUIRE(qp);
  }
  // A 3-packet WRITE goes out in standard opcodes (go-back-N) and lands.
  void write_standard() {
    std::vector<std::uint8_t> buf(10000);
    for (std::size_t i = 0; i < buf.size(); ++i)
      buf[i] = static_cast<std::uint8_t>(i * 13 + 1);
    host::MemoryRegion mr;
    REQUIRE_FALSE(ep->register_memory(buf.data(), buf.size(), host::Access::local_write, mr));
    host::SendWr wr;
    wr.opcode = host::WrOpcode::rdma_write;
    wr.sge = {reinterpret_cast<std::uint64_t>(buf.data()), 10000, mr.lkey};
    wr.remote_addr = 0x100000;
    wr.rkey = 0x1234;
    REQUIRE_FALSE(qp->post_send(wr));
    host::WorkCompletion wc;
    REQUIRE(qp->wait_cq(std::span(&wc, 1), 5s) == 1);
    CHECK_FALSE(wc.status);
    const auto got = peer->memory(0, buf.size());
    CHECK(std::memcmp(got.data(), buf.data(), buf.size()) == 0);
    const auto seen = peer->requests();
    REQUIRE(seen.size() == 3);
    CHECK(seen[0].headers.bth.opcode == protocol::opcode::kWriteFirst);
    CHECK(seen[1].headers.bth.opcode == protocol::opcode::kWriteMiddle);
    CHECK(seen[2].headers.bth.opcode == protocol::opcode::kWriteLast);
  }
};

}  // namespace

TEST_CASE("IRN offer: the default REQ carries the block, a peer without it gets go-back-N",
          "[irn]") {
  Link l(1, host::UdpRoceOptions{}, {'h', 'i'});
  const auto block = offered(*l.peer);
  REQUIRE(block);
  CHECK(block->irn());
  CHECK(block->bdp_cap == protocol::kIrnDefaultBdpCap);
  CHECK(block->rto_high == 15);  // the local ACK timeout
  CHECK(block->rto_low == 13);
  CHECK(block->low_threshold == 3);
  const auto req = l.peer->last_req();
  const auto user = protocol::rdma_cm_user_data(*req);
  CHECK(user[protocol::kCapabilityBlockSize] == 'h');
  CHECK(user[protocol::kCapabilityBlockSize + 1] == 'i');
  l.write_standard();
}

TEST_CASE("IRN offer: irn = false sends no block and the user's bytes right after the header",
          "[irn]") {
  host::UdpRoceOptions o;
  o.irn = false;
  Link l(2, o, {'h', 'i'});
  CHECK_FALSE(offered(*l.peer));
  const auto req = l.peer->last_req();
  CHECK(protocol::rdma_cm_user_data(*req)[0] == 'h');
  CHECK(protocol::rdma_cm_user_data(*req)[1] == 'i');
  l.write_standard();
}

TEST_CASE("IRN offer: private data longer than 40 bytes is sent whole without the block", "[irn]") {
  std::vector<std::uint8_t> pd(56);
  for (std::size_t i = 0; i < pd.size(); ++i)
    pd[i] = static_cast<std::uint8_t>(0xA0 + i);
  Link l(3, host::UdpRoceOptions{}, pd);
  CHECK_FALSE(offered(*l.peer));
  const auto req = l.peer->last_req();
  const auto user = protocol::rdma_cm_user_data(*req);
  REQUIRE(user.size() == 56);
  CHECK(std::memcmp(user.data(), pd.data(), 56) == 0);
  l.write_standard();
}

// Each CTest test is its own process, so setenv here affects only this test case.
TEST_CASE(
    "IRN offer: NAA_IRN=0 turns it off for AP2 and AP1 and unset offers it and other "
    "values are refused",
    "[irn]") {
  auto p = naa::testbench::make_fake_naa(4);
  const std::string naa = naa::testbench::fake_naa_ip(4);
  const std::string local = naa::testbench::fake_naa_host_ip(4);
  ::setenv("NAA_SPEC", (naa + ":12345:1:1").c_str(), 1);
  ::setenv("NAA_LOCAL_IP", local.c_str(), 1);
  ::setenv("NAA_CONNECT_TIMEOUT_MS", "2000", 1);
  ::unsetenv("NAA_IRN");  // each SECTION runs from here, after another one may have set it
  std::vector<unsigned char> a(100, 1);
  naa_param_t in[] = {{a.data(), a.size(), false}};
  const auto ap2_call = [&] {
    naa_handle h;
    REQUIRE(naa_create(1, in, 1, in, 1, &h) == 0);
    REQUIRE(naa_invoke(&h) == 0);
    naa_status st{};
    REQUIRE(naa_wait(&h, &st) == 0);
    CHECK(st.naa_error == NAA_SUCCESS);
    CHECK(naa_finalize(&h) == 0);
  };
  SECTION("unset: offered") {
    ap2_call();
    CHECK(offered(*p));
  }
  SECTION("0: not offered") {
    ::setenv("NAA_IRN", "0", 1);
    ap2_call();
    CHECK_FALSE(offered(*p));
  }
  SECTION("a bad value: naa_create fails saying why, nothing is sent") {
    ::setenv("NAA_IRN", "yes", 1);
    naa_handle h;
    CHECK(naa_create(1, in, 1, in, 1, &h) == -1);
    CHECK(std::string(naa_last_error(nullptr)).find("NAA_IRN must be 0 or 1") != std::string::npos);
    CHECK(p->reqs_received() == 0);
  }
  SECTION("AP1 (the NAAICE API) with NAA_IRN=0 and unset") {
    const std::vector<std::string> env = {"NAA_LOCAL_IP=" + local, "NAA_CONNECT_TIMEOUT_MS=2000",
                                          "NAA_DISCONNECT_TIMEOUT_MS=50"};
    auto off = env;
    off.push_back("NAA_IRN=0");
    auto r = run_program(NAAICE_AP1_CLIENT_PATH, {local, naa, "1", "1000", "1"}, off);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_FALSE(offered(*p));
    r = run_program(NAAICE_AP1_CLIENT_PATH, {local, naa, "1", "1000", "1"}, env);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(offered(*p));
  }
}

TEST_CASE(
    "IRN offer: naa-call --irn off sends no block and the default does and a bad value exits 2",
    "[irn]") {
  auto p = naa::testbench::make_fake_naa(5);
  const std::vector<std::string> base = {"--naa",   naa::testbench::fake_naa_ip(5),
                                         "--local", naa::testbench::fake_naa_host_ip(5),
                                         "--fn",    "add1",
                                         "--inout", "gen:10K:7",
                                         "--verify"};
  auto r = run_program(NAA_CALL_PATH, base);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("verify: ok") != std::string::npos);
  CHECK(offered(*p));
  auto off = base;
  off.insert(off.end(), {"--irn", "off"});
  r = run_program(NAA_CALL_PATH, off);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(offered(*p));
  auto bad = base;
  bad.insert(bad.end(), {"--irn", "maybe"});
  r = run_program(NAA_CALL_PATH, bad);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--irn must be on or off") != std::string::npos);
}

TEST_CASE("IRN offer: irn_bdp_cap 0 offers link rate x configured RTT over the path MTU", "[irn]") {
  host::UdpRoceOptions o;
  o.irn_bdp_cap = 0;
  o.irn_link_gbps = 100;
  o.irn_rtt_us = 100;  // 100 Gb/s x 100 us = 1.25 MB = 305.2 packets of 4096 bytes
  Link l(6, o, {});
  const auto block = offered(*l.peer);
  REQUIRE(block);
  CHECK(block->bdp_cap == 306);
  l.write_standard();
}

TEST_CASE("IRN offer: irn_bdp_cap 0 without a configured RTT uses the one measured to the peer",
          "[irn]") {
  host::UdpRoceOptions o;
  o.irn_bdp_cap = 0;
  o.irn_link_gbps = 1e6;  // so any measured round trip above 134 ns gives the 4096 maximum
  Link l(7, o, {});
  auto block = offered(*l.peer);
  REQUIRE(block);
  CHECK(block->bdp_cap == protocol::kIrnDefaultBdpCap);  // nothing measured yet
  // A second connection to the same peer: its CM round trip was measured by the first.
  host::ConnectParams cp;
  cp.remote_ip = naa::testbench::test_addresses().ip_u32(107);
  cp.timeout = 2000ms;
  std::error_code ec;
  std::string detail;
  auto qp = l.ep->connect(cp, ec, &detail);
  INFO(detail);
  REQUIRE(qp);
  block = offered(*l.peer);
  REQUIRE(block);
  CHECK(block->bdp_cap == protocol::kIrnMaxBdpCap);
}

// The host's own passive side (udp_roce_listen) between two hosts, as the libfabric provider's
// connections run: it grants the coalesced-ACK flag the active side offered by the rule the
// active side offers it with (on, or automatic on the wall clock; off: both ends ACK every
// packet). The oracle is the server's capture: the REP's capability block, the AckReq bits the
// client set and the IRN ACKs the server sent for a 16-packet and a 5-packet WRITE.
TEST_CASE(
    "IRN offer: the host passive side grants coalesced ACKs unless irn_coalesced_acks is off, and "
    "then ACKs every packet",
    "[irn]") {
  const auto setting = GENERATE(host::IrnCoalescedAcks::on, host::IrnCoalescedAcks::automatic,
                                host::IrnCoalescedAcks::off);
  const bool server_coalesces = setting != host::IrnCoalescedAcks::off;
  INFO("server irn_coalesced_acks " << static_cast<int>(setting));
  const auto& addr = naa::testbench::test_addresses();
  const std::string pcap = "/tmp/naa-irn-offer-passive-" + std::to_string(::getpid()) + ".pcap";
  auto open = [&](int n, host::IrnCoalescedAcks acks, const std::string& capture) {
    host::UdpRoceOptions o;
    o.local_ip = addr.ip_u32(n);
    o.seed = 5000 + static_cast<std::uint64_t>(n);
    o.irn_coalesced_acks = acks;
    o.pcap_path = capture;
    std::error_code ec;
    std::string detail;
    auto t = host::open_udp_roce(o, ec, &detail);
    INFO(detail);
    REQUIRE(t);
    return t;
  };
  auto server = open(61, setting, pcap);
  auto client = open(62, host::IrnCoalescedAcks::automatic, {});  // offers them (wall clock)
  constexpr std::uint16_t kPort = 7473;
  REQUIRE_FALSE(host::udp_roce_listen(*server, kPort));
  host::ConnectParams cp;
  cp.remote_ip = server->local_ip();
  cp.cm_port = kPort;
  cp.timeout = 5000ms;
  auto fut = std::async(std::launch::async, [&] {
    std::error_code ec;
    return client->connect(cp, ec);
  });
  auto req = host::udp_roce_next_request(*server, 5s);
  REQUIRE(req);
  std::error_code ec;
  auto sqp = host::udp_roce_accept(*server, req->id, {}, ec);
  REQUIRE(sqp);
  auto cqp = fut.get();
  REQUIRE(cqp);

  constexpr std::uint32_t kPackets = 16;
  const std::uint32_t len = kPackets * 4096;  // the path MTU
  std::vector<std::uint8_t> src(len), dst(len);
  for (std::size_t i = 0; i < len; ++i)
    src[i] = static_cast<std::uint8_t>(i * 7 + 3);
  host::MemoryRegion smr, dmr;
  REQUIRE_FALSE(client->register_memory(src.data(), len, host::Access::none, smr));
  REQUIRE_FALSE(server->register_memory(dst.data(), len, host::Access::remote_write, dmr));
  host::SendWr wr;
  wr.opcode = host::WrOpcode::rdma_write;
  wr.sge = {reinterpret_cast<std::uint64_t>(src.data()), len, smr.lkey};
  wr.remote_addr = reinterpret_cast<std::uint64_t>(dst.data());
  wr.rkey = dmr.rkey;
  host::WorkCompletion wc;
  REQUIRE_FALSE(cqp->post_send(wr));
  REQUIRE(cqp->wait_cq(std::span(&wc, 1), 5s) == 1);
  CHECK_FALSE(wc.status);
  // Then a 5-packet WRITE (as ofi_rxm's segments): with coalesced ACKs only its last packet asks.
  wr.sge.length = 5 * 4096;
  REQUIRE_FALSE(cqp->post_send(wr));
  REQUIRE(cqp->wait_cq(std::span(&wc, 1), 5s) == 1);
  CHECK_FALSE(wc.status);
  CHECK(dst == src);
  cqp.reset();
  sqp.reset();
  client.reset();
  server.reset();  // closes the capture

  std::optional<protocol::CapabilityBlock> granted;
  std::uint32_t writes = 0, acks = 0;
  std::vector<std::uint32_t> psns;  // first transmissions of WRITE packets, in order
  std::vector<bool> ack_req;        // ... and their AckReq
  naa::testbench::for_each_roce_packet(
      pcap, [&](const protocol::RoceFrame& f, const protocol::PacketView& v) {
        const bool from_server = f.headers.ip.src == addr.ip_u32(61);
        if (v.headers.bth.dest_qpn == 1 && from_server) {  // CM: the REP carries the grant
          const auto mad = protocol::decode_cm_mad(v.payload);
          if (mad && std::holds_alternative<protocol::CmRep>(mad->body)) {
            granted = protocol::find_capability_block(
                std::get<protocol::CmRep>(mad->body).private_data, protocol::kCapabilityRepOffset);
          }
        } else if (v.info->is_irn() && v.info->kind == protocol::OpKind::rdma_write) {
          ++writes;
          if (std::find(psns.begin(), psns.end(), v.headers.bth.psn) == psns.end()) {
            psns.push_back(v.headers.bth.psn);
            ack_req.push_back(v.headers.bth.ack_req);
          }
        } else if (v.info->code == protocol::opcode::kIrnAcknowledge && from_server) {
          ++acks;
        }
      });
  std::remove(pcap.c_str());
  REQUIRE(granted);
  CHECK(granted->irn());
  CHECK(granted->coalesced_acks() == server_coalesces);
  INFO("IRN WRITE packets " << writes << ", server ACKs " << acks);
  REQUIRE(psns.size() == kPackets + 5);
  // AckReq as the requester sets it (docs/protocol.md 8.2): with coalesced ACKs on packets 3, 7,
  // 11 and 15 of the 16, and only on the last of the 5 (not also on its packet 3); otherwise on
  // every packet. The server answers each such packet, nothing else (no loss here).
  std::vector<bool> want(kPackets + 5, !server_coalesces);
  if (server_coalesces) {
    for (const std::size_t i : {3U, 7U, 11U, 15U, 20U})
      want[i] = true;
  }
  CHECK(ack_req == want);
  if (server_coalesces) {
    CHECK(acks <= writes / 3);
  } else {
    CHECK(acks >= writes);  // one per packet
  }
}
