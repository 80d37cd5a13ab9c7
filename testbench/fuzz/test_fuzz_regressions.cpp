// Replays every fuzz regression input (testbench/fuzz/regressions/<target>/*) and every committed
// seed (testbench/fuzz/corpus/<target>/*) through the fuzz target functions, built with the normal
// compiler: a crash the fuzzer once found stays fixed. The stateful targets (naa_rx, host_rx) keep
// one model/endpoint for the whole process, as under libFuzzer; each file is one input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "fuzz.hpp"
#include "test_addresses.hpp"

namespace fs = std::filesystem;

namespace {

using Target = int (*)(const std::uint8_t*, std::size_t);

std::size_t replay(const std::string& name, Target fn) {
  std::size_t n = 0;
  for (const char* kind : {"regressions", "corpus"}) {
    const fs::path dir = fs::path(NAA_FUZZ_DIR) / kind / name;
    if (!fs::is_directory(dir)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      INFO("input " << f);
      std::ifstream in(f, std::ios::binary);
      const std::vector<std::uint8_t> data((std::istreambuf_iterator<char>(in)),
                                           std::istreambuf_iterator<char>());
      CHECK(fn(data.data(), data.size()) == 0);
      ++n;
    }
  }
  return n;
}

}  // namespace

TEST_CASE("fuzz regressions: protocol decoders", "[fuzz]") {
  CHECK(replay("packet", naa::fuzz::packet) > 0);
  CHECK(replay("cm_mad", naa::fuzz::cm_mad) > 0);
  CHECK(replay("mrsp", naa::fuzz::mrsp) > 0);
}

TEST_CASE("fuzz regressions: NAA receive path", "[fuzz]") {
  CHECK(replay("naa_rx", naa::fuzz::naa_rx) > 0);
}

TEST_CASE("fuzz regressions: host endpoint receive path", "[fuzz]") {
  // The endpoint binds <block>.1 and .2 of this test's own address block (test_addresses.hpp).
  ::setenv("NAA_FUZZ_NET", naa::testbench::test_addresses().prefix().c_str(), 1);
  CHECK(replay("host_rx", naa::fuzz::host_rx) > 0);
}
