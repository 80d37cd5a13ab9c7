#include "test_addresses.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace naa::testbench {

namespace {

constexpr int kBlocks = 64 * 256;  // 127.64.0.0/10
constexpr int kRocePort = 4791;    // RoCEv2 (PROTOCOL.md 1)

std::string block_prefix(int i) {
  return "127." + std::to_string(64 + i / 256) + "." + std::to_string(i % 256);
}

}  // namespace

std::string address_lock_dir() {
  const char* env = std::getenv("NAA_TEST_LOCK_DIR");
  const std::string dir = env != nullptr && *env != '\0'
                              ? std::string(env)
                              : "/tmp/naa-test-addresses-" + std::to_string(::getuid());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    throw std::runtime_error("test addresses: cannot create " + dir + ": " + std::strerror(errno));
  }
  return dir;
}

bool udp_4791_free(const std::string& ip) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(kRocePort);
  const bool ok = ::inet_pton(AF_INET, ip.c_str(), &a.sin_addr) == 1 &&
                  ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

AddressBlock::AddressBlock() {
  const std::string dir = address_lock_dir();
  int locked_but_bound = 0;
  for (int i = 0; i < kBlocks; ++i) {
    const std::string prefix = block_prefix(i);
    const std::string path = dir + "/" + prefix + ".lock";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
      throw std::runtime_error("test addresses: cannot open " + path + ": " + std::strerror(errno));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {  // another test holds it
      ::close(fd);
      continue;
    }
    bool free = true;
    for (int host = 1; host <= 254 && free; ++host)
      free = udp_4791_free(prefix + "." + std::to_string(host));
    if (!free) {  // used outside the scheme: leave it
      ++locked_but_bound;
      ::close(fd);
      continue;
    }
    fd_ = fd;
    prefix_ = prefix;
    return;
  }
  throw std::runtime_error(
      "test addresses: no free block in 127.64.0.0/10 (" + std::to_string(locked_but_bound) +
      " unlocked blocks had UDP 4791 taken; if that is all of them, something binds 0.0.0.0:4791, "
      "e.g. the Linux rdma_rxe module)");
}

AddressBlock::~AddressBlock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

std::string AddressBlock::ip(int host) const {
  if (host < 1 || host > 254) throw std::out_of_range("AddressBlock::ip: host must be 1..254");
  return prefix_ + "." + std::to_string(host);
}

std::uint32_t AddressBlock::ip_u32(int host) const {
  in_addr a{};
  if (::inet_pton(AF_INET, ip(host).c_str(), &a) != 1)
    throw std::logic_error("bad block " + prefix_);
  return ntohl(a.s_addr);
}

const AddressBlock& test_addresses() {
  static const AddressBlock block;
  return block;
}

}  // namespace naa::testbench
