// The golden model of rtl/rx_parser/rx_parser.sv: it collects the datagram's bytes and parses
// them in one go, top to bottom like protocol::decode_packet (the RTL captures the first 40 bytes
// and the last 8 by beat position and decides from registers), so the two are independent
// implementations; the testbench compares both with naa::protocol::decode_packet.
#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "compare.hpp"
#include "naa/rtl/datagram_driver.hpp"
#include "naa/rtl/rx_parser.hpp"

namespace naa::rtl {

std::string_view to_string(RxDropReason r) noexcept {
  switch (r) {
    case RxDropReason::none:
      return "none";
    case RxDropReason::too_short:
      return "too_short";
    case RxDropReason::too_long:
      return "too_long";
    case RxDropReason::bad_tver:
      return "bad_tver";
    case RxDropReason::bad_pad:
      return "bad_pad";
    case RxDropReason::unknown_opcode:
      return "unknown_opcode";
    case RxDropReason::length_mismatch:
      return "length_mismatch";
  }
  return "invalid";
}

namespace {

enum class Payload : std::uint8_t { none, full_mtu, up_to_mtu, reserved16 };

struct Opcode {
  bool known = false;
  std::uint16_t headers = 0;
  Payload payload = Payload::none;
};

// PROTOCOL.md 1 (IBTA vol. 1 table 35): the extension headers and payload rule of each opcode.
Opcode opcode_info(std::uint8_t code) noexcept {
  constexpr std::uint16_t kImm = kRxHasImmDt;
  constexpr std::uint16_t kIrn = kRxHasIrnEth;
  switch (code) {
    case 0x00:  // SEND First
    case 0x01:  // SEND Middle
    case 0x07:  // RDMA WRITE Middle
    case 0x0E:  // READ Response Middle
      return {true, 0, Payload::full_mtu};
    case 0x02:  // SEND Last
    case 0x04:  // SEND Only
    case 0x08:  // RDMA WRITE Last
      return {true, 0, Payload::up_to_mtu};
    case 0x03:  // SEND Last with Immediate
    case 0x05:  // SEND Only with Immediate
    case 0x09:  // RDMA WRITE Last with Immediate
      return {true, kImm, Payload::up_to_mtu};
    case 0x06:  // RDMA WRITE First
      return {true, kRxHasReth, Payload::full_mtu};
    case 0x0A:  // RDMA WRITE Only
      return {true, kRxHasReth, Payload::up_to_mtu};
    case 0x0B:  // RDMA WRITE Only with Immediate
      return {true, kRxHasReth | kImm, Payload::up_to_mtu};
    case 0x0C:  // RDMA READ Request
      return {true, kRxHasReth, Payload::none};
    case 0x0D:  // READ Response First
      return {true, kRxHasAeth, Payload::full_mtu};
    case 0x0F:  // READ Response Last
    case 0x10:  // READ Response Only
      return {true, kRxHasAeth, Payload::up_to_mtu};
    case 0x11:  // Acknowledge
      return {true, kRxHasAeth, Payload::none};
    case 0x12:  // ATOMIC Acknowledge
      return {true, kRxHasAeth | kRxHasAtomicAckEth, Payload::none};
    case 0x13:  // CmpSwap
    case 0x14:  // FetchAdd
      return {true, kRxHasAtomicEth, Payload::none};
    case 0x16:  // SEND Last with Invalidate
    case 0x17:  // SEND Only with Invalidate
      return {true, kRxHasIeth, Payload::up_to_mtu};
    case 0x64:  // UD SEND Only
      return {true, kRxHasDeth, Payload::up_to_mtu};
    case 0x65:  // UD SEND Only with Immediate
      return {true, kRxHasDeth | kImm, Payload::up_to_mtu};
    case 0x81:  // CNP (RoCEv2)
      return {true, 0, Payload::reserved16};
    // IRN (docs/protocol.md 8): IrnETH on every SEND packet and on the last WRITE-with-immediate
    // packet, RETH on every WRITE packet, SackETH on the ACK.
    case 0xC0:  // IRN SEND First
    case 0xC1:  // IRN SEND Middle
      return {true, kIrn, Payload::full_mtu};
    case 0xC2:  // IRN SEND Last
    case 0xC4:  // IRN SEND Only
      return {true, kIrn, Payload::up_to_mtu};
    case 0xC3:  // IRN SEND Last with Immediate
    case 0xC5:  // IRN SEND Only with Immediate
      return {true, kIrn | kImm, Payload::up_to_mtu};
    case 0xC6:  // IRN RDMA WRITE First
    case 0xC7:  // IRN RDMA WRITE Middle
      return {true, kRxHasReth, Payload::full_mtu};
    case 0xC8:  // IRN RDMA WRITE Last
    case 0xCA:  // IRN RDMA WRITE Only
      return {true, kRxHasReth, Payload::up_to_mtu};
    case 0xC9:  // IRN RDMA WRITE Last with Immediate
    case 0xCB:  // IRN RDMA WRITE Only with Immediate
      return {true, kRxHasReth | kIrn | kImm, Payload::up_to_mtu};
    case 0xCC:  // IRN Acknowledge
      return {true, kRxHasAeth | kRxHasSackEth, Payload::none};
    // IRN READ (docs/protocol.md 8.5): RETH and IrnETH (read_WQE_SN) on the request, IrnETH on
    // every response packet.
    case 0xCD:  // IRN RDMA READ Request
      return {true, kRxHasReth | kIrn, Payload::none};
    case 0xCE:  // IRN RDMA READ Response First
    case 0xCF:  // IRN RDMA READ Response Middle
      return {true, kIrn, Payload::full_mtu};
    case 0xD0:  // IRN RDMA READ Response Last
    case 0xD1:  // IRN RDMA READ Response Only
      return {true, kIrn, Payload::up_to_mtu};
    default:
      return {};
  }
}

// Big-endian field of n bytes at p.
std::uint64_t be(const std::uint8_t* p, int n) noexcept {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i)
    v = (v << 8) | p[i];
  return v;
}

}  // namespace

