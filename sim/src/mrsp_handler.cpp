#include "naa/sim/mrsp_handler.hpp"

#include <algorithm>

#include "naa/protocol/mrsp.hpp"

namespace naa::sim {
namespace {

const std::vector<Region> kNoRegions;

bool overlaps(std::uint64_t a, std::uint64_t alen, std::uint64_t b, std::uint64_t blen) {
  return a < b + blen && b < a + alen;
}

}  // namespace

MrspHandler::MrspHandler(sc_core::sc_module_name name, ModelContext& ctx)
    : sc_module(name), ctx_(ctx), in_(256), meter_(ctx.cfg), regions_(ctx.qps.size()) {
  SC_THREAD(thread);
}

void MrspHandler::deliver(Qp& qp) {
  // One receive per QP is outstanding at a time (Transport RNR-NAKs a second SEND), so this
  // channel, sized for every QP, never fills.
  (void)in_.try_put(Work{static_cast<std::uint32_t>(&qp - ctx_.qps.data()), qp.generation});
}

const std::vector<Region>& MrspHandler::regions(std::uint32_t qpn) const {
  const Qp* qp = ctx_.find_qp(qpn);
  return qp != nullptr ? regions_[qpn & 0xFFU] : kNoRegions;
}

std::size_t MrspHandler::regions_held() const {
  std::size_t n = 0;
  for (const auto& list : regions_)
    n += list.size();
  return n;
}

void MrspHandler::release(Qp& qp) {
  auto& list = regions_[static_cast<std::size_t>(&qp - ctx_.qps.data())];
  for (const Region& r : list)
    scrub->clear(r.naa_address, r.size);
  list.clear();
  mr->invalidate_owner(qp.qpn);
}

std::uint8_t MrspHandler::place(Qp& qp, std::vector<Region>& out) {
  const auto msg = protocol::decode_mrsp_request({qp.recv_buf.data(), qp.recv_len});
  if (!msg) {
    ++bad_messages_;
    return protocol::kMrspErrorInvalidAddress;  // not a valid 0x01: see docs/sim/mrsp_handler.md
  }
  const std::size_t count = msg->count();
  meter_.spend(ctx_.cfg.mrsp_entry_latency * count);
  const std::uint64_t mem_size = ctx_.cfg.mem_size;
  // Entries this connection may use: the free ones plus its own (a new 0x01 replaces them).
  const std::size_t available = mr->free_count() + mr->owned_count(qp.qpn);
  if (count > available) return protocol::kMrspErrorTooManyRegions;
  const std::size_t own = static_cast<std::size_t>(&qp - ctx_.qps.data());
  for (std::size_t i = 0; i < count; ++i) {
    const auto e = msg->entry(i);
    if (e.naa_address >= mem_size || e.size == 0) return protocol::kMrspErrorInvalidAddress;
    if (e.size > mem_size - e.naa_address) return protocol::kMrspErrorNotEnoughMemory;
    for (std::size_t j = 0; j < i; ++j) {
      const auto o = msg->entry(j);
      if (overlaps(e.naa_address, e.size, o.naa_address, o.size)) {
        return protocol::kMrspErrorInvalidAddress;
      }
    }
    for (std::size_t q = 0; q < regions_.size(); ++q) {
      if (q == own) continue;
      for (const Region& r : regions_[q]) {
        if (overlaps(e.naa_address, e.size, r.naa_address, r.size)) {
          return protocol::kMrspErrorInvalidAddress;
        }
      }
    }
    Region r;
    r.flags = e.flags;
    r.naa_address = e.naa_address;
    r.size = e.size;
    r.host_va = e.host_va;
    r.host_rkey = e.host_rkey;
    out.push_back(r);
  }
  return 0;
}

void MrspHandler::thread() {
  // Scratch buffers are members, not locals: a SystemC thread's stack is never unwound at the
  // end of simulation, so locals here would be reported as leaks by LeakSanitizer.
  std::vector<Region>& placed = placed_scratch_;
  placed.reserve(255);
  std::vector<protocol::MrspAdvertisementEntry>& adv = adv_scratch_;
  adv.reserve(255);
  for (;;) {
    const Work w = in_.get();
    Qp& qp = ctx_.qps.at(w.index);
    if (qp.generation != w.generation || qp.state == QpState::free || qp.state == QpState::error) {
      continue;
    }
    ++requests_;
    meter_.spend(SimConfig::stage_cycles(qp.recv_len, ctx_.cfg.width, ctx_.cfg.mrsp_latency));
    if (qp.generation != w.generation || qp.state != QpState::rts) continue;
    placed.clear();
    const std::uint8_t code = place(qp, placed);
    // place() waits (per-entry cost): the connection may have ended meanwhile, and programming
    // MR entries for a released QP would leak them.
    if (qp.generation != w.generation || qp.state != QpState::rts) continue;
    SendWqe wqe;
    wqe.op = SendWqe::Op::send;
    wqe.solicited = true;  // PROTOCOL.md 5.1: both MRSP SENDs carry SE
    if (code != 0) {
      ++errors_.at(code);
      wqe.data.resize(protocol::kMrspErrorSize);
      (void)protocol::encode_mrsp_error(code, wqe.data);
    } else {
      // Replace this connection's previous regions, then place and clear the new ones.
      auto& mine = regions_[w.index];
      for (const Region& r : mine)
        scrub->clear(r.naa_address, r.size);
      mr->invalidate_owner(qp.qpn);
      mine.clear();
      adv.clear();
      for (Region& r : placed) {
        const auto index = mr->free_index();
        if (!index) model_fatal(name(), "MR table full after the free-entry check");
        // rkey = random tag << 8 | index: direct-indexed yet unpredictable.
        const auto tag = static_cast<std::uint32_t>(ctx_.rng()) & 0xFFFFFFU;
        r.rkey = tag << 8 | static_cast<std::uint32_t>(*index);
        r.mr_index = *index;
        MrEntry e;
        e.valid = true;
        e.rkey = r.rkey;
        e.base = r.naa_address;
        e.length = r.size;
        e.owner_qpn = qp.qpn;
        // INPUT regions may be written and read back, OUTPUT regions only read; INTERNAL regions
        // take an entry (they count towards the 32) but grant no remote access.
        if ((r.flags & protocol::kMrspFlagInternal) == 0) {
          if ((r.flags & protocol::kMrspFlagInput) != 0) e.access |= kMrRemoteWrite | kMrRemoteRead;
          if ((r.flags & protocol::kMrspFlagOutput) != 0) e.access |= kMrRemoteRead;
        }
        mr->program(*index, e);
        scrub->clear(r.naa_address, r.size);  // a new region reads as zeros
        mine.push_back(r);
        ++regions_placed_;
        if ((r.flags & protocol::kMrspFlagInternal) == 0) {
          adv.push_back({r.naa_address, r.rkey, r.size});
        }
      }
      ++advertised_;
      wqe.data.resize(protocol::mrsp_advertisement_size(adv.size()));
      (void)protocol::encode_mrsp_advertisement(adv, wqe.data);
    }
    receives->repost_receive(qp);
    sends->post_send(qp, std::move(wqe));
  }
}

void MrspHandler::report(std::ostream& os) const {
  os << "mrsp.cycles=" << meter_.busy_cycles() << '\n'
     << "mrsp.requests=" << requests_ << '\n'
     << "mrsp.advertisements=" << advertised_ << '\n'
     << "mrsp.regions_placed=" << regions_placed_ << '\n'
     << "mrsp.regions_held=" << regions_held() << '\n'
     << "mrsp.bad_messages=" << bad_messages_ << '\n';
  for (std::size_t c = 1; c < errors_.size(); ++c) {
    os << "mrsp.error_" << c << '=' << errors_[c] << '\n';
  }
}

}  // namespace naa::sim
