// naa::host::Session: the NAA client API (ARCHITECTURE.md "The host library").
//
// A Session connects to one NAA (IB CM, PROTOCOL.md 4), declares the call's regions, runs the
// Memory Region Setup Protocol once (PROTOCOL.md 5.1), and then makes any number of calls
// (PROTOCOL.md 5.2): each call RDMA-WRITEs the input regions to the NAA, the last write carrying
// the function code and 24 user bits in its immediate, and completes when the NAA's
// WRITE_WITH_IMM reply (return code in bits 8-31) has arrived and every write was acknowledged.
//
//   std::vector<std::uint8_t> a(4096), b(4096), sum(4096);
//   naa::host::Session s({.naa_address = "127.0.0.2"},
//                        {Region::input(a), Region::input(b), Region::output(sum)});
//   naa::host::CallResult r = s.call(4);   // vadd_i32; throws naa::host::Error on failure
//
// Errors: the constructor and get()/call() throw naa::host::Error, whose code() is one of
// naa::host::Errc (naa_unreachable, cm_timeout, connection_refused, connection_rejected,
// mrsp_*, retry_exceeded, ..., timeout) and whose what() says what happened and where.
//
// Thread safety: a Session (and its Calls) must be used by one thread at a time. Several sessions
// may run in parallel threads, each with its own endpoint or sharing one Transport.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "naa/host/transport.hpp"
#include "naa/host/udp_roce.hpp"

namespace naa::host {

namespace detail {
class SessionCore;
}

// One parameter region of a call (PROTOCOL.md 5.1 flags).
struct Region {
  static constexpr std::uint8_t kInternal = 0x01;
  static constexpr std::uint8_t kSingleSend = 0x02;
  static constexpr std::uint8_t kInput = 0x04;
  static constexpr std::uint8_t kOutput = 0x08;
  // Extension (docs/protocol.md "Streaming regions"): the NAA's streaming handlers process this
  // input packet by packet as it arrives (SessionOptions::stream_function names them).
  static constexpr std::uint8_t kStream = 0x10;

  void* data = nullptr;  // host buffer (null for internal regions)
  std::size_t size = 0;  // bytes (at most 4 GiB - 1, the MRSP size field)
  std::uint8_t flags = 0;
  // The NAA address to ask for. Empty: the session places regions one after another from
  // SessionOptions::naa_base_address, each 4 KiB aligned.
  std::optional<std::uint64_t> naa_address;

  static Region input(void* data, std::size_t size) { return {data, size, kInput, {}}; }
  static Region output(void* data, std::size_t size) { return {data, size, kOutput, {}}; }
  static Region inout(void* data, std::size_t size) { return {data, size, kInput | kOutput, {}}; }
  // An input written by the first call only (e.g. configuration or weights).
  static Region single_send(void* data, std::size_t size) {
    return {data, size, kInput | kSingleSend, {}};
  }
  // NAA scratch memory, never transferred.
  static Region internal(std::size_t size) { return {nullptr, size, kInternal, {}}; }
  // Containers with contiguous storage (std::vector, std::array, std::span).
  template <class C>
  static Region input(C& c) {
    return input(std::data(c), std::size(c) * sizeof(*std::data(c)));
  }
  template <class C>
  static Region output(C& c) {
    return output(std::data(c), std::size(c) * sizeof(*std::data(c)));
  }
  template <class C>
  static Region inout(C& c) {
    return inout(std::data(c), std::size(c) * sizeof(*std::data(c)));
  }
  template <class C>
  static Region single_send(C& c) {
    return single_send(std::data(c), std::size(c) * sizeof(*std::data(c)));
  }
  // Marks an input region as streaming (kStream).
  Region& stream() {
    flags |= kStream;
    return *this;
  }
  Region& at(std::uint64_t address) {
    naa_address = address;
    return *this;
  }
};

struct SessionOptions {
  std::string naa_address = "127.0.0.2";
  std::uint16_t cm_port = 12345;
  // Local IPv4 of the endpoint. Empty: the first free 127.0.0.x (x >= 3) for an NAA on loopback,
  // otherwise the source address the kernel routes to the NAA from.
  std::string local_address;
  Progress progress = Progress::automatic;
  std::string pcap_path;  // capture of the endpoint's traffic (own endpoint only)
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds mrsp_timeout{5000};
  std::chrono::milliseconds call_timeout{60000};  // get()/call(); Call::wait_for takes its own
  std::chrono::milliseconds disconnect_timeout{1000};
  std::uint32_t path_mtu = 4096;
  std::uint8_t local_ack_timeout = 15;  // 134 ms
  std::uint8_t retry_count = 7;
  std::uint8_t rnr_retry_count = 7;
  // Offer IRN (docs/protocol.md "IRN") on the session's own UdpRoce endpoint: UdpRoceOptions::irn.
  // An NAA that does not answer with the capability block gets go-back-N. No effect on a
  // transport passed in (its own options decide) or on the Verbs backend (never IRN).
  bool irn = true;
  // Offer IRN on a connection with Region::stream() regions too: the NAA hands its packets to the
  // handlers in any order, the header handler first (docs/protocol.md 8.3 "Streaming on IRN").
  // Off by default: IRN has no RNR NAK, so when the handlers fall behind the NAA drops packets
  // and the requester waits for its retransmit timer instead of an RNR timer of microseconds
  // (a 1 MiB accumulate under flow control took 53.6x as long with a 134 ms timer; docs/spin.md).
  bool irn_streaming = false;
  std::uint64_t naa_base_address = 0;
  // Streaming (docs/protocol.md "Streaming regions"): with a Region::stream() region, the MRSP
  // request carries a stream descriptor naming the handlers' function code (1..127; calls must
  // use it), their 64-bit argument (unpack_strided: stride << 32 | blocksize) and the HPU state
  // bytes they may use. Without a stream() region none is sent and calls are store-and-forward.
  std::uint8_t stream_function = 0;
  std::uint64_t stream_argument = 0;
  std::uint32_t stream_state_bytes = 4096;
  // sPIN code with the connection (docs/protocol.md "Handler images"): a handler image (the ELF
  // naa_add_handler builds) the NAA installs as this connection's handlers of stream_function,
  // and their initial state (each call's handler state starts as these bytes, zeros behind
  // them; at most stream_state_bytes). Needs a stream() region. Empty: the NAA's own handlers.
  std::vector<std::uint8_t> handler_image;
  std::vector<std::uint8_t> handler_state;
};

// Where the NAA placed a non-internal region (its MRSP 0x02 entry).
struct Placement {
  std::uint64_t naa_address = 0;
  std::uint32_t rkey = 0;
  std::uint32_t size = 0;
};

struct CallResult {
  std::uint32_t return_code = 0;     // 0 success, 0x03 unknown function, ... (PROTOCOL.md 5.2)
  std::uint8_t fn = 0;               // the call's function code (a failure echoes it)
  std::uint64_t bytes_received = 0;  // bytes the NAA wrote into output regions
  std::vector<std::uint64_t> output_bytes;  // per region (index as declared; 0 for inputs)
  std::uint64_t bytes_sent = 0;             // input bytes written to the NAA
  std::chrono::nanoseconds wall{0};         // invoke() to completion
};

struct SessionInfo {
  std::string local_address;
  std::string naa_address;
  std::uint32_t qpn = 0;
  std::uint32_t naa_qpn = 0;
  std::uint32_t path_mtu = 0;
  std::chrono::nanoseconds connect_time{0};
  std::chrono::nanoseconds mrsp_time{0};
};

class Session;

// One outstanding call: the awaitable invoke() returns.
class Call {
 public:
  Call(Call&&) noexcept;
  Call& operator=(Call&&) noexcept;
  ~Call();
  // Non-blocking: true once the call finished (result or error). Makes progress in manual mode.
  [[nodiscard]] bool ready();
  // Blocks up to `timeout`; the result, or nullopt if still running. Throws Error on failure.
  [[nodiscard]] std::optional<CallResult> wait_for(std::chrono::nanoseconds timeout);
  // Blocks up to SessionOptions::call_timeout; throws Error (Errc::timeout included).
  CallResult get();

