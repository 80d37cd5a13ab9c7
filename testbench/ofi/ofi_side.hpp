// The libfabric objects of one side of a naa connection in the ofi tests (test_ofi_provider.cpp,
// test_ofi_conformance.cpp): fabric and EQ, domain, CQ, endpoint and a registered buffer, closed
// in reverse order; and reading one CM event.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

namespace naa::testbench::ofi {

struct Side {
  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_eq* eq = nullptr;
  fid_pep* pep = nullptr;
  fid_domain* domain = nullptr;
  fid_cq* cq = nullptr;
  fid_ep* ep = nullptr;
  fid_mr* mr = nullptr;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(1 << 20);

  ~Side() {
    if (ep != nullptr) fi_close(&ep->fid);
    if (mr != nullptr) fi_close(&mr->fid);
    if (cq != nullptr) fi_close(&cq->fid);
    if (pep != nullptr) fi_close(&pep->fid);
    if (domain != nullptr) fi_close(&domain->fid);
    if (eq != nullptr) fi_close(&eq->fid);
    if (fabric != nullptr) fi_close(&fabric->fid);
    if (info != nullptr) fi_freeinfo(info);
  }

  void open_fabric(fi_info* fi) {
    REQUIRE(fi_fabric(fi->fabric_attr, &fabric, nullptr) == 0);
    fi_eq_attr ea{};
    ea.wait_obj = FI_WAIT_UNSPEC;
    REQUIRE(fi_eq_open(fabric, &ea, &eq, nullptr) == 0);
  }

  // Domain, CQ (format, wait object), endpoint bound and enabled, buffer registered.
  void open_endpoint(fi_info* fi, fi_cq_format format = FI_CQ_FORMAT_DATA,
                     fi_wait_obj wait = FI_WAIT_NONE) {
    REQUIRE(fi_domain(fabric, fi, &domain, nullptr) == 0);
    fi_cq_attr ca{};
    ca.format = format;
    ca.wait_obj = wait;
    ca.size = 64;
    REQUIRE(fi_cq_open(domain, &ca, &cq, nullptr) == 0);
    REQUIRE(fi_endpoint(domain, fi, &ep, nullptr) == 0);
    REQUIRE(fi_ep_bind(ep, &eq->fid, 0) == 0);
    REQUIRE(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV) == 0);
    REQUIRE(fi_enable(ep) == 0);
    REQUIRE(fi_mr_reg(domain, buf.data(), buf.size(),
                      FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
                      0, 0, &mr, nullptr) == 0);
  }
  void* desc() const { return fi_mr_desc(mr); }
  std::uint8_t* at(std::size_t off) { return buf.data() + off; }
  std::uint64_t va(std::size_t off) { return reinterpret_cast<std::uint64_t>(at(off)); }
};

std::uint32_t expect_cm(fid_eq* eq, fi_eq_cm_entry& entry,
                        std::size_t len = sizeof(fi_eq_cm_entry)) {
  std::uint32_t event = 0;
  const ssize_t n = fi_eq_sread(eq, &event, &entry, len, 10000, 0);
  INFO("fi_eq_sread: " << n << " " << fi_strerror(static_cast<int>(-n)));
  REQUIRE(n >= static_cast<ssize_t>(sizeof(fi_eq_cm_entry)));
  return event;
}

}  // namespace naa::testbench::ofi
