#!/usr/bin/env bash
# Runs test suites and prints the project summary line.
# usage: tests/run-all.sh [--tier NAME] SUITE... [--tier NAME SUITE...]...
# Each suite is an executable that prints TAP-style result lines:
#   ok N - name | not ok N - name | ok N - name # SKIP why
# A suite that exits non-zero without any "not ok" line counts one failure.
# Every suite's wall time is printed after it; `--tier NAME` starts a tier
# (`make check`: unit, host, vm), and a line per tier gives its suites'
# total time. The last line is "N passed, N failed, N skipped".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
pass=0 fail=0 skip=0
failed_names=()
tiers=() tier=all
declare -A tier_time tier_suites

now() { echo "${EPOCHREALTIME/,/.}"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

while [ $# -gt 0 ]; do
	if [ "$1" = --tier ]; then
		[ $# -ge 2 ] || { echo "run-all: --tier needs a name" >&2; exit 2; }
		tier=$2
		shift 2
		continue
	fi
	suite=$1
	shift
	if [ -z "${tier_suites[$tier]+set}" ]; then
		tiers+=("$tier")
		tier_suites[$tier]=0 tier_time[$tier]=0
	fi
	[ -x "$suite" ] || suite="$top/$suite"
	name=$(basename "$suite")
	echo "# suite $name"
	log=$(mktemp)
	t0=$(now)
	"$suite" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	dt=$(elapsed "$t0" "$(now)")
	p=$(grep -cE '^ *ok [0-9]+.*' "$log" | head -1)
	s=$(grep -cE '^ *ok [0-9]+.*# *(SKIP|skip)' "$log" | head -1)
	f=$(grep -cE '^ *not ok [0-9]+' "$log" | head -1)
	p=$((p - s))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - suite $name exited with status $rc"
		f=1
	fi
	echo "# suite $name: ${dt}s ($p passed, $f failed, $s skipped)"
	[ "$f" -gt 0 ] && failed_names+=("$name")
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	tier_suites[$tier]=$((tier_suites[$tier] + 1))
	tier_time[$tier]=$(awk -v a="${tier_time[$tier]}" -v b="$dt" 'BEGIN { printf "%.1f", a + b }')
	rm -f "$log"
done
for t in "${tiers[@]}"; do
	echo "# tier $t: ${tier_suites[$t]} suites, ${tier_time[$t]}s"
done
[ ${#failed_names[@]} -gt 0 ] && echo "# failed suites: ${failed_names[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
