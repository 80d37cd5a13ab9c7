// rx_parser port contract, C++ cycle model, lockstep pair and packet-level driver
// (rtl/rx_parser/README.md; RTL rtl/rx_parser/rx_parser.sv). The receive path's structural check
// of a RoCEv2 datagram (BTH .. ICRC, PROTOCOL.md 1): BTH and extension-header extraction per
// opcode, TVer / pad / length / opcode validation, and the drop reason, with the checks and the
// reason codes of naa::protocol::decode_packet (protocol/src/packet.cpp).
//
// Input: a valid/ready stream of W bytes per beat; every beat but the last is full, the last
// carries 0..W bytes (keep a prefix: its byte count is popcount(keep)). Output: one result per
// datagram, one cycle after its last beat is accepted, held until out_ready. in_ready =
// !out_valid || out_ready. One step() is one clock cycle (see add_const.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "naa/rtl/lockstep.hpp"
#include "naa/rtl/stream.hpp"

namespace naa::rtl {

// Why a datagram is dropped: the values of naa::protocol::Error (protocol/include/naa/protocol/
// result.hpp) for the checks of decode_packet, so a receiver counts drops under the same keys
// whichever implementation it runs (testbench/rtl/test_rx_parser.cpp asserts the values).
enum class RxDropReason : std::uint8_t {
  none = 0,             // well-formed: the fields below are valid
  too_short = 1,        // fewer than 16 bytes, or fewer than the opcode's headers + ICRC
  too_long = 2,         // payload on an opcode that carries none
  bad_tver = 3,         // BTH TVer is not 0
  bad_pad = 4,          // pad count > bytes after the headers, payload + pad not a multiple of
                        // 4, non-zero pad bytes, or pad on FIRST/MIDDLE
  unknown_opcode = 5,   // BTH opcode not in the opcode table (PROTOCOL.md 1)
  length_mismatch = 6,  // empty FIRST/MIDDLE, CNP body not 16 bytes
};
[[nodiscard]] std::string_view to_string(RxDropReason r) noexcept;

// Extension headers present (the HeaderBit values of naa/protocol/opcode.hpp).
inline constexpr std::uint16_t kRxHasDeth = 1U << 0;
inline constexpr std::uint16_t kRxHasReth = 1U << 1;
inline constexpr std::uint16_t kRxHasAtomicEth = 1U << 2;
inline constexpr std::uint16_t kRxHasAeth = 1U << 3;
inline constexpr std::uint16_t kRxHasAtomicAckEth = 1U << 4;
inline constexpr std::uint16_t kRxHasImmDt = 1U << 5;
inline constexpr std::uint16_t kRxHasIeth = 1U << 6;
inline constexpr std::uint16_t kRxHasIrnEth = 1U << 7;   // IRN (docs/protocol.md 8), before ImmDt
inline constexpr std::uint16_t kRxHasSackEth = 1U << 8;  // IRN, after the AETH

// The largest datagram the 16-bit length counter measures (a UDP payload is smaller).
inline constexpr std::size_t kRxMaxDatagram = 0xFFFF;

// One datagram's result. Every field but reason and length is meaningful only when reason is
// none, and an extension header's fields only when its bit is in `headers`.
struct RxParsed {
  RxDropReason reason = RxDropReason::none;
  std::uint16_t length = 0;  // bytes of the datagram, BTH through ICRC
  // BTH (PROTOCOL.md 1)
  std::uint8_t opcode = 0;
  bool solicited_event = false;  // SE
  bool mig_req = false;          // M
  std::uint8_t pad_count = 0;    // 2 bits
  std::uint8_t tver = 0;         // 4 bits
  std::uint16_t pkey = 0;
  bool fecn = false;
  bool becn = false;
  std::uint32_t dest_qpn = 0;  // 24 bits
  bool ack_req = false;        // A
  std::uint32_t psn = 0;       // 24 bits
  std::uint16_t headers = 0;   // kRxHas* set, from the opcode
  // Extension headers
  std::uint64_t reth_va = 0;
  std::uint32_t reth_rkey = 0;
  std::uint32_t reth_dma_length = 0;
  std::uint8_t aeth_syndrome = 0;
  std::uint32_t aeth_msn = 0;   // 24 bits
  std::uint32_t immediate = 0;  // ImmDt (kRxHasImmDt) or IETH's R_Key (kRxHasIeth), big-endian
  std::uint64_t atomic_va = 0;
  std::uint32_t atomic_rkey = 0;
  std::uint64_t atomic_swap_add = 0;
  std::uint64_t atomic_compare = 0;
  std::uint64_t atomic_ack_original = 0;  // AtomicAckETH
  std::uint32_t deth_qkey = 0;
  std::uint32_t deth_src_qpn = 0;  // 24 bits
  // IRN (docs/protocol.md 8): IrnETH and SackETH (naa/protocol/headers.hpp), big-endian
  std::uint32_t irn_recv_wqe_sn = 0;
  std::uint32_t irn_packet_offset = 0;  // in packets
  std::uint8_t sack_reserved = 0;
  std::uint32_t sack_psn = 0;  // 24 bits
  std::uint32_t sack_bitmap = 0;
  // Where the payload is: offset = BTH + extension headers; length without pad.
  std::uint16_t payload_offset = 0;
  std::uint16_t payload_length = 0;

