// naa-call's command line: the options struct and its parser (host/tools/naa_call_options.cpp),
// the usage errors naa-call's run() shares with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "naa/host/session.hpp"
#include "naa/host/udp_roce.hpp"
#include "naa/host/verbs.hpp"

namespace naa_call {

// One region of the command line (-i/-s/-b/-o/-x), its input loaded.
struct RegionArg {
  std::uint8_t flags = 0;
  std::vector<std::uint8_t> data;
  std::string save_to;
};

struct CallOptions {
  naa::host::SessionOptions session;
  std::vector<RegionArg> regions;  // loaded inputs, in order
  int fn = 0;
  std::uint32_t user = 0;
  int repeat = 1;
  bool quiet = false;
  bool verify = false;
  naa::host::FaultOptions fault_rx, fault_tx;
  std::uint64_t fault_seed = 1;
  naa::host::TransportKind transport_kind = naa::host::TransportKind::udp;
  bool solicited_only = false;
  bool stream = false;
  bool irn = true;         // offer IRN (UdpRoce only; the Verbs backend never does)
  bool irn_given = false;  // --irn on|off was on the command line
};

// Reads the command line; a bad option prints usage and exits 2, --help prints it and exits 0.
CallOptions parse_options(int argc, char** argv);

// Prints msg and the usage to stderr and exits 2.
[[noreturn]] void usage_error(const std::string& msg);

// A size argument (K, M, G suffixes), at most 2 GiB; usage_error otherwise.
std::uint64_t parse_size(const std::string& s);

}  // namespace naa_call
