// The interfaces between the blocks of the NAA model (docs/sim/architecture.md). A block that
// needs something from a neighbour holds an sc_port of the small interface below that says what
// it needs ("take this packet", "open this QP", "post this call"); the neighbour implements the
// interface; the Naa top level binds every port once, in its constructor (naa.cpp). No block
// includes another block's header to call it, so any block can be replaced (by an RTL twin, a
// stub in a test) behind its interfaces without touching its callers. SystemC reports an unbound
// port when elaboration ends.
//
// Each interface names its users and its provider; all are called from SC_THREAD context unless
// they say otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <systemc>

#include "naa/protocol/result.hpp"
#include "naa/sim/common.hpp"
#include "naa/sim/mr_table.hpp"  // MrCheck, MrEntry, MrAccess: the MR table's vocabulary
#include "naa/sim/qp.hpp"

namespace naa::sim {

// ---- packets -------------------------------------------------------------------------------

// Takes a packet buffer into the block's input FIFO; the block returns it to the pool when done.
// Waits while the FIFO is full (back-pressure). Users: NetPort (-> RxPipe), RxPipe (-> CmAgent,
// -> Transport), CmAgent and Transport (-> TxPipe), TxPipe (-> NetPort, for the wire).
class PacketSink : public virtual sc_core::sc_interface {
 public:
  virtual void put(Packet* p) = 0;
  // A stage crossed without its process (StageQueue, issue 31): if the block's input stage would
  // start a packet ready at `ready` (not before now) at once, takes it with that time and returns
  // true; else returns false and the caller keeps the packet. One virtual call and one check per
  // hand-over (it was accepts_at() then put_at(), each checking). Blocks without such a stage
  // say no.
  [[nodiscard]] virtual bool try_put_at(Packet* /*p*/, sc_core::sc_time /*ready*/) { return false; }
};

// Counts a datagram dropped for a protocol error under RxPipe's drop statistics. Users: NetPort
// (truncated datagrams, also outside sc_start), CmAgent (MADs that do not decode). Provider:
// RxPipe.
class ProtocolErrorCounter : public virtual sc_core::sc_interface {
 public:
  virtual void count_protocol_error(protocol::Error e) = 0;
};

// Records a received datagram (with its recovered IPv4 ID) in the capture. User: RxPipe.
// Provider: NetPort.
class ReceiveTap : public virtual sc_core::sc_interface {
 public:
  virtual void tap_rx(const Packet& p) = 0;
  // Whether tap_rx() records anything (a capture is open): when it does, RxPipe calls it at the
  // datagram's time, in order with the transmitted ones.
  [[nodiscard]] virtual bool capturing() const { return true; }
};

// The addresses the NAA's datagrams leave from (PROTOCOL.md 1): the local IPv4 address and the
// UDP source port of a QP (opened on first use). Users: TxPipe (ICRC), CmAgent (the CA GUID of
// the REP). Provider: NetPort.
class PortAddresses : public virtual sc_core::sc_interface {
 public:
  [[nodiscard]] virtual std::uint32_t local_ip() const = 0;
  [[nodiscard]] virtual std::uint16_t source_port(std::uint32_t qpn) = 0;
};

// ---- connections ---------------------------------------------------------------------------

// The transport state of a QP over its life, driven by the CM. User: CmAgent. Provider:
// Transport.
class QpLifecycle : public virtual sc_core::sc_interface {
 public:
  // A freshly allocated QP: PSN spaces from the CM (send = the REQ's starting PSN, receive = the
  // REP's, PROTOCOL.md 4).
  virtual void init_qp(Qp& qp, std::uint32_t send_psn, std::uint32_t recv_psn) = 0;
  // The QP moved to RTS (RTU or first data).
  virtual void on_established(Qp& qp) = 0;
  // The connection ends: flush the work queues and timers.
  virtual void release_qp(Qp& qp) = 0;
};

// What the transport tells the connection manager. User: Transport. Provider: CmAgent.
class ConnectionEvents : public virtual sc_core::sc_interface {
 public:
  // The first valid data packet on a QP still waiting for its RTU (PROTOCOL.md 4).
  virtual void established_by_data(Qp& qp) = 0;
  // The QP went to error (the transport already flushed its own queues and timers).
  virtual void on_qp_error(Qp& qp) = 0;
};

// Per-connection state held outside the transport (regions and MR entries, queued calls), let
// go when the connection ends or its QP goes to error. User: CmAgent. Providers: MrspHandler,
// KernelEngine.
class ConnectionResources : public virtual sc_core::sc_interface {
 public:
  virtual void release(Qp& qp) = 0;
};

// ---- messages and calls --------------------------------------------------------------------

// Queues a message on the QP's requester (PROTOCOL.md 3). Users: MrspHandler (MRSP answers),
// KernelEngine (result write-backs). Provider: Transport.
class SendQueue : public virtual sc_core::sc_interface {
 public:
  virtual void post_send(Qp& qp, SendWqe wqe) = 0;
  // post_send for a caller that posts nothing more and changes no QP before its process next
  // waits (KernelEngine's last write-back WQE): the provider may then make its transmit
  // scheduler's turn in the caller (issue 31). post_send by default.
  virtual void post_last_send(Qp& qp, SendWqe wqe) { post_send(qp, std::move(wqe)); }
  // An empty vector for the next WQE's payload, with the capacity of a completed WQE's where
  // the provider kept one (issue 31: no allocation per short write-back); empty by default.
  virtual std::vector<std::uint8_t> take_payload_buffer() { return {}; }
  // Peers (docs/protocol.md "Peers"; MrspHandler): a requester QP with no CM side, its first
  // PSN `send_psn`; and its end.
  virtual void open_peer(Qp& qp, std::uint32_t send_psn) = 0;
  virtual void close_peer(Qp& qp) = 0;
};

// Gives the QP's receive buffer back once its SEND was consumed. User: MrspHandler. Provider:
// Transport.
class ReceiveQueue : public virtual sc_core::sc_interface {
 public:
  virtual void repost_receive(Qp& qp) = 0;
};

// A SEND completed into the QP's receive buffer (an MRSP request). User: Transport. Provider:
// MrspHandler. Called from the transport's receive process; must not wait.
class MessageDelivery : public virtual sc_core::sc_interface {
 public:
  virtual void deliver(Qp& qp) = 0;
};

// Kernel calls (PROTOCOL.md 5.2): a WRITE_WITH_IMM completion posts one. User: Transport.
// Provider: KernelEngine. Neither waits.
class CallQueue : public virtual sc_core::sc_interface {
 public:
  // Is there room for another call on this QP (else the transport answers RNR)?
  [[nodiscard]] virtual bool can_accept(const Qp& qp) const = 0;
  virtual void post_call(Qp& qp, std::uint32_t imm) = 0;
};

// ---- regions and protection ----------------------------------------------------------------

// A region an MRSP request placed (PROTOCOL.md 5.1).
struct Region {
  std::uint8_t flags = 0;
  std::uint64_t naa_address = 0;
  std::uint32_t size = 0;
  std::uint64_t host_va = 0;
  std::uint32_t host_rkey = 0;
  std::uint32_t rkey = 0;  // our MR entry's rkey
  std::size_t mr_index = 0;
};

// The regions of a connection, in the order of its 0x01 request. User: KernelEngine. Provider:
// MrspHandler.
// A peer a host bound to a connection (docs/protocol.md "Peers", MRSP 0x06): the requester QP
// its handlers put on, and the region of the other NAA they put into.
struct PeerBinding {
  std::uint32_t qp_index = 0;
  std::uint32_t generation = 0;  // of that QP: a released one is no peer
  std::uint64_t va = 0;
  std::uint32_t rkey = 0;
  std::uint32_t size = 0;
  std::uint32_t end_imm = 0;  // the WRITE_WITH_IMM that ends a call's message there
};

class RegionDirectory : public virtual sc_core::sc_interface {
 public:
  // Empty if the QP is not allocated. The reference is valid until the next request or release.
  [[nodiscard]] virtual const std::vector<Region>& regions(std::uint32_t qpn) const = 0;
  // The connection's peer `index`, or null if none is bound.
  [[nodiscard]] virtual const PeerBinding* peer(std::uint32_t qpn, std::uint32_t index) const = 0;
};

// The timed protection check of every remote access (PROTOCOL.md 7): waits the table's lookup
// time in the caller's process. User: Transport. Provider: MrTable.
class RemoteAccessCheck : public virtual sc_core::sc_interface {
 public:
  [[nodiscard]] virtual MrCheck check(std::uint32_t rkey, std::uint64_t va, std::uint64_t len,
                                      std::uint8_t access, std::uint32_t qpn) = 0;
};

// Programming the MR table (PROTOCOL.md 5.1): free entries, entries per owner, program and
// invalidate. User: MrspHandler. Provider: MrTable.
class MrRegistration : public virtual sc_core::sc_interface {
 public:
  [[nodiscard]] virtual std::optional<std::size_t> free_index() const = 0;
  [[nodiscard]] virtual std::size_t free_count() const = 0;
  [[nodiscard]] virtual std::size_t owned_count(std::uint32_t qpn) const = 0;
  virtual void program(std::size_t index, const MrEntry& entry) = 0;
  virtual void invalidate_owner(std::uint32_t qpn) = 0;
};

// Clears memory to zeros, untimed (modelled as a background scrub): new and released regions.
// User: MrspHandler. Provider: Memory. (Timed data access goes over TLM: MemoryPort.)
class MemoryScrub : public virtual sc_core::sc_interface {
 public:
  virtual void clear(std::uint64_t addr, std::uint64_t len) = 0;
};

}  // namespace naa::sim
