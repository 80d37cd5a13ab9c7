#include "naa/sim/mrsp_handler.hpp"

#include <algorithm>

#include "naa/protocol/mrsp.hpp"
#include "naa/sim/hpu_handler.hpp"

namespace naa::sim {
namespace {

const std::vector<Region> kNoRegions;

bool overlaps(std::uint64_t a, std::uint64_t alen, std::uint64_t b, std::uint64_t blen) {
  return a < b + blen && b < a + alen;
}

bool is_image(std::uint8_t flags) {
  return (flags & protocol::kMrspFlagHandlerImage) != 0;
}

constexpr std::uint8_t kDescriptorFlags = protocol::kMrspFlagInternal | protocol::kMrspFlagStream;

}  // namespace

MrspHandler::MrspHandler(sc_core::sc_module_name name, ModelContext& ctx)
    : sc_module(name),
      ctx_(ctx),
      in_(256),
      meter_(ctx.cfg),
      regions_(ctx.qps.size()),
      qp_count_(ctx.qps.size()),
      images_(ctx.qps.size()),
      peers_(ctx.qps.size()) {
  SC_THREAD(thread);
}

void MrspHandler::deliver(Qp& qp) {
  // One receive per QP is outstanding at a time (Transport RNR-NAKs a second SEND), so this
  // channel, sized for every QP, never fills.
  (void)in_.try_put(Work{static_cast<std::uint32_t>(&qp - ctx_.qps.data()), qp.generation});
}

const std::vector<Region>& MrspHandler::regions(std::uint32_t qpn) const {
  // ctx_.find_qp(qpn) != nullptr, with the QP count kept.
  const std::size_t index = qpn & 0xFFU;
  if (index >= qp_count_) return kNoRegions;
  const Qp& qp = ctx_.qps[index];
  return qp.state != QpState::free && qp.qpn == qpn ? regions_[index] : kNoRegions;
}

std::size_t MrspHandler::regions_held() const {
  std::size_t n = 0;
  for (const auto& list : regions_)
    n += list.size();
  for (const auto& image : images_)
    n += image ? 1U : 0U;
  return n;
}

void MrspHandler::release(Qp& qp) {
  const auto index = static_cast<std::size_t>(&qp - ctx_.qps.data());
  auto& list = regions_[index];
  for (const Region& r : list)
    scrub->clear(r.naa_address, r.size);
  list.clear();
  free_image(qp, index);
  for (std::size_t k = 0; k < protocol::kMrspMaxPeers; ++k)
    release_peer(index, k);
  handlers->uninstall(qp);
  mr->invalidate_owner(qp.qpn);
}

void MrspHandler::free_image(Qp& qp, std::size_t index) {
  auto& image = images_[index];
  if (!image) return;
  scrub->clear(image->naa_address, image->size);  // no image bytes pass to the next connection
  if (qp.state == QpState::rts) mr->program(image->mr_index, MrEntry{});  // its rkey is revoked
  image.reset();
}

std::uint8_t MrspHandler::install(Qp& qp, std::size_t index, const protocol::MrspInstall& m,
                                  std::uint8_t& fn) {
  const auto& image = images_[index];
  const std::uint64_t bytes = std::uint64_t{m.image_bytes} + m.state_bytes;
  if (!image || m.naa_address != image->naa_address || m.image_bytes == 0 || bytes > image->size) {
    return protocol::kMrspErrorInvalidAddress;  // not what the 0x02 advertised to this host
  }
  const auto& mine = regions_[index];
  const auto d = std::find_if(mine.begin(), mine.end(), [](const Region& r) {
    return (r.flags & kDescriptorFlags) == kDescriptorFlags;
  });
  if (d == mine.end()) return protocol::kMrspErrorInvalidAddress;  // no stream descriptor
  fn = static_cast<std::uint8_t>(d->host_rkey & 0x7FU);
  return handlers->install(qp, fn, image->naa_address, m.image_bytes, m.state_bytes, d->size);
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
    // docs/protocol.md "Handler images": one HANDLER_IMAGE entry, the last, not INTERNAL.
    if (is_image(e.flags)) {
      if (i + 1 != count || e.flags != protocol::kMrspFlagHandlerImage) {
        return protocol::kMrspErrorInvalidAddress;
      }
      if (e.size > kSpinMaxImageFile) return protocol::kMrspErrorImageTooLarge;
    }
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
      const auto& image = images_[q];
      if (image && overlaps(e.naa_address, e.size, image->naa_address, image->size)) {
        return protocol::kMrspErrorInvalidAddress;
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
    SendWqe wqe;
    wqe.op = SendWqe::Op::send;
    wqe.solicited = true;  // PROTOCOL.md 5.1: both MRSP SENDs carry SE
    const auto any = protocol::decode_mrsp({qp.recv_buf.data(), qp.recv_len});
    if (any && std::holds_alternative<protocol::MrspInstall>(*any)) {
      // docs/protocol.md "Handler images": install what the host wrote, then free the region.
      ++installs_;
      std::uint8_t fn = 0;
      const std::uint8_t code = install(qp, w.index, std::get<protocol::MrspInstall>(*any), fn);
      if (qp.generation != w.generation || qp.state != QpState::rts) continue;
      free_image(qp, w.index);
      if (code != 0) {
        ++errors_.at(code);
        wqe.data.resize(protocol::kMrspErrorSize);
        (void)protocol::encode_mrsp_error(code, wqe.data);
      } else {
        ++installed_;
        wqe.data.resize(protocol::kMrspInstalledSize);
        (void)protocol::encode_mrsp_installed(fn, wqe.data);
      }
      receives->repost_receive(qp);
      sends->post_send(qp, std::move(wqe));
      continue;
    }
    if (any && peer_request(qp, w.index, *any, wqe.data)) {  // docs/protocol.md "Peers"
      if (qp.generation != w.generation || qp.state != QpState::rts) continue;
      receives->repost_receive(qp);
      sends->post_send(qp, std::move(wqe));
      continue;
    }
    placed.clear();
    const std::uint8_t code = place(qp, placed);
    // place() waits (per-entry cost): the connection may have ended meanwhile, and programming
    // MR entries for a released QP would leak them.
    if (qp.generation != w.generation || qp.state != QpState::rts) continue;
    if (code != 0) {
      ++errors_.at(code);
      wqe.data.resize(protocol::kMrspErrorSize);
      (void)protocol::encode_mrsp_error(code, wqe.data);
    } else {
      // Replace this connection's previous regions, then place and clear the new ones.
      auto& mine = regions_[w.index];
      for (const Region& r : mine)
        scrub->clear(r.naa_address, r.size);
      free_image(qp, w.index);
      handlers->uninstall(qp);  // an installed image belongs to the regions it came with
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
        // A HANDLER_IMAGE region may only be written (docs/protocol.md "Handler images").
        if ((r.flags & protocol::kMrspFlagInternal) == 0) {
          if ((r.flags & protocol::kMrspFlagInput) != 0) e.access |= kMrRemoteWrite | kMrRemoteRead;
          if ((r.flags & protocol::kMrspFlagOutput) != 0) e.access |= kMrRemoteRead;
          if (is_image(r.flags)) e.access |= kMrRemoteWrite;
        }
        mr->program(*index, e);
        scrub->clear(r.naa_address, r.size);  // a new region reads as zeros
        if (is_image(r.flags)) {
          images_[w.index] = r;  // not one of the call's regions
        } else {
          mine.push_back(r);
        }
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
    // The handler-image extension's codes, like its counters, only once non-zero: a run without
    // it reports what it always did (scripts/sim-time-digest.sh compares that byte for byte).
    if (c > protocol::kMrspErrorTooManyRegions && errors_[c] == 0) continue;
    os << "mrsp.error_" << c << '=' << errors_[c] << '\n';
  }
  if (peers_bound_ + peers_released_ + handovers_ != 0) {  // peers (sparse)
    os << "mrsp.peers_bound=" << peers_bound_ << '\n'
       << "mrsp.peers_released=" << peers_released_ << '\n'
       << "mrsp.handovers=" << handovers_ << '\n';
  }
  if (installs_ != 0) {
    os << "mrsp.installs=" << installs_ << '\n' << "mrsp.images_installed=" << installed_ << '\n';
  }
}

}  // namespace naa::sim
