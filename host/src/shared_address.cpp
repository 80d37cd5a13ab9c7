// Many processes on one IPv4 address (shared_address.hpp, docs/adr/0006): the slot claim, the
// state file kept under the address lock, and the classic BPF steering program.
#include "shared_address.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "naa/host/ipv4.hpp"
#include "naa/protocol/cm.hpp"
#include "naa/protocol/headers.hpp"
#include "udp_endpoint.hpp"

namespace naa::host::detail {
namespace {

// Offsets in the UDP payload (PROTOCOL.md 1 and 4; IBTA vol. 1 9.2, 13.4.2, 12.6): the BTH's
// destination QPN (bytes 5..7), and for a CM MAD after BTH (12) and DETH (8): the MAD's class,
// its attribute ID, the remote comm ID (all messages but REQ) and the REQ's service ID port (its
// low 16 bits, the rdma_cm port).
constexpr std::uint32_t kDestQpnTop = 5;
constexpr std::uint32_t kDestQpnLow16 = 6;
constexpr std::uint32_t kMadOffset = 12 + 8;
constexpr std::uint32_t kMadClass = kMadOffset + 1;
constexpr std::uint32_t kMadAttrId = kMadOffset + 16;
constexpr std::uint32_t kRemoteCommIdTop = kMadOffset + 24 + 4;
constexpr std::uint32_t kReqServicePort = kMadOffset + 24 + 8 + 6;

std::string state_dir(std::uint32_t ip) {
  return "/tmp/naa-shared-" + std::to_string(::getuid()) + "/" + format_ipv4(ip);
}

// The address lock, held while the state file and the group change.
class DirLock {
 public:
  explicit DirLock(const std::string& dir) {
    fd_ = ::open((dir + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ >= 0) {
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
    }
  }
  ~DirLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  [[nodiscard]] bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

std::string slot_path(const std::string& dir, unsigned slot) {
  return dir + "/slot-" + std::to_string(slot);
}

// The slot's lock fd if it was free (now ours), else -1.
int try_claim(const std::string& dir, unsigned slot) {
  const int fd = ::open(slot_path(dir, slot).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The state file: "order s0 s1 ...", then "listen <port> <slot>" lines.
SteeringTable read_state(const std::string& dir) {
  SteeringTable t;
  std::ifstream in(dir + "/group");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string what;
    words >> what;
    unsigned a = 0;
    unsigned b = 0;
    if (what == "order") {
      while (words >> a) {
        if (a >= kFirstSlot && a <= kLastSlot) t.order.push_back(static_cast<std::uint8_t>(a));
      }
    } else if (what == "listen" && (words >> a >> b) && a <= 0xFFFF && b >= kFirstSlot &&
               b <= kLastSlot) {
      t.listeners.emplace_back(static_cast<std::uint16_t>(a), static_cast<std::uint8_t>(b));
    }
  }
  return t;
}

bool write_state(const std::string& dir, const SteeringTable& t) {
  const std::string tmp = dir + "/group.tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "order";
    for (const std::uint8_t s : t.order)
      out << ' ' << unsigned{s};
    out << '\n';
    for (const auto& [port, slot] : t.listeners)
      out << "listen " << port << ' ' << unsigned{slot} << '\n';
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), (dir + "/group").c_str()) == 0;
}

// The socket at `index` left: the kernel moves the group's last socket into its place
// (net/core/sock_reuseport.c, __reuseport_detach_sock).
void remove_at(SteeringTable& t, std::size_t index) {
  const std::uint8_t slot = t.order[index];
  t.order[index] = t.order.back();
  t.order.pop_back();
  std::erase_if(t.listeners, [slot](const auto& l) { return l.second == slot; });
}

// Drops the slots whose process is gone (its slot lock is free: the kernel closed its socket when
// it died). Several gone since the last rewrite are removed in index order, which is the kernel's
// order only if they went in that order (docs/adr/0006, "Consequences").
void drop_dead(const std::string& dir, SteeringTable& t, std::uint8_t self) {
  for (std::size_t i = 0; i < t.order.size();) {
    const std::uint8_t s = t.order[i];
    if (s != self) {
      const int fd = try_claim(dir, s);
      if (fd >= 0) {
        ::close(fd);
        remove_at(t, i);
        continue;  // index i now holds the moved socket
      }
    }
    ++i;
  }
  // A listener whose slot is no member (a table left by a crash mid-change) listens no more.
  std::erase_if(t.listeners, [&](const auto& l) {
    return l.second != self && std::find(t.order.begin(), t.order.end(), l.second) == t.order.end();
  });
}

bool make_dir(const std::string& path) {
  return ::mkdir(path.c_str(), 0700) == 0 || errno == EEXIST;
}

}  // namespace

std::vector<sock_filter> steering_program(const SteeringTable& table) {
  std::vector<sock_filter> p;
  auto stmt = [&](std::uint16_t code, std::uint32_t k) { p.push_back(BPF_STMT(code, k)); };
  auto jeq = [&](std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, jt, jf));
  };
  std::vector<std::size_t> to_lookup;  // "ja lookup" instructions to patch
  auto ja_lookup = [&] {
    to_lookup.push_back(p.size());
    stmt(BPF_JMP | BPF_JA, 0);
  };
  auto index_of = [&](std::uint8_t slot) -> std::optional<std::uint32_t> {
    auto it = std::find(table.order.begin(), table.order.end(), slot);
    if (it == table.order.end()) return std::nullopt;
    return static_cast<std::uint32_t>(it - table.order.begin());
  };
  // A = the destination QPN's top byte: a slot, or 0 (QP1 and QPNs nobody sharing hands out).
  stmt(BPF_LD | BPF_B | BPF_ABS, kDestQpnTop);
  jeq(0, 1, 0);
  ja_lookup();
  stmt(BPF_LD | BPF_H | BPF_ABS, kDestQpnLow16);
  jeq(protocol::kCmQpn, 1, 0);
  stmt(BPF_RET | BPF_K, kNoSocket);
  stmt(BPF_LD | BPF_B | BPF_ABS, kMadClass);
  jeq(protocol::kMadClassCm, 1, 0);
  stmt(BPF_RET | BPF_K, kNoSocket);
  stmt(BPF_LD | BPF_H | BPF_ABS, kMadAttrId);
  jeq(protocol::kCmAttrReq, 2, 0);
  // Not a REQ: A = the remote comm ID's top byte, the recipient's slot.
  stmt(BPF_LD | BPF_B | BPF_ABS, kRemoteCommIdTop);
  ja_lookup();
  // A REQ: the listener of its rdma_cm port.
  stmt(BPF_LD | BPF_H | BPF_ABS, kReqServicePort);
  for (const auto& [port, slot] : table.listeners) {
    if (auto index = index_of(slot)) {
      jeq(port, 0, 1);
      stmt(BPF_RET | BPF_K, *index);
    }
  }
  stmt(BPF_RET | BPF_K, kNoSocket);
  const std::size_t lookup = p.size();
  for (std::size_t i = 0; i < table.order.size(); ++i) {
    jeq(table.order[i], 0, 1);
    stmt(BPF_RET | BPF_K, static_cast<std::uint32_t>(i));
  }
  stmt(BPF_RET | BPF_K, kNoSocket);
  for (const std::size_t j : to_lookup)
    p[j].k = static_cast<std::uint32_t>(lookup - j - 1);
  return p;
}

