// In-process co-simulation (docs/adr/0004): host library sessions and the NAA model in one
// process on one simulated clock. The host endpoint (UdpRoce with a DatagramLink and an
// EndpointClock, naa/host/udp_roce.hpp) sends into NetPort's in-memory input (inject_at) and
// receives what NetPort transmits when it reaches the host; its timers and progress run on
// SystemC's simulated time. Nothing here reads a wall clock, so the same arguments give the
// same packets at the same simulated times.
//
// The one place that links host/ and sim/ (README "Layout").
#pragma once

#include <cstdint>
#include <deque>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "naa/host/udp_roce.hpp"
#include "naa/sim/config.hpp"
#include "naa/sim/peer_timers.hpp"

namespace naa::sim {
class Naa;
}

namespace naa::cosim {

// Where naa-cosim maps the host's buffers (MAP_FIXED_NOREPLACE): host virtual addresses travel on
// the wire (MRSP, RETH), so the same arguments must give the same addresses whatever ASLR does.
// An address that ordinary, AddressSanitizer and ThreadSanitizer processes all leave to the
// program: TSan (GCC 12) owns everything below 0x7e80'0000'0000 except its fixed application
// ranges and drops any other hint (0x6e00'0000'0000, used before, then mapped at 0); ASan's shadow
// ends at 0x1000'7fff'8000; shared libraries and stacks lie above 0x7eff'0000'0000 (28 bits of
// mmap randomisation).
inline constexpr std::uintptr_t kHostBufferAddress = 0x7e8000000000ULL;

// The host side's costs (docs/sim/calibration.md): added to the simulated time of each datagram
// between the host library and the wire.
struct HostCosts {
  double sw_per_packet_ns = 0;  // host software per datagram sent (the endpoint's send path)
  double pcie_ns = 0;           // one way between host memory and the host NIC
  double nic_ns = 0;            // host NIC processing, each direction
  double sw_rx_ns = 0;          // host software: a received datagram until the library acts on it
};

struct CosimConfig {
  sim::SimConfig sim;                  // the NAA model, link and faults included
  HostCosts host;                      // the host side
  std::uint32_t naa_ip = 0x0A000001;   // 10.0.0.1
  std::uint32_t host_ip = 0x0A000002;  // 10.0.0.2
  std::string pcap_path;               // NetPort's capture (simulated timestamps); empty: none
};

class Cosim final : public host::DatagramLink, public host::EndpointClock, public sim::PeerTimers {
 public:
  explicit Cosim(const CosimConfig& cfg);
  ~Cosim() override;
  Cosim(const Cosim&) = delete;
  Cosim& operator=(const Cosim&) = delete;

  // The host endpoint on this co-simulation (link, clock, address set in `options`).
  std::shared_ptr<host::Transport> open_host(host::UdpRoceOptions options);

  [[nodiscard]] double now_ns() const;
  [[nodiscard]] double clock_mhz() const { return cfg_.sim.clock_mhz; }
  // The NAA model's statistics (naa-sim's keys).
  void report(std::ostream& os) const;

  // host::DatagramLink
  void send(std::span<const std::uint8_t> datagram, std::uint32_t src_ip, std::uint16_t src_port,
            std::uint32_t dst_ip) override;
  // host::EndpointClock
  [[nodiscard]] std::chrono::steady_clock::time_point now() override;
  void wait_until(std::chrono::steady_clock::time_point until) override;
  // sim::PeerTimers: the NAA's retransmit, RNR, CM and liveness timers, in simulated time only.
  void arm(sim::PeerTimerClient& client, std::uint32_t cookie, sc_core::sc_time after) override;
  void cancel(sim::PeerTimerClient& client, std::uint32_t cookie) override;

 private:
  struct InFlight {
    sc_core::sc_time at;  // simulated time it reaches the host library
    std::vector<std::uint8_t> bytes;
    std::uint16_t src_port = 0;
  };
  struct ToNaa {
    sc_core::sc_time handed_over;
    std::vector<std::uint8_t> bytes;
    std::uint32_t src_ip = 0;
    std::uint16_t src_port = 0;
  };
  struct Timer {
    sim::PeerTimerClient* client;
    std::uint32_t cookie;
    sc_core::sc_time deadline;
  };
  void push_to_naa();      // what waits for room in NetPort's input
  bool fire_due_timers();  // true if any fired
  bool deliver_due();      // true if any datagram reached the host

  CosimConfig cfg_;
  std::unique_ptr<struct CosimModel> model_;
  std::weak_ptr<host::Transport> host_;
  std::deque<InFlight> to_host_;
  std::deque<ToNaa> to_naa_;
  static constexpr std::size_t kSpareBuffers = 64;
  std::vector<std::vector<std::uint8_t>> spare_;  // delivered datagrams' buffers, for reuse
  std::vector<Timer> timers_;
  sc_core::sc_time host_tx_free_ = sc_core::SC_ZERO_TIME;
  // HostCosts as SystemC times: a sent datagram reaches the host library after host_rx_delay_;
  // the host's software takes host_sw_per_packet_ per datagram it sends, which meets the link
  // host_tx_delay_ later.
  sc_core::sc_time host_rx_delay_, host_sw_per_packet_, host_tx_delay_;
  bool running_ = false;                               // inside sc_start in wait_until()
  sc_core::sc_time run_stop_ = sc_core::SC_ZERO_TIME;  // where that sc_start stops
  std::uint64_t sc_start_calls_ = 0;                   // statistics (activity.sc_start_calls)
};

}  // namespace naa::cosim

namespace naa::cosim {

// The parameters calibrated against the NAAICE FPGA's published measurements, each with its
// source in docs/sim/calibration.md (issue 15 item 4).
void apply_naaice_calibration(CosimConfig& cfg);

}  // namespace naa::cosim
