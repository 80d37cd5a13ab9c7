// A host QP that does its own MRSP (one input region) and streams plain RDMA WRITEs into the
// NAA's memory, as naa-bench's streaming sweep does (host/tools/bench/measure.hpp): the traffic
// of the link-model tests (docs/sim/net_port.md "Link model").
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "naa/host/error.hpp"
#include "naa/host/ipv4.hpp"
#include "naa/host/transport.hpp"
#include "naa/protocol/mrsp.hpp"

namespace naa::testbench {

class WriteStream {
 public:
  WriteStream(const std::shared_ptr<host::Transport>& t, const std::string& naa_ip,
              std::uint64_t bytes, std::uint32_t mtu = 4096)
      : t_(t),
        data_(bytes),
        mrsp_tx_(protocol::kMrspMaxMessageSize),
        mrsp_rx_(protocol::kMrspMaxMessageSize) {
    for (std::size_t i = 0; i < data_.size(); ++i)
      data_[i] = static_cast<std::uint8_t>(i * 13);
    check(t_->register_memory(data_.data(), data_.size(), host::Access::none, data_mr_), "reg");
    check(t_->register_memory(mrsp_tx_.data(), mrsp_tx_.size(), host::Access::none, tx_mr_), "reg");
    check(t_->register_memory(mrsp_rx_.data(), mrsp_rx_.size(), host::Access::local_write, rx_mr_),
          "reg");
    host::ConnectParams cp;
    cp.remote_ip = host::parse_ipv4(naa_ip).value_or(0);
    cp.path_mtu = mtu;
    std::error_code ec;
    std::string detail;
    qp_ = t_->connect(cp, ec, &detail);
    if (!qp_) throw std::runtime_error("connect: " + detail);
    protocol::MrspRequestEntry e;
    e.flags = protocol::kMrspFlagInput;
    e.host_va = reinterpret_cast<std::uintptr_t>(data_.data());  // NOLINT: VAs on the wire
    e.host_rkey = data_mr_.rkey;
    e.size = static_cast<std::uint32_t>(bytes);
    const auto n = protocol::encode_mrsp_request(std::span(&e, 1), mrsp_tx_);
    if (!n) throw std::runtime_error("MRSP encode");
    host::RecvWr rwr;
    rwr.wr_id = 1;
    rwr.sge = {reinterpret_cast<std::uintptr_t>(mrsp_rx_.data()),  // NOLINT
               static_cast<std::uint32_t>(mrsp_rx_.size()), rx_mr_.lkey};
    check(qp_->post_recv(rwr), "post_recv");
    host::SendWr swr;
    swr.wr_id = 2;
    swr.opcode = host::WrOpcode::send;
    swr.sge = {reinterpret_cast<std::uintptr_t>(mrsp_tx_.data()),  // NOLINT
               static_cast<std::uint32_t>(*n), tx_mr_.lkey};
    swr.solicited = true;
    check(qp_->post_send(swr), "post_send");
    std::uint32_t reply_len = 0;
    for (int got = 0; got < 2;) {
      host::WorkCompletion wc;
      if (qp_->wait_cq(std::span(&wc, 1), std::chrono::seconds(10)) == 0) {
        throw std::runtime_error("no MRSP answer");
      }
      check(wc.status, "MRSP");
      if (wc.wr_id == 1) reply_len = wc.byte_len;
      ++got;
    }
    const auto adv = protocol::decode_mrsp_advertisement({mrsp_rx_.data(), reply_len});
    if (!adv || adv->count() != 1) throw std::runtime_error("MRSP answer");
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

  // Streams the whole buffer in WRITEs of `write_size`, at most `depth` outstanding, until every
  // WRITE is acknowledged.
  void run(std::uint64_t write_size, std::size_t depth = 4) {
    const std::uint64_t total = data_.size();
    std::uint64_t posted = 0;
    std::size_t outstanding = 0;
    while (posted < total || outstanding > 0) {
      while (posted < total && outstanding < depth) {
        const std::uint64_t n = std::min(write_size, total - posted);
        host::SendWr w;
        w.wr_id = posted;
        w.opcode = host::WrOpcode::rdma_write;
        w.sge = {reinterpret_cast<std::uintptr_t>(data_.data()) + posted,  // NOLINT
                 static_cast<std::uint32_t>(n), data_mr_.lkey};
        w.remote_addr = placement_.naa_address + posted;
        w.rkey = placement_.rkey;
        check(qp_->post_send(w), "post WRITE");
        posted += n;
        ++outstanding;
      }
      host::WorkCompletion wc[8];
      const std::size_t k = qp_->wait_cq(wc, std::chrono::seconds(30));
      if (k == 0) throw std::runtime_error("WRITE stream stalled");
      for (std::size_t i = 0; i < k; ++i)
        check(wc[i].status, "WRITE");
      outstanding -= k;
    }
  }

 private:
  static void check(std::error_code ec, const char* what) {
    if (ec) throw std::runtime_error(std::string(what) + ": " + ec.message());
  }
  std::shared_ptr<host::Transport> t_;
  std::vector<std::uint8_t> data_;
  std::vector<std::uint8_t> mrsp_tx_;
  std::vector<std::uint8_t> mrsp_rx_;
  host::MemoryRegion data_mr_, tx_mr_, rx_mr_;
  std::unique_ptr<host::QueuePair> qp_;
  protocol::MrspAdvertisementEntry placement_;
};

}  // namespace naa::testbench
