// Opening a UdpRoce endpoint (naa/host/udp_roce.hpp open_udp_roce: a socket, or a co-simulation
// link) and the free functions that reach into one (faults, delivered and injected datagrams, the
// wire-timer hook). The endpoint itself is udp_roce.cpp.
#include <memory>
#include <string>

#include "naa/host/error.hpp"
#include "naa/host/udp_roce.hpp"
#include "udp_endpoint.hpp"

namespace naa::host {

bool set_udp_roce_faults(Transport& transport, const FaultOptions& rx, const FaultOptions& tx) {
  auto* ep = dynamic_cast<detail::Endpoint*>(&transport);
  if (ep == nullptr) return false;
  ep->set_faults(rx, tx);
  return true;
}

bool deliver_udp_roce_datagram(Transport& transport, std::span<const std::uint8_t> datagram,
                               std::uint32_t src_ip, std::uint16_t src_port) {
  auto* ep = dynamic_cast<detail::Endpoint*>(&transport);
  if (ep == nullptr) return false;
  ep->deliver(datagram, src_ip, src_port);
  return true;
}

bool udp_roce_packet_on_wire(Transport& transport, std::span<const std::uint8_t> datagram,
                             std::uint32_t dst_ip) {
  auto* ep = dynamic_cast<detail::Endpoint*>(&transport);
  return ep != nullptr && ep->packet_on_wire(datagram, dst_ip);
}

bool detail::Endpoint::packet_on_wire(std::span<const std::uint8_t> datagram,
                                      std::uint32_t dst_ip) {
  // BTH: destination QPN in bytes 5..7, PSN in 9..11 (IBTA 9.2). Our QP is the one connected
  // to that QPN at dst_ip (a linear look-up: tens of QPs per endpoint in the fabric).
  if (!opts_.wire_timers || datagram.size() < 12) return false;
  const std::uint32_t dest =
      (std::uint32_t{datagram[5]} << 16) | (std::uint32_t{datagram[6]} << 8) | datagram[7];
  const std::uint32_t psn =
      (std::uint32_t{datagram[9]} << 16) | (std::uint32_t{datagram[10]} << 8) | datagram[11];
  std::lock_guard lock(mu_);
  for (auto& [qpn, e] : qps_) {
    if (e->rc && e->remote_qpn == dest && e->params.remote_ip == dst_ip)
      return e->rc->on_wire(psn, now());
  }
  return false;
}

bool inject_udp_roce_datagram(Transport& transport, std::span<const std::uint8_t> datagram,
                              std::uint32_t src_ip, std::uint16_t src_port) {
  auto* ep = dynamic_cast<detail::Endpoint*>(&transport);
  if (ep == nullptr) return false;
  ep->inject(datagram, src_ip, src_port);
  return true;
}

// Issue 12: what usually holds port 4791. Linux Soft-RoCE (rdma_rxe) binds 0.0.0.0:4791 in the
// kernel as soon as an rxe device exists, which takes the port on every address.
std::shared_ptr<Transport> open_udp_roce(const UdpRoceOptions& options, std::error_code& ec,
                                         std::string* detail) {
  ec.clear();
  auto fail = [&](Errc e, std::string text) -> std::shared_ptr<Transport> {
    ec = e;
    if (detail != nullptr) *detail = std::move(text);
    return nullptr;
  };
  std::uint32_t ip = 0;
  Errc why = Errc::socket_error;
  std::string text;
  std::shared_ptr<detail::Endpoint> ep;
  if (options.link) {
    // Co-simulation: no socket; progress is driven by the caller on the co-simulation's clock.
    UdpRoceOptions o = options;
    o.progress = Progress::manual;
    ep = std::make_shared<detail::Endpoint>(o, options.local_ip.value_or(0x7F000003U), -1);
  } else {
    std::unique_ptr<detail::SharedAddress> share;
    const int fd = detail::open_receive_socket(options, ip, why, text, share);
    if (fd < 0) return fail(why, std::move(text));
    ep = std::make_shared<detail::Endpoint>(options, ip, fd, std::move(share));
  }
  if (!options.pcap_path.empty()) {
    // The endpoint is not running yet: no lock needed.
    if (auto pec = ep->open_pcap(options.pcap_path)) {
      return fail(Errc::socket_error,
                  "cannot create pcap " + options.pcap_path + ": " + pec.message());
    }
  }
  ep->start();
  return ep;
}

}  // namespace naa::host
