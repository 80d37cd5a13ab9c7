# shellcheck shell=bash
# Starting naa-sim from a test script, in one place: source it, then
#
#   naa_sim_start LOG [SECONDS] -- NAA_SIM ARGS...   # sets NAA_SIM_PID; non-zero on failure
#
# runs NAA_SIM ARGS... in the background with stdout and stderr in LOG and waits until it prints
# its "naa-sim: listening on" line (docs/sim/naa-sim.md "Output contract"). Fails, printing the log, when
# naa-sim exits first or SECONDS (default 30) pass. LOG is emptied before naa-sim starts: a log
# left by an earlier run in the same folder would otherwise show its "listening on" before the
# new naa-sim has opened (and truncated) it, and the script would go on before naa-sim listens.
naa_sim_start() {
  local log=$1 seconds=30 i
  shift
  if [ "${1:-}" != "--" ]; then
    seconds=$1
    shift
  fi
  [ "${1:-}" = "--" ] || { echo "naa_sim_start: usage: naa_sim_start LOG [SECONDS] -- NAA_SIM ARGS..." >&2; return 2; }
  shift
  : >"$log" || return 1
  "$@" >>"$log" 2>&1 &
  NAA_SIM_PID=$!
  for ((i = 0; i < seconds * 10; i++)); do
    grep -q "^naa-sim: listening on " "$log" && return 0
    kill -0 "$NAA_SIM_PID" 2>/dev/null || break
    sleep 0.1
  done
  grep -q "^naa-sim: listening on " "$log" && return 0
  echo "naa-sim did not start ($*):"
  cat "$log"
  return 1
}
