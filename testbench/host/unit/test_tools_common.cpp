// host/tools/common: the -a/--naa IP[:PORT] argument that naa-call, naa-bench and softroce-probe
// share (naa/tools/naa_address.hpp): what it accepts, and that anything else is refused (the tools
// turn that into usage, exit 2).
#include <catch2/catch.hpp>

#include <string>

#include "naa/tools/naa_address.hpp"

using naa::tools::parse_naa_address;

TEST_CASE("tools common: --naa IP[:PORT] parses the address and the CM port", "[unit][tools]") {
  const auto plain = parse_naa_address("10.0.0.2");
  REQUIRE(plain.has_value());
  CHECK(plain->ip == "10.0.0.2");
  CHECK_FALSE(plain->cm_port.has_value());

  const auto with_port = parse_naa_address("127.40.1.2:4792");
  REQUIRE(with_port.has_value());
  CHECK(with_port->ip == "127.40.1.2");
  REQUIRE(with_port->cm_port.has_value());
  CHECK(*with_port->cm_port == 4792);

  CHECK(parse_naa_address("1.2.3.4:1")->cm_port == 1);
  CHECK(parse_naa_address("1.2.3.4:65535")->cm_port == 65535);
}

TEST_CASE("tools common: a bad --naa argument is refused", "[unit][tools]") {
  for (const std::string bad :
       {"", "naa", "1.2.3", "1.2.3.400", "1.2.3.4:", "1.2.3.4:0", "1.2.3.4:65536", "1.2.3.4:12x",
        "1.2.3.4:-1", "1.2.3.4:0x10", "1.2.3.4:123456", ":4791", "1.2.3.4:47:91"}) {
    INFO("argument '" << bad << "'");
    CHECK_FALSE(parse_naa_address(bad).has_value());
  }
}
