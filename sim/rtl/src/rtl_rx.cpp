// --rx-pipe=rtl|lockstep: RxPipe's ICRC and structural checks through rtl/icrc_check and
// rtl/rx_parser (docs/sim/rtl.md "The receive path"). The verdicts are the blocks' (in lockstep:
// their cycle models', compared every cycle with the RTL): RxPipe counts its drops under the
// blocks' reasons, whose values are protocol::Error's (rtl/rx_parser/README.md).
#include <stdexcept>

#include "naa/rtl/icrc_check.hpp"
#include "naa/rtl/icrc_check_headers.hpp"
#include "naa/rtl/rx_parser.hpp"
#include "naa/sim/common.hpp"
#include "naa/sim/rtl_blocks.hpp"

namespace naa::sim {

namespace {

class RtlRxChecks final : public RxChecksIf {
 public:
  RtlRxChecks(std::shared_ptr<rtl::RxParser> parser, std::shared_ptr<rtl::IcrcCheck> icrc,
              RtlBlocks& blocks)
      : parser_(std::move(parser)), icrc_(std::move(icrc)), blocks_(blocks) {}

  RxCheckVerdict icrc(const protocol::Ipv4UdpHeaders& h,
                      std::span<const std::uint8_t> datagram) override {
    blocks_.sync_time();
    rtl::IcrcCheckResult r;
    try {
      r = icrc_->check(rtl::ip_udp_header_bytes(h), datagram);
    } catch (const std::exception& e) {
      model_fatal("rx_pipe", std::string("icrc_check: ") + e.what());
    }
    ++blocks_.counters.rx_packets;
    RxCheckVerdict v;
    v.cycles = r.cycles;
    if (r.result.short_datagram) {
      v.reason = protocol::Error::too_short;
    } else if (!r.result.ok) {
      v.reason = protocol::Error::bad_icrc;
    }
    if (v.reason) ++blocks_.counters.rx_drops;
    return v;
  }

  RxCheckVerdict parse(std::span<const std::uint8_t> datagram) override {
    blocks_.sync_time();
    rtl::RxParseResult r;
    try {
      r = parser_->parse(datagram);
    } catch (const std::exception& e) {
      model_fatal("rx_pipe", std::string("rx_parser: ") + e.what());
    }
    RxCheckVerdict v;
    v.cycles = r.cycles;
    if (r.parsed.reason != rtl::RxDropReason::none) {
      // Same values as protocol::Error (rtl/rx_parser/include/naa/rtl/rx_parser.hpp).
      v.reason = static_cast<protocol::Error>(r.parsed.reason);
      ++blocks_.counters.rx_drops;
    }
    return v;
  }

 private:
  std::shared_ptr<rtl::RxParser> parser_;
  std::shared_ptr<rtl::IcrcCheck> icrc_;
  RtlBlocks& blocks_;
};

}  // namespace

std::unique_ptr<RxChecksIf> RtlBlocks::make_rx_checks(const SimConfig& /*cfg*/) {
  if (!rx_parser_ || !icrc_check_) return nullptr;
  return std::make_unique<RtlRxChecks>(rx_parser_, icrc_check_, *this);
}

std::uint64_t RtlBlocks::rx_parser_cycles() const {
  return rx_parser_ ? rx_parser_->stats().cycles : 0;
}

std::uint64_t RtlBlocks::icrc_check_cycles() const {
  return icrc_check_ ? icrc_check_->stats().cycles : 0;
}

}  // namespace naa::sim