 private:
  friend class Session;
  explicit Call(detail::SessionCore* core) : core_(core) {}
  void take(std::error_code ec, std::string detail, CallResult result);
  detail::SessionCore* core_;
  bool done_ = false;
  std::error_code ec_;
  std::string detail_;
  CallResult result_;
};

class Session {
 public:
  // Opens its own UdpRoce endpoint, connects, runs MRSP. Throws Error.
  Session(const SessionOptions& options, std::vector<Region> regions);
  // Uses an existing transport (several sessions may share one endpoint).
  Session(std::shared_ptr<Transport> transport, const SessionOptions& options,
          std::vector<Region> regions);
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  // Disconnects (DREQ) if still connected.
  ~Session();

  // Starts a call: fn 1..127, user24 < 2^24. Throws Error (invalid_argument, busy when a call
  // is still outstanding, not_connected after a transport error or disconnect).
  Call invoke(std::uint8_t fn, std::uint32_t user24 = 0);
  // invoke(fn, user24).get().
  CallResult call(std::uint8_t fn, std::uint32_t user24 = 0);

  // How many bytes of input region `index` the next calls write (default: the whole region).
  void set_send_length(std::size_t index, std::size_t bytes);

  // Peers (docs/protocol.md "Peers", docs/spin.md "Puts to other nodes"): makes `data`'s
  // connection the target of this session's handlers' puts to peer `peer` (0..7), into `data`'s
  // region `region` (index as declared, not internal). This session's NAA opens a QP to `data`'s
  // NAA (MRSP 0x06) and `data`'s NAA hands its connection over to it (0x08): `data` then makes no
  // more calls (not_connected); its NAA runs the calls the peer's messages end, answering nobody.
  // `data` must be a streaming session (its handlers take the peer's puts). Throws Error:
  // invalid_argument (peer >= 8, no such region, `data` is this session, not streaming or
  // handed over already), mrsp_bad_peer (the NAA refused: no QP free, an IRN connection),
  // mrsp_invalid_address (an NAA without peers answers any 0x06 so), timeout. If the hand-over
  // is refused, this session's NAA is told to drop the peer again (0x06 with size 0).
  void bind_peer(std::uint8_t peer, Session& data, std::size_t region);

  void disconnect();
  [[nodiscard]] bool connected() const;

  [[nodiscard]] const std::vector<Placement>& placements() const;  // one per non-internal region
  [[nodiscard]] const SessionInfo& info() const;
  [[nodiscard]] std::shared_ptr<Transport> transport() const;

 private:
  std::unique_ptr<detail::SessionCore> core_;
};

}  // namespace naa::host
