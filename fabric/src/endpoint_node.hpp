// What stands behind a NIC of the fabric: a host library endpoint or an NAA model (nic.cpp).
#pragma once

namespace naa::fabric {

struct Frame;

class EndpointNode {
 public:
  virtual ~EndpointNode() = default;
  // A frame (not a CNP: the NIC consumes those) arrived for the endpoint.
  virtual void receive(const Frame& f) = 0;
  // A wake-up the endpoint asked for is due: run its timers, learn its next wake-up.
  virtual void wake() = 0;
  // A request packet of the endpoint's (not an ACK) leaves the NIC for the wire. True when the
  // endpoint armed a timer because of it (its next wake-up must be learned).
  virtual bool on_wire(const Frame& f) {
    (void)f;
    return false;
  }
};

}  // namespace naa::fabric