RxParsed RxParserModel::parse(std::span<const std::uint8_t> d) noexcept {
  RxParsed r;
  r.length = static_cast<std::uint16_t>(d.size());
  if (d.size() < 12 + 4) {
    r.reason = RxDropReason::too_short;
    return r;
  }
  const std::uint8_t* p = d.data();
  r.opcode = p[0];
  r.solicited_event = (p[1] & 0x80U) != 0;
  r.mig_req = (p[1] & 0x40U) != 0;
  r.pad_count = static_cast<std::uint8_t>((p[1] >> 4) & 3U);
  r.tver = static_cast<std::uint8_t>(p[1] & 0xFU);
  r.pkey = static_cast<std::uint16_t>(be(p + 2, 2));
  r.fecn = (p[4] & 0x80U) != 0;
  r.becn = (p[4] & 0x40U) != 0;
  r.dest_qpn = static_cast<std::uint32_t>(be(p + 5, 3));
  r.ack_req = (p[8] & 0x80U) != 0;
  r.psn = static_cast<std::uint32_t>(be(p + 9, 3));
  if (r.tver != 0) {
    r.reason = RxDropReason::bad_tver;
    return r;
  }
  const Opcode op = opcode_info(r.opcode);
  if (!op.known) {
    r.reason = RxDropReason::unknown_opcode;
    return r;
  }
  r.headers = op.headers;
  // Wire order (PROTOCOL.md 1, docs/protocol.md 8):
  // [DETH] [RETH | AtomicETH | AETH] [AtomicAckETH | SackETH] [IrnETH] [ImmDt | IETH].
  std::size_t off = 12;
  const auto has = [&op](std::uint16_t bit) { return (op.headers & bit) != 0; };
  std::size_t need = off;
  need += has(kRxHasDeth) ? 8U : 0U;
  need += has(kRxHasReth) ? 16U : 0U;
  need += has(kRxHasAtomicEth) ? 28U : 0U;
  need += has(kRxHasAeth) ? 4U : 0U;
  need += has(kRxHasAtomicAckEth) ? 8U : 0U;
  need += has(kRxHasSackEth) ? 8U : 0U;
  need += has(kRxHasIrnEth) ? 8U : 0U;
  need += has(kRxHasImmDt) || has(kRxHasIeth) ? 4U : 0U;
  r.payload_offset = static_cast<std::uint16_t>(need);
  if (d.size() < need + 4) {
    r.reason = RxDropReason::too_short;
    return r;
  }
  if (has(kRxHasDeth)) {
    r.deth_qkey = static_cast<std::uint32_t>(be(p + off, 4));
    r.deth_src_qpn = static_cast<std::uint32_t>(be(p + off + 5, 3));
    off += 8;
  }
  if (has(kRxHasReth)) {
    r.reth_va = be(p + off, 8);
    r.reth_rkey = static_cast<std::uint32_t>(be(p + off + 8, 4));
    r.reth_dma_length = static_cast<std::uint32_t>(be(p + off + 12, 4));
    off += 16;
  }
  if (has(kRxHasAtomicEth)) {
    r.atomic_va = be(p + off, 8);
    r.atomic_rkey = static_cast<std::uint32_t>(be(p + off + 8, 4));
    r.atomic_swap_add = be(p + off + 12, 8);
    r.atomic_compare = be(p + off + 20, 8);
    off += 28;
  }
  if (has(kRxHasAeth)) {
    r.aeth_syndrome = p[off];
    r.aeth_msn = static_cast<std::uint32_t>(be(p + off + 1, 3));
    off += 4;
  }
  if (has(kRxHasAtomicAckEth)) {
    r.atomic_ack_original = be(p + off, 8);
    off += 8;
  }
  if (has(kRxHasSackEth)) {
    r.sack_reserved = p[off];
    r.sack_psn = static_cast<std::uint32_t>(be(p + off + 1, 3));
    r.sack_bitmap = static_cast<std::uint32_t>(be(p + off + 4, 4));
    off += 8;
  }
  if (has(kRxHasIrnEth)) {
    r.irn_recv_wqe_sn = static_cast<std::uint32_t>(be(p + off, 4));
    r.irn_packet_offset = static_cast<std::uint32_t>(be(p + off + 4, 4));
    off += 8;
  }
  if (has(kRxHasImmDt) || has(kRxHasIeth)) {
    r.immediate = static_cast<std::uint32_t>(be(p + off, 4));
    off += 4;
  }

  // PROTOCOL.md 1: pad = (-payload) & 3, zero bytes; headers are multiples of 4, so payload + pad
  // (the body) is too.
  const std::size_t body = d.size() - off - 4;
  const std::size_t pad = r.pad_count;
  if (pad > body || body % 4 != 0) {
    r.reason = RxDropReason::bad_pad;
    return r;
  }
  const std::size_t payload = body - pad;
  for (std::size_t i = 0; i < pad; ++i) {
    if (p[off + payload + i] != 0) {
      r.reason = RxDropReason::bad_pad;
      return r;
    }
  }
  r.payload_length = static_cast<std::uint16_t>(payload);
  switch (op.payload) {
    case Payload::none:
      if (body != 0) r.reason = RxDropReason::too_long;
      break;
    case Payload::full_mtu:
      if (pad != 0) {
        r.reason = RxDropReason::bad_pad;
      } else if (payload == 0) {
        r.reason = RxDropReason::length_mismatch;
      }
      break;
    case Payload::up_to_mtu:
      break;
    case Payload::reserved16:
      if (body != 16) r.reason = RxDropReason::length_mismatch;
      break;
  }
  return r;
}

