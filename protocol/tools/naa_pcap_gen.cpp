// naa-pcap-gen: writes a pcap of a complete host <-> NAA exchange built purely from the protocol
// library, so the protocol can be read in Wireshark before (or without) any simulator.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "exchange.hpp"
#include "naa/protocol/pcap.hpp"

namespace {

void usage(std::FILE* out) {
  std::fputs(
      "usage: naa-pcap-gen [--catalog] [--list] OUT.pcap\n"
      "\n"
      "Writes a classic pcap (Ethernet, nanosecond timestamps) of RoCEv2 traffic built from the\n"
      "naa protocol library alone.\n"
      "\n"
      "  (default)   a realistic session host 127.0.0.3 <-> NAA 127.0.0.2: CM REQ/REP/RTU,\n"
      "              MRSP 0x01/0x02, inputs by RDMA WRITE and WRITE_WITH_IMM (vadd_i32),\n"
      "              the result written back, ACKs, CM DREQ/DREP\n"
      "  --catalog   one frame per opcode the project uses, every CM message and every MRSP\n"
      "              message, for conformance checks\n"
      "  --list      also print one line per frame\n"
      "  -h, --help  this text\n"
      "\n"
      "Read it with: tshark -r OUT.pcap --disable-protocol rpcordma\n",
      out);
}

// The command line.
struct PcapGenOptions {
  bool catalog = false;  // one frame per opcode/message instead of the realistic session
  bool list = false;     // also print one line per frame
  std::string out;       // the pcap to write
};

[[noreturn]] void usage_exit(int code) {
  usage(code == 0 ? stdout : stderr);
  std::exit(code);
}

// Reads the command line; a bad option prints usage and exits 2, --help prints it and exits 0.
PcapGenOptions parse_options(int argc, char** argv) {
  PcapGenOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") usage_exit(0);
    if (arg == "--catalog") {
      o.catalog = true;
    } else if (arg == "--list") {
      o.list = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "naa-pcap-gen: unknown option '%s'\n", arg.c_str());
      usage_exit(2);
    } else if (o.out.empty()) {
      o.out = arg;
    } else {
      std::fprintf(stderr, "naa-pcap-gen: more than one output file\n");
      usage_exit(2);
    }
  }
  if (o.out.empty()) {
    std::fprintf(stderr, "naa-pcap-gen: missing OUT.pcap\n");
    usage_exit(2);
  }
  return o;
}

int run(const PcapGenOptions& o) {
  const bool catalog = o.catalog;
  const bool list = o.list;
  const std::string& out = o.out;
  std::vector<naa::tools::Frame> frames;
  try {
    frames = catalog ? naa::tools::catalog() : naa::tools::realistic_exchange();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "naa-pcap-gen: internal error: %s\n", e.what());
    return 1;
  }
  naa::protocol::PcapWriter pcap;
  if (auto ec = pcap.open(out)) {
    std::fprintf(stderr, "naa-pcap-gen: cannot write %s: %s\n", out.c_str(), ec.message().c_str());
    return 1;
  }
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const auto& f = frames[i];
    pcap.write_roce(f.timestamp_ns, f.headers, f.roce);
    if (list) std::printf("%3zu  %5zu B  %s\n", i + 1, f.roce.size(), f.what.c_str());
  }
  pcap.close();
  if (pcap.write_errors() != 0) {
    std::fprintf(stderr, "naa-pcap-gen: write errors on %s\n", out.c_str());
    return 1;
  }
  std::printf("naa-pcap-gen: wrote %zu frames to %s\n", frames.size(), out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run(parse_options(argc, argv));
}
