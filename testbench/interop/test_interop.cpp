// Our bytes judged by independent implementations: tshark (Wireshark's InfiniBand dissector)
// decodes what we build, field by field, and scapy recomputes every ICRC. Both oracles are also
// shown to fail where they should, so a silent tool cannot pass these tests.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "exchange.hpp"
#include "naa/protocol/cm.hpp"
#include "naa/protocol/icrc.hpp"
#include "naa/protocol/irn.hpp"
#include "naa/protocol/packet.hpp"
#include "naa/protocol/pcap.hpp"
#include "vectors.hpp"

using namespace naa::protocol;

namespace {

struct Output {
  int status = -1;
  std::string text;
};

Output run(const std::string& command) {
  Output out;
  std::FILE* p = ::popen((command + " 2>/dev/null").c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
    out.text.append(buf.data(), n);
  const int st = ::pclose(p);
  out.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) {
    if (!l.empty()) v.push_back(l);
  }
  return v;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> v;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      v.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  v.push_back(cur);
  return v;
}

std::string temp_path(const std::string& name) {
  return "/tmp/naa_interop_" + std::to_string(::getpid()) + "_" + name;
}

// tshark as STYLE.md says: UDP 4791 is InfiniBand; no RPC-over-RDMA and no payload heuristics,
// which would otherwise read a legal short payload as another protocol and call it malformed.
std::string tshark(const std::string& pcap, const std::string& args) {
  std::string cmd = std::string(NAA_TSHARK) + " -r " + pcap + " --disable-protocol rpcordma";
  for (const char* h : {"eth_over_ib", "mellanox_eoib", "smcr_infiniband", "smb_direct_infiniband",
                        "iser_infiniband", "sdp_infiniband", "fc_infiniband", "lnet_ib",
                        "rpcrdma_infiniband", "nvme_rdma", "drbd_rdma"}) {
    cmd += std::string(" --disable-heuristic ") + h;
  }
  return cmd + " " + args;
}

const char* const kFields[] = {
    "frame.number",
    "infiniband.bth.opcode",
    "infiniband.bth.se",
    "infiniband.bth.padcnt",
    "infiniband.bth.destqp",
    "infiniband.bth.a",
    "infiniband.bth.psn",
    "infiniband.reth.va",
    "infiniband.reth.r_key",
    "infiniband.reth.dmalen",
    "infiniband.aeth.syndrome",
    "infiniband.aeth.msn",
    "infiniband.immdt",
    "infiniband.deth.q_key",
    "infiniband.deth.srcqp",
    "infiniband.mad.attributeid",
    "infiniband.mad.transactionid",
    "infiniband.cm.req.serviceid",
    "infiniband.cm.req.localqpn",
    "infiniband.cm.req.startpsn",
    "infiniband.cm.rep.localqpn",
    "infiniband.cm.rep.startpsn",
    "infiniband.cm.rej.reason",
    "infiniband.invariant.crc",
};

// Frame number -> field -> value as tshark prints it (first occurrence).
using Decoded = std::vector<std::map<std::string, std::string>>;

Decoded tshark_fields(const std::string& pcap) {
  std::string args = "-T fields -E separator=/t";
  for (const char* f : kFields)
    args += std::string(" -e ") + f;
  const Output out = run(tshark(pcap, args));
  REQUIRE(out.status == 0);
  Decoded d;
  for (const auto& l : lines(out.text)) {
    const auto cols = split(l, '\t');
    REQUIRE(cols.size() == std::size(kFields));
    std::map<std::string, std::string> m;
    for (std::size_t i = 0; i < cols.size(); ++i) {
      if (!cols[i].empty()) m[kFields[i]] = split(cols[i], ',')[0];
    }
    d.push_back(std::move(m));
  }
  return d;
}

std::uint64_t num(const std::map<std::string, std::string>& m, const std::string& field,
                  int base = 0) {
  const auto it = m.find(field);
  if (it == m.end()) FAIL("tshark did not decode " << field);
  return std::stoull(it->second, nullptr, base);
}

std::uint32_t bswap32(std::uint32_t v) {
  return (v >> 24) | ((v >> 8) & 0xFF00U) | ((v << 8) & 0xFF0000U) | (v << 24);
}

// Every field our decoder reads must be what tshark reads.
void check_agreement(const std::vector<std::vector<std::uint8_t>>& frames, const Decoded& ts) {
  REQUIRE(ts.size() == frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    INFO("frame " << i + 1);
    const auto& t = ts[i];
    auto rf = decode_roce_frame(frames[i]);
    REQUIRE(rf.has_value());
    auto p = decode_packet(rf->roce);
    REQUIRE(p.has_value());
    const auto& h = p->headers;
    CHECK(num(t, "infiniband.bth.opcode") == h.bth.opcode);
    CHECK(num(t, "infiniband.bth.se") == (h.bth.solicited_event ? 1U : 0U));
    CHECK(num(t, "infiniband.bth.padcnt") == h.bth.pad_count);
    CHECK(num(t, "infiniband.bth.destqp") == h.bth.dest_qpn);
    CHECK(num(t, "infiniband.bth.a") == (h.bth.ack_req ? 1U : 0U));
    CHECK(num(t, "infiniband.bth.psn") == h.bth.psn);
    // Wireshark prints the ICRC as a big-endian integer of the wire bytes (PROTOCOL.md 2).
    CHECK(num(t, "infiniband.invariant.crc") == bswap32(p->icrc));
    if (h.reth) {
      CHECK(num(t, "infiniband.reth.va") == h.reth->va);
      CHECK(num(t, "infiniband.reth.r_key") == h.reth->rkey);
      CHECK(num(t, "infiniband.reth.dmalen") == h.reth->dma_length);
    }
    if (h.aeth) {
      CHECK(num(t, "infiniband.aeth.syndrome") == h.aeth->syndrome);
      CHECK(num(t, "infiniband.aeth.msn") == h.aeth->msn);
    }
    if (h.immediate) CHECK(num(t, "infiniband.immdt", 16) == *h.immediate);
    if (h.deth) {
      CHECK(num(t, "infiniband.deth.q_key") == h.deth->qkey);
      CHECK(num(t, "infiniband.deth.srcqp") == h.deth->src_qpn);
      auto mad = decode_cm_mad(p->payload);
      REQUIRE(mad.has_value());
      CHECK(num(t, "infiniband.mad.attributeid") == cm_attribute_id(mad->body));
      CHECK(num(t, "infiniband.mad.transactionid") == mad->header.transaction_id);
      if (const auto* req = std::get_if<CmReq>(&mad->body)) {
        CHECK(num(t, "infiniband.cm.req.serviceid") == req->service_id);
        CHECK(num(t, "infiniband.cm.req.localqpn") == req->local_qpn);
        CHECK(num(t, "infiniband.cm.req.startpsn") == req->starting_psn);
      } else if (const auto* rep = std::get_if<CmRep>(&mad->body)) {
        CHECK(num(t, "infiniband.cm.rep.localqpn") == rep->local_qpn);
        CHECK(num(t, "infiniband.cm.rep.startpsn") == rep->starting_psn);
      } else if (const auto* rej = std::get_if<CmRej>(&mad->body)) {
        CHECK(num(t, "infiniband.cm.rej.reason") == rej->reason);
      }
    }
  }
}

std::string write_pcap(const std::vector<naa::tools::Frame>& frames, const std::string& name,
                       std::vector<std::vector<std::uint8_t>>& raw_frames) {
  const std::string path = temp_path(name);
  PcapWriter w;
  REQUIRE_FALSE(w.open(path));
  for (const auto& f : frames)
    w.write_roce(f.timestamp_ns, f.headers, f.roce);
  w.close();
  REQUIRE(w.write_errors() == 0);
  PcapReader r;
  REQUIRE_FALSE(r.open(path));
  PcapRecord rec;
  while (r.next(rec))
    raw_frames.push_back(rec.data);
  return path;
}

int count_malformed(const std::string& cmd) {
  return static_cast<int>(lines(run(cmd).text).size());
}

}  // namespace

