// Builds an RDMA WRITE Only with immediate, computes its ICRC and decodes it back: exercises
// headers, the opcode table and the CRC from the installed library. Prints the ICRC.
#include <cstdio>
#include <vector>

#include "naa/protocol/icrc.hpp"
#include "naa/protocol/immediate.hpp"
#include "naa/protocol/packet.hpp"

int main() {
  namespace p = naa::protocol;
  p::PacketHeaders h;
  h.bth.opcode = p::opcode::kWriteOnlyImm;
  h.bth.dest_qpn = 2;
  h.reth = p::Reth{0x1000, 0x4201, 4};
  h.immediate = p::encode_call_immediate(1, 0);
  const std::vector<std::uint8_t> payload = {1, 2, 3, 4};
  std::vector<std::uint8_t> out(p::packet_size(h, payload.size()));
  if (!p::encode_packet(h, payload, out)) return 1;
  const auto ip = p::make_roce_headers(0x7F000003, 0xC000, 0x7F000002, out.size());
  p::write_icrc(ip, out);
  auto d = p::decode_packet(out);
  if (!d || !p::verify_icrc(ip, out)) return 1;
  std::printf("icrc=%08x\n", d->icrc);
  return 0;
}
