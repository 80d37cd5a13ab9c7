// Errors of the host library (std::error_code, Asio convention) and the exception thrown at the
// C++ API edges (STYLE.md: host/ reports std::error_code, exceptions only where a C++ user
// expects them).
//
// Every failure mode the host-library issue lists has its own code, so a caller can tell an NAA
// that is not running from one that refuses the connection, an MRSP error from a transport error,
// and a timeout from all of them. Codes carry no detail; functions that can say more (the REJ
// reason, the address that did not answer) also fill a detail string, and Error::what() holds it.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace naa::host {

enum class Errc : std::uint8_t {
  // Connection management (PROTOCOL.md 4).
  naa_unreachable = 1,  // nothing listens on <naa-ip>:4791 (ICMP port unreachable), or no route
  cm_timeout,           // the CM REQ got no answer within the timeout (REQs were retried)
  connection_refused,   // REJ reason 8: no listener on that CM port (service ID)
  connection_rejected,  // any other REJ (the reason is in the detail)
  disconnected,         // the peer sent DREQ, or disconnect() was called
  // Memory Region Setup Protocol (PROTOCOL.md 5.1).
  mrsp_not_enough_memory,  // MRSP error 0x01
  mrsp_invalid_address,    // MRSP error 0x02
  mrsp_too_many_regions,   // MRSP error 0x03
  mrsp_unknown_error,      // MRSP error with a code we do not know
  mrsp_bad_reply,          // an MRSP answer that does not decode or does not match the request
  // Reliable Connected transport (PROTOCOL.md 3), as completion statuses.
  retry_exceeded,            // retransmit timer / sequence NAKs used up retry_count
  rnr_retry_exceeded,        // RNR NAKs used up rnr_retry_count
  remote_invalid_request,    // NAK 0x61
  remote_access_error,       // NAK 0x62
  remote_operational_error,  // NAK 0x63
  local_protection_error,    // a work request names memory outside its lkey's region
  local_length_error,        // a received message does not fit the receive buffer
  flushed,                   // work request flushed because the QP went to the error state
  // Local conditions.
  timeout,           // a wait or a call did not finish within its timeout
  invalid_argument,  // a parameter the caller passed is out of range
  not_connected,     // the session or QP is not (or no longer) connected
  busy,              // a call is already outstanding on this session
  no_free_address,   // no free 127.0.0.x (x >= 3) to bind the endpoint to
  address_in_use,    // the requested local <ip>:4791 is taken
  socket_error,      // a socket call failed (the detail names it)
  not_supported,     // the operation exists in the interface but not in this backend
  call_failed,       // the C API: the NAA call failed (detail says why)
  // The NAA refused a handler image (docs/protocol.md "Handler images"; MRSP errors 0x04-0x07).
  mrsp_wrong_machine,        // 0x04: not an ELF32 little-endian RISC-V file
  mrsp_image_too_large,      // 0x05: outside the 64 KiB image window, or too much state
  mrsp_missing_entry_point,  // 0x06: no naa_spin_info or no payload handler
  mrsp_bad_image,            // 0x07: anything else (malformed, another function code)
  // Peers (docs/protocol.md "Peers"): MRSP error 0x08.
  mrsp_bad_peer,  // no such peer index, no QP free, or a connection that cannot be handed over
};

[[nodiscard]] const std::error_category& host_category() noexcept;
[[nodiscard]] inline std::error_code make_error_code(Errc e) noexcept {
  return {static_cast<int>(e), host_category()};
}
// A short name for the code ("naa_unreachable"), for logs and tests.
[[nodiscard]] std::string_view errc_name(Errc e) noexcept;

// Thrown by the C++ API edges (Session). code() is the error_code, what() the full message with
// whatever detail the failing layer could give.
class Error : public std::system_error {
 public:
  Error(std::error_code ec, const std::string& detail)
      : std::system_error(ec), what_(std::make_shared<const std::string>(compose(ec, detail))) {}
  [[nodiscard]] const char* what() const noexcept override { return what_->c_str(); }

 private:
  // "detail: message", but the message once: std::system_error(ec, detail) appends it even when
  // the detail already ends with it (most details do, for the C API, which has no error_code),
  // and made "...failed: transport retry counter exceeded: transport retry counter exceeded".
  static std::string compose(std::error_code ec, const std::string& detail) {
    const std::string m = ec.message();
    if (detail.empty()) return m;
    if (detail.size() >= m.size() && detail.compare(detail.size() - m.size(), m.size(), m) == 0) {
      return detail;
    }
    return detail + ": " + m;
  }
  std::shared_ptr<const std::string> what_;  // shared: copying an exception must not throw
};

}  // namespace naa::host

template <>
struct std::is_error_code_enum<naa::host::Errc> : std::true_type {};
