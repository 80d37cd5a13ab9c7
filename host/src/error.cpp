#include "naa/host/error.hpp"

#include <string>

namespace naa::host {

std::string_view errc_name(Errc e) noexcept {
  switch (e) {
    case Errc::naa_unreachable:
      return "naa_unreachable";
    case Errc::cm_timeout:
      return "cm_timeout";
    case Errc::connection_refused:
      return "connection_refused";
    case Errc::connection_rejected:
      return "connection_rejected";
    case Errc::disconnected:
      return "disconnected";
    case Errc::mrsp_not_enough_memory:
      return "mrsp_not_enough_memory";
    case Errc::mrsp_invalid_address:
      return "mrsp_invalid_address";
    case Errc::mrsp_too_many_regions:
      return "mrsp_too_many_regions";
    case Errc::mrsp_unknown_error:
      return "mrsp_unknown_error";
    case Errc::mrsp_bad_reply:
      return "mrsp_bad_reply";
    case Errc::retry_exceeded:
      return "retry_exceeded";
    case Errc::rnr_retry_exceeded:
      return "rnr_retry_exceeded";
    case Errc::remote_invalid_request:
      return "remote_invalid_request";
    case Errc::remote_access_error:
      return "remote_access_error";
    case Errc::remote_operational_error:
      return "remote_operational_error";
    case Errc::local_protection_error:
      return "local_protection_error";
    case Errc::local_length_error:
      return "local_length_error";
    case Errc::flushed:
      return "flushed";
    case Errc::timeout:
      return "timeout";
    case Errc::invalid_argument:
      return "invalid_argument";
    case Errc::not_connected:
      return "not_connected";
    case Errc::busy:
      return "busy";
    case Errc::no_free_address:
      return "no_free_address";
    case Errc::address_in_use:
      return "address_in_use";
    case Errc::socket_error:
      return "socket_error";
    case Errc::not_supported:
      return "not_supported";
    case Errc::call_failed:
      return "call_failed";
    case Errc::mrsp_wrong_machine:
      return "mrsp_wrong_machine";
    case Errc::mrsp_image_too_large:
      return "mrsp_image_too_large";
    case Errc::mrsp_missing_entry_point:
      return "mrsp_missing_entry_point";
    case Errc::mrsp_bad_image:
      return "mrsp_bad_image";
    case Errc::mrsp_bad_peer:
      return "mrsp_bad_peer";
  }
  return "unknown";
}

namespace {

class HostCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "naa.host"; }
  std::string message(int ev) const override {
    switch (static_cast<Errc>(ev)) {
      case Errc::naa_unreachable:
        return "NAA unreachable (nothing listens on its RoCEv2 port)";
      case Errc::cm_timeout:
        return "no answer to the connection request (CM REQ timed out)";
      case Errc::connection_refused:
        return "connection refused (no listener on that CM port)";
      case Errc::connection_rejected:
        return "connection rejected by the NAA";
      case Errc::disconnected:
        return "disconnected";
      case Errc::mrsp_not_enough_memory:
        return "MRSP error 0x01: not enough NAA memory";
      case Errc::mrsp_invalid_address:
        return "MRSP error 0x02: invalid NAA address";
      case Errc::mrsp_too_many_regions:
        return "MRSP error 0x03: too many regions";
      case Errc::mrsp_unknown_error:
        return "MRSP error with an unknown code";
      case Errc::mrsp_bad_reply:
        return "malformed MRSP answer";
      case Errc::retry_exceeded:
        return "transport retry counter exceeded";
      case Errc::rnr_retry_exceeded:
        return "RNR retry counter exceeded";
      case Errc::remote_invalid_request:
        return "remote invalid request (NAK 0x61)";
      case Errc::remote_access_error:
        return "remote access error (NAK 0x62)";
      case Errc::remote_operational_error:
        return "remote operational error (NAK 0x63)";
      case Errc::local_protection_error:
        return "local protection error (bad lkey or bounds)";
      case Errc::local_length_error:
        return "local length error (message too long)";
      case Errc::flushed:
        return "work request flushed (queue pair in error state)";
      case Errc::timeout:
        return "timed out";
      case Errc::invalid_argument:
        return "invalid argument";
      case Errc::not_connected:
        return "not connected";
      case Errc::busy:
        return "a call is already in progress";
      case Errc::no_free_address:
        return "no free 127.0.0.x:4791 to bind to";
      case Errc::address_in_use:
        return "local address in use (<ip>:4791 taken)";
      case Errc::socket_error:
        return "socket error";
      case Errc::not_supported:
        return "operation not supported by this transport";
      case Errc::call_failed:
        return "NAA call failed";
      case Errc::mrsp_wrong_machine:
        return "MRSP error 0x04: the handler image is not for the HPU (RV32 RISC-V ELF)";
      case Errc::mrsp_image_too_large:
        return "MRSP error 0x05: the handler image or its state is too large";
      case Errc::mrsp_missing_entry_point:
        return "MRSP error 0x06: the handler image has no handler entry points";
      case Errc::mrsp_bad_image:
        return "MRSP error 0x07: the NAA refused the handler image";
      case Errc::mrsp_bad_peer:
        return "MRSP error 0x08: the NAA refused the peer or the hand-over";
    }
    return "unknown naa.host error";
  }
};

}  // namespace

const std::error_category& host_category() noexcept {
  static const HostCategory category;
  return category;
}

}  // namespace naa::host
