#!/usr/bin/env bash
# Formal proofs of the RTL blocks with Yosys alone (issue 25 item 3; docs/rtl/formal.md says what
# each proof states and how):
#   - crc32: every XOR matrix crc32_pkg::fold(K, ...) crc32.sv uses (1..64 bytes) equals that many
#     bytes of the bit-serial CRC-32, for every register and data;
#   - icrc_check: its beat step (W = 8 and 64), pseudo-header fold and unfold matrices
#     (icrc_matrices_pkg) against the bit-serial CRC-32, for every input;
#   - mr_table: no lookup that fails the key, owner, bounds or permission rule is granted, and the
#     status is exactly the documented one, in every reachable state (temporal induction).
# Each proof also runs where it must fail: the block's broken variant, or, where that bug lies
# outside what the proof covers, a deliberately broken matrix or reference. A proof that fails
# where it must hold, or holds where it must fail, or a Yosys error, fails the script.
#
#   scripts/formal.sh [--out DIR] [--only REGEX]
#
# Prints one line per proof with its wall and Yosys CPU time; logs and scripts in
# DIR/<proof>.{ys,log} (default build/formal). Exit 0: every proof as required; 1: not; 2: usage.
# Without Yosys: "skipped" and exit 0, or exit 1 if NAA_REQUIRE_TOOLS=1 (CI).
set -uo pipefail
cd "$(dirname "$0")/.."
out=build/formal
only=.
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --only) only=${2:?--only needs a regular expression}; shift 2 ;;
    *) echo "usage: scripts/formal.sh [--out DIR] [--only REGEX]" >&2; exit 2 ;;
  esac
done

if ! command -v yosys > /dev/null; then
  if [ "${NAA_REQUIRE_TOOLS:-0}" = 1 ]; then
    echo "formal: FAILED: yosys not found and NAA_REQUIRE_TOOLS=1 (scripts/setup.sh installs it)"
    exit 1
  fi
  echo "formal: skipped: yosys not found (scripts/setup.sh installs Debian's yosys)"
  exit 0
fi
mkdir -p "$out"
rtl=$PWD/rtl
t0=$SECONDS
passed=0
failed=0

# run_proof NAME EXPECT WHAT: runs $out/NAME.ys (written by the caller) and judges it. EXPECT is
# "holds" (the sat call must end in SUCCESS), "fails" (it must find a counterexample) or
# "rejected" (the linearity check must refuse the circuit). A Yosys error of any other kind is a
# failure, so a broken harness never passes as "fails".
run_proof() {
  local name=$1 expect=$2 what=$3 log=$out/$1.log t=$SECONDS status cpu verdict
  # CPU time (user + system of Yosys) besides the wall time: on a shared machine the wall time
  # says more about the other jobs than about the proof.
  cpu=$( { TIMEFORMAT='%U %S'; time timeout "${NAA_FORMAL_TIMEOUT:-1200}" \
             yosys -q -l "$log" -s "$out/$name.ys" > /dev/null 2>&1; echo "status $?" >&2; } 2>&1)
  status=$(echo "$cpu" | sed -n 's/^status //p')
  cpu=$(echo "$cpu" | awk '!/^status/ { printf "%.1f", $1 + $2 }')
  local proved=0 refuted=0
  if [ "$status" -eq 0 ] && grep -qE 'no model found: SUCCESS!|Induction step proven: SUCCESS!' "$log"; then
    proved=1
  fi
  if [ "$status" -ne 0 ] && grep -qE 'model found: FAIL!|failed for induction length|base case failed' "$log" \
     && grep -q 'proof did fail' "$log"; then
    refuted=1
  fi
  local rejected=0
  if [ "$status" -ne 0 ] && grep -q 'Assertion failed: selection is not empty' "$log"; then
    rejected=1
  fi
  if [ "$expect" = holds ] && [ "$proved" = 1 ]; then
    verdict="PASS  $name: proved: $what"
    passed=$((passed + 1))
  elif [ "$expect" = fails ] && [ "$refuted" = 1 ]; then
    verdict="PASS  $name: fails as it must (counterexample in $log): $what"
    passed=$((passed + 1))
  elif [ "$expect" = rejected ] && [ "$rejected" = 1 ]; then
    verdict="PASS  $name: rejected by the linearity check as it must be: $what"
    passed=$((passed + 1))
  else
    if [ "$status" -eq 124 ]; then
      verdict="FAIL  $name: timed out"
    elif [ "$expect" = holds ] && [ "$refuted" = 1 ]; then
      verdict="FAIL  $name: counterexample found ($log): $what"
    elif [ "$expect" != holds ] && [ "$proved" = 1 ]; then
      verdict="FAIL  $name: proved, but this variant must fail: $what"
    elif [ "$expect" = holds ] && [ "$rejected" = 1 ]; then
      verdict="FAIL  $name: a side is not XOR gates only ($log): $what"
    else
      verdict="FAIL  $name: yosys error (exit $status, $log): $(grep -m1 'ERROR' "$log")"
    fi
    failed=$((failed + 1))
  fi
  echo "$verdict ($((SECONDS - t)) s, cpu ${cpu:-?} s)"
}

