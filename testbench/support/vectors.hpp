// Test support: the conformance vectors of testbench/vectors (see its README) and hex helpers.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace naa::testbench {

inline std::vector<std::uint8_t> from_hex(const std::string& hex) {
  std::vector<std::uint8_t> out;
  std::string digits;
  for (char c : hex) {
    if (std::isxdigit(static_cast<unsigned char>(c)) != 0) digits.push_back(c);
  }
  if (digits.size() % 2 != 0) throw std::runtime_error("odd number of hex digits");
  for (std::size_t i = 0; i < digits.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoul(digits.substr(i, 2), nullptr, 16)));
  }
  return out;
}

inline std::string to_hex(const std::vector<std::uint8_t>& bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

struct VectorFrame {
  int index = 0;
  std::string name;
  std::vector<std::uint8_t> bytes;  // an Ethernet frame without FCS
};

inline std::string vectors_dir() {
  return NAA_VECTORS_DIR;
}

// roce_frames.txt: one frame per line, `index name hex`.
inline std::vector<VectorFrame> load_roce_frames() {
  std::ifstream in(vectors_dir() + "/roce_frames.txt");
  if (!in) throw std::runtime_error("cannot open " + vectors_dir() + "/roce_frames.txt");
  std::vector<VectorFrame> frames;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    VectorFrame f;
    std::string hex;
    ls >> f.index >> f.name >> hex;
    f.bytes = from_hex(hex);
    frames.push_back(std::move(f));
  }
  return frames;
}

inline VectorFrame roce_frame(int index) {
  for (auto& f : load_roce_frames()) {
    if (f.index == index) return f;
  }
  throw std::runtime_error("no vector frame " + std::to_string(index));
}

// cx4lx_cnp.txt: comment lines, then one frame in hex.
inline std::vector<std::uint8_t> load_cx4lx_frame() {
  std::ifstream in(vectors_dir() + "/cx4lx_cnp.txt");
  if (!in) throw std::runtime_error("cannot open cx4lx_cnp.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') return from_hex(line);
  }
  throw std::runtime_error("no frame in cx4lx_cnp.txt");
}

}  // namespace naa::testbench
