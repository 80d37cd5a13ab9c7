// The UDP GSO rules both batched senders share (naa/protocol/udp_gso.hpp): which datagrams one
// UDP_SEGMENT message may carry, where GSO may go, and which errors switch it off.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstddef>
#include <vector>

#include "naa/protocol/udp_gso.hpp"

namespace gso = naa::protocol::udp_gso;

namespace {

std::size_t run_end(const std::vector<std::size_t>& sizes, const std::vector<int>& to,
                    std::size_t first = 0) {
  return gso::run_end(
      first, sizes.size(), [&](std::size_t k) { return sizes[k]; },
      [&](std::size_t k) { return to[k] == to[first]; });
}

}  // namespace

TEST_CASE("udp gso: a run is equal sizes to one destination, the last may be shorter", "[gso]") {
  CHECK(run_end({4096, 4096, 4096, 100, 4096}, {1, 1, 1, 1, 1}) == 4);  // ends after the short one
  CHECK(run_end({4096, 4096, 5000}, {1, 1, 1}) == 2);                   // a larger one starts anew
  CHECK(run_end({4096, 4096, 4096}, {1, 1, 2}) == 2);                   // another destination
  CHECK(run_end({64}, {1}) == 1);
  CHECK(run_end({100, 100, 100}, {1, 1, 1}, 1) == 3);
}

TEST_CASE("udp gso: at most 64 segments and 64 KiB of payload per message", "[gso]") {
  CHECK(run_end(std::vector<std::size_t>(100, 64), std::vector<int>(100, 1)) == 64);
  // 15 x 4112 = 61680 fits, a 16th (65792) would not.
  CHECK(run_end(std::vector<std::size_t>(20, 4112), std::vector<int>(20, 1)) == 15);
}

TEST_CASE("udp gso: only toward loopback, refusals switch it off and transients do not", "[gso]") {
  CHECK(gso::allowed_to(0x7F000001U));
  CHECK(gso::allowed_to(0x7F284E02U));
  CHECK_FALSE(gso::allowed_to(0x0A4D0001U));  // the Soft-RoCE VM's tap address 10.77.0.1
  CHECK(gso::refused(EIO));
  CHECK(gso::refused(EOPNOTSUPP));
  CHECK_FALSE(gso::refused(EAGAIN));
  CHECK_FALSE(gso::refused(ECONNREFUSED));
}
