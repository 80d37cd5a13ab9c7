// SessionCore's Memory Region Setup Protocol (PROTOCOL.md 5.1): the 0x01 request and its 0x02
// answer, and the handler-image extension's 0x04 install and 0x05 answer (docs/protocol.md
// "Handler images"). Both exchanges are one SEND each way, with SE.
#include <optional>
#include <string>

#include "naa/host/error.hpp"
#include "naa/host/ipv4.hpp"
#include "naa/protocol/immediate.hpp"
#include "naa/protocol/mrsp.hpp"
#include "session_core.hpp"

namespace naa::host::detail {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint64_t kMrspRecvId = 0x4D52535000000001ULL;  // "MRSP"
constexpr std::uint64_t kMrspSendId = 0x4D52535000000002ULL;
constexpr std::uint64_t kImageWriteId = 0x4D52535000000003ULL;

// The Errc of an MRSP error code (0x00 message).
Errc errc_of_mrsp_error(std::uint8_t code) {
  switch (code) {
    case protocol::kMrspErrorNotEnoughMemory:
      return Errc::mrsp_not_enough_memory;
    case protocol::kMrspErrorInvalidAddress:
      return Errc::mrsp_invalid_address;
    case protocol::kMrspErrorTooManyRegions:
      return Errc::mrsp_too_many_regions;
    case protocol::kMrspErrorWrongMachine:
      return Errc::mrsp_wrong_machine;
    case protocol::kMrspErrorImageTooLarge:
      return Errc::mrsp_image_too_large;
    case protocol::kMrspErrorNoEntryPoint:
      return Errc::mrsp_missing_entry_point;
    case protocol::kMrspErrorBadImage:
      return Errc::mrsp_bad_image;
    case protocol::kMrspErrorBadPeer:
      return Errc::mrsp_bad_peer;
    default:
      return Errc::mrsp_unknown_error;
  }
}

std::string hex2(std::uint8_t v) {
  static const char* const kDigits = "0123456789ABCDEF";
  return std::string("0x") + kDigits[v >> 4] + kDigits[v & 0xF];
}

}  // namespace

// Waits for the completions of `ids` (each once) until the MRSP timeout; `answer` gets the one
// with wr_id kMrspRecvId.
std::error_code SessionCore::await_mrsp(std::initializer_list<std::uint64_t> ids,
                                        WorkCompletion& answer, std::string& detail) {
  std::vector<std::uint64_t> waiting(ids);
  const auto deadline = Clock::now() + opts_.mrsp_timeout;
  while (!waiting.empty()) {
    const auto now = Clock::now();
    if (now >= deadline) {
      detail = "no MRSP answer from the NAA within " + std::to_string(opts_.mrsp_timeout.count()) +
               " ms";
      return Errc::timeout;
    }
    WorkCompletion wc;
    if (qp_->wait_cq(std::span(&wc, 1), deadline - now) == 0) {
      if (auto qe = qp_->error()) {
        detail = "connection failed during MRSP: " + qe.message();
        return qe;
      }
      continue;
    }
    if (wc.status) {
      detail = "MRSP " +
               std::string(wc.wr_id == kMrspSendId     ? "SEND"
                           : wc.wr_id == kImageWriteId ? "handler image RDMA WRITE"
                                                       : "receive") +
               " failed: " + wc.status.message();
      return wc.status;
    }
    std::erase(waiting, wc.wr_id);
    if (wc.wr_id == kMrspRecvId) answer = wc;
  }
  return {};
}

// Posts the receive for the answer, then SENDs the first `length` bytes of mrsp_tx_ (SE), and
// waits for both (PROTOCOL.md 5.1: the receive is posted BEFORE the request goes out).
std::error_code SessionCore::exchange_mrsp(std::size_t length, WorkCompletion& answer,
                                           std::string& detail) {
  RecvWr rwr;
  rwr.wr_id = kMrspRecvId;
  rwr.sge = {reinterpret_cast<std::uintptr_t>(mrsp_rx_.data()),  // NOLINT
             static_cast<std::uint32_t>(mrsp_rx_.size()), mrsp_rx_mr_.lkey};
  if (auto ec = qp_->post_recv(rwr)) return ec;
  SendWr swr;
  swr.wr_id = kMrspSendId;
  swr.opcode = WrOpcode::send;
  swr.sge = {reinterpret_cast<std::uintptr_t>(mrsp_tx_.data()),  // NOLINT
             static_cast<std::uint32_t>(length), mrsp_tx_mr_.lkey};
  swr.solicited = true;
  if (auto ec = qp_->post_send(swr)) return ec;
  return await_mrsp({kMrspSendId, kMrspRecvId}, answer, detail);
}