TEST_CASE("tshark decodes every opcode, CM and MRSP frame we build as we do", "[interop][tshark]") {
  std::vector<std::vector<std::uint8_t>> raw;
  const std::string pcap = write_pcap(naa::tools::catalog(), "catalog.pcap", raw);
  REQUIRE(raw.size() >= 32);
  check_agreement(raw, tshark_fields(pcap));
  CHECK(count_malformed(tshark(pcap, "-Y '_ws.malformed || _ws.expert.severity == error'")) == 0);
  // The oracle can fail: with Wireshark's payload heuristics left on, the legal 1-byte SEND and
  // the 4-byte MRSP error are misread as RPC-over-RDMA and flagged malformed.
  CHECK(count_malformed(std::string(NAA_TSHARK) + " -r " + pcap + " -Y _ws.malformed") > 0);
  std::remove(pcap.c_str());
}

TEST_CASE("tshark agrees with our decoder on every frame of the shared vectors",
          "[interop][tshark]") {
  const std::string pcap = naa::testbench::vectors_dir() + "/roce_frames.pcap";
  std::vector<std::vector<std::uint8_t>> raw;
  for (const auto& f : naa::testbench::load_roce_frames())
    raw.push_back(f.bytes);
  check_agreement(raw, tshark_fields(pcap));
}

