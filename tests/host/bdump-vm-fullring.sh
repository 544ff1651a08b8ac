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
set -u
[ $# -ge 2 ] || { echo "usage: $0 OUTDIR NREC..." >&2; exit 2; }
out=$1
shift
top=$(cd "$(dirname "$0")/../.." && pwd)
p=/sys/module/trbuf/parameters
[ -e /dev/trbuf ] || { echo "bdump-vm-fullring: /dev/trbuf missing" >&2; exit 3; }
echo 4096 >$p/subbuf_size
echo $((4096 * 4 * $(nproc))) >$p/total_size
for n in "$@"; do
	o=$out/$n
	rm -rf "$o" && mkdir -p "$o"
	"$top/bin/bdump" -f 100 "$o/trace.zst" "$o/sched.bin" 2>"$o/bdump.log" &
	bp=$!
	sleep 1		# bdump must be the consumer before anything is traced
	kill -STOP $bp
	taskset -c 0 "$top/build/tests/host/bdump_vm_prod" 1 "$n" &
	pp=$!
	echo $pp >"$o/pid"
	# fewer records than the ring holds: the producer never waits
	wait $pp
	pst=$?
	kill -INT $bp
	kill -CONT $bp
	wait $bp
	echo "$pst $?" >"$o/status"
done
