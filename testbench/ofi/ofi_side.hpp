// The libfabric objects of one side of a naa connection in the ofi tests (test_ofi_provider.cpp,
// test_ofi_conformance.cpp): fabric and EQ, domain, CQ, endpoint and a registered buffer, closed
// in reverse order; reading one CM event; and a connected pair of them (Pair: server on the test
// block's .1, client on .2, both manually progressed).
#pragma once

#include <arpa/inet.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "test_addresses.hpp"

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

inline std::uint32_t expect_cm(fid_eq* eq, fi_eq_cm_entry& entry,
                               std::size_t len = sizeof(fi_eq_cm_entry)) {
  std::uint32_t event = 0;
  const ssize_t n = fi_eq_sread(eq, &event, &entry, len, 10000, 0);
  INFO("fi_eq_sread: " << n << " " << fi_strerror(static_cast<int>(-n)));
  REQUIRE(n >= static_cast<ssize_t>(sizeof(fi_eq_cm_entry)));
  return event;
}

inline constexpr const char* kPort = "7471";
inline constexpr std::uint32_t kVersion = FI_VERSION(1, 17);

inline std::string ip(int host) {
  return naa::testbench::test_addresses().ip(host);
}

inline fi_info* base_hints() {
  fi_info* h = fi_allocinfo();
  h->ep_attr->type = FI_EP_MSG;
  h->caps = FI_MSG | FI_RMA;
  h->mode = FI_RX_CQ_DATA | FI_CONTEXT;
  h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  h->fabric_attr->prov_name = strdup("naa");
  return h;
}

// Server on .1 listening, client on .2 connected to it, both manually progressed. `on_connreq`
// sees the FI_CONNREQ's fi_info (its handle is the connection request) before the accept.
struct Pair {
  Side server, client;
  // `before_connect` sees the client with its endpoint enabled, before fi_connect.
  explicit Pair(fi_wait_obj server_wait = FI_WAIT_NONE,
                const std::function<void(fi_info*)>& on_connreq = {},
                const std::function<void(Side&)>& before_connect = {}) {
    fi_info* h = base_hints();
    REQUIRE(fi_getinfo(kVersion, ip(1).c_str(), kPort, FI_SOURCE, h, &server.info) == 0);
    server.open_fabric(server.info);
    REQUIRE(fi_passive_ep(server.fabric, server.info, &server.pep, nullptr) == 0);
    REQUIRE(fi_pep_bind(server.pep, &server.eq->fid, 0) == 0);
    REQUIRE(fi_listen(server.pep) == 0);
    sockaddr_in src{};
    src.sin_family = AF_INET;
    inet_pton(AF_INET, ip(2).c_str(), &src.sin_addr);
    h->src_addr = malloc(sizeof src);
    std::memcpy(h->src_addr, &src, sizeof src);
    h->src_addrlen = sizeof src;
    REQUIRE(fi_getinfo(kVersion, ip(1).c_str(), kPort, 0, h, &client.info) == 0);
    fi_freeinfo(h);
    client.open_fabric(client.info);
    client.open_endpoint(client.info);
    if (before_connect) before_connect(client);
    REQUIRE(fi_connect(client.ep, client.info->dest_addr, nullptr, 0) == 0);
    fi_eq_cm_entry entry{};
    REQUIRE(expect_cm(server.eq, entry) == FI_CONNREQ);
    if (on_connreq) on_connreq(entry.info);
    server.open_endpoint(entry.info, FI_CQ_FORMAT_DATA, server_wait);
    REQUIRE(fi_accept(server.ep, nullptr, 0) == 0);
    fi_freeinfo(entry.info);
    REQUIRE(expect_cm(server.eq, entry) == FI_CONNECTED);
    REQUIRE(expect_cm(client.eq, entry) == FI_CONNECTED);
  }
};

}  // namespace naa::testbench::ofi
