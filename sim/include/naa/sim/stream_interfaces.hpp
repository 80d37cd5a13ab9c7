// The interface between the Transport and the HandlerEngine (docs/sim/handler_engine.md), in the
// style of block_interfaces.hpp: the Transport holds an (optional) port of it, the HandlerEngine
// implements it, the Naa binds them. Kept in its own header so that the Transport does not see
// the engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <systemc>

#include "naa/sim/qp.hpp"

namespace naa::sim {

// The Transport's view of the streaming handlers. User: Transport (the responder's RDMA WRITE
// path). Provider: HandlerEngine. None of them waits (called from the transport's receive
// process).
class StreamHandlers : public virtual sc_core::sc_interface {
 public:
  // Does the payload of a WRITE at NAA address `va` on this QP belong to a STREAM INPUT region
  // of a connection with a stream descriptor?
  [[nodiscard]] virtual bool streams(const Qp& qp, std::uint64_t va) const = 0;
  // Room for a payload packet of `len` bytes now (an idle HPU or free HPU memory)? If not the
  // Transport RNR-NAKs it, and the call is marked flow_control_triggered.
  [[nodiscard]] virtual bool can_take(Qp& qp, std::size_t len) = 0;
  // One in-order-or-not payload packet of a STREAM region (message_start: the first packet of
  // its message, which runs the header handler first).
  virtual void take(Qp& qp, std::uint64_t va, std::span<const std::uint8_t> payload,
                    bool message_start) = 0;
  // Does this connection's WRITE_WITH_IMM complete a streaming call (it has a descriptor)?
  [[nodiscard]] virtual bool owns_calls(const Qp& qp) const = 0;
  // The call's WRITE_WITH_IMM arrived (after its last payload packet was taken).
  virtual void complete(Qp& qp, std::uint32_t imm) = 0;
};

// A connection's own sPIN handler image (docs/protocol.md "Handler images"). User: MrspHandler
// (the 0x04 install). Provider: HandlerEngine. install() waits (it reads the image from memory).
class HandlerInstall : public virtual sc_core::sc_interface {
 public:
  // Reads `image_bytes` at NAA address `address` and the `state_bytes` behind them, checks the
  // image and makes it this connection's handler set for function `fn` (its stream descriptor's,
  // whose HPU state is `state_limit` bytes); each call's handler state then starts as those
  // state bytes (zeros behind them). 0, or the MRSP error code that refuses it.
  [[nodiscard]] virtual std::uint8_t install(Qp& qp, std::uint8_t fn, std::uint64_t address,
                                             std::uint32_t image_bytes, std::uint32_t state_bytes,
                                             std::uint64_t state_limit) = 0;
  // The connection's regions were replaced or released: its image goes with them.
  virtual void uninstall(Qp& qp) = 0;
};

}  // namespace naa::sim
