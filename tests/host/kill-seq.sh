#!/usr/bin/env bash
# kill-seq.sh - a task killed inside an instrumentation sequence
# regenerates up to where it died, instruction for instruction.
# tests/data/kill_seq.c dies by a fault; its EXIT is moved onto each
# instruction of the witness stubs that wrote the last bytes of its
# trace and of the first visit of every stub, the trace cut there
# (tests/host/kill_seq.py): each must regenerate as the task killed
# right after the stub, the full trace's prefix up to the branch whose
# witness it cut. Before 2026-12-01, a kill whose stub lay past another
# branch at the same offset ("a kill at this offset is never reached"),
# past a join of a branch's two sides ("trace truncated at a branch"),
# or before padding failed, and one in a loop's stub whose entry edge
# writes nothing ended an iteration early, silently; before 2026-12-02,
# one in the stub of one of two edges into one instruction ended at
# their branch, with a warning (the marker's own ip names the stub).
# TAP output.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
B=$top/bin
tm=$top/build/tests/trace_mutate
for t in "$B/aecc" "$B/aerun" "$B/aetrace" "$B/schedlog" "$tm"; do
	[ -x "$t" ] || { echo "ok 1 - kill-seq # SKIP $t not built"; exit 0; }
done
command -v python3 >/dev/null && command -v objdump >/dev/null ||
	{ echo "ok 1 - kill-seq # SKIP python3 or objdump missing"; exit 0; }
d=$(mktemp -d "${TMPDIR:-/tmp}/kill-seq.XXXXXX")
[ -n "${AE_KEEP:-}" ] || trap 'rm -rf "$d"' EXIT
cd "$d"
"$B/aecc" -O2 -o ks "$top/tests/data/kill_seq.c" || exit 1
"$B/aerun" -q -o ks.zst -- ./ks >/dev/null 2>&1
read -r kk kf < <("$B/schedlog" print ks.zst | awk '$5 == "EXIT" { print $1, $6 }')
if [ -z "${kk:-}" ] || [ "${kf%%:*}" != 0 ]; then
	not_ok "kill_seq.c dies by its fault under aerun, its trace in one sub-buffer ($kk $kf)"
else
	ok "kill_seq.c dies by its fault under aerun, its trace in one sub-buffer"
	python3 "$top/tests/host/kill_seq.py" "$B/aetrace" "$tm" ks ks.zst "$kk" 60 1 >res 2>&1
	rc=$?
	grep '^#' res
	if [ $rc -eq 0 ]; then
		ok "kills moved onto every instruction of witness stubs: each ends where it died ($(tail -1 res))"
	else
		not_ok "kills moved onto every instruction of witness stubs: each ends where it died ($(tail -1 res))"
	fi
fi
echo "1..$n"
