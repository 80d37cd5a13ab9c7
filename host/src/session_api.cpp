// The throwing C++ API (naa/host/session.hpp): Session and Call over SessionCore
// (session_core.hpp, session.cpp), which reports errors as values.
#include <string>
#include <utility>

#include "naa/host/error.hpp"
#include "naa/host/session.hpp"
#include "session_core.hpp"

namespace naa::host {

namespace {
[[noreturn]] void raise(std::error_code ec, const std::string& detail) {
  throw Error(ec, detail);
}
}  // namespace

Session::Session(const SessionOptions& options, std::vector<Region> regions)
    : Session(nullptr, options, std::move(regions)) {}

Session::Session(std::shared_ptr<Transport> transport, const SessionOptions& options,
                 std::vector<Region> regions) {
  std::error_code ec;
  std::string detail;
  core_ = detail::SessionCore::open(std::move(transport), options, std::move(regions), ec, detail);
  if (!core_) raise(ec, detail);
}

Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

Call Session::invoke(std::uint8_t fn, std::uint32_t user24) {
  if (!core_) raise(Errc::not_connected, "moved-from session");
  std::string detail;
  if (auto ec = core_->start_call(fn, user24, detail)) raise(ec, detail);
  return Call(core_.get());
}

CallResult Session::call(std::uint8_t fn, std::uint32_t user24) {
  return invoke(fn, user24).get();
}

void Session::set_send_length(std::size_t index, std::size_t bytes) {
  if (auto ec = core_->set_send_length(index, bytes)) {
    raise(ec, "set_send_length: region " + std::to_string(index) +
                  " is not an input or is smaller than " + std::to_string(bytes) + " bytes");
  }
}

void Session::bind_peer(std::uint8_t peer, Session& data, std::size_t region) {
  if (!core_ || !data.core_) raise(Errc::not_connected, "moved-from session");
  std::string detail;
  if (auto ec = core_->bind_peer(peer, *data.core_, region, detail)) raise(ec, detail);
}

void Session::disconnect() {
  if (core_) (void)core_->disconnect();
}
bool Session::connected() const {
  return core_ && core_->connected();
}
const std::vector<Placement>& Session::placements() const {
  return core_->placements();
}
const SessionInfo& Session::info() const {
  return core_->info();
}
std::shared_ptr<Transport> Session::transport() const {
  return core_->transport();
}

Call::Call(Call&&) noexcept = default;
Call& Call::operator=(Call&&) noexcept = default;
Call::~Call() = default;

void Call::take(std::error_code ec, std::string detail, CallResult result) {
  done_ = true;
  ec_ = ec;
  detail_ = std::move(detail);
  result_ = std::move(result);
}

bool Call::ready() {
  if (done_ || core_ == nullptr) return true;
  detail::CallOutcome o;
  if (core_->test(o)) {
    take(o.ec, std::move(o.detail), std::move(o.result));
  } else if (!core_->call_outstanding()) {
    take(Errc::not_connected, "the session was disconnected during the call", {});
  }
  return done_;
}

std::optional<CallResult> Call::wait_for(std::chrono::nanoseconds timeout) {
  if (core_ == nullptr) raise(Errc::invalid_argument, "empty Call");
  if (!ready()) {
    detail::CallOutcome o;
    if (!core_->wait(o, timeout)) return std::nullopt;
    take(o.ec, std::move(o.detail), std::move(o.result));
  }
  if (ec_) raise(ec_, detail_);
  return result_;
}

CallResult Call::get() {
  if (core_ == nullptr) raise(Errc::invalid_argument, "empty Call");
  const auto timeout = core_->options().call_timeout;
  auto r = wait_for(timeout);
  if (!r) {
    raise(Errc::timeout,
          "the NAA did not answer the call within " + std::to_string(timeout.count()) + " ms");
  }
  return *r;
}

}  // namespace naa::host
