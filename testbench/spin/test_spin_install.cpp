// sPIN code with the connection (docs/protocol.md "Handler images"): the host writes a handler
// image (built by naa_add_handler) into the HANDLER_IMAGE region and installs it with MRSP 0x04;
// naa-sim, started without --handler, runs it on the HPU cores (model, rtl, lockstep) with the
// host's initial state. Bad images, built here by patching a good one, are refused with their
// MRSP error codes.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "naa/host/error.hpp"
#include "naa/host/session.hpp"
#include "naa/protocol/bytes.hpp"
#include "naa_sim.hpp"
#include "naaice.h"
#include "seed.hpp"
#include "session_against_sim.hpp"
#include "test_addresses.hpp"

using namespace std::chrono_literals;
using naa::host::Errc;
using naa::host::Region;
using naa::testbench::NaaSim;
namespace host = naa::host;

namespace {

using naa::testbench::random_bytes;
using naa::testbench::sim_ip;

std::vector<std::uint8_t> read_file(const char* path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f);
  return {std::istreambuf_iterator<char>(f), {}};
}

host::SessionOptions install_opts(std::uint8_t fn, std::uint64_t arg, int m,
                                  std::vector<std::uint8_t> image,
                                  std::vector<std::uint8_t> state = {}) {
  host::SessionOptions o = naa::testbench::stream_session_options(fn, m, arg, 60000ms);
  o.handler_image = std::move(image);
  o.handler_state = std::move(state);
  return o;
}

// The ELF32 program header of the first PT_LOAD segment (ELF spec: e_phoff at 28, e_phentsize
// at 42, e_phnum at 44; p_type at 0, p_vaddr at 8).
std::size_t first_load_header(const std::vector<std::uint8_t>& elf) {
  const std::uint32_t phoff = naa::protocol::load_le32(elf.data() + 28);
  const auto le16 = [&](std::size_t at) { return elf.at(at) | elf.at(at + 1) << 8; };
  const int phentsize = le16(42);
  const int phnum = le16(44);
  for (int i = 0; i < phnum; ++i) {
    const std::size_t at = phoff + static_cast<std::size_t>(phentsize * i);
    if (naa::protocol::load_le32(elf.data() + at) == 1) return at;
  }
  FAIL("no PT_LOAD segment");
  return 0;
}

}  // namespace

TEST_CASE("spin: a handler image installed with the connection runs with the host's state") {
  const std::uint64_t seed = naa::testbench::test_seed();
  INFO("NAA_TEST_SEED=" << seed);
  const auto image = read_file(SPIN_XOR_COUNT_ELF);
  for (const std::string mode : {"model", "rtl", "lockstep"}) {
    SECTION(mode) {
      NaaSim sim(sim_ip(), {"--hpu=" + mode, "--hpus", "4"});  // no --handler: nothing built in
      REQUIRE(sim.ready());
      const std::uint8_t key = static_cast<std::uint8_t>(0x5A ^ seed);
      const auto in = random_bytes(24 * 1024 + 5, seed);
      auto io = in;
      std::vector<std::uint8_t> counts(8);
      // The handlers' counters start from the host's state: 1000 packets, 0 bytes.
      std::vector<std::uint8_t> state(8, 0);
      naa::protocol::store_le32(state.data(), 1000);
      host::Session s(install_opts(20, key, 1, image, state),
                      {Region::inout(io).stream(), Region::output(counts)});
      std::string st = sim.stats_text();
      CHECK(NaaSim::stat_in(st, "mrsp.images_installed") == 1);
      CHECK(NaaSim::stat_in(st, "handler.images_installed") == 1);
      // The HANDLER_IMAGE region is gone once installed: the two regions and the descriptor.
      CHECK(NaaSim::stat_in(st, "mrsp.regions_held") == 3);
      std::uint64_t payloads_before = 0;
      for (int call = 0; call < 2; ++call) {
        INFO("call " << call);
        io = in;
        REQUIRE(s.call(20).return_code == 0);
        for (std::size_t i = 0; i < in.size(); ++i) {
          REQUIRE(io[i] == static_cast<std::uint8_t>(in[i] ^ key));
        }
        st = sim.stats_text();
        const std::uint64_t payloads = NaaSim::stat_in(st, "handler.payloads") - payloads_before;
        payloads_before += payloads;
        CHECK(payloads >= 6);  // 24 KiB in packets of at most 4 KiB
        // Every call starts from the installed state, not from the last call's.
        CHECK(naa::protocol::load_le32(counts.data()) == 1000 + payloads);
        CHECK(naa::protocol::load_le32(counts.data() + 4) == in.size());
      }
      CHECK(NaaSim::stat_in(st, "handler.segv") == 0);
      CHECK(NaaSim::stat_in(st, "handler.compute_cycles") > 3 * 2 * in.size());
      CHECK(NaaSim::stat_in(st, "rtl.hpu.verilated") == (mode == "model" ? 0U : 4U));
      if (mode == "lockstep") CHECK(NaaSim::stat_in(st, "rtl.lockstep.divergences") == 0);
    }
  }
}