TEST_CASE("naa-pcap-gen's session decodes in tshark as the expected exchange",
          "[interop][tshark]") {
  const std::string pcap = temp_path("session.pcap");
  REQUIRE(run(std::string(NAA_PCAP_GEN) + " " + pcap).status == 0);
  CHECK(count_malformed(tshark(pcap, "-Y '_ws.malformed || _ws.expert.severity == error'")) == 0);
  const auto out =
      run(tshark(pcap, "-T fields -e infiniband.bth.opcode -e infiniband.mad.attributeid"));
  std::vector<std::string> seq;
  for (const auto& l : lines(out.text))
    seq.push_back(l);
  const std::vector<std::string> expected = {
      "100\t0x0010", "100\t0x0013", "100\t0x0014",          // REQ, REP, RTU
      "4\t",         "17\t",        "4\t",         "17\t",  // MRSP 0x01, ACK, MRSP 0x02, ACK
      "6\t",         "8\t",         "6\t",         "9\t",  "17\t",  // inputs, WRITE_WITH_IMM, ACK
      "6\t",         "9\t",         "17\t",  // result write-back with immediate, ACK
      "100\t0x0015", "100\t0x0016",          // DREQ, DREP
  };
  CHECK(seq == expected);
  std::vector<std::vector<std::uint8_t>> raw;
  PcapReader r;
  REQUIRE_FALSE(r.open(pcap));
  PcapRecord rec;
  while (r.next(rec))
    raw.push_back(rec.data);
  check_agreement(raw, tshark_fields(pcap));
  std::remove(pcap.c_str());
}

TEST_CASE("scapy recomputes the ICRC of every frame we build", "[interop][scapy]") {
  std::vector<std::vector<std::uint8_t>> raw;
  const std::string catalog = write_pcap(naa::tools::catalog(), "scapy_catalog.pcap", raw);
  const std::string session =
      write_pcap(naa::tools::realistic_exchange(), "scapy_session.pcap", raw);
  for (const auto& pcap : {catalog, session}) {
    const Output out = run(std::string(NAA_SCAPY_PYTHON) + " " + NAA_SCAPY_SCRIPT + " " + pcap);
    REQUIRE(out.status == 0);
    const auto verdicts = lines(out.text);
    REQUIRE_FALSE(verdicts.empty());
    for (const auto& v : verdicts) {
      INFO(pcap << ": " << v);
      CHECK(split(v, ' ')[1] == "ok");
    }
    std::remove(pcap.c_str());
  }
}

TEST_CASE("scapy agrees with us on the vectors, including the corrupt frame 11",
          "[interop][scapy]") {
  const Output out = run(std::string(NAA_SCAPY_PYTHON) + " " + NAA_SCAPY_SCRIPT + " " +
                         naa::testbench::vectors_dir() + "/roce_frames.pcap");
  REQUIRE(out.status == 0);
  const auto verdicts = lines(out.text);
  const auto frames = naa::testbench::load_roce_frames();
  REQUIRE(verdicts.size() == frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    INFO(verdicts[i]);
    auto rf = decode_roce_frame(frames[i].bytes);
    REQUIRE(rf.has_value());
    const bool ours = verify_icrc(rf->headers, rf->roce);
    CHECK((split(verdicts[i], ' ')[1] == "ok") == ours);
    CHECK(ours == (frames[i].index != 11));
  }
}