RxParserModel::RxParserModel(std::uint32_t width) : width_(width) {
  if (!is_supported_width(width)) {
    throw std::invalid_argument("rx_parser: width " + std::to_string(width) + " is not in 1..64");
  }
}

RxParserOutputs RxParserModel::step(const RxParserInputs& in) {
  if (!in.rst_n) {
    result_valid_ = false;
    bytes_.clear();
  }
  RxParserOutputs o{!result_valid_ || in.out_ready, result_valid_, result_};
  if (!in.rst_n) return o;
  if (result_valid_ && in.out_ready) result_valid_ = false;
  if (in.in_valid && o.in_ready) {
    // Every beat but the last is full by contract; the last carries popcount(keep) bytes.
    const auto n = static_cast<std::uint32_t>(std::popcount(in.in.keep & keep_mask(width_)));
    bytes_.insert(bytes_.end(), in.in.data.begin(), in.in.data.begin() + n);
    if (in.in.last) {
      result_ = parse(bytes_);
      result_valid_ = true;
      bytes_.clear();
    }
  }
  return o;
}

namespace {

template <class T>
std::optional<PortMismatch> compare(std::string_view port, T expected, T actual) {
  if (expected == actual) return std::nullopt;
  return PortMismatch{std::string(port), std::to_string(static_cast<std::uint64_t>(expected)),
                      std::to_string(static_cast<std::uint64_t>(actual))};
}

// The first differing field of two results (reason first; the rest only when well-formed).
std::optional<PortMismatch> compare_parsed(const RxParsed& e, const RxParsed& a) {
  if (e.reason != a.reason) {
    return PortMismatch{"out_reason", std::string(to_string(e.reason)),
                        std::string(to_string(a.reason))};
  }
  std::optional<PortMismatch> m;
  const auto check = [&m](std::string_view port, auto expected, auto actual) {
    if (!m) m = compare(port, expected, actual);
  };
  check("out_length", e.length, a.length);
  if (e.reason != RxDropReason::none) return m;
  check("out_opcode", e.opcode, a.opcode);
  check("out_se", e.solicited_event, a.solicited_event);
  check("out_mig_req", e.mig_req, a.mig_req);
  check("out_pad", e.pad_count, a.pad_count);
  check("out_tver", e.tver, a.tver);
  check("out_pkey", e.pkey, a.pkey);
  check("out_fecn", e.fecn, a.fecn);
  check("out_becn", e.becn, a.becn);
  check("out_dest_qpn", e.dest_qpn, a.dest_qpn);
  check("out_ack_req", e.ack_req, a.ack_req);
  check("out_psn", e.psn, a.psn);
  check("out_headers", e.headers, a.headers);
  check("out_payload_offset", e.payload_offset, a.payload_offset);
  check("out_payload_length", e.payload_length, a.payload_length);
  const auto has = [&e](std::uint16_t bit) { return (e.headers & bit) != 0; };
  if (has(kRxHasReth)) {
    check("out_reth_va", e.reth_va, a.reth_va);
    check("out_reth_rkey", e.reth_rkey, a.reth_rkey);
    check("out_reth_dma_length", e.reth_dma_length, a.reth_dma_length);
  }
  if (has(kRxHasAeth)) {
    check("out_aeth_syndrome", e.aeth_syndrome, a.aeth_syndrome);
    check("out_aeth_msn", e.aeth_msn, a.aeth_msn);
  }
  if (has(kRxHasImmDt) || has(kRxHasIeth)) check("out_immediate", e.immediate, a.immediate);
  if (has(kRxHasAtomicEth)) {
    check("out_atomic_va", e.atomic_va, a.atomic_va);
    check("out_atomic_rkey", e.atomic_rkey, a.atomic_rkey);
    check("out_atomic_swap_add", e.atomic_swap_add, a.atomic_swap_add);
    check("out_atomic_compare", e.atomic_compare, a.atomic_compare);
  }
  if (has(kRxHasAtomicAckEth)) {
    check("out_atomic_ack_original", e.atomic_ack_original, a.atomic_ack_original);
  }
  if (has(kRxHasDeth)) {
    check("out_deth_qkey", e.deth_qkey, a.deth_qkey);
    check("out_deth_src_qpn", e.deth_src_qpn, a.deth_src_qpn);
  }
  if (has(kRxHasIrnEth)) {
    check("out_irn_recv_wqe_sn", e.irn_recv_wqe_sn, a.irn_recv_wqe_sn);
    check("out_irn_packet_offset", e.irn_packet_offset, a.irn_packet_offset);
  }
  if (has(kRxHasSackEth)) {
    check("out_sack_reserved", e.sack_reserved, a.sack_reserved);
    check("out_sack_psn", e.sack_psn, a.sack_psn);
    check("out_sack_bitmap", e.sack_bitmap, a.sack_bitmap);
  }
  return m;
}

}  // namespace