TEST_CASE("spin: naa-sim refuses bad handler images with their MRSP error codes") {
  const auto good = read_file(SPIN_XOR_COUNT_ELF);
  struct Case {
    const char* what;
    std::vector<std::uint8_t> image;
    Errc errc;
    const char* counter;
  };
  std::vector<Case> cases;
  auto patched = [&](std::size_t at, std::vector<std::uint8_t> bytes) {
    auto img = good;
    std::copy(bytes.begin(), bytes.end(), img.begin() + static_cast<std::ptrdiff_t>(at));
    return img;
  };
  // e_machine (offset 18) EM_X86_64 = 62; e_ident[EI_CLASS] (offset 4) ELFCLASS64 = 2.
  cases.push_back(
      {"x86-64 machine", patched(18, {62, 0}), Errc::mrsp_wrong_machine, "mrsp.error_4"});
  cases.push_back({"ELFCLASS64", patched(4, {2}), Errc::mrsp_wrong_machine, "mrsp.error_4"});
  // The first loadable segment moved to 1 MiB: outside the 64 KiB at 0x10000.
  cases.push_back({"segment outside the image window",
                   patched(first_load_header(good) + 8, {0x00, 0x00, 0x10, 0x00}),
                   Errc::mrsp_image_too_large, "mrsp.error_5"});
  auto huge = good;
  huge.resize(1024 * 1024 + 1);  // beyond the largest HANDLER_IMAGE region (refused at 0x01)
  cases.push_back({"a file over 1 MiB", huge, Errc::mrsp_image_too_large, "mrsp.error_5"});
  cases.push_back({"no naa_spin_info", read_file(SPIN_NOT_A_HANDLER_ELF),
                   Errc::mrsp_missing_entry_point, "mrsp.error_6"});
  cases.push_back({"truncated", std::vector<std::uint8_t>(good.begin(), good.begin() + 100),
                   Errc::mrsp_bad_image, "mrsp.error_7"});
  // Built for function 1, installed for the descriptor's function 20.
  cases.push_back({"another function code", read_file(SPIN_XOR_COUNT_FN1_ELF), Errc::mrsp_bad_image,
                   "mrsp.error_7"});

  NaaSim sim(sim_ip(), {"--hpus", "2"});
  REQUIRE(sim.ready());
  int m = 1;
  for (const Case& c : cases) {
    INFO(c.what);
    const std::uint64_t before = NaaSim::stat_in(sim.stats_text(), c.counter);
    auto io = random_bytes(4096, 7);
    std::vector<std::uint8_t> counts(8);
    try {
      host::Session s(install_opts(20, 0, m++, c.image),
                      {Region::inout(io).stream(), Region::output(counts)});
      FAIL("the NAA accepted the image");
    } catch (const host::Error& e) {
      INFO(e.what());
      CHECK(e.code() == make_error_code(c.errc));
    }
    CHECK(NaaSim::stat_in(sim.stats_text(), c.counter) == before + 1);
  }
  // The good image still installs on the same naa-sim, and nothing of the refused ones is held.
  auto io = random_bytes(4096, 8);
  const auto in = io;
  std::vector<std::uint8_t> counts(8);
  host::Session s(install_opts(20, 0x11, m++, good),
                  {Region::inout(io).stream(), Region::output(counts)});
  REQUIRE(s.call(20).return_code == 0);
  CHECK(io[0] == static_cast<std::uint8_t>(in[0] ^ 0x11));
  CHECK(NaaSim::stat_in(sim.stats_text(), "handler.images_refused") == cases.size() - 1);
  CHECK(NaaSim::stat_in(sim.stats_text(), "mrsp.regions_held") == 3);
}

