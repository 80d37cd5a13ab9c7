// Whole-packet encode and decode (packet.cpp: the headers' fields read and written once per
// packet, issue 31) against a reference written here from the header layouts of IBTA vol. 1
// 9.2-9.3 and docs/protocol.md "IRN", byte by byte: random field values (reserved bits
// included) for every opcode, replayed from NAA_TEST_SEED.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "naa/protocol/opcode.hpp"
#include "naa/protocol/packet.hpp"
#include "seed.hpp"

using namespace naa::protocol;

namespace {

// Appends v as `bytes` big-endian bytes.
void put_be(std::vector<std::uint8_t>& out, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i)
    out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// The datagram the headers and payload make, with the ICRC field zero.
std::vector<std::uint8_t> reference_encode(const PacketHeaders& h,
                                           const std::vector<std::uint8_t>& payload) {
  std::vector<std::uint8_t> out;
  const Bth& b = h.bth;
  const unsigned pad = (4U - payload.size() % 4U) % 4U;
  out.push_back(b.opcode);
  out.push_back(static_cast<std::uint8_t>((b.solicited_event ? 0x80 : 0) | (b.mig_req ? 0x40 : 0) |
                                          (pad << 4) | b.tver));
  put_be(out, b.pkey, 2);
  out.push_back(static_cast<std::uint8_t>((b.fecn ? 0x80 : 0) | (b.becn ? 0x40 : 0) | b.reserved6));
  put_be(out, b.dest_qpn, 3);
  out.push_back(static_cast<std::uint8_t>((b.ack_req ? 0x80 : 0) | b.reserved7));
  put_be(out, b.psn, 3);
  if (h.deth) {  // Q_Key, reserved, source QP
    put_be(out, h.deth->qkey, 4);
    put_be(out, h.deth->reserved, 1);
    put_be(out, h.deth->src_qpn, 3);
  }
  if (h.reth) {  // VA, R_Key, DMA length
    put_be(out, h.reth->va, 8);
    put_be(out, h.reth->rkey, 4);
    put_be(out, h.reth->dma_length, 4);
  }
  if (h.atomic_eth) {  // VA, R_Key, swap or add, compare
    put_be(out, h.atomic_eth->va, 8);
    put_be(out, h.atomic_eth->rkey, 4);
    put_be(out, h.atomic_eth->swap_add, 8);
    put_be(out, h.atomic_eth->compare, 8);
  }
  if (h.aeth) {  // syndrome, MSN
    put_be(out, h.aeth->syndrome, 1);
    put_be(out, h.aeth->msn, 3);
  }
  if (h.atomic_ack_eth) put_be(out, h.atomic_ack_eth->original_data, 8);
  if (h.sack_eth) {  // reserved, SACK PSN, bitmap
    put_be(out, h.sack_eth->reserved, 1);
    put_be(out, h.sack_eth->sack_psn, 3);
    put_be(out, h.sack_eth->bitmap, 4);
  }
  if (h.irn_eth) {  // recv_WQE_SN, packet offset
    put_be(out, h.irn_eth->recv_wqe_sn, 4);
    put_be(out, h.irn_eth->packet_offset, 4);
  }
  if (h.immediate) put_be(out, *h.immediate, 4);
  if (h.ieth_rkey) put_be(out, *h.ieth_rkey, 4);
  out.insert(out.end(), payload.begin(), payload.end());
  out.insert(out.end(), pad + 4, 0);  // pad, ICRC
  return out;
}

}  // namespace

