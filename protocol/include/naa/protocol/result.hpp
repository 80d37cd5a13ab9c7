// Typed errors and the Result<T> returned by every decoder and encoder of the protocol library.
//
// protocol/ throws nothing (STYLE.md: errors by layer): a malformed input is an expected event on
// a network, so decode() returns either the decoded value or the reason it was rejected. The
// reasons are a closed enum so that receivers can count drops by reason.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

namespace naa::protocol {

enum class Error : std::uint8_t {
  too_short = 1,       // fewer bytes than the format needs
  too_long,            // more bytes than the format allows
  bad_tver,            // BTH transport header version is not 0
  bad_pad,             // pad count impossible for the opcode/length, or non-zero pad bytes
  unknown_opcode,      // BTH opcode not in the opcode table
  length_mismatch,     // a length field disagrees with the bytes present
  count_mismatch,      // an element count disagrees with the bytes present (MRSP)
  bad_mad_header,      // MAD base version/class/class version/method not those of the IB CM
  unknown_attribute,   // MAD attribute ID not a CM message we know
  bad_ip_header,       // IPv4 header malformed (version, IHL, protocol, total length)
  bad_udp_header,      // UDP header malformed (length)
  not_roce,            // a UDP datagram not addressed to port 4791
  bad_field,           // a field holds a value its format forbids (e.g. reserved MRSP type)
  bad_icrc,            // ICRC does not verify
  buffer_too_small,    // encode: the output buffer cannot hold the result
  value_out_of_range,  // encode: a field does not fit its width (e.g. a 25-bit PSN)
};

// Human-readable text ("bad ICRC").
[[nodiscard]] std::string_view to_string(Error e) noexcept;
// A stable identifier, the enumerator's name ("bad_icrc"): for statistics keys and logs that
// scripts parse.
[[nodiscard]] std::string_view error_id(Error e) noexcept;

// std::error_code interoperability, so host/ (which reports std::error_code) can pass these on.
[[nodiscard]] const std::error_category& protocol_category() noexcept;
[[nodiscard]] inline std::error_code make_error_code(Error e) noexcept {
  return {static_cast<int>(e), protocol_category()};
}

// Either a T or an Error. Deliberately small: C++20 has no std::expected.
template <class T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<T, Error>);

 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::in_place_index<1>, error) {}         // NOLINT: implicit by design

  [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  // Precondition: has_value(). Violating it is a programming error and aborts.
  [[nodiscard]] T& value() & { return check(), *std::get_if<0>(&v_); }
  [[nodiscard]] const T& value() const& { return check(), *std::get_if<0>(&v_); }
  [[nodiscard]] T&& value() && { return check(), std::move(*std::get_if<0>(&v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // Precondition: !has_value().
  [[nodiscard]] Error error() const noexcept {
    const Error* e = std::get_if<1>(&v_);
    return e != nullptr ? *e : Error{};
  }

 private:
  void check() const {
    if (!has_value()) std::abort();
  }
  std::variant<T, Error> v_;
};

}  // namespace naa::protocol

template <>
struct std::is_error_code_enum<naa::protocol::Error> : std::true_type {};
