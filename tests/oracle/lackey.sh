#!/usr/bin/env bash
# lackey.sh: the valgrind oracle.
#   tests/oracle/lackey.sh [-o FILE] -- prog args...
# Runs `valgrind --tool=lackey --trace-mem=yes` on prog and writes its
# instruction lines ("I  addr,size") to FILE (default stdout), normalised to
# what the CPU does (see tests/oracle/README.md):
#   VEX runs a rep-prefixed string instruction with count N>0 as N+1 guest
#   iterations (the last one only finds rcx == 0), the CPU as N single-step
#   traps. So a run of L >= 2 identical consecutive lines becomes L-1 lines.
#   (Only a rep instruction repeats at the same address back to back; a
#   jump-to-self loop never terminates.)
# Valgrind places a static non-PIE client at its link address and its stack
# at a fixed place, so ASLR is irrelevant for the comparisons made here
# (they start at main, see the README); setarch -R is still used so that
# both oracles see the same environment.
set -euo pipefail
out=/dev/stdout
while [ $# -gt 0 ]; do
	case "$1" in
	-o) out=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "usage: lackey.sh [-o FILE] -- prog args..." >&2; exit 2 ;;
	esac
done
[ $# -ge 1 ] || { echo "usage: lackey.sh [-o FILE] -- prog args..." >&2; exit 2; }

log=$(mktemp "${TMPDIR:-/tmp}/lackey.XXXXXX")
trap 'rm -f "$log"' EXIT
rc=0
setarch "$(uname -m)" -R valgrind --tool=lackey --trace-mem=yes --vex-guest-chase=no \
	--log-file="$log" "$@" || rc=$?
LC_ALL=C awk '
function flush(   k, n) {
	if (prev == "") return
	n = run >= 2 ? run - 1 : 1
	for (k = 0; k < n; k++) print prev
}
/^I/ { if ($0 == prev) { run++; next } flush(); prev = $0; run = 1 }
END { flush() }
' "$log" > "$out"
exit $rc
