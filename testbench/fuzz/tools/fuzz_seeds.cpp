// naa-fuzz-seeds OUTDIR PCAP...: seed corpora for the fuzz targets from captured sessions
// (naa-pcap-gen, demo pcaps) and testbench/vectors/roce_frames.pcap. Writes OUTDIR/<target>/<n>:
//   packet   every RoCEv2 datagram and every whole frame
//   cm_mad   every CM MAD (the UD payload to QP 1)
//   mrsp     every SEND payload on an RC QP
//   naa_rx   per capture, the datagrams sent to the NAA (the lower address of the capture's
//            first REQ's destination) as records (fuzz_naa_rx.cpp), one seed per datagram and one
//            with the whole sequence; host_rx the same for datagrams sent to the host.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "naa/protocol/cm.hpp"
#include "naa/protocol/ipv4_udp.hpp"
#include "naa/protocol/packet.hpp"
#include "naa/protocol/pcap.hpp"

namespace fs = std::filesystem;
namespace p = naa::protocol;

namespace {

std::map<std::string, int> counters;

void write_seed(const fs::path& dir, const std::string& target,
                const std::vector<std::uint8_t>& d) {
  fs::create_directories(dir / target);
  const int n = counters[target]++;
  std::ofstream f(dir / target / ("seed-" + std::to_string(n)), std::ios::binary);
  f.write(reinterpret_cast<const char*>(d.data()), static_cast<std::streamsize>(d.size()));
}

// One record of the naa_rx / host_rx format: flags | length (BE 16) | bytes.
void append_record(std::vector<std::uint8_t>& out, std::uint8_t flags, p::ByteView d) {
  out.push_back(flags);
  out.push_back(static_cast<std::uint8_t>(d.size() >> 8));
  out.push_back(static_cast<std::uint8_t>(d.size()));
  out.insert(out.end(), d.begin(), d.end());
}

// The command line.
struct SeedsOptions {
  fs::path out;                    // OUTDIR
  std::vector<std::string> pcaps;  // PCAP...
};

[[noreturn]] void usage_exit(int code) {
  std::fputs("usage: naa-fuzz-seeds OUTDIR PCAP...\n", code == 0 ? stdout : stderr);
  std::exit(code);
}

// Reads the command line; a bad option prints usage and exits 2, --help prints it and exits 0.
SeedsOptions parse_options(int argc, char** argv) {
  SeedsOptions o;
  std::vector<std::string> words;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "-h" || arg == "--help") usage_exit(0);
    if (!arg.empty() && arg[0] == '-') usage_exit(2);
    words.push_back(arg);
  }
  if (words.size() < 2) usage_exit(2);
  o.out = words[0];
  o.pcaps.assign(words.begin() + 1, words.end());
  return o;
}

int run(const SeedsOptions& o) {
  const fs::path& out = o.out;
  for (const std::string& pcap : o.pcaps) {
    p::PcapReader r;
    if (r.open(pcap)) {
      std::fprintf(stderr, "naa-fuzz-seeds: cannot read %s\n", pcap.c_str());
      return 1;
    }
    std::optional<std::uint32_t> naa_ip;
    std::vector<std::uint8_t> to_naa, to_host;
    p::PcapRecord rec;
    while (r.next(rec)) {
      write_seed(out, "packet", rec.data);
      const auto f = p::decode_roce_frame(rec.data);
      if (!f) continue;
      const std::vector<std::uint8_t> dgram(f->roce.begin(), f->roce.end());
      write_seed(out, "packet", dgram);
      const auto v = p::decode_packet(f->roce);
      if (!v) continue;
      const bool cm = v->headers.bth.dest_qpn == p::kCmQpn;
      if (cm) {
        write_seed(out, "cm_mad", {v->payload.begin(), v->payload.end()});
        if (!naa_ip) {
          if (const auto mad = p::decode_cm_mad(v->payload)) {
            if (std::get_if<p::CmReq>(&mad->body) != nullptr) naa_ip = f->headers.ip.dst;
          }
        }
        continue;  // the harnesses make their own connection
      }
      if (v->info->kind == p::OpKind::send && v->info->ends_message()) {
        write_seed(out, "mrsp", {v->payload.begin(), v->payload.end()});
      }
      // Records: valid ICRC, our QPN and PSN, and the RETH aimed at a real region.
      const std::uint8_t flags = 0x01 | 0x02 | 0x04 | (v->headers.reth ? 0x08 : 0x00);
      const bool towards_naa = naa_ip ? f->headers.ip.dst == *naa_ip : true;
      std::vector<std::uint8_t> one;
      append_record(one, flags, f->roce);
      write_seed(out, towards_naa ? "naa_rx" : "host_rx", one);
      append_record(towards_naa ? to_naa : to_host, flags, f->roce);
    }
    if (!to_naa.empty()) write_seed(out, "naa_rx", to_naa);
    if (!to_host.empty()) write_seed(out, "host_rx", to_host);
  }
  for (const auto& [t, n] : counters)
    std::printf("naa-fuzz-seeds: %s %d\n", t.c_str(), n);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run(parse_options(argc, argv));
}