std::error_code SessionCore::run_mrsp(std::string& detail) {
  std::vector<protocol::MrspRequestEntry> entries;
  std::size_t advertised = 0;  // the 0x02 lists the non-internal entries only
  // Parameter regions in index order, then internal regions, then the HANDLER_IMAGE region
  // (docs/protocol.md "Handler images": it is the last entry).
  for (int pass = 0; pass < 3; ++pass) {
    for (RegionState& st : regions_) {
      const bool internal = (st.region.flags & Region::kInternal) != 0;
      const bool image = (st.region.flags & protocol::kMrspFlagHandlerImage) != 0;
      if ((image ? 2 : internal ? 1 : 0) != pass) continue;
      protocol::MrspRequestEntry e;
      e.flags = st.region.flags;
      e.naa_address = *st.region.naa_address;
      e.size = static_cast<std::uint32_t>(st.region.size);
      if (image) {
        st.placement = advertised++;  // advertised, but the NAA never writes to the host
      } else if (!internal) {
        e.host_va = reinterpret_cast<std::uintptr_t>(st.region.data);  // NOLINT: VAs on the wire
        e.host_rkey = st.mr.rkey;
        st.placement = advertised++;
      } else if ((st.region.flags & Region::kStream) != 0) {
        e.host_va = opts_.stream_argument;    // the stream descriptor's argument
        e.host_rkey = opts_.stream_function;  // and its function code
      }
      entries.push_back(e);
    }
  }
  auto n = protocol::encode_mrsp_request(entries, mrsp_tx_);
  if (!n) {
    detail = "cannot encode the MRSP request";
    return Errc::invalid_argument;
  }
  WorkCompletion answer;
  if (auto ec = exchange_mrsp(*n, answer, detail)) return ec;
  const protocol::ByteView reply(mrsp_rx_.data(), answer.byte_len);
  auto msg = protocol::decode_mrsp(reply);
  if (!msg) {
    detail = "MRSP answer does not decode: " + std::string(protocol::to_string(msg.error()));
    return Errc::mrsp_bad_reply;
  }
  if (const auto* err = std::get_if<protocol::MrspError>(&*msg)) {
    detail = "the NAA refused the regions: MRSP error " + hex2(err->code) + " (" +
             std::string(protocol::mrsp_error_name(err->code)) + ")";
    return errc_of_mrsp_error(err->code);
  }
  const auto* adv = std::get_if<protocol::MrspAdvertisementView>(&*msg);
  if (adv == nullptr) {
    detail = "the NAA answered MRSP with a message of type " + hex2(reply[0]);
    return Errc::mrsp_bad_reply;
  }
  std::size_t expected = 0;
  for (const RegionState& st : regions_) {
    if ((st.region.flags & Region::kInternal) == 0) ++expected;
  }
  if (adv->count() != expected) {
    detail = "MRSP advertisement has " + std::to_string(adv->count()) + " entries, expected " +
             std::to_string(expected);
    return Errc::mrsp_bad_reply;
  }
  for (std::size_t i = 0; i < adv->count(); ++i) {
    const auto e = adv->entry(i);
    placements_.push_back(Placement{e.naa_address, e.rkey, e.size});
  }
  return {};
}

// docs/protocol.md "Handler images": RDMA-WRITE the image and the initial state into the
// advertised HANDLER_IMAGE region, then 0x04 install; the NAA answers 0x05 or an error.
std::error_code SessionCore::install_handler(std::string& detail) {
  const RegionState* image = nullptr;
  for (const RegionState& st : regions_) {
    if ((st.region.flags & protocol::kMrspFlagHandlerImage) != 0) image = &st;
  }
  if (image == nullptr) return {};
  const Placement& p = placements_.at(image->placement);
  SendWr wr;
  wr.wr_id = kImageWriteId;
  wr.opcode = WrOpcode::rdma_write;
  wr.sge = {reinterpret_cast<std::uintptr_t>(image->region.data),  // NOLINT
            static_cast<std::uint32_t>(image->region.size), image->mr.lkey};
  wr.remote_addr = p.naa_address;
  wr.rkey = p.rkey;
  if (auto ec = qp_->post_send(wr)) return ec;
  WorkCompletion none;
  if (auto ec = await_mrsp({kImageWriteId}, none, detail)) return ec;
  protocol::MrspInstall install;
  install.naa_address = p.naa_address;
  install.image_bytes = static_cast<std::uint32_t>(opts_.handler_image.size());
  install.state_bytes = static_cast<std::uint32_t>(opts_.handler_state.size());
  auto n = protocol::encode_mrsp_install(install, mrsp_tx_);
  if (!n) return Errc::invalid_argument;
  WorkCompletion answer;
  if (auto ec = exchange_mrsp(*n, answer, detail)) return ec;
  const protocol::ByteView reply(mrsp_rx_.data(), answer.byte_len);
  auto msg = protocol::decode_mrsp(reply);
  if (!msg) {
    detail = "the answer to the handler install does not decode: " +
             std::string(protocol::to_string(msg.error()));
    return Errc::mrsp_bad_reply;
  }
  if (const auto* err = std::get_if<protocol::MrspError>(&*msg)) {
    detail = "the NAA refused the handler image: MRSP error " + hex2(err->code) + " (" +
             std::string(protocol::mrsp_error_name(err->code)) + ")";
    return errc_of_mrsp_error(err->code);
  }
  const auto* ok = std::get_if<protocol::MrspInstalled>(&*msg);
  if (ok == nullptr || ok->fn != opts_.stream_function) {
    detail = "the NAA answered the handler install with " +
             (ok == nullptr ? "a message of type " + hex2(reply[0])
                            : "function code " + std::to_string(ok->fn));
    return Errc::mrsp_bad_reply;
  }
  return {};
}

