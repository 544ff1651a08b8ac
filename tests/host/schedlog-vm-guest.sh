#!/usr/bin/env bash
# schedlog-vm-guest.sh - guest half of tests/host/schedlog-vm.sh (run by
# vm/run in /aetrace): (1) schedlog-record alone around the known workload
# (sched_workload sleep N); (2) bdump --bpf-sched on /dev/trbuf while
# self-checking producers (hopping CPUs, yielding) and an aecc-built
# program run at once.
#
# usage: schedlog-vm-guest.sh OUTDIR PROG
#   OUTDIR  results: known.bin known.out known.err, all.bin trace.zst
#           sched.bin bdump.log, status (exit statuses)
set -u
out=$1 prog=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/host/bdump-ready.sh"
rec=$top/bin/schedlog-record
mkdir -p "$out"
st=()

# (1) the recorder alone
ready=/tmp/schedlog-vm-ready.$$	# a fifo: not on 9p
rm -f "$ready" && mkfifo "$ready"
"$rec" -o "$out/known.bin" --ready-fd 3 3>"$ready" 2>"$out/known.err" &
rp=$!
head -c1 "$ready" >/dev/null
"$top/build/tests/host/sched_workload" sleep 20 >"$out/known.out"
st+=($?)
kill -INT $rp
wait $rp
st+=($?)

# (2) beside a capture
[ -e /dev/trbuf ] || { echo "schedlog-vm-guest: /dev/trbuf missing" >&2; echo "${st[*]} 3" >"$out/status"; exit 3; }
"$top/bin/bdump" -f 200 --bpf-sched "$out/all.bin" --ready "$out/ready" "$out/trace.zst" "$out/sched.bin" 2>"$out/bdump.log" &
bp=$!
# bdump must be the consumer before anything is traced
bdump_ready "$out/ready" $bp || { echo "schedlog-vm-guest: bdump died:" >&2; cat "$out/bdump.log" >&2; exit 4; }
pids=()
for i in 1 2; do
	"$top/build/tests/host/bdump_vm_prod" 2 20000 &
	pids+=($!)
done
"$prog" >/dev/null &
pids+=($!)
for p in "${pids[@]}"; do
	wait "$p"
	st+=($?)
done
kill -INT $bp
wait $bp
st+=($?)
echo "${st[*]}" >"$out/status"	# workload, recorder, producers, program, bdump
