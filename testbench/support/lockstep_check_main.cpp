// naa_lockstep_check STATS_FILE [NAA_SIM_ARGS...]: the lockstep runs' check (lockstep.hpp) for
// the shell tests that start naa-sim themselves (naa_sim_lockstep.sh): reads the exit statistics
// naa-sim wrote to STATS_FILE (--stats-file) and the arguments it was started with after
// --listen. Exit 0 and "lockstep check: ok", or 1 with what is wrong; 2 on a usage error.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "lockstep.hpp"

namespace {

struct Options {
  std::string stats_file;
  std::vector<std::string> sim_args;
};

int run(const Options& o) {
  std::ifstream in(o.stats_file);
  if (!in) {
    std::cerr << "naa_lockstep_check: cannot read " << o.stats_file << '\n';
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  if (const auto problem = naa::testbench::lockstep_problem(text.str(), o.sim_args)) {
    std::cout << "lockstep check: FAILED: " << *problem << '\n';
    return 1;
  }
  std::cout << "lockstep check: ok\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: naa_lockstep_check STATS_FILE [NAA_SIM_ARGS...]\n";
    return 2;
  }
  Options o;
  o.stats_file = argv[1];
  for (int i = 2; i < argc; ++i)
    o.sim_args.emplace_back(argv[i]);
  return run(o);
}
