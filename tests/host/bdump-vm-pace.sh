#!/usr/bin/env bash
# bdump-vm-pace.sh - guest half of tests/host/bdump-vm.sh: pacing on the
# real /dev/trbuf. One producer thread writes NREC records into rings of
# 4 x 64 KiB per CPU as fast as it can, while bdump compresses at zstd
# level 12, far slower: the producer waits in the kernel (the driver's
# overflow_waits), and bdump must lower its level.
#
# usage: bdump-vm-pace.sh OUTDIR NREC
#   OUTDIR gets trace.zst, sched.bin, bdump.log, pid, status (producer's
#   and bdump's exit statuses)
set -u
[ $# -eq 2 ] || { echo "usage: $0 OUTDIR NREC" >&2; exit 2; }
out=$1
nrec=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/host/bdump-ready.sh"
[ -e /dev/trbuf ] || { echo "bdump-vm-pace: /dev/trbuf missing" >&2; exit 3; }
trbuf_rings 65536 4
rm -rf "$out" && mkdir -p "$out"
"$top/bin/bdump" -l 12 -f 100 --ready "$out/ready" "$out/trace.zst" "$out/sched.bin" 2>"$out/bdump.log" &
bp=$!
bdump_ready "$out/ready" $bp || { echo "bdump-vm-pace: bdump died:" >&2; cat "$out/bdump.log" >&2; exit 4; }
"$top/build/tests/host/bdump_vm_prod" 1 "$nrec" stay &
pp=$!
echo $pp >"$out/pid"
wait $pp
pst=$?
kill -INT $bp
wait $bp
echo "$pst $?" >"$out/status"
