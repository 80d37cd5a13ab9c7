// The session logic with std::error_code results (Session wraps it and throws; the C API uses it
// directly). Not thread-safe: one thread at a time per session.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "naa/host/session.hpp"
#include "naa/host/transport.hpp"
#include "naa/protocol/mrsp.hpp"

namespace naa::host::detail {

struct CallOutcome {
  std::error_code ec;
  std::string detail;
  CallResult result;
};

class SessionCore {
 public:
  // Opens (transport may be null: then it opens its own endpoint), connects, runs MRSP.
  static std::unique_ptr<SessionCore> open(std::shared_ptr<Transport> transport,
                                           const SessionOptions& options,
                                           std::vector<Region> regions, std::error_code& ec,
                                           std::string& detail);
  ~SessionCore();
  SessionCore(const SessionCore&) = delete;
  SessionCore& operator=(const SessionCore&) = delete;

  std::error_code start_call(std::uint8_t fn, std::uint32_t user24, std::string& detail);
  [[nodiscard]] bool call_outstanding() const noexcept { return active_; }
  // True once the outstanding call finished; `out` then holds its outcome (the call is over).
  bool test(CallOutcome& out);
  bool wait(CallOutcome& out, std::chrono::nanoseconds timeout);

  // session_mrsp.cpp: MRSP 0x06 here, then 0x08 on `data` (Session::bind_peer).
  std::error_code bind_peer(std::uint8_t peer, SessionCore& data, std::size_t region,
                            std::string& detail);
  std::error_code set_send_length(std::size_t index, std::size_t bytes);
  std::error_code disconnect();
  [[nodiscard]] bool connected() const;
  [[nodiscard]] const std::vector<Placement>& placements() const noexcept { return placements_; }
  [[nodiscard]] const SessionInfo& info() const noexcept { return info_; }
  [[nodiscard]] std::shared_ptr<Transport> transport() const { return transport_; }
  [[nodiscard]] const SessionOptions& options() const noexcept { return opts_; }

 private:
  struct RegionState {
    Region region;
    MemoryRegion mr{};
    bool registered = false;
    std::size_t placement = 0;  // index into placements_ (non-internal only)
    std::size_t send_length = 0;
    std::uint64_t written_before = 0;
  };
  SessionCore() = default;
  std::error_code setup(std::vector<Region> regions, std::string& detail);
  // session_mrsp.cpp: the 0x01/0x02 exchange, the handler image's 0x04/0x05 (if any).
  std::error_code run_mrsp(std::string& detail);
  std::error_code install_handler(std::string& detail);
  std::error_code hand_over(std::uint32_t naa_i, const protocol::MrspPeerBound& bound,
                            std::string& detail);
  std::error_code exchange_mrsp(std::size_t length, WorkCompletion& answer, std::string& detail);
  std::error_code await_mrsp(std::initializer_list<std::uint64_t> ids, WorkCompletion& answer,
                             std::string& detail);
  void handle(const WorkCompletion& wc);
  bool finished(CallOutcome& out);

  SessionOptions opts_;
  std::shared_ptr<Transport> transport_;
  std::unique_ptr<QueuePair> qp_;
  std::vector<RegionState> regions_;
  std::vector<Placement> placements_;
  SessionInfo info_;
  std::vector<std::uint8_t> mrsp_tx_;
  std::vector<std::uint8_t> mrsp_rx_;
  std::vector<std::uint8_t> image_buf_;  // the handler image and its initial state
  MemoryRegion mrsp_tx_mr_{};
  MemoryRegion mrsp_rx_mr_{};
  bool handed_over_ = false;  // bind_peer gave the connection to another NAA: no more calls
  // The outstanding call.
  bool active_ = false;
  bool first_call_done_ = false;
  std::uint64_t seq_ = 0;
  std::uint8_t fn_ = 0;
  bool reply_received_ = false;
  bool writes_done_ = false;
  std::uint32_t reply_dma_length_ = 0;  // the reply WRITE_WITH_IMM's length (Verbs reports this)
  CallOutcome outcome_;
  std::chrono::steady_clock::time_point started_{};
};

}  // namespace naa::host::detail