int attach_steering(int fd, const std::vector<sock_filter>& program) {
  sock_fprog prog{};
  prog.len = static_cast<unsigned short>(program.size());
  prog.filter = const_cast<sock_filter*>(program.data());  // NOLINT: the sockets API
  if (::setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog) != 0) return errno;
  return 0;
}

std::unique_ptr<SharedAddress> SharedAddress::join(std::uint32_t ip, Errc& why,
                                                   std::string& detail) {
  auto fail = [&](Errc e, std::string text) -> std::unique_ptr<SharedAddress> {
    why = e;
    detail = std::move(text);
    return nullptr;
  };
  const std::string dir = state_dir(ip);
  const std::string parent = dir.substr(0, dir.rfind('/'));
  if (!make_dir(parent) || !make_dir(dir)) {
    return fail(Errc::socket_error,
                errno_text("sharing " + format_ipv4(ip) + ": mkdir " + dir, errno));
  }
  DirLock lock(dir);
  if (!lock.held()) {
    return fail(Errc::socket_error,
                errno_text("sharing " + format_ipv4(ip) + ": lock " + dir, errno));
  }
  SteeringTable t = read_state(dir);
  drop_dead(dir, t, 0);
  int slot_fd = -1;
  unsigned slot = kFirstSlot;
  for (; slot <= kLastSlot && slot_fd < 0; ++slot) {
    if (std::find(t.order.begin(), t.order.end(), slot) == t.order.end()) {
      slot_fd = try_claim(dir, slot);
    }
  }
  --slot;
  if (slot_fd < 0) {
    return fail(Errc::no_free_address,
                format_ipv4(ip) + " is shared by " + std::to_string(kLastSlot) +
                    " endpoints already (slots 1-255: the top byte of their QPNs)");
  }
  int err = 0;
  const int fd = open_roce_socket(ip, protocol::kRoceUdpPort, err, /*reuse_port=*/true);
  if (fd < 0) {
    ::close(slot_fd);
    const std::string what = errno_text("bind " + format_ipv4(ip) + ":4791 with SO_REUSEPORT", err);
    return fail(err == EADDRINUSE ? Errc::address_in_use : Errc::socket_error,
                err == EADDRINUSE ? what + " (an endpoint that does not share the address holds it)"
                                  : what);
  }
  t.order.push_back(static_cast<std::uint8_t>(slot));
  if (const int e = attach_steering(fd, steering_program(t))) {
    ::close(fd);  // the last socket of the group: its leaving moves nobody
    ::close(slot_fd);
    return fail(Errc::not_supported,
                errno_text("sharing " + format_ipv4(ip) +
                               " needs SO_ATTACH_REUSEPORT_CBPF (Linux 4.5 or later, not "
                               "filtered by seccomp) to steer datagrams by QPN",
                           e) +
                    "; give each process its own address instead");
  }
  if (!write_state(dir, t)) {
    const int e = errno;
    ::close(fd);
    ::close(slot_fd);
    return fail(Errc::socket_error,
                errno_text("sharing " + format_ipv4(ip) + ": write " + dir + "/group", e));
  }
  return std::unique_ptr<SharedAddress>(
      new SharedAddress(dir, static_cast<std::uint8_t>(slot), slot_fd, fd));
}