TEST_CASE("spin: naa-call --handler installs the image and --handler-state its state") {
  const std::uint64_t seed = naa::testbench::test_seed();
  INFO("NAA_TEST_SEED=" << seed);
  NaaSim sim(sim_ip(), {"--hpus", "2", "--hpu=model"});
  REQUIRE(sim.ready());
  const std::string dir = "/tmp/naa-spin-install-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, const std::vector<std::uint8_t>& bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),  // NOLINT: bytes to a file
               static_cast<std::streamsize>(bytes.size()));
    return dir + "/" + name;
  };
  const auto in = random_bytes(10000, seed);
  std::vector<std::uint8_t> state(8, 0);
  naa::protocol::store_le32(state.data(), 77);
  const std::vector<std::string> common = {"--naa",
                                           sim_ip(),
                                           "--local",
                                           naa::testbench::host_ip(1),
                                           "--fn",
                                           "20",
                                           "--stream-arg",
                                           "0x3C",
                                           "--inout",
                                           write("in.bin", in) + "@" + dir + "/out.bin",
                                           "--out",
                                           "8@" + dir + "/counts.bin",
                                           "--handler-state",
                                           write("state.bin", state),
                                           "--quiet"};
  auto args = common;
  args.insert(args.end(), {"--handler", SPIN_XOR_COUNT_ELF});
  auto r = naa::testbench::run_program(NAA_CALL_PATH, args, {}, 60s);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto out = read_file((dir + "/out.bin").c_str());
  REQUIRE(out.size() == in.size());
  for (std::size_t i = 0; i < in.size(); ++i)
    REQUIRE(out[i] == static_cast<std::uint8_t>(in[i] ^ 0x3C));
  const auto counts = read_file((dir + "/counts.bin").c_str());
  const std::uint64_t payloads = NaaSim::stat_in(sim.stats_text(), "handler.payloads");
  CHECK(naa::protocol::load_le32(counts.data()) == 77 + payloads);
  CHECK(naa::protocol::load_le32(counts.data() + 4) == in.size());
  // A bad image: naa-call says which MRSP error and exits 3.
  auto bad = read_file(SPIN_XOR_COUNT_ELF);
  bad[18] = 62;  // e_machine EM_X86_64
  args = common;
  args.insert(args.end(), {"--handler", write("x86.elf", bad)});
  r = naa::testbench::run_program(NAA_CALL_PATH, args, {}, 60s);
  INFO(r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("MRSP error 0x04 (wrong machine)") != std::string::npos);
  CHECK(r.err.find("[mrsp_wrong_machine]") != std::string::npos);
  // A state without an image is a usage error.
  r = naa::testbench::run_program(NAA_CALL_PATH, common, {}, 60s);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--handler-state needs --handler") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("spin: AP1 installs a handler image with naaice_ap1_set_handler, a bad one fails") {
  const std::uint64_t seed = naa::testbench::test_seed();
  INFO("NAA_TEST_SEED=" << seed);
  NaaSim sim(sim_ip(), {"--hpus", "2", "--hpu=model"});
  REQUIRE(sim.ready());
  const auto image = read_file(SPIN_XOR_COUNT_ELF);
  auto bad = image;
  bad[18] = 62;  // e_machine EM_X86_64
  std::vector<std::uint8_t> state(8, 0);
  naa::protocol::store_le32(state.data(), 5);
  const auto in = random_bytes(6000, seed);
  for (const bool good : {true, false}) {
    INFO((good ? "good image" : "x86-64 image"));
    std::vector<char> io(in.begin(), in.end());
    std::vector<char> counts(8, 0);
    char* params[] = {io.data(), counts.data()};
    size_t sizes[] = {io.size(), counts.size()};
    naaice_communication_context* ctx = nullptr;
    const std::string local = naa::testbench::host_ip(good ? 3 : 4);
    REQUIRE(naaice_init_communication_context(&ctx, 0, sizes, params, 2, 0, nullptr, 20,
                                              local.c_str(), sim_ip().c_str(),
                                              SERVER_CONNECTION_PORT) == 0);
    REQUIRE(naaice_set_input_mr(ctx, 0) == 0);
    REQUIRE(naaice_set_output_mr(ctx, 0) == 0);
    REQUIRE(naaice_set_output_mr(ctx, 1) == 0);
    const auto& img = good ? image : bad;
    REQUIRE(naaice_ap1_set_handler(ctx, img.data(), img.size(), state.data(), state.size(), 0x66) ==
            0);
    REQUIRE(naaice_register_mrs(ctx) == 0);
    if (good) {
      const int mrsp = naaice_do_mrsp(ctx);
      INFO(naaice_ap1_last_error(ctx));
      REQUIRE(mrsp == 0);
      REQUIRE(naaice_do_data_transfer(ctx) == 0);
      CHECK(ctx->naa_returncode == 0);
      for (std::size_t i = 0; i < in.size(); ++i)
        REQUIRE(static_cast<std::uint8_t>(io[i]) == static_cast<std::uint8_t>(in[i] ^ 0x66));
      const auto* c = reinterpret_cast<const std::uint8_t*>(counts.data());  // NOLINT
      CHECK(naa::protocol::load_le32(c) ==
            5 + NaaSim::stat_in(sim.stats_text(), "handler.payloads"));
    } else {
      CHECK(naaice_do_mrsp(ctx) == -1);
      const std::string why = naaice_ap1_last_error(ctx);
      INFO(why);
      CHECK(why.find("MRSP error 0x04 (wrong machine)") != std::string::npos);
    }
    (void)naaice_disconnect_and_cleanup(ctx);
    std::free(ctx);  // NOLINT: the reference API allocates the context with malloc
  }
}
