#!/usr/bin/env bash
# bdump-vm-guest.sh - guest half of tests/host/bdump-vm.sh and
# vm/capture-demo.sh (run by vm/run in /aetrace): starts bdump on
# /dev/trbuf, runs a traced workload (self-checking producer processes and
# aecc-built programs) concurrently, waits for it, stops bdump with SIGINT.
#
# usage: bdump-vm-guest.sh OUTDIR TARGET NPROD NTHREADS NREC PROG NPROG [SECRET]
#   OUTDIR  directory under /aetrace for the results: sched.bin,
#           bdump.log, pids (producer PIDs), status (exit statuses),
#           prog.N.out (PROG's stdout)
#   TARGET  bdump's TRACE argument (a file or tcp://10.0.2.2:PORT)
#   PROG    aecc-built program run NPROG times (no arguments)
set -u
[ $# -ge 7 ] || { echo "usage: $0 OUTDIR TARGET NPROD NTHREADS NREC PROG NPROG [SECRET]" >&2; exit 2; }
out=$1 target=$2 nprod=$3 nthr=$4 nrec=$5 prog=$6 nprog=$7 secret=${8:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/host/bdump-ready.sh"
prod=$top/build/tests/host/bdump_vm_prod

mkdir -p "$out" && rm -f "$out"/sched.bin "$out"/bdump.log "$out"/pids "$out"/status "$out"/prog.*.out
[ -e /dev/trbuf ] || { echo "bdump-vm-guest: /dev/trbuf missing" >&2; exit 3; }
sargs=()
[ -n "$secret" ] && sargs=(--secret "$secret")
"$top/bin/bdump" -f 200 "${sargs[@]}" --ready "$out/ready" "$target" "$out/sched.bin" 2>"$out/bdump.log" &
bdump_pid=$!
# bdump must be the consumer before anything is traced
bdump_ready "$out/ready" $bdump_pid || { echo "bdump-vm-guest: bdump died:" >&2; cat "$out/bdump.log" >&2; exit 4; }

pids=() progs=()
for i in $(seq 1 "$nprod"); do
	"$prod" "$nthr" "$nrec" &
	pids+=($!)
done
for i in $(seq 1 "$nprog"); do
	"$prog" >"$out/prog.$i.out" &
	progs+=($!)
done
echo "${pids[*]}" >"$out/pids"
st=()
for p in "${pids[@]}" "${progs[@]}"; do
	wait "$p"
	st+=($?)
done
kill -INT $bdump_pid
wait $bdump_pid
st+=($?)
echo "${st[*]}" >"$out/status"	# producers, programs, then bdump