# A linear-map proof (rtl/crc32/formal/crc32_fold_proof.sv explains the method): both sides must
# be XOR/XNOR/NOT gates only after constant propagation (checked on every module but the top),
# then the SAT call compares them on 0 and on every unit vector.
# lin_proof NAME EXPECT WHAT TOP "CHPARAMS" "DEFINES" SOURCES...
lin_proof() {
  local name=$1 expect=$2 what=$3 top=$4 chparams=$5 defines=$6
  shift 6
  [[ $name =~ $only ]] || return 0
  {
    echo "read_verilog -sv -DSYNTHESIS $defines $*"
    [ -n "$chparams" ] && echo "chparam $chparams $top"
    echo "hierarchy -check -top $top"
    echo "proc; opt -full; techmap; opt -full; clean -purge"
    echo "# Linearity: no cell but XOR, XNOR, NOT outside the top (submodule instances are checked"
    echo "# as modules of their own); at least some XOR gates, so that the check saw the design."
    echo "select -assert-none t:\$* t:\$paramod* %d t:\$_XOR_ t:\$_XNOR_ t:\$_NOT_ %u %u %d $top %d"
    echo "select -assert-min 32 t:\$_XOR_ $top %d"
    echo "flatten; opt -fast"
    echo "sat -verify -prove diff_o 0 -show-inputs"
  } > "$out/$name.ys"
  run_proof "$name" "$expect" "$what"
}

crc_src="$rtl/crc32/crc32_pkg.sv $rtl/crc32/formal/crc32_serial.sv $rtl/crc32/formal/crc32_fold_proof.sv"
for k in 0 1 2 3 4 5 6; do
  n=$((1 << k))
  lin_proof "crc32_fold$n" holds "crc32_pkg::fold($k, crc, data) = $n bytes of the bit-serial CRC" \
    crc32_fold_proof "-set Log2N $k" "" $crc_src
done
# crc32's broken variant (NAA_CRC32_BROKEN) skips a stage of the last-beat pipeline: control, not
# a matrix, so it is outside this proof; a broken matrix and a broken reference stand in for it.
for k in 3 6; do
  n=$((1 << k))
  lin_proof "crc32_fold${n}_broken_matrix" fails "one entry of fold$n flipped" \
    crc32_fold_proof "-set Log2N $k" -DNAA_FORMAL_BROKEN_MATRIX $crc_src
done
# A nonlinear term vanishes on every unit vector: only the linearity check can catch it.
lin_proof crc32_fold8_nonlinear rejected "an AND term in fold8 (0 on every unit vector)" \
  crc32_fold_proof "-set Log2N 3" -DNAA_FORMAL_NONLINEAR $crc_src
lin_proof crc32_fold8_broken_reference fails "reference with the unreflected polynomial 0x04C11DB7" \
  crc32_fold_proof "-set Log2N 3" -DNAA_FORMAL_BROKEN_REFERENCE $crc_src