std::optional<PortMismatch> first_mismatch(const RxParserPort& /*shape*/,
                                           const RxParserOutputs& expected,
                                           const RxParserOutputs& actual) {
  if (auto m = detail::compare_bool("in_ready", expected.in_ready, actual.in_ready)) return m;
  if (auto m = detail::compare_bool("out_valid", expected.out_valid, actual.out_valid)) return m;
  if (!expected.out_valid) return std::nullopt;
  return compare_parsed(expected.out, actual.out);
}

RxParserLockstep::RxParserLockstep(std::unique_ptr<RxParserPort> model,
                                   std::unique_ptr<RxParserPort> rtl,
                                   LockstepChecker::Handler on_divergence)
    : pair_(std::move(model), std::move(rtl), std::move(on_divergence)),
      width_(pair_.model().width()) {
  if (pair_.rtl().width() != width_) {
    throw std::invalid_argument("rx_parser lockstep: widths differ");
  }
}

RxParser::RxParser(std::unique_ptr<RxParserPort> port) : port_(std::move(port)) {
  if (!port_) throw std::invalid_argument("rx_parser: no port");
  lockstep_ = dynamic_cast<const RxParserLockstep*>(port_.get());
  RxParserInputs reset;
  reset.rst_n = false;
  (void)step(reset);
}

RxParserOutputs RxParser::step(const RxParserInputs& in) {
  ++stats_.cycles;
  return port_->step(in);
}

const Divergence* RxParser::divergence() const noexcept {
  if (lockstep_ == nullptr || !lockstep_->checker().diverged()) return nullptr;
  return &*lockstep_->checker().divergence();
}

RxParseResult RxParser::parse(std::span<const std::uint8_t> datagram) {
  if (datagram.size() > kRxMaxDatagram) {
    throw std::invalid_argument("rx_parser: datagram of " + std::to_string(datagram.size()) +
                                " bytes is longer than the block measures");
  }
  const auto drive = drive_datagram(RxParserPort::kBlock, width(), RxParserInputs{}, datagram,
                                    [this](const RxParserInputs& in) { return step(in); });
  RxParseResult r;
  r.parsed = drive.out;
  r.cycles = drive.cycles;
  ++stats_.packets;
  if (r.parsed.reason != RxDropReason::none) ++stats_.drops;
  stats_.divergences = divergence() != nullptr ? 1 : 0;
  return r;
}

namespace rx_parser {

std::unique_ptr<RxParser> make_model(std::uint32_t width) {
  return std::make_unique<RxParser>(std::make_unique<RxParserModel>(width));
}

}  // namespace rx_parser

}  // namespace naa::rtl