std::error_code SharedAddress::listen(std::uint16_t port, bool on) {
  DirLock lock(dir_);
  if (!lock.held()) return Errc::socket_error;
  SteeringTable t = read_state(dir_);
  drop_dead(dir_, t, slot_);
  auto same = [port](const auto& l) { return l.first == port; };
  if (on) {
    if (std::any_of(t.listeners.begin(), t.listeners.end(), same)) return Errc::address_in_use;
    t.listeners.emplace_back(port, slot_);
  } else {
    std::erase_if(t.listeners, [&](const auto& l) { return l.first == port && l.second == slot_; });
  }
  if (!write_state(dir_, t)) return Errc::socket_error;
  if (attach_steering(fd_, steering_program(t)) != 0) return Errc::socket_error;
  return {};
}

void SharedAddress::leave(const std::function<void()>& close_socket) {
  if (left_) return;
  left_ = true;
  {
    DirLock lock(dir_);
    SteeringTable t = read_state(dir_);
    drop_dead(dir_, t, slot_);
    auto it = std::find(t.order.begin(), t.order.end(), slot_);
    if (it != t.order.end()) remove_at(t, static_cast<std::size_t>(it - t.order.begin()));
    (void)write_state(dir_, t);
    // Until close_socket() the group still holds us at our index, which the program now gives the
    // moved socket: its datagrams of these microseconds reach us and are lost (RC retransmits).
    if (!t.order.empty()) (void)attach_steering(fd_, steering_program(t));
    close_socket();
  }
  ::close(slot_fd_);
}

SharedAddress::~SharedAddress() {
  leave([this] { ::close(fd_); });
}

}  // namespace naa::host::detail
