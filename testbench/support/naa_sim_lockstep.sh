# Sourced by the shell tests that start naa-sim themselves, so that they too have lockstep runs
# (issue 26 item 4; naa_add_script_lockstep_run in testbench/CMakeLists.txt), as the C++ fixture
# (naa_sim.hpp) gives the Catch2 suites:
#   naa_sim_args          the words of NAA_SIM_EXTRA_ARGS (a lockstep run's "--blocks=lockstep"),
#                         to append to the script's naa-sim command line
#   naa_sim_check_rtl STATS_FILE ARGS...
#                         with NAA_SIM_CHECK_RTL=1: the lockstep check of naa-sim's exit
#                         statistics (--stats-file) for naa-sim started with ARGS (after
#                         --listen), through $NAA_LOCKSTEP_CHECK; returns non-zero on a problem.
#                         Otherwise nothing.
# shellcheck disable=SC2206
naa_sim_args=(${NAA_SIM_EXTRA_ARGS:-})

naa_sim_check_rtl() {
  [ "${NAA_SIM_CHECK_RTL:-0}" = 1 ] || return 0
  if [ -z "${NAA_LOCKSTEP_CHECK:-}" ] || [ ! -x "$NAA_LOCKSTEP_CHECK" ]; then
    echo "NAA_SIM_CHECK_RTL=1 but NAA_LOCKSTEP_CHECK (naa_lockstep_check) is not set or not there"
    return 1
  fi
  "$NAA_LOCKSTEP_CHECK" "$@"
}
