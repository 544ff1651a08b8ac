#!/usr/bin/env bash
# bdump-vm-fullring.sh - guest half of tests/host/bdump-vm.sh: bdump's end
# must take a CPU's last sub-buffer even when that CPU's ring is full.  With
# 4 sub-buffers of 4 KiB per CPU, bdump is stopped (SIGSTOP) while one
# producer thread pinned to CPU 0 writes NREC records (more than 3
# sub-buffers, fewer than 4) and exits; then bdump gets SIGINT and SIGCONT
# (the stop is taken before anything else): at its first flush the active
# sub-buffer of CPU 0, which holds the producer's last records and its
# EXIT marker, cannot close.
#
# usage: bdump-vm-fullring.sh OUTDIR NREC...
#   OUTDIR/NREC/ gets trace.zst, sched.bin, bdump.log, pid, status
#   (producer's and bdump's exit statuses, 1 if the producer had to wait)
set -u
[ $# -ge 2 ] || { echo "usage: $0 OUTDIR NREC..." >&2; exit 2; }
out=$1
shift
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/host/bdump-ready.sh"
[ -e /dev/trbuf ] || { echo "bdump-vm-fullring: /dev/trbuf missing" >&2; exit 3; }
trbuf_rings 4096 4
for n in "$@"; do
	o=$out/$n
	rm -rf "$o" && mkdir -p "$o"
	"$top/bin/bdump" -f 100 --ready "$o/ready" "$o/trace.zst" "$o/sched.bin" 2>"$o/bdump.log" &
	bp=$!
	# bdump must be the consumer before anything is traced
	bdump_ready "$o/ready" $bp || { echo "bdump-vm-fullring: bdump died:" >&2; cat "$o/bdump.log" >&2; exit 4; }
	kill -STOP $bp
	# stays on CPU 0: its EXIT marker goes there too
	taskset -c 0 "$top/build/tests/host/bdump_vm_prod" 1 "$n" stay &
	pp=$!
	echo $pp >"$o/pid"
	# fewer records than the ring holds: the producer never waits; if
	# it does, bdump goes on after 30 s and the status says so
	for i in $(seq 300); do
		kill -0 $pp 2>/dev/null || break
		sleep 0.1
	done
	blocked=0
	kill -0 $pp 2>/dev/null && { blocked=1; kill -CONT $bp; }
	wait $pp
	pst=$?
	kill -INT $bp
	kill -CONT $bp
	wait $bp
	echo "$pst $? $blocked" >"$o/status"
done
