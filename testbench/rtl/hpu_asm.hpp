// RV32IM instruction encoders for the HPU testbenches (The RISC-V Instruction Set Manual,
// Volume I, 2.2-2.3 "Base Instruction Formats", "Immediate Encoding Variants").
#pragma once

#include <cstdint>
#include <vector>

namespace naa::test::rv {

inline std::uint32_t r_type(std::uint32_t f7, unsigned rs2, unsigned rs1, std::uint32_t f3,
                            unsigned rd, std::uint32_t op) {
  return f7 << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op;
}
inline std::uint32_t i_type(std::int32_t imm, unsigned rs1, std::uint32_t f3, unsigned rd,
                            std::uint32_t op) {
  return (static_cast<std::uint32_t>(imm) & 0xFFFU) << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op;
}
inline std::uint32_t s_type(std::int32_t imm, unsigned rs2, unsigned rs1, std::uint32_t f3) {
  const auto u = static_cast<std::uint32_t>(imm);
  return ((u >> 5) & 0x7FU) << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | (u & 0x1FU) << 7 | 0x23;
}
inline std::uint32_t b_type(std::int32_t imm, unsigned rs2, unsigned rs1, std::uint32_t f3) {
  const auto u = static_cast<std::uint32_t>(imm);
  return ((u >> 12) & 1U) << 31 | ((u >> 5) & 0x3FU) << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 |
         ((u >> 1) & 0xFU) << 8 | ((u >> 11) & 1U) << 7 | 0x63;
}
inline std::uint32_t lui(unsigned rd, std::uint32_t upper) {
  return (upper & 0xFFFFF000U) | rd << 7 | 0x37;
}
inline std::uint32_t auipc(unsigned rd, std::uint32_t upper) {
  return (upper & 0xFFFFF000U) | rd << 7 | 0x17;
}
inline std::uint32_t jal(unsigned rd, std::int32_t imm) {
  const auto u = static_cast<std::uint32_t>(imm);
  return ((u >> 20) & 1U) << 31 | ((u >> 1) & 0x3FFU) << 21 | ((u >> 11) & 1U) << 20 |
         ((u >> 12) & 0xFFU) << 12 | rd << 7 | 0x6F;
}
inline std::uint32_t jalr(unsigned rd, unsigned rs1, std::int32_t imm) {
  return i_type(imm, rs1, 0, rd, 0x67);
}
inline std::uint32_t addi(unsigned rd, unsigned rs1, std::int32_t imm) {
  return i_type(imm, rs1, 0, rd, 0x13);
}
inline std::uint32_t load(std::uint32_t f3, unsigned rd, unsigned rs1, std::int32_t imm) {
  return i_type(imm, rs1, f3, rd, 0x03);
}
inline std::uint32_t store(std::uint32_t f3, unsigned rs2, unsigned rs1, std::int32_t imm) {
  return s_type(imm, rs2, rs1, f3);
}
inline std::uint32_t op(std::uint32_t f7, std::uint32_t f3, unsigned rd, unsigned rs1,
                        unsigned rs2) {
  return r_type(f7, rs2, rs1, f3, rd, 0x33);
}
inline constexpr std::uint32_t kRet = 0x00008067;  // jalr x0, 0(x1)
inline constexpr std::uint32_t kEcall = 0x00000073;
inline constexpr std::uint32_t kEbreak = 0x00100073;
inline constexpr std::uint32_t kFence = 0x0FF0000F;

// li rd, v: LUI + ADDI (ADDI's immediate is sign-extended, hence the rounding).
inline void li(std::vector<std::uint32_t>& p, unsigned rd, std::uint32_t v) {
  const std::uint32_t upper = (v + 0x800U) & 0xFFFFF000U;
  p.push_back(lui(rd, upper));
  p.push_back(addi(rd, rd, static_cast<std::int32_t>(v - upper)));
}

}  // namespace naa::test::rv
