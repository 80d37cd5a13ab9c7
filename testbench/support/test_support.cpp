// The test support itself: address blocks (C++ and shell claim disjoint blocks, the bind check
// skips a block something else uses) and the seed helper (NAA_TEST_SEED parsing).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "seed.hpp"
#include "test_addresses.hpp"

using naa::testbench::AddressBlock;

namespace {

// Runs a bash command line; returns its stdout (trailing newline removed).
std::string bash(const std::string& script) {
  const std::string cmd = "bash -c '" + script + "'";
  std::unique_ptr<FILE, int (*)(FILE*)> f(::popen(cmd.c_str(), "r"), ::pclose);
  REQUIRE(f);
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, f.get()) != nullptr)
    out += buf;
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  return out;
}

}  // namespace

TEST_CASE("address blocks: two claims never share a block, and a released block is reused",
          "[support]") {
  std::string first_prefix;
  {
    AddressBlock a;
    AddressBlock b;
    first_prefix = a.prefix();
    CHECK(a.prefix() != b.prefix());
    CHECK(a.prefix().rfind("127.", 0) == 0);
    CHECK(a.ip(1) == a.prefix() + ".1");
    CHECK(a.ip(254) == a.prefix() + ".254");
    CHECK_THROWS_AS(a.ip(0), std::out_of_range);
    CHECK_THROWS_AS(a.ip(255), std::out_of_range);
    // In 127.64.0.0/10: disjoint from 127.0.0.x and the hand-numbered blocks still in use.
    in_addr addr{};
    REQUIRE(::inet_pton(AF_INET, a.ip(1).c_str(), &addr) == 1);
    CHECK((ntohl(addr.s_addr) & 0xFFC00000U) == 0x7F400000U);
  }
  AddressBlock again;  // both released: the lowest free block is claimed again
  CHECK(again.prefix() == first_prefix);
}

TEST_CASE("address blocks: a block whose UDP 4791 is bound outside the scheme is skipped",
          "[support]") {
  std::string prefix;
  {
    AddressBlock probe;
    prefix = probe.prefix();
  }
  // Something that does not use the locks (a stale naa-sim, a hand-numbered test) binds .7.
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(4791);
  REQUIRE(::inet_pton(AF_INET, (prefix + ".7").c_str(), &a.sin_addr) == 1);
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
  CHECK_FALSE(naa::testbench::udp_4791_free(prefix + ".7"));
  {
    AddressBlock b;
    CHECK(b.prefix() != prefix);
  }
  ::close(fd);
  CHECK(naa::testbench::udp_4791_free(prefix + ".7"));
}

TEST_CASE("address blocks: scripts (test_addresses.sh) and C++ tests claim disjoint blocks",
          "[support]") {
  AddressBlock cpp;
  const std::string lib = NAA_TEST_ADDRESSES_SH;
  // The script's block, while the C++ one is held.
  const std::string script = bash(". " + lib + " && naa_claim_addresses && echo $NAA_TEST_BLOCK");
  INFO("C++ " << cpp.prefix() << ", script " << script);
  REQUIRE(script.rfind("127.", 0) == 0);
  CHECK(script != cpp.prefix());
  // Two claims in one script differ too, and a C++ claim made while a script holds its block
  // gets another one.
  const std::string two = bash(". " + lib +
                               " && naa_claim_addresses && a=$NAA_TEST_BLOCK && "
                               "naa_claim_addresses && echo $a $NAA_TEST_BLOCK");
  const auto space = two.find(' ');
  REQUIRE(space != std::string::npos);
  CHECK(two.substr(0, space) != two.substr(space + 1));
}

TEST_CASE("seeds: NAA_TEST_SEED is parsed in decimal and hex, anything else is refused",
          "[support]") {
  using naa::testbench::parse_seed;
  CHECK(parse_seed("12345", "NAA_TEST_SEED") == 12345);
  CHECK(parse_seed("0xDEADBEEF", "NAA_TEST_SEED") == 0xDEADBEEFULL);
  CHECK(parse_seed("18446744073709551615", "NAA_TEST_SEED") == ~std::uint64_t{0});
  for (const char* bad : {"", "12x", "-1", " 5", "seed", "0x", "18446744073709551616"}) {
    INFO("'" << bad << "'");
    CHECK_THROWS_WITH(parse_seed(bad, "NAA_TEST_SEED"), Catch::Contains("NAA_TEST_SEED="));
  }
}

// Run by the next test case in a child process (hidden: not registered with CTest).
TEST_CASE("seeds: print the seed", "[.][support]") {
  std::printf("seed=%llu\n", static_cast<unsigned long long>(naa::testbench::test_seed()));
}

TEST_CASE("seeds: one seed per process, NAA_TEST_SEED replays it, NAA_RTL_SEED is an alias",
          "[support]") {
  const std::uint64_t s = naa::testbench::test_seed();
  CHECK(naa::testbench::test_seed() == s);
  CHECK(naa::testbench::test_seed_drawn());
  CHECK(naa::testbench::seed_for("a") != naa::testbench::seed_for("b"));
  CHECK(naa::testbench::seed_for("a") == naa::testbench::seed_for("a"));
  const std::string self = "/proc/" + std::to_string(::getpid()) + "/exe";
  const std::string run = " " + self + " \"seeds: print the seed\" | grep ^seed=";
  CHECK(bash("NAA_TEST_SEED=0x2A NAA_RTL_SEED=7" + run) == "seed=42");
  CHECK(bash("env -u NAA_TEST_SEED NAA_RTL_SEED=7" + run) == "seed=7");
  // A malformed seed is an error, never silently a random seed.
  CHECK(bash("NAA_TEST_SEED=banana " + self +
             " \"seeds: print the seed\" 2>&1 | grep -c \"NAA_TEST_SEED=banana: not a seed\"") ==
        "1");
}