icrc_src="$rtl/icrc_check/icrc_matrices_pkg.sv $rtl/crc32/formal/crc32_serial.sv $rtl/icrc_check/formal/icrc_matrices_proof.sv"
for w in 8 64; do
  lin_proof "icrc_check_step$w" holds "zeros_fold($w, c) ^ beat_crc(d at the top) = $w bytes of the bit-serial CRC" \
    icrc_matrices_proof "-set Kind 0 -set P $w" "" $icrc_src
  lin_proof "icrc_check_header$w" holds "header_fold($w, h) = seed, the 28 header bytes, $w zero bytes, bit-serial" \
    icrc_matrices_proof "-set Kind 1 -set P $w" "" $icrc_src
  # icrc_check's broken variant (NAA_ICRC_CHECK_BROKEN) miscounts the last beat's bytes: control,
  # outside these proofs, so a broken matrix stands in for it.
  lin_proof "icrc_check_step${w}_broken_matrix" fails "one entry of the W = $w step flipped" \
    icrc_matrices_proof "-set Kind 0 -set P $w" -DNAA_FORMAL_BROKEN_MATRIX $icrc_src
done
lin_proof icrc_check_step8_broken_reference fails "reference with the unreflected polynomial 0x04C11DB7" \
  icrc_matrices_proof "-set Kind 0 -set P 8" -DNAA_FORMAL_BROKEN_REFERENCE $icrc_src
lin_proof icrc_check_unfold holds "zero-byte folds undo unfold_low(0..7) and unfold_high(0..8)" \
  icrc_unfold_proof "" "" $icrc_src
lin_proof icrc_check_unfold_broken_matrix fails "one entry of every unfold matrix flipped" \
  icrc_unfold_proof "" -DNAA_FORMAL_BROKEN_MATRIX $icrc_src

# mr_table: temporal induction over the block with the harness rtl/mr_table/formal/
# mr_table_formal.sv, whose obs_* wires are connected here to the table's registers (read with
# -mem2reg, so that each entry is a register of its own: dut.<field>_q[i]).
mr_proof() {
  local name=$1 expect=$2 what=$3 defines=$4 sat=$5 prop=$6 f w i
  [[ $name =~ $only ]] || return 0
  {
    echo "read_verilog -sv -DSYNTHESIS -mem2reg $defines $rtl/prim/naa_stream_assert.sv" \
         "$rtl/mr_table/mr_table_pkg.sv $rtl/mr_table/mr_table.sv $rtl/mr_table/formal/mr_table_formal.sv"
    echo "hierarchy -check -top mr_table_formal"
    echo "proc; flatten"
    echo "connect -set obs_valid dut.valid_q"
    for f in rkey:32 base:64 length:32 end:65 access:3 owner:24; do
      w=${f#*:}
      for i in $(seq 0 31); do
        echo "connect -set obs_${f%:*}[$((w * i + w - 1)):$((w * i))] \\dut.${f%:*}_q[$i]"
      done
    done
    echo "# The asynchronous resets as synchronous logic the SAT model reads (outputs show the"
    echo "# reset values during a reset cycle, as in the RTL)."
    echo "async2sync; opt -fast; opt_clean"
    echo "check -assert"
    echo "# The base case starts with a reset cycle; the induction step from any state."
    echo "sat $sat -prove $prop 1 -set-at 1 rst_ni 0 -verify -show-ports"
  } > "$out/$name.ys"
  run_proof "$name" "$expect" "$what"
}
mr_proof mr_table_rules holds "no lookup failing the key, owner, bounds or permission rule is granted; the status is the first failing rule; every table state (induction)" "" \
  "-tempinduct -maxsteps 4" ok_o
# The broken variant: the safety property alone (a bad grant, not merely another status), from
# reset, checked in cycle 4, the first cycle a bad grant can show (reset, program an entry, look
# up past its end, the answer). -tempinduct would spend minutes proving the shorter base cases
# and growing induction steps before it gets there.
mr_proof mr_table_broken fails "NAA_MR_TABLE_BROKEN lets an access run one byte past its region" \
  -DNAA_MR_TABLE_BROKEN "-seq 4 -prove-skip 3" safe_o

total=$((passed + failed))
if [ "$total" -eq 0 ]; then
  echo "formal: FAILED: no proof matches --only '$only'"
  exit 1
fi
echo "formal: $passed passed, $failed failed ($((SECONDS - t0)) s)"
[ "$failed" -eq 0 ]
