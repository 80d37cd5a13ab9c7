#include "naa/protocol/result.hpp"

#include <string>

namespace naa::protocol {

std::string_view to_string(Error e) noexcept {
  switch (e) {
    case Error::too_short:
      return "too short";
    case Error::too_long:
      return "too long";
    case Error::bad_tver:
      return "bad transport header version";
    case Error::bad_pad:
      return "bad pad";
    case Error::unknown_opcode:
      return "unknown opcode";
    case Error::length_mismatch:
      return "length mismatch";
    case Error::count_mismatch:
      return "count/length mismatch";
    case Error::bad_mad_header:
      return "bad MAD header";
    case Error::unknown_attribute:
      return "unknown MAD attribute";
    case Error::bad_ip_header:
      return "bad IPv4 header";
    case Error::bad_udp_header:
      return "bad UDP header";
    case Error::not_roce:
      return "not RoCEv2 (UDP port is not 4791)";
    case Error::bad_field:
      return "field value not allowed";
    case Error::bad_icrc:
      return "bad ICRC";
    case Error::buffer_too_small:
      return "buffer too small";
    case Error::value_out_of_range:
      return "value out of range";
  }
  return "unknown error";
}

std::string_view error_id(Error e) noexcept {
  switch (e) {
    case Error::too_short:
      return "too_short";
    case Error::too_long:
      return "too_long";
    case Error::bad_tver:
      return "bad_tver";
    case Error::bad_pad:
      return "bad_pad";
    case Error::unknown_opcode:
      return "unknown_opcode";
    case Error::length_mismatch:
      return "length_mismatch";
    case Error::count_mismatch:
      return "count_mismatch";
    case Error::bad_mad_header:
      return "bad_mad_header";
    case Error::unknown_attribute:
      return "unknown_attribute";
    case Error::bad_ip_header:
      return "bad_ip_header";
    case Error::bad_udp_header:
      return "bad_udp_header";
    case Error::not_roce:
      return "not_roce";
    case Error::bad_field:
      return "bad_field";
    case Error::bad_icrc:
      return "bad_icrc";
    case Error::buffer_too_small:
      return "buffer_too_small";
    case Error::value_out_of_range:
      return "value_out_of_range";
  }
  return "unknown_error";
}

namespace {
class ProtocolCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "naa.protocol"; }
  std::string message(int ev) const override {
    return std::string(to_string(static_cast<Error>(ev)));
  }
};
}  // namespace

const std::error_category& protocol_category() noexcept {
  static const ProtocolCategory category;
  return category;
}

}  // namespace naa::protocol
