// Call and result immediates (PROTOCOL.md 5.2) and the built-in function codes (5.3).
#include "naa/protocol/immediate.hpp"

namespace naa::protocol {

Result<std::uint32_t> try_encode_call_immediate(std::uint8_t fn, std::uint32_t user24) noexcept {
  if (!is_valid_call(fn, user24)) return Error::value_out_of_range;
  return encode_call_immediate(fn, user24);
}

Result<CallImmediate> decode_call_immediate(std::uint32_t imm) noexcept {
  if (imm == kImmAbortedCall) return CallImmediate{true, 0, 0};
  if ((imm & kImmHostToNaa) == 0) return Error::bad_field;
  const auto fn = static_cast<std::uint8_t>(imm & kImmFunctionMask);
  if (fn == 0) return Error::bad_field;
  return CallImmediate{false, fn, imm >> 8};
}

Result<std::uint32_t> try_encode_result_immediate(std::uint8_t fn,
                                                  std::uint32_t return_code) noexcept {
  if (!is_valid_result(fn, return_code)) return Error::value_out_of_range;
  return encode_result_immediate(fn, return_code);
}

Result<ResultImmediate> decode_result_immediate(std::uint32_t imm) noexcept {
  if (imm == kImmSuccess) return ResultImmediate{0, 0};
  if ((imm & kImmHostToNaa) != 0) return Error::bad_field;
  return ResultImmediate{static_cast<std::uint8_t>(imm & kImmFunctionMask), imm >> 8};
}

std::string_view to_string(ReturnCode rc) noexcept {
  switch (rc) {
    case ReturnCode::success:
      return "success";
    case ReturnCode::socket_not_available:
      return "socket not available";
    case ReturnCode::kernel_timeout:
      return "kernel timeout";
    case ReturnCode::unknown_function:
      return "unknown function code";
    case ReturnCode::invalid_arguments:
      return "invalid arguments";
  }
  return return_code_name(static_cast<std::uint32_t>(rc));
}

std::string_view return_code_name(std::uint32_t rc) noexcept {
  if (rc <= static_cast<std::uint32_t>(ReturnCode::invalid_arguments)) {
    return to_string(static_cast<ReturnCode>(rc));
  }
  if (rc < kFirstKernelReturnCode) return "reserved";
  if (is_kernel_specific_return_code(rc)) return "kernel-specific";
  return "undefined";
}

std::string_view to_string(BuiltinFunction fn) noexcept {
  switch (fn) {
    case BuiltinFunction::add1:
      return "add1";
    case BuiltinFunction::add2:
      return "add2";
    case BuiltinFunction::nop:
      return "nop";
    case BuiltinFunction::vadd_i32:
      return "vadd_i32";
    case BuiltinFunction::sum_u64:
      return "sum_u64";
    case BuiltinFunction::crc32:
      return "crc32";
  }
  return "unknown";
}

std::optional<BuiltinFunction> builtin_function(std::uint8_t fn) noexcept {
  if (fn < static_cast<std::uint8_t>(BuiltinFunction::add1) ||
      fn > static_cast<std::uint8_t>(BuiltinFunction::crc32)) {
    return std::nullopt;
  }
  return static_cast<BuiltinFunction>(fn);
}

}  // namespace naa::protocol
