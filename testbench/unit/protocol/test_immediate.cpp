// Call and result immediates (PROTOCOL.md 5.2): both directions, the wire byte order, every
// rejection, and the names of return codes and built-in functions (5.3).
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <vector>

#include "naa/protocol/immediate.hpp"
#include "vectors.hpp"

using namespace naa::protocol;

using Wire = std::array<std::uint8_t, 4>;

TEST_CASE("immediate: host -> NAA value and wire bytes", "[immediate]") {
  // PROTOCOL.md 5.2: wire bytes [user23..16, user15..8, user7..0, 0x80|fn].
  STATIC_REQUIRE(encode_call_immediate(4, 0x123456) == 0x12345684U);
  STATIC_REQUIRE(immediate_to_wire(encode_call_immediate(4, 0x123456)) ==
                 Wire{0x12, 0x34, 0x56, 0x84});
  STATIC_REQUIRE(encode_call_immediate(1, 0) == 0x00000081U);
  STATIC_REQUIRE(encode_call_immediate(127, 0xFFFFFF) == 0xFFFFFFFFU);

  const Result<CallImmediate> c =
      decode_call_immediate(immediate_from_wire({0x12, 0x34, 0x56, 0x84}));
  REQUIRE(c.has_value());
  CHECK_FALSE(c->aborted);
  CHECK(c->fn == 4);
  CHECK(c->user == 0x123456);
}

TEST_CASE("immediate: NAA -> host value and wire bytes", "[immediate]") {
  // PROTOCOL.md 5.2: success is 0 whatever the function; a failure is rc << 8 | fn, never 0.
  STATIC_REQUIRE(encode_result_immediate(4, ReturnCode::success) == kImmSuccess);
  STATIC_REQUIRE(encode_result_immediate(127, 0) == 0U);
  STATIC_REQUIRE(immediate_to_wire(encode_result_immediate(6, 0)) == Wire{0, 0, 0, 0});
  STATIC_REQUIRE(immediate_to_wire(encode_result_immediate(6, 0x10)) ==
                 Wire{0x00, 0x00, 0x10, 0x06});
  STATIC_REQUIRE(encode_result_immediate(9, ReturnCode::unknown_function) == 0x00000309U);
  STATIC_REQUIRE(encode_result_immediate(127, 0xFFFFFF) == 0xFFFFFF7FU);

  const Result<ResultImmediate> r =
      decode_result_immediate(immediate_from_wire({0x00, 0x00, 0x04, 0x05}));
  REQUIRE(r.has_value());
  CHECK(r->fn == 5);
  CHECK(r->return_code == static_cast<std::uint32_t>(ReturnCode::invalid_arguments));
  // The NAAICE host library reads the return code as imm >> 8.
  CHECK((0x00000405U >> 8) == r->return_code);
}

TEST_CASE("immediate: every function code round trips in both directions", "[immediate]") {
  for (unsigned fn = 1; fn <= 127; ++fn) {
    for (const std::uint32_t bits : {0x000000U, 0x000001U, 0x800000U, 0xA5A5A5U, 0xFFFFFFU}) {
      INFO("fn " << fn << " bits " << bits);
      const auto f = static_cast<std::uint8_t>(fn);
      const std::uint32_t call = encode_call_immediate(f, bits);
      CHECK(call == ((bits << 8) | 0x80U | fn));
      CHECK(*try_encode_call_immediate(f, bits) == call);
      CHECK(*decode_call_immediate(call) == CallImmediate{false, f, bits});
      CHECK(immediate_from_wire(immediate_to_wire(call)) == call);

      const std::uint32_t result = encode_result_immediate(f, bits);
      CHECK(result == (bits == 0 ? 0U : ((bits << 8) | fn)));
      CHECK(*try_encode_result_immediate(f, bits) == result);
      // Success decodes without a function code (0 carries none); a failure echoes it.
      CHECK(*decode_result_immediate(result) ==
            (bits == 0 ? ResultImmediate{0, 0} : ResultImmediate{f, bits}));
      // The directions cannot be confused.
      CHECK(decode_result_immediate(call).error() == Error::bad_field);
      if (result != 0) CHECK(decode_call_immediate(result).error() == Error::bad_field);
    }
  }
}

TEST_CASE("immediate: 0 from the host means the call was aborted", "[immediate]") {
  const Result<CallImmediate> c = decode_call_immediate(0);
  REQUIRE(c.has_value());
  CHECK(c->aborted);
  CHECK(c->fn == 0);
  CHECK(c->user == 0);
  CHECK(decode_call_immediate(immediate_from_wire({0, 0, 0, 0}))->aborted);
}

TEST_CASE("immediate: call decode rejections", "[immediate]") {
  // Bit 7 clear: a NAA -> host value (or garbage).
  for (const std::uint32_t imm : {0x00000001U, 0x00000004U, 0x0000007FU, 0x12345604U, 0xFFFFFF7FU,
                                  0x00000100U, 0xFFFFFF00U}) {
    INFO("imm " << imm);
    CHECK(decode_call_immediate(imm).error() == Error::bad_field);
  }
  // Bit 7 set but function code 0.
  for (const std::uint32_t imm : {0x00000080U, 0x12345680U, 0xFFFFFF80U}) {
    INFO("imm " << imm);
    CHECK(decode_call_immediate(imm).error() == Error::bad_field);
  }
}

TEST_CASE("immediate: result decode rejections", "[immediate]") {
  // Bit 7 set: a host -> NAA value.
  for (const std::uint32_t imm : {0x00000080U, 0x00000084U, 0x12345684U, 0xFFFFFFFFU}) {
    INFO("imm " << imm);
    CHECK(decode_result_immediate(imm).error() == Error::bad_field);
  }
}

