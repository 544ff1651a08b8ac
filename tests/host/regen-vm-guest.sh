#!/usr/bin/env bash
# regen-vm-guest.sh - guest half of tests/host/regen-vm.sh and make demo
# (run by vm/run in /aetrace): with SUBBUF-byte sub-buffers (0: the
# module's default), bdump captures WORK/i's workload (runall and the
# programs it starts, ASLR off, clean environment), then the ptrace
# single-stepper runs the same command on the twins in WORK/o, in this
# same kernel so both see the same process start.
#
# usage: regen-vm-guest.sh WORK OUT SUBBUF COMMAND...
#   OUT gets trace.zst, sched.bin, bdump.log, out, status, and step/ +
#   step.forks + step.out from the stepper (skipped when AE_NO_STEP=1).
set -u
[ $# -ge 4 ] || { echo "usage: $0 WORK OUT SUBBUF COMMAND..." >&2; exit 2; }
work=$1 out=$2 subbuf=$3
shift 3
top=$(cd "$(dirname "$0")/../.." && pwd)
clean="env -i PATH=/usr/bin:/bin LC_ALL=C"
mkdir -p "$out" && rm -rf "$out"/step "$out"/trace.zst "$out"/sched.bin
work=$(cd "$work" && pwd) out=$(cd "$out" && pwd)
[ -e /dev/trbuf ] || { echo "regen-vm-guest: /dev/trbuf missing" >&2; exit 3; }
p=/sys/module/trbuf/parameters
if [ "$subbuf" != 0 ]; then
	echo "$subbuf" >$p/subbuf_size
	echo $((subbuf * 8 * $(nproc))) >$p/total_size
fi
"$top/bin/bdump" -f 100 "$out/trace.zst" "$out/sched.bin" 2>"$out/bdump.log" &
bdump_pid=$!
sleep 1
kill -0 $bdump_pid 2>/dev/null || { echo "regen-vm-guest: bdump died:" >&2; cat "$out/bdump.log" >&2; exit 4; }
(cd "$work/i" && $clean setarch x86_64 -R "$@" >"$out/out" 2>"$out/err")
wst=$?
kill -INT $bdump_pid
wait $bdump_pid
echo "$wst $?" >"$out/status"
[ "${AE_NO_STEP:-}" = 1 ] && exit 0
mkdir -p "$out/step"
(cd "$work/o" && $clean "$top/build/tests/ae-step" --split "$out/step" --forks "$out/step.forks" -- \
	"$@" >"$out/step.out" 2>"$out/step.err")
echo "step $?" >>"$out/status"