  friend bool operator==(const RxParsed&, const RxParsed&) = default;
};

struct RxParserInputs {
  bool rst_n = true;
  bool in_valid = false;
  StreamBeat in;
  bool out_ready = false;
};

struct RxParserOutputs {
  bool in_ready = false;
  bool out_valid = false;
  RxParsed out;  // don't-care while !out_valid
};

// The interface the model, the Verilated RTL adapter and the lockstep pair implement.
// Concurrency: as every block (crc32.hpp).
class RxParserPort {
 public:
  using Inputs = RxParserInputs;
  using Outputs = RxParserOutputs;
  static constexpr std::string_view kBlock = "rx_parser";

  virtual ~RxParserPort() = default;
  [[nodiscard]] virtual std::uint32_t width() const noexcept = 0;
  virtual RxParserOutputs step(const RxParserInputs& in) = 0;
};

class RxParserModel final : public RxParserPort {
 public:
  // width: 1..kMaxStreamBytes, else std::invalid_argument.
  explicit RxParserModel(std::uint32_t width);
  [[nodiscard]] std::uint32_t width() const noexcept override { return width_; }
  RxParserOutputs step(const RxParserInputs& in) override;

  // The result for a whole datagram (what the port shows after its last beat).
  [[nodiscard]] static RxParsed parse(std::span<const std::uint8_t> datagram) noexcept;

 private:
  std::uint32_t width_;
  bool result_valid_ = false;
  RxParsed result_;
  std::vector<std::uint8_t> bytes_;  // the current datagram so far
};

// First differing port: out_valid; then reason and length; when reason is none the BTH fields,
// headers, payload offset and length, and the fields of each present extension header.
[[nodiscard]] std::optional<PortMismatch> first_mismatch(const RxParserPort& shape,
                                                         const RxParserOutputs& expected,
                                                         const RxParserOutputs& actual);

class RxParserLockstep final : public RxParserPort {
 public:
  RxParserLockstep(std::unique_ptr<RxParserPort> model, std::unique_ptr<RxParserPort> rtl,
                   LockstepChecker::Handler on_divergence = {});
  [[nodiscard]] std::uint32_t width() const noexcept override { return width_; }
  RxParserOutputs step(const RxParserInputs& in) override { return pair_.step(in); }
  [[nodiscard]] const LockstepChecker& checker() const noexcept { return pair_.checker(); }

 private:
  LockstepPair<RxParserPort> pair_;
  std::uint32_t width_;
};

// ---- Packet-level driver: what naa-sim's receive path calls ----

struct RxParserStats {
  std::uint64_t packets = 0;      // datagrams parsed
  std::uint64_t cycles = 0;       // clock cycles stepped (reset included)
  std::uint64_t drops = 0;        // results with reason != none
  std::uint64_t divergences = 0;  // 1 once a lockstep port has diverged, else 0
};

struct RxParseResult {
  RxParsed parsed;
  std::uint64_t cycles = 0;  // for this datagram: ceil(length / W) beats (1 if empty) + 1
};

// Streams whole datagrams through a port (model, RTL or lockstep), one at a time: W bytes per
// beat, output always ready, then waits for the result. Construction steps one reset cycle.
class RxParser {
 public:
  // Throws std::invalid_argument for a null port.
  explicit RxParser(std::unique_ptr<RxParserPort> port);

  // Throws std::invalid_argument for a datagram longer than kRxMaxDatagram, std::runtime_error if
  // the port gives no result within length / W + 16 cycles (a broken block).
  RxParseResult parse(std::span<const std::uint8_t> datagram);

  [[nodiscard]] const RxParserStats& stats() const noexcept { return stats_; }
  [[nodiscard]] RxParserPort& port() noexcept { return *port_; }
  [[nodiscard]] std::uint32_t width() const noexcept { return port_->width(); }
  // The first divergence of a lockstep port (nullptr otherwise, or none yet).
  [[nodiscard]] const Divergence* divergence() const noexcept;

 private:
  RxParserOutputs step(const RxParserInputs& in);
  std::unique_ptr<RxParserPort> port_;
  const RxParserLockstep* lockstep_ = nullptr;
  RxParserStats stats_;
};

namespace rx_parser {
// The C++ model behind the packet-level driver (library naa::rtl_models). make_rtl() and
// make_lockstep() are in naa/rtl/rx_parser_rtl.hpp (library naa::rtl_rx_parser).
[[nodiscard]] std::unique_ptr<RxParser> make_model(std::uint32_t width);
}  // namespace rx_parser

}  // namespace naa::rtl
