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
};

}  // namespace naa::fabric
