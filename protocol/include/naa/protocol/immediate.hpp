// The 32-bit immediate value of the WRITE_WITH_IMM that starts a call and of the one that returns
// its result (PROTOCOL.md 5.2).
//
// The ImmDt header carries the value big-endian, so the integer and the four wire bytes are two
// spellings of the same thing:
//   host -> NAA: value = user24 << 8 | 0x80 | fn   wire: user[23:16] user[15:8] user[7:0] 0x80|fn
//   NAA -> host: 0 on success (the NAAICE low-level API: "An immediate value of 0 indicates
//                success"; the reference software NAA sends it), otherwise
//                value = rc24 << 8 | fn            wire: rc[23:16]   rc[15:8]   rc[7:0]   fn
// A failed call's value is never 0 (rc != 0). A host reads 0 as success and `imm >> 8` as the
// return code otherwise; the NAAICE host library reads `imm >> 8` and sees the right code under
// both spellings. Bit 7 tells the directions apart, so a host that loops a call back to itself,
// or an NAA that receives its own reply, notices. The value 0 from a host means "call aborted".
#pragma once

#include <array>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "naa/protocol/result.hpp"

namespace naa::protocol {

inline constexpr std::uint32_t kImmHostToNaa = 0x80;     // bit 7
inline constexpr std::uint32_t kImmFunctionMask = 0x7F;  // bits 6:0
inline constexpr std::uint8_t kMinFunctionCode = 1;
inline constexpr std::uint8_t kMaxFunctionCode = 127;
inline constexpr std::uint32_t kMaxImmUserBits = 0xFFFFFF;    // 24 bits
inline constexpr std::uint32_t kMaxImmReturnCode = 0xFFFFFF;  // 24 bits
inline constexpr std::uint32_t kImmAbortedCall = 0;

// ---- Host -> NAA ------------------------------------------------------------------------------

struct CallImmediate {
  bool aborted = false;    // the immediate was 0: no kernel runs, no reply is sent
  std::uint8_t fn = 0;     // 1..127 unless aborted
  std::uint32_t user = 0;  // 24 user bits passed to the kernel
  friend bool operator==(const CallImmediate&, const CallImmediate&) = default;
};

[[nodiscard]] constexpr bool is_valid_call(std::uint8_t fn, std::uint32_t user24) noexcept {
  return fn >= kMinFunctionCode && fn <= kMaxFunctionCode && user24 <= kMaxImmUserBits;
}

// Precondition: is_valid_call(fn, user24). In a constant expression a violation does not compile;
// at run time it aborts. Use try_encode_call_immediate for values that come from a user.
[[nodiscard]] constexpr std::uint32_t encode_call_immediate(std::uint8_t fn,
                                                            std::uint32_t user24) noexcept {
  if (!is_valid_call(fn, user24)) std::abort();
  return (user24 << 8) | kImmHostToNaa | fn;
}
// value_out_of_range for fn 0, fn > 127 or user bits wider than 24.
[[nodiscard]] Result<std::uint32_t> try_encode_call_immediate(std::uint8_t fn,
                                                              std::uint32_t user24) noexcept;

// 0 -> CallImmediate{aborted = true} (not an error: it is a defined message). bad_field if bit 7 is
// clear (a NAA -> host value) or the function code is 0.
[[nodiscard]] Result<CallImmediate> decode_call_immediate(std::uint32_t imm) noexcept;

// ---- NAA -> host ------------------------------------------------------------------------------

// Return codes (bits 31:8 of the NAA -> host value). The NAAICE host library reads `imm >> 8`;
// we follow it (PROTOCOL.md 5.2).
enum class ReturnCode : std::uint32_t {
  success = 0x00,
  socket_not_available = 0x01,
  kernel_timeout = 0x02,
  unknown_function = 0x03,
  invalid_arguments = 0x04,  // required inputs/outputs missing or too small
};
inline constexpr std::uint32_t kFirstKernelReturnCode = 0x10;
inline constexpr std::uint32_t kLastKernelReturnCode = 0x7F;

[[nodiscard]] constexpr bool is_kernel_specific_return_code(std::uint32_t rc) noexcept {
  return rc >= kFirstKernelReturnCode && rc <= kLastKernelReturnCode;
}
[[nodiscard]] std::string_view to_string(ReturnCode rc) noexcept;
// Names any 24-bit code: the five above, "reserved" (0x05-0x0F), "kernel-specific" (0x10-0x7F),
// "undefined" (0x80 and up: PROTOCOL.md 5.2 gives them no meaning).
[[nodiscard]] std::string_view return_code_name(std::uint32_t rc) noexcept;

inline constexpr std::uint32_t kImmSuccess = 0;  // NAA -> host: the call succeeded

struct ResultImmediate {
  std::uint8_t fn = 0;            // the function code echoed by a failure; 0 when unknown (success)
  std::uint32_t return_code = 0;  // 24 bits; compare with ReturnCode values
  friend bool operator==(const ResultImmediate&, const ResultImmediate&) = default;
};

[[nodiscard]] constexpr bool is_valid_result(std::uint8_t fn, std::uint32_t return_code) noexcept {
  return fn >= kMinFunctionCode && fn <= kMaxFunctionCode && return_code <= kMaxImmReturnCode;
}

// Precondition: is_valid_result(fn, return_code) (see encode_call_immediate). Success (return
// code 0) encodes as 0, whatever the function (PROTOCOL.md 5.2).
[[nodiscard]] constexpr std::uint32_t encode_result_immediate(std::uint8_t fn,
                                                              std::uint32_t return_code) noexcept {
  if (!is_valid_result(fn, return_code)) std::abort();
  if (return_code == 0) return kImmSuccess;
  return (return_code << 8) | fn;
}
[[nodiscard]] constexpr std::uint32_t encode_result_immediate(std::uint8_t fn,
                                                              ReturnCode rc) noexcept {
  return encode_result_immediate(fn, static_cast<std::uint32_t>(rc));
}
// value_out_of_range for fn 0, fn > 127 or a return code wider than 24 bits.
[[nodiscard]] Result<std::uint32_t> try_encode_result_immediate(std::uint8_t fn,
                                                                std::uint32_t return_code) noexcept;

// 0 -> {fn 0, return code 0} (success). Otherwise the return code is `imm >> 8` and the function
// code `imm & 0x7F` (0 if the NAA did not echo it); a value whose return code is 0 (an NAA that
// echoes the function code on success, as naa-sim did before PROTOCOL.md 5.2 said 0) is a success
// too. bad_field only if bit 7 is set: that is a host -> NAA value. Any 24-bit code decodes.
[[nodiscard]] Result<ResultImmediate> decode_result_immediate(std::uint32_t imm) noexcept;

// ---- Wire bytes (ImmDt, like every IBA header field, is big-endian) ---------------------------

[[nodiscard]] constexpr std::array<std::uint8_t, 4> immediate_to_wire(std::uint32_t imm) noexcept {
  return {static_cast<std::uint8_t>(imm >> 24), static_cast<std::uint8_t>(imm >> 16),
          static_cast<std::uint8_t>(imm >> 8), static_cast<std::uint8_t>(imm)};
}
[[nodiscard]] constexpr std::uint32_t immediate_from_wire(
    const std::array<std::uint8_t, 4>& wire) noexcept {
  return (std::uint32_t{wire[0]} << 24) | (std::uint32_t{wire[1]} << 16) |
         (std::uint32_t{wire[2]} << 8) | wire[3];
}

// ---- Built-in kernels (PROTOCOL.md 5.3) -------------------------------------------------------

enum class BuiltinFunction : std::uint8_t {
  add1 = 1,
  add2 = 2,
  nop = 3,
  vadd_i32 = 4,
  sum_u64 = 5,
  crc32 = 6,
};
[[nodiscard]] std::string_view to_string(BuiltinFunction fn) noexcept;
// The built-in kernel with that code, if there is one.
[[nodiscard]] std::optional<BuiltinFunction> builtin_function(std::uint8_t fn) noexcept;

}  // namespace naa::protocol
