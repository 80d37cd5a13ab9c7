// The golden model of rtl/icrc_check/icrc_check.sv: it collects the datagram and computes the ICRC
// as PROTOCOL.md 2 states it, with a byte-at-a-time table, over the masked pseudo-header and the
// datagram without its ICRC, then compares (the RTL folds every byte, ICRC included, through
// constant XOR matrices and unfolds the last word), so the two are independent implementations;
// the testbench compares both with naa::protocol::compute_icrc.
#include <algorithm>
#include <array>
#include <bit>
#include <stdexcept>
#include <string>

#include "compare.hpp"
#include "naa/rtl/datagram_driver.hpp"
#include "naa/rtl/icrc_check.hpp"

namespace naa::rtl {

namespace {

constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t n = 0; n < 256; ++n) {
    std::uint32_t c = n;
    for (int k = 0; k < 8; ++k)
      c = (c & 1U) ? 0xEDB88320U ^ (c >> 1) : c >> 1;
    t[n] = c;
  }
  return t;
}

constexpr std::array<std::uint32_t, 256> kTable = make_table();

std::uint32_t update(std::uint32_t c, std::uint8_t byte) noexcept {
  return kTable[(c ^ byte) & 0xFFU] ^ (c >> 8);
}

}  // namespace

IcrcResult IcrcCheckModel::check(const IpUdpHeaderBytes& ip_udp,
                                 std::span<const std::uint8_t> d) noexcept {
  IcrcResult r;
  if (d.size() < 16) {  // no BTH + ICRC: decode_packet's too_short
    r.short_datagram = true;
    return r;
  }
  std::uint32_t c = ~0U;
  for (int i = 0; i < 8; ++i)
    c = update(c, 0xFF);
  // PROTOCOL.md 2: IPv4 TOS (1), TTL (8), header checksum (10-11); UDP checksum (20 + 6, 7).
  for (std::size_t i = 0; i < kIpUdpHeaderBytes; ++i) {
    const bool variant = i == 1 || i == 8 || i == 10 || i == 11 || i == 26 || i == 27;
    c = update(c, variant ? 0xFF : ip_udp[i]);
  }
  const std::size_t n = d.size() - 4;
  for (std::size_t i = 0; i < n; ++i)
    c = update(c, i == 4 ? 0xFF : d[i]);  // BTH byte 4: FECN, BECN, resv6
  r.icrc = ~c;
  r.received = static_cast<std::uint32_t>(d[n]) | static_cast<std::uint32_t>(d[n + 1]) << 8 |
               static_cast<std::uint32_t>(d[n + 2]) << 16 |
               static_cast<std::uint32_t>(d[n + 3]) << 24;
  r.ok = r.icrc == r.received;
  return r;
}

IcrcCheckModel::IcrcCheckModel(std::uint32_t width) : width_(width) {
  if (!is_supported_width(width) || !std::has_single_bit(width)) {
    throw std::invalid_argument("icrc_check: width " + std::to_string(width) +
                                " is not a power of two in 1..64");
  }
}

IcrcCheckOutputs IcrcCheckModel::step(const IcrcCheckInputs& in) {
  if (!in.rst_n) {
    result_valid_ = false;
    pending_.reset();
    bytes_.clear();
  }
  // The RTL's two stages (icrc_check.sv): a finished datagram waits in pending_ for the result
  // register, which takes it at an edge where it is empty or being read.
  const bool advance = !result_valid_ || in.out_ready;
  IcrcCheckOutputs o{!pending_ || advance, result_valid_, result_};
  if (!in.rst_n) return o;
  if (advance) {
    result_valid_ = pending_.has_value();
    if (pending_) result_ = *pending_;
    pending_.reset();
  }
  if (in.in_valid && o.in_ready) {
    if (bytes_.empty()) ip_udp_ = in.ip_udp;  // sampled with the first beat
    // Every beat but the last is full by contract; the last carries popcount(keep) bytes.
    const auto n = static_cast<std::uint32_t>(std::popcount(in.in.keep & keep_mask(width_)));
    bytes_.insert(bytes_.end(), in.in.data.begin(), in.in.data.begin() + n);
    if (in.in.last) {
      pending_ = check(ip_udp_, bytes_);
      bytes_.clear();
    }
  }
  return o;
}