TEST_CASE("packet encode and decode equal a byte-by-byte reference on random headers", "[packet]") {
  const auto seed = naa::testbench::seed_for("packet reference");
  INFO("seed " << seed << " (NAA_TEST_SEED=" << naa::testbench::test_seed() << ")");
  std::mt19937_64 rng(seed);
  auto bits = [&](int n) { return rng() & ((std::uint64_t{1} << n) - 1); };
  std::vector<std::uint8_t> out(5000);
  for (int round = 0; round < 40; ++round) {
    for (unsigned c = 0; c < 256; ++c) {
      const OpcodeInfo* info = find_opcode(static_cast<std::uint8_t>(c));
      if (info == nullptr) continue;
      PacketHeaders h;
      h.bth.opcode = info->code;
      h.bth.solicited_event = bits(1) != 0;
      h.bth.mig_req = bits(1) != 0;
      h.bth.pkey = static_cast<std::uint16_t>(bits(16));
      h.bth.fecn = bits(1) != 0;
      h.bth.becn = bits(1) != 0;
      h.bth.reserved6 = static_cast<std::uint8_t>(bits(6));
      h.bth.dest_qpn = static_cast<std::uint32_t>(bits(24));
      h.bth.ack_req = bits(1) != 0;
      h.bth.reserved7 = static_cast<std::uint8_t>(bits(7));
      h.bth.psn = static_cast<std::uint32_t>(bits(24));
      auto u32 = [&] { return static_cast<std::uint32_t>(rng()); };
      if (info->has(kHasDeth)) {
        h.deth =
            Deth{u32(), static_cast<std::uint8_t>(bits(8)), static_cast<std::uint32_t>(bits(24))};
      }
      if (info->has(kHasReth)) h.reth = Reth{rng(), u32(), u32()};
      if (info->has(kHasAtomicEth)) h.atomic_eth = AtomicEth{rng(), u32(), rng(), rng()};
      if (info->has(kHasAeth)) {
        h.aeth = Aeth{static_cast<std::uint8_t>(bits(8)), static_cast<std::uint32_t>(bits(24))};
      }
      if (info->has(kHasAtomicAckEth)) h.atomic_ack_eth = AtomicAckEth{rng()};
      if (info->has(kHasImmDt)) h.immediate = u32();
      if (info->has(kHasIeth)) h.ieth_rkey = u32();
      if (info->has(kHasIrnEth)) h.irn_eth = IrnEth{u32(), u32()};
      if (info->has(kHasSackEth)) {
        h.sack_eth = SackEth{static_cast<std::uint8_t>(bits(8)),
                             static_cast<std::uint32_t>(bits(24)), u32()};
      }
      std::size_t len = 0;
      switch (info->payload) {
        case PayloadRule::none:
          break;
        case PayloadRule::full_mtu:
          len = 256U << bits(2);
          break;
        case PayloadRule::up_to_mtu:
          len = rng() % 300;
          break;
        case PayloadRule::reserved16:
          len = 16;
          break;
      }
      std::vector<std::uint8_t> payload(len);
      for (auto& b : payload)
        b = static_cast<std::uint8_t>(rng());
      INFO("opcode " << c << " payload " << len);

      const auto want = reference_encode(h, payload);
      std::fill(out.begin(), out.end(), 0xEE);  // so a byte left unwritten shows
      const auto n = encode_packet(h, payload, out);
      REQUIRE(n.has_value());
      REQUIRE(*n == want.size());
      REQUIRE(packet_size(h, len) == want.size());
      CHECK(std::vector<std::uint8_t>(out.begin(), out.begin() + static_cast<long>(*n)) == want);

      // Decode the reference bytes, with a nonzero ICRC field, into a view used before.
      auto wire = want;
      wire[wire.size() - 4] = 0x78;
      wire[wire.size() - 1] = 0x12;
      PacketView v;
      v.headers.deth = Deth{1, 2, 3};  // stale headers of another packet are cleared
      v.headers.aeth = Aeth{1, 2};
      v.headers.immediate = 7;
      REQUIRE_FALSE(decode_packet_into(wire, v).has_value());
      PacketHeaders expected = h;
      expected.bth.pad_count = static_cast<std::uint8_t>((4U - len % 4U) % 4U);
      CHECK(v.headers == expected);
      CHECK(v.info == info);
      CHECK(v.header_size == header_size(h));
      CHECK(v.payload.data() == wire.data() + v.header_size);
      CHECK(std::vector<std::uint8_t>(v.payload.begin(), v.payload.end()) == payload);
      CHECK(v.icrc == 0x12000078U);
    }
  }
}
