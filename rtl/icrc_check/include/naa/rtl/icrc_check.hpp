// icrc_check port contract, C++ cycle model, lockstep pair and packet-level driver
// (rtl/icrc_check/README.md; RTL rtl/icrc_check/icrc_check.sv). The RoCEv2 ICRC of a received
// datagram (PROTOCOL.md 2): zlib CRC-32 over 8 bytes of 0xFF, the IPv4 and UDP headers with TOS,
// TTL, the checksums and BTH byte 4 masked to ones, and BTH .. pad; compared with the datagram's
// last 4 bytes (least-significant byte first).
//
// Input: the datagram (BTH .. ICRC) as a valid/ready stream of W bytes per beat, every beat but
// the last full, the last carrying popcount(keep) bytes; with it the 28 bytes of IPv4 + UDP header
// the datagram travelled under (the caller recovers the IPv4 ID: protocol::recover_ipv4_id),
// sampled with the first beat. Output: one result per datagram, two cycles after its last beat is
// accepted (latency 2: the RTL folds the beats, then unfolds the padding and the ICRC word in a
// result stage, docs/rtl/synthesis.md), held until out_ready. A finished datagram waits for the
// result register: in_ready = !pending || !out_valid || out_ready. One step() is one cycle.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "naa/rtl/lockstep.hpp"
#include "naa/rtl/stream.hpp"

namespace naa::rtl {

// The IPv4 header (20 bytes) then the UDP header (8 bytes), as on the wire.
inline constexpr std::size_t kIpUdpHeaderBytes = 28;
using IpUdpHeaderBytes = std::array<std::uint8_t, kIpUdpHeaderBytes>;

struct IcrcResult {
  bool ok = false;              // !short_datagram && icrc == received
  bool short_datagram = false;  // fewer than 16 bytes (no BTH + ICRC): icrc, received don't-care
  std::uint32_t icrc = 0;       // computed over the masked pseudo-header and BTH .. pad
  std::uint32_t received = 0;   // the datagram's last 4 bytes, little-endian
  friend bool operator==(const IcrcResult&, const IcrcResult&) = default;
};

struct IcrcCheckInputs {
  bool rst_n = true;
  bool in_valid = false;
  StreamBeat in;
  IpUdpHeaderBytes ip_udp{};  // sampled with the first beat of a datagram
  bool out_ready = false;
};

struct IcrcCheckOutputs {
  bool in_ready = false;
  bool out_valid = false;
  IcrcResult out;  // don't-care while !out_valid
};

// The interface the model, the Verilated RTL adapter and the lockstep pair implement.
// Concurrency: as every block (crc32.hpp).
class IcrcCheckPort {
 public:
  using Inputs = IcrcCheckInputs;
  using Outputs = IcrcCheckOutputs;
  static constexpr std::string_view kBlock = "icrc_check";

  virtual ~IcrcCheckPort() = default;
  [[nodiscard]] virtual std::uint32_t width() const noexcept = 0;
  virtual IcrcCheckOutputs step(const IcrcCheckInputs& in) = 0;
};

class IcrcCheckModel final : public IcrcCheckPort {
 public:
  // width: a power of two in 1..kMaxStreamBytes, else std::invalid_argument.
  explicit IcrcCheckModel(std::uint32_t width);
  [[nodiscard]] std::uint32_t width() const noexcept override { return width_; }
  IcrcCheckOutputs step(const IcrcCheckInputs& in) override;

  // The result for a whole datagram (what the port shows after its last beat).
  [[nodiscard]] static IcrcResult check(const IpUdpHeaderBytes& ip_udp,
                                        std::span<const std::uint8_t> datagram) noexcept;

 private:
  std::uint32_t width_;
  bool result_valid_ = false;
  IcrcResult result_;
  std::optional<IcrcResult> pending_;  // finished, waiting for the result register
  IpUdpHeaderBytes ip_udp_{};
  std::vector<std::uint8_t> bytes_;  // the current datagram so far
};

// First differing port: in_ready, out_valid; then short; unless short: icrc, received, ok.
[[nodiscard]] std::optional<PortMismatch> first_mismatch(const IcrcCheckPort& shape,
                                                         const IcrcCheckOutputs& expected,
                                                         const IcrcCheckOutputs& actual);

class IcrcCheckLockstep final : public IcrcCheckPort {
 public:
  IcrcCheckLockstep(std::unique_ptr<IcrcCheckPort> model, std::unique_ptr<IcrcCheckPort> rtl,
                    LockstepChecker::Handler on_divergence = {});
  [[nodiscard]] std::uint32_t width() const noexcept override { return width_; }
  IcrcCheckOutputs step(const IcrcCheckInputs& in) override { return pair_.step(in); }
  [[nodiscard]] const LockstepChecker& checker() const noexcept { return pair_.checker(); }

 private:
  LockstepPair<IcrcCheckPort> pair_;
  std::uint32_t width_;
};

// ---- Packet-level driver: what naa-sim's receive path calls ----

struct IcrcCheckStats {
  std::uint64_t packets = 0;      // datagrams checked
  std::uint64_t cycles = 0;       // clock cycles stepped (reset included)
  std::uint64_t bad = 0;          // results with !ok (short datagrams included)
  std::uint64_t divergences = 0;  // 1 once a lockstep port has diverged, else 0
};

struct IcrcCheckResult {
  IcrcResult result;
  std::uint64_t cycles = 0;  // for this datagram: ceil(length / W) beats (1 if empty) + 2
};

// Streams whole datagrams through a port (model, RTL or lockstep), one at a time, W bytes per
// beat, output always ready. Construction steps one reset cycle.
class IcrcCheck {
 public:
  // Throws std::invalid_argument for a null port.
  explicit IcrcCheck(std::unique_ptr<IcrcCheckPort> port);

  // ip_udp: the datagram's IPv4 + UDP headers with the recovered IPv4 ID. Throws
  // std::runtime_error if the port gives no result within length / W + 16 cycles.
  IcrcCheckResult check(const IpUdpHeaderBytes& ip_udp, std::span<const std::uint8_t> datagram);

  [[nodiscard]] const IcrcCheckStats& stats() const noexcept { return stats_; }
  [[nodiscard]] IcrcCheckPort& port() noexcept { return *port_; }
  [[nodiscard]] std::uint32_t width() const noexcept { return port_->width(); }
  // The first divergence of a lockstep port (nullptr otherwise, or none yet).
  [[nodiscard]] const Divergence* divergence() const noexcept;

 private:
  IcrcCheckOutputs step(const IcrcCheckInputs& in);
  std::unique_ptr<IcrcCheckPort> port_;
  const IcrcCheckLockstep* lockstep_ = nullptr;
  IcrcCheckStats stats_;
};

namespace icrc_check {
// The C++ model behind the packet-level driver (library naa::rtl_models). make_rtl() and
// make_lockstep() are in naa/rtl/icrc_check_rtl.hpp (library naa::rtl_icrc_check).
[[nodiscard]] std::unique_ptr<IcrcCheck> make_model(std::uint32_t width);
}  // namespace icrc_check

}  // namespace naa::rtl