namespace {

std::string hex32(std::uint32_t v) {
  static constexpr std::string_view kDigits = "0123456789abcdef";
  std::string s = "0x";
  for (int i = 7; i >= 0; --i)
    s.push_back(kDigits[(v >> (4 * i)) & 0xFU]);
  return s;
}

}  // namespace

std::optional<PortMismatch> first_mismatch(const IcrcCheckPort& /*shape*/,
                                           const IcrcCheckOutputs& expected,
                                           const IcrcCheckOutputs& actual) {
  if (auto m = detail::compare_bool("in_ready", expected.in_ready, actual.in_ready)) return m;
  if (auto m = detail::compare_bool("out_valid", expected.out_valid, actual.out_valid)) return m;
  if (!expected.out_valid) return std::nullopt;
  const IcrcResult& e = expected.out;
  const IcrcResult& a = actual.out;
  if (auto m = detail::compare_bool("out_short", e.short_datagram, a.short_datagram)) return m;
  if (e.short_datagram) return std::nullopt;
  if (e.icrc != a.icrc) return PortMismatch{"out_icrc", hex32(e.icrc), hex32(a.icrc)};
  if (e.received != a.received) {
    return PortMismatch{"out_received", hex32(e.received), hex32(a.received)};
  }
  return detail::compare_bool("out_ok", e.ok, a.ok);
}

IcrcCheckLockstep::IcrcCheckLockstep(std::unique_ptr<IcrcCheckPort> model,
                                     std::unique_ptr<IcrcCheckPort> rtl,
                                     LockstepChecker::Handler on_divergence)
    : pair_(std::move(model), std::move(rtl), std::move(on_divergence)),
      width_(pair_.model().width()) {
  if (pair_.rtl().width() != width_) {
    throw std::invalid_argument("icrc_check lockstep: widths differ");
  }
}

IcrcCheck::IcrcCheck(std::unique_ptr<IcrcCheckPort> port) : port_(std::move(port)) {
  if (!port_) throw std::invalid_argument("icrc_check: no port");
  lockstep_ = dynamic_cast<const IcrcCheckLockstep*>(port_.get());
  IcrcCheckInputs reset;
  reset.rst_n = false;
  (void)step(reset);
}

IcrcCheckOutputs IcrcCheck::step(const IcrcCheckInputs& in) {
  ++stats_.cycles;
  return port_->step(in);
}

const Divergence* IcrcCheck::divergence() const noexcept {
  if (lockstep_ == nullptr || !lockstep_->checker().diverged()) return nullptr;
  return &*lockstep_->checker().divergence();
}

IcrcCheckResult IcrcCheck::check(const IpUdpHeaderBytes& ip_udp,
                                 std::span<const std::uint8_t> datagram) {
  IcrcCheckInputs in;
  in.ip_udp = ip_udp;
  const auto drive = drive_datagram(IcrcCheckPort::kBlock, width(), in, datagram,
                                    [this](const IcrcCheckInputs& i) { return step(i); });
  IcrcCheckResult r;
  r.result = drive.out;
  r.cycles = drive.cycles;
  ++stats_.packets;
  if (!r.result.ok) ++stats_.bad;
  stats_.divergences = divergence() != nullptr ? 1 : 0;
  return r;
}

namespace icrc_check {

std::unique_ptr<IcrcCheck> make_model(std::uint32_t width) {
  return std::make_unique<IcrcCheck>(std::make_unique<IcrcCheckModel>(width));
}

}  // namespace icrc_check

}  // namespace naa::rtl
