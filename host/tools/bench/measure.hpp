// naa-bench: the measured operations: sessions and calls through the host library, one-way
// RDMA WRITE streaming.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "config.hpp"
#include "naa/host/error.hpp"
#include "naa/host/session.hpp"
#include "naa/host/transport.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/protocol/immediate.hpp"
#include "naa/protocol/mrsp.hpp"

namespace naa::bench {

inline naa::host::SessionOptions session_options(const Config& c) {
  naa::host::SessionOptions o;
  o.naa_address = c.naa_address;
  o.cm_port = c.cm_port;
  o.path_mtu = c.mtu;
  o.call_timeout = std::chrono::milliseconds(600000);
  return o;
}

inline std::shared_ptr<naa::host::Transport> open_transport(const std::string& ip) {
  naa::host::UdpRoceOptions o;
  o.local_ip = naa::host::parse_ipv4(ip);
  std::error_code ec;
  std::string detail;
  auto t = naa::host::open_udp_roce(o, ec, &detail);
  if (!t) {
    throw naa::host::Error(ec, "cannot open the endpoint on " + ip + ": " + detail);
  }
  return t;
}

inline std::vector<std::uint64_t> sweep_sizes(const Config& c) {
  std::vector<std::uint64_t> v;
  double x = static_cast<double>(c.min_size);
  while (true) {
    const auto s = static_cast<std::uint64_t>(std::llround(x));
    if (s >= c.max_size) break;
    if (v.empty() || s > v.back()) v.push_back(s);
    x *= c.factor;
  }
  v.push_back(c.max_size);
  return v;
}

// One latency point: a fresh session with one inout region of `size` bytes, `reps` calls.
inline LatencyPoint latency_point(const Config& c, const std::shared_ptr<naa::host::Transport>& t,
                                  SimProcess& sim, std::uint64_t size, int reps, int fn) {
  LatencyPoint p;
  p.size = size;
  p.reps = reps;
  std::vector<std::uint8_t> buf(size);
  for (std::size_t i = 0; i < buf.size(); ++i)
    buf[i] = static_cast<std::uint8_t>(i * 7);
  const auto t0 = Clock::now();
  naa::host::Session s(t, session_options(c), {naa::host::Region::inout(buf.data(), buf.size())});
  p.setup_s = seconds(Clock::now() - t0);
  p.connect_s = seconds(s.info().connect_time);
  p.mrsp_s = seconds(s.info().mrsp_time);
  SimProbe probe(sim);
  probe.begin();
  for (int r = 0; r < reps; ++r) {
    const naa::host::CallResult res = s.call(static_cast<std::uint8_t>(fn));
    if (res.return_code != 0) {
      throw naa::host::Error(naa::host::Errc::invalid_argument,
                             "call returned 0x" + std::to_string(res.return_code));
    }
    p.walls.push_back(seconds(res.wall));
    p.bytes_per_call = res.bytes_sent + res.bytes_received;
  }
  p.sim = probe.end();
  p.wall = summarize(p.walls);
  s.disconnect();
  return p;
}

// A connection that does its own MRSP (one input region) so that it can stream plain RDMA WRITEs
// into NAA memory (Session only makes calls).
class WriteStream {
 public:
  WriteStream(const std::shared_ptr<naa::host::Transport>& t, const Config& c, std::uint64_t bytes)
      : t_(t),
        depth_(static_cast<std::size_t>(c.stream_depth)),
        data_(bytes),
        mrsp_tx_(naa::protocol::kMrspMaxMessageSize),
        mrsp_rx_(naa::protocol::kMrspMaxMessageSize) {
    for (std::size_t i = 0; i < data_.size(); ++i)
      data_[i] = static_cast<std::uint8_t>(i * 13);
    check(t_->register_memory(data_.data(), data_.size(), naa::host::Access::none, data_mr_),
          "register");
    check(t_->register_memory(mrsp_tx_.data(), mrsp_tx_.size(), naa::host::Access::none, tx_mr_),
          "register");
    check(t_->register_memory(mrsp_rx_.data(), mrsp_rx_.size(), naa::host::Access::local_write,
                              rx_mr_),
          "register");
    naa::host::ConnectParams cp;
    cp.remote_ip = naa::host::parse_ipv4(c.naa_address).value_or(0);
    cp.cm_port = c.cm_port;
    cp.path_mtu = c.mtu;
    std::error_code ec;
    std::string detail;
    qp_ = t_->connect(cp, ec, &detail);
    if (!qp_) throw naa::host::Error(ec, "connect: " + detail);
    naa::protocol::MrspRequestEntry e;
    e.flags = naa::protocol::kMrspFlagInput;
    e.host_va = reinterpret_cast<std::uintptr_t>(data_.data());  // NOLINT: VAs on the wire
    e.host_rkey = data_mr_.rkey;
    e.size = static_cast<std::uint32_t>(bytes);
    const auto n = naa::protocol::encode_mrsp_request(std::span(&e, 1), mrsp_tx_);
    if (!n) throw naa::host::Error(naa::host::Errc::invalid_argument, "MRSP encode");
    naa::host::RecvWr rwr;
    rwr.wr_id = 1;
    rwr.sge = {reinterpret_cast<std::uintptr_t>(mrsp_rx_.data()),  // NOLINT
               static_cast<std::uint32_t>(mrsp_rx_.size()), rx_mr_.lkey};
    check(qp_->post_recv(rwr), "post_recv");
    naa::host::SendWr swr;
    swr.wr_id = 2;
    swr.opcode = naa::host::WrOpcode::send;
    swr.sge = {reinterpret_cast<std::uintptr_t>(mrsp_tx_.data()),  // NOLINT
               static_cast<std::uint32_t>(*n), tx_mr_.lkey};
    swr.solicited = true;
    check(qp_->post_send(swr), "post_send");
    std::uint32_t reply_len = 0;
    for (int got = 0; got < 2;) {
      naa::host::WorkCompletion wc;
      if (qp_->wait_cq(std::span(&wc, 1), std::chrono::seconds(10)) == 0) {
        throw naa::host::Error(naa::host::Errc::timeout, "no MRSP answer");
      }
      check(wc.status, "MRSP");
      if (wc.wr_id == 1) reply_len = wc.byte_len;
      ++got;
    }
    const auto adv = naa::protocol::decode_mrsp_advertisement({mrsp_rx_.data(), reply_len});
    if (!adv || adv->count() != 1) {
      throw naa::host::Error(naa::host::Errc::mrsp_bad_reply, "MRSP answer");
    }
    placement_ = adv->entry(0);
  }
  ~WriteStream() {
    if (qp_) (void)qp_->disconnect(std::chrono::milliseconds(1000));
    qp_.reset();
    (void)t_->deregister_memory(data_mr_);
    (void)t_->deregister_memory(tx_mr_);
    (void)t_->deregister_memory(rx_mr_);
  }
  WriteStream(const WriteStream&) = delete;
  WriteStream& operator=(const WriteStream&) = delete;