// docs/protocol.md "Peers": 0x06 to this session's NAA i (it opens a requester QP to data's NAA
// j and answers 0x07 with its QPN and first PSN), then 0x08 on data's connection (NAA j answers
// 0x09 and takes the new requester once that answer is acknowledged).
std::error_code SessionCore::bind_peer(std::uint8_t peer, SessionCore& data, std::size_t region,
                                       std::string& detail) {
  if (&data == this || peer >= protocol::kMrspMaxPeers || region >= data.regions_.size() ||
      (data.regions_[region].region.flags & Region::kInternal) != 0 ||
      data.opts_.stream_function == 0 || data.handed_over_ || handed_over_) {
    detail = "bind_peer: peer index 0.." + std::to_string(protocol::kMrspMaxPeers - 1) +
             ", a non-internal region of another streaming session, not handed over";
    return Errc::invalid_argument;
  }
  if (!qp_ || !data.qp_ || active_ || data.active_) {
    detail = "bind_peer: both sessions connected and idle";
    return Errc::not_connected;
  }
  const auto naa_i = parse_ipv4(info_.naa_address);
  const auto naa_j = parse_ipv4(data.info_.naa_address);
  if (!naa_i || !naa_j) {
    detail = "bind_peer: an NAA address is not IPv4";
    return Errc::invalid_argument;
  }
  const Placement& target = data.placements_.at(data.regions_[region].placement);
  protocol::MrspPeer m;
  m.index = peer;
  m.peer_ip = *naa_j;
  m.peer_qpn = data.info_.naa_qpn;
  m.mtu = data.info_.path_mtu;
  m.va = target.naa_address;
  m.rkey = target.rkey;
  m.size = target.size;
  m.end_imm = protocol::encode_call_immediate(data.opts_.stream_function, 0);
  auto n = protocol::encode_mrsp_peer(m, mrsp_tx_);
  if (!n) return Errc::invalid_argument;
  WorkCompletion answer;
  if (auto ec = exchange_mrsp(*n, answer, detail)) return ec;
  auto msg = protocol::decode_mrsp(protocol::ByteView(mrsp_rx_.data(), answer.byte_len));
  if (!msg) {
    detail = "the answer to MRSP 0x06 peer does not decode: " +
             std::string(protocol::to_string(msg.error()));
    return Errc::mrsp_bad_reply;
  }
  if (const auto* err = std::get_if<protocol::MrspError>(&*msg)) {
    detail = "the NAA refused peer " + std::to_string(peer) + ": MRSP error " + hex2(err->code) +
             " (" + std::string(protocol::mrsp_error_name(err->code)) + ")";
    return errc_of_mrsp_error(err->code);
  }
  const auto* bound = std::get_if<protocol::MrspPeerBound>(&*msg);
  if (bound == nullptr || bound->index != peer) {
    detail = "the NAA answered MRSP 0x06 peer with a message of type " + hex2(mrsp_rx_[0]);
    return Errc::mrsp_bad_reply;
  }
  const std::error_code ec = data.hand_over(*naa_i, *bound, detail);
  if (ec) {
    // NAA i would keep a QP to a connection that was not handed over: take peer k back (a 0x06
    // with an empty region). Its outcome does not change the error the caller gets.
    protocol::MrspPeer release;
    release.index = peer;
    auto r = protocol::encode_mrsp_peer(release, mrsp_tx_);
    std::string ignored;
    if (r) (void)exchange_mrsp(*r, answer, ignored);
    return ec;
  }
  data.handed_over_ = true;
  return {};
}

// The 0x08 on this (data) connection and its answer.
std::error_code SessionCore::hand_over(std::uint32_t naa_i, const protocol::MrspPeerBound& bound,
                                       std::string& detail) {
  auto n =
      protocol::encode_mrsp_handover(protocol::MrspHandover{naa_i, bound.qpn, bound.psn}, mrsp_tx_);
  if (!n) return Errc::invalid_argument;
  WorkCompletion answer;
  if (auto ec = exchange_mrsp(*n, answer, detail)) return ec;
  auto msg = protocol::decode_mrsp(protocol::ByteView(mrsp_rx_.data(), answer.byte_len));
  if (!msg) {
    detail = "the answer to MRSP 0x08 handover does not decode: " +
             std::string(protocol::to_string(msg.error()));
    return Errc::mrsp_bad_reply;
  }
  if (const auto* err = std::get_if<protocol::MrspError>(&*msg)) {
    detail = "the NAA refused the hand-over: MRSP error " + hex2(err->code) + " (" +
             std::string(protocol::mrsp_error_name(err->code)) + ")";
    return errc_of_mrsp_error(err->code);
  }
  if (!std::holds_alternative<protocol::MrspHandedOver>(*msg)) {
    detail = "the NAA answered MRSP 0x08 handover with a message of type " + hex2(mrsp_rx_[0]);
    return Errc::mrsp_bad_reply;
  }
  return {};
}

}  // namespace naa::host::detail
