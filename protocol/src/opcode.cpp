#include "naa/protocol/opcode.hpp"

#include <cstddef>

#include "opcode_table.hpp"

namespace naa::protocol {

const OpcodeInfo* find_opcode(std::uint8_t code) noexcept {
  return opcode_table::find(code);
}

std::size_t extension_headers_size(std::uint16_t headers) noexcept {
  return headers < opcode_table::kHeaderBitsCombinations
             ? opcode_table::kHeadersSize[headers]
             : opcode_table::headers_size_by_bits(headers);
}

}  // namespace naa::protocol
