// The IB CM passive side of a UdpRoce endpoint (PROTOCOL.md 4 and 8, as Linux cm.c/cma.c for a
// listener): listen on an rdma_cm port, take connection requests, accept (REP) or reject (REJ with
// private data), so that two UdpRoce endpoints connect to each other, not only to an NAA.
//
// A REQ for a port nobody listens on is rejected with reason 8 (invalid service ID) as before. A
// request is held until accepted or rejected; a duplicate REQ (the active side retrying) is not a
// new request, and once accepted it is answered with the same REP. The accepted QP is usable at
// once: the RTU, or the first packet from the active side, is not waited for (PROTOCOL.md 4 counts
// either as the RTU; our REP resends cover a lost REP). With UdpRoceOptions::irn, a REQ that
// offers IRN (docs/protocol.md "IRN: negotiation") is answered with the capability block first in
// the REP's private data (the application's bytes after it, at most 180) and gets an IRN QP, as
// the NAA's CM agent does; any other REQ gets go-back-N.
//
// All functions take a UdpRoce Transport (open_udp_roce) and answer Errc::invalid_argument for any
// other. Thread-safe like the rest of the endpoint. In manual progress mode requests arrive only
// while somebody calls Transport::progress (or polls a QP of the endpoint).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "naa/host/transport.hpp"

namespace naa::host {

// A connection request (a REQ) waiting for accept or reject.
struct ConnectRequest {
  std::uint64_t id = 0;           // names it in accept/reject
  std::uint32_t remote_ip = 0;    // host-order IPv4 of the active side
  std::uint16_t remote_port = 0;  // the rdma_cm header's source port
  std::uint16_t cm_port = 0;      // the port it was listened for
  std::uint32_t remote_qpn = 0;
  std::uint32_t path_mtu = 0;              // bytes, from the REQ
  std::vector<std::uint8_t> private_data;  // the user part after the rdma_cm header (56 bytes)
};

// What the REP answers (the REQ's MTU, ACK timeout and retry counts are adopted, PROTOCOL.md 4).
struct AcceptParams {
  std::uint8_t responder_resources = 16;  // answered with min(asked, this)
  std::uint8_t initiator_depth = 16;
  std::uint8_t rnr_retry_count = 7;        // what we ask the active side to use on us
  std::vector<std::uint8_t> private_data;  // at most 196 bytes, into the REP
};

// Starts / stops taking REQs for rdma_cm port `cm_port`. address_in_use if already listened on.
std::error_code udp_roce_listen(Transport& transport, std::uint16_t cm_port);
std::error_code udp_roce_unlisten(Transport& transport, std::uint16_t cm_port);

// The oldest request not handed out yet, waiting up to `timeout` (manual progress: progressing
// the endpoint meanwhile). nullopt if none.
std::optional<ConnectRequest> udp_roce_next_request(Transport& transport,
                                                    std::chrono::nanoseconds timeout);

// Accepts request `id`: creates the RC QP and sends the REP. nullptr with ec (invalid_argument
// for an unknown id) and detail on failure.
std::unique_ptr<QueuePair> udp_roce_accept(Transport& transport, std::uint64_t id,
                                           const AcceptParams& params, std::error_code& ec,
                                           std::string* detail = nullptr);

// Rejects request `id` with REJ reason 28 (consumer defined) and up to 148 bytes of private data.
std::error_code udp_roce_reject(Transport& transport, std::uint64_t id,
                                std::span<const std::uint8_t> private_data = {});

}  // namespace naa::host