  // Streams the whole buffer in WRITEs of `write_size`, at most --stream-depth outstanding;
  // returns seconds from the first post to the last completion (every WRITE acknowledged).
  double run(std::uint64_t write_size) {
    const std::size_t kDepth = depth_;
    const std::uint64_t total = data_.size();
    std::uint64_t posted = 0;
    std::size_t outstanding = 0;
    const auto t0 = Clock::now();
    while (posted < total || outstanding > 0) {
      while (posted < total && outstanding < kDepth) {
        const std::uint64_t n = std::min(write_size, total - posted);
        naa::host::SendWr w;
        w.wr_id = posted;
        w.opcode = naa::host::WrOpcode::rdma_write;
        w.sge = {reinterpret_cast<std::uintptr_t>(data_.data()) + posted,  // NOLINT
                 static_cast<std::uint32_t>(n), data_mr_.lkey};
        w.remote_addr = placement_.naa_address + posted;
        w.rkey = placement_.rkey;
        check(qp_->post_send(w), "post WRITE");
        posted += n;
        ++outstanding;
      }
      naa::host::WorkCompletion wc[8];
      const std::size_t k = qp_->wait_cq(wc, std::chrono::seconds(30));
      if (k == 0) throw naa::host::Error(naa::host::Errc::timeout, "WRITE stream stalled");
      for (std::size_t i = 0; i < k; ++i)
        check(wc[i].status, "WRITE");
      outstanding -= k;
    }
    return seconds(Clock::now() - t0);
  }

 private:
  static void check(std::error_code ec, const char* what) {
    if (ec) throw naa::host::Error(ec, what);
  }
  std::shared_ptr<naa::host::Transport> t_;
  std::size_t depth_;
  std::vector<std::uint8_t> data_;
  std::vector<std::uint8_t> mrsp_tx_;
  std::vector<std::uint8_t> mrsp_rx_;
  naa::host::MemoryRegion data_mr_, tx_mr_, rx_mr_;
  std::unique_ptr<naa::host::QueuePair> qp_;
  naa::protocol::MrspAdvertisementEntry placement_;
};

inline SessionsPoint sessions_point(const Config& c, const std::shared_ptr<naa::host::Transport>& t,
                                    SimProcess& sim, int k) {
  SessionsPoint p;
  p.sessions = k;
  p.call_size = c.call_size;
  p.calls = c.calls;
  const std::uint64_t stride = (c.call_size + 4095) / 4096 * 4096;
  std::vector<std::vector<std::uint8_t>> bufs(static_cast<std::size_t>(k),
                                              std::vector<std::uint8_t>(c.call_size, 1));
  std::vector<naa::host::Session> ss;
  for (int i = 0; i < k; ++i) {
    auto o = session_options(c);
    o.naa_base_address = stride * static_cast<std::uint64_t>(i);
    auto& b = bufs[static_cast<std::size_t>(i)];
    ss.emplace_back(t, o, std::vector{naa::host::Region::inout(b.data(), b.size())});
  }
  SimProbe probe(sim);
  probe.begin();
  const auto t0 = Clock::now();
  for (int r = 0; r < c.calls; ++r) {
    std::vector<naa::host::Call> inflight;
    for (auto& s : ss)
      inflight.push_back(s.invoke(static_cast<std::uint8_t>(c.fn)));
    for (auto& call : inflight) {
      const auto res = call.get();
      p.bytes += res.bytes_sent + res.bytes_received;
    }
  }
  p.wall_s = seconds(Clock::now() - t0);
  p.sim = probe.end();
  for (auto& s : ss)
    s.disconnect();
  return p;
}

}  // namespace naa::bench