TEST_CASE("immediate: results as the reference NAA and older NAAs send them", "[immediate]") {
  // The NAAICE reference software NAA answers success with 0.
  REQUIRE(decode_result_immediate(0).has_value());
  CHECK(decode_result_immediate(0)->return_code == 0);
  // An NAA that echoes the function code on success (naa-sim before this rule): still success.
  CHECK(*decode_result_immediate(0x00000001U) == ResultImmediate{1, 0});
  // A failure without the function code: the return code is imm >> 8 as the NAAICE host reads it.
  CHECK(*decode_result_immediate(0x00000200U) == ResultImmediate{0, 2});
  CHECK(*decode_result_immediate(0xFFFFFF00U) == ResultImmediate{0, 0xFFFFFF});
}

TEST_CASE("immediate: checked encoders reject out-of-range values", "[immediate]") {
  for (const std::uint8_t fn : {std::uint8_t{0}, std::uint8_t{128}, std::uint8_t{0xFF}}) {
    INFO("fn " << int{fn});
    CHECK(try_encode_call_immediate(fn, 1).error() == Error::value_out_of_range);
    CHECK(try_encode_result_immediate(fn, 0).error() == Error::value_out_of_range);
  }
  CHECK(try_encode_call_immediate(1, 0x1000000).error() == Error::value_out_of_range);
  CHECK(try_encode_call_immediate(1, 0xFFFFFFFF).error() == Error::value_out_of_range);
  CHECK(try_encode_result_immediate(1, 0x1000000).error() == Error::value_out_of_range);
  CHECK_FALSE(is_valid_call(0, 0));
  CHECK_FALSE(is_valid_result(1, 0x1000000));
}

TEST_CASE("immediate: the byte order of ImmDt in a vector frame", "[immediate]") {
  // Frame 7 (SEND ONLY WITH IMMEDIATE 0xdeadbeef): ImmDt follows the 12-byte BTH at offset 42.
  const std::vector<std::uint8_t> f = naa::testbench::roce_frame(7).bytes;
  REQUIRE(f.size() >= 58);
  REQUIRE(f[42] == 0x05);
  const Wire wire{f[54], f[55], f[56], f[57]};
  CHECK(immediate_from_wire(wire) == 0xDEADBEEFU);
  CHECK(immediate_to_wire(0xDEADBEEF) == wire);
  // Read as a call: bit 7 of 0xef is set, fn = 0x6f, user bits 0xdeadbe.
  const Result<CallImmediate> c = decode_call_immediate(immediate_from_wire(wire));
  REQUIRE(c.has_value());
  CHECK(c->fn == 0x6F);
  CHECK(c->user == 0xDEADBE);
}

TEST_CASE("immediate: return codes", "[immediate]") {
  STATIC_REQUIRE(static_cast<std::uint32_t>(ReturnCode::success) == 0x00);
  STATIC_REQUIRE(static_cast<std::uint32_t>(ReturnCode::socket_not_available) == 0x01);
  STATIC_REQUIRE(static_cast<std::uint32_t>(ReturnCode::kernel_timeout) == 0x02);
  STATIC_REQUIRE(static_cast<std::uint32_t>(ReturnCode::unknown_function) == 0x03);
  STATIC_REQUIRE(static_cast<std::uint32_t>(ReturnCode::invalid_arguments) == 0x04);
  CHECK(to_string(ReturnCode::success) == "success");
  CHECK(to_string(ReturnCode::socket_not_available) == "socket not available");
  CHECK(to_string(ReturnCode::kernel_timeout) == "kernel timeout");
  CHECK(to_string(ReturnCode::unknown_function) == "unknown function code");
  CHECK(to_string(ReturnCode::invalid_arguments) == "invalid arguments");
  CHECK(to_string(static_cast<ReturnCode>(0x20)) == "kernel-specific");
  CHECK(return_code_name(0x03) == "unknown function code");
  CHECK(return_code_name(0x05) == "reserved");
  CHECK(return_code_name(0x0F) == "reserved");
  CHECK(return_code_name(0x10) == "kernel-specific");
  CHECK(return_code_name(0x7F) == "kernel-specific");
  CHECK(return_code_name(0x80) == "undefined");
  CHECK(return_code_name(0xFFFFFF) == "undefined");
  CHECK_FALSE(is_kernel_specific_return_code(0x0F));
  CHECK(is_kernel_specific_return_code(0x10));
  CHECK(is_kernel_specific_return_code(0x7F));
  CHECK_FALSE(is_kernel_specific_return_code(0x80));
}

TEST_CASE("immediate: built-in function codes", "[immediate]") {
  CHECK(builtin_function(1) == BuiltinFunction::add1);
  CHECK(builtin_function(2) == BuiltinFunction::add2);
  CHECK(builtin_function(3) == BuiltinFunction::nop);
  CHECK(builtin_function(4) == BuiltinFunction::vadd_i32);
  CHECK(builtin_function(5) == BuiltinFunction::sum_u64);
  CHECK(builtin_function(6) == BuiltinFunction::crc32);
  CHECK_FALSE(builtin_function(0).has_value());
  CHECK_FALSE(builtin_function(7).has_value());
  CHECK_FALSE(builtin_function(127).has_value());
  CHECK(to_string(BuiltinFunction::add1) == "add1");
  CHECK(to_string(BuiltinFunction::add2) == "add2");
  CHECK(to_string(BuiltinFunction::nop) == "nop");
  CHECK(to_string(BuiltinFunction::vadd_i32) == "vadd_i32");
  CHECK(to_string(BuiltinFunction::sum_u64) == "sum_u64");
  CHECK(to_string(BuiltinFunction::crc32) == "crc32");
}