// IRN (docs/protocol.md 8): Wireshark does not know the manufacturer-specific opcodes; our Lua
// dissector (scripts/wireshark/naa_irn.lua) decodes them and the capability block. Every IRN
// opcode and a REQ/REP with the block, built by the protocol library, decode with 0 malformed
// frames and the fields tshark reads are the ones we wrote.
TEST_CASE("tshark with naa_irn.lua decodes IRN frames and the capability block",
          "[interop][tshark][irn]") {
  naa::tools::FrameLog log;
  const std::uint32_t host = 0x7F000003, naa = 0x7F000002;
  CapabilityBlock cap;
  cap.rto_low = 13;
  cap.rto_high = 15;
  CmReq req;
  req.service_id = rdma_cm_service_id(12345);
  req.local_qpn = 0x11;
  req.starting_psn = 0x1000;
  req.path_mtu = 3;
  req.primary_local_ack_timeout = 15;
  RdmaCmIpHeader cma;
  cma.src_ip = host;
  cma.dst_ip = naa;
  REQUIRE(encode_rdma_cm_ip_header(cma, req.private_data));
  REQUIRE(encode_capability_block(cap, std::span(req.private_data).subspan(36)));
  CmMad m;
  m.header.transaction_id = 7;
  m.body = req;
  log.add_cm(host, naa, m, "REQ offering IRN");
  CmRep rep;
  rep.remote_comm_id = req.local_comm_id;
  rep.local_qpn = 0x100;
  rep.starting_psn = 0x2000;
  cap.bdp_cap = 64;
  REQUIRE(encode_capability_block(cap, rep.private_data));
  m.body = rep;
  log.add_cm(naa, host, m, "REP accepting IRN");
  std::vector<std::uint8_t> payload(1024, 0x5A);
  for (std::uint8_t code = opcode::kIrnFirst; code <= opcode::kIrnLast; ++code) {
    const OpcodeInfo* info = find_opcode(code);
    PacketHeaders h;
    h.bth.opcode = code;
    h.bth.dest_qpn = 0x100;
    h.bth.psn = 0x2000U + code;
    h.bth.ack_req = true;
    if (info->has(kHasReth)) h.reth = Reth{0x10000U + code, 0xABCD0001, 1024 + 3};
    if (info->has(kHasAeth)) h.aeth = Aeth{kNakPsnSequenceError, 4};
    if (info->has(kHasSackEth)) h.sack_eth = SackEth{0, 0x2005, 0x5};
    if (info->has(kHasIrnEth)) h.irn_eth = IrnEth{code, 2};
    if (info->has(kHasImmDt)) h.immediate = 0x00000181;
    std::size_t len = info->payload == PayloadRule::full_mtu ? 1024 : 3;
    if (info->payload == PayloadRule::none) len = 0;
    if (info->has(kHasReth) && info->ends_message()) h.reth->dma_length = 3;
    log.add(host, 0x11, naa, h, ByteView(payload).first(len), info->name.data());
  }
  std::vector<std::vector<std::uint8_t>> raw;
  const std::string pcap = write_pcap(log.frames(), "irn.pcap", raw);
  const std::string lua = std::string(" -X lua_script:") + NAA_IRN_LUA + " ";
  CHECK(count_malformed(tshark(pcap, lua + "-Y '_ws.malformed || _ws.expert.severity == error'")) ==
        0);
  const auto out = run(tshark(pcap, lua + "-T fields -E separator=/t -e naa_irn.opcode "
                                          "-e naa_irn.recv_wqe_sn -e naa_irn.reth.va "
                                          "-e naa_irn.sack.psn -e naa_irn.payload_length "
                                          "-e naa_irn.cap.bdp_cap -e naa_irn.cap.irn "
                                          "-e naa_irn.read_wqe_sn"));
  REQUIRE(out.status == 0);
  const auto rows = lines(out.text);
  REQUIRE(rows.size() == 2 + 18);           // the REQ, the REP, IRN opcodes 0xC0-0xD1
  CHECK(split(rows[0], '\t')[5] == "128");  // the REQ's offer
  CHECK(split(rows[1], '\t')[5] == "64");   // the REP's answer
  for (std::size_t i = 2; i < rows.size(); ++i) {
    const auto cols = split(rows[i], '\t');
    const auto code = static_cast<std::uint8_t>(0xC0 + i - 2);
    INFO("opcode " << int(code));
    CHECK(std::stoul(cols[0], nullptr, 16) == code);
    const OpcodeInfo* info = find_opcode(code);
    // READ's IrnETH holds read_WQE_SN (docs/protocol.md 8.5), the others' recv_WQE_SN.
    const bool read =
        info->kind == OpKind::rdma_read_request || info->kind == OpKind::rdma_read_response;
    if (info->has(kHasIrnEth)) CHECK(std::stoul(cols[read ? 7 : 1]) == code);
    if (read) CHECK(cols[1].empty());
    if (info->has(kHasReth)) CHECK(std::stoull(cols[2], nullptr, 16) == 0x10000U + code);
    if (info->has(kHasSackEth)) CHECK(std::stoul(cols[3]) == 0x2005);
    const std::size_t want = info->payload == PayloadRule::none       ? 0
                             : info->payload == PayloadRule::full_mtu ? 1024
                                                                      : 3;
    CHECK(std::stoul(cols[4]) == want);
  }
  // The oracle can fail: an IRN ACK cut short of its SackETH is flagged.
  naa::tools::FrameLog bad;
  PacketHeaders ack;
  ack.bth.opcode = opcode::kAcknowledge;  // encoded as a plain ACK, relabelled below
  ack.aeth = Aeth{kAethAck, 1};
  bad.add(naa, 0x100, host, ack, {}, "short IRN ACK");
  auto frames = bad.frames();
  frames[0].roce[0] = opcode::kIrnAcknowledge;
  std::vector<std::vector<std::uint8_t>> raw_bad;
  const std::string bad_pcap = write_pcap(frames, "irn_bad.pcap", raw_bad);
  CHECK(count_malformed(tshark(bad_pcap, lua + "-Y '_ws.malformed || _ws.expert.severity == "
                                               "error'")) == 1);
  std::remove(pcap.c_str());
  std::remove(bad_pcap.c_str());
}
