#!/usr/bin/env bash
# regen-vm-guest.sh - guest half of tests/host/regen-vm.sh and make demo
# (run by vm/run in /aetrace): for each sub-buffer size in SUBBUFS (0: the
# module's default), bdump captures the workload CAPTURE (a command run in
# WORK/i with ASLR off and a clean environment) into OUT/SIZE/; then the
# ptrace single-stepper runs STEP (the same command, perhaps without its
# slowest program) on the twins in WORK/o, once, into OUT/step*: in this
# same kernel, so the twins see the same process start as the traced run.
#
# usage: regen-vm-guest.sh WORK OUT "SUBBUFS" "CAPTURE" "STEP" [bpf]
#   OUT/SIZE/ gets trace.zst, sched.bin, bdump.log, out, err, status;
#   with "bpf", also all.bin: the BPF log of every context switch
#   (bdump --bpf-sched);
#   OUT/ gets step/, step.forks, step.out, step.status (STEP "": no stepper).
#   AE_STEP_FLAGS: more options for the stepper (--data: data addresses).
set -u
[ $# -eq 5 ] || [ $# -eq 6 ] || { echo "usage: $0 WORK OUT SUBBUFS CAPTURE STEP [bpf]" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/host/bdump-ready.sh"
mkdir -p "$2"
work=$(cd "$1" && pwd) out=$(cd "$2" && pwd) subbufs=$3 capture=$4 stepcmd=$5
clean="env -i PATH=/usr/bin:/bin LC_ALL=C"
[ -e /dev/trbuf ] || { echo "regen-vm-guest: /dev/trbuf missing" >&2; exit 3; }
p=/sys/module/trbuf/parameters
def_sub=$(cat $p/subbuf_size) def_total=$(cat $p/total_size)
for s in $subbufs; do
	o=$out/$s
	rm -rf "$o" && mkdir -p "$o"
	if [ "$s" = 0 ]; then
		echo "$def_sub" >$p/subbuf_size
		echo "$def_total" >$p/total_size
	else
		echo "$s" >$p/subbuf_size
		echo $((s * 8 * $(nproc))) >$p/total_size
	fi
	bpf=()
	[ "${6:-}" = bpf ] && bpf=(--bpf-sched "$o/all.bin")
	"$top/bin/bdump" -f 100 "${bpf[@]}" --ready "$o/ready" "$o/trace.zst" "$o/sched.bin" 2>"$o/bdump.log" &
	bdump_pid=$!
	bdump_ready "$o/ready" $bdump_pid || { echo "regen-vm-guest: bdump died:" >&2; cat "$o/bdump.log" >&2; exit 4; }
	# shellcheck disable=SC2086
	(cd "$work/i" && $clean setarch x86_64 -R $capture >"$o/out" 2>"$o/err")
	wst=$?
	kill -INT $bdump_pid
	wait $bdump_pid
	echo "$wst $?" >"$o/status"
done
[ -n "$stepcmd" ] || exit 0
rm -rf "$out/step" && mkdir -p "$out/step"
# shellcheck disable=SC2086
(cd "$work/o" && $clean "$top/build/tests/ae-step" --split "$out/step" --forks "$out/step.forks" \
	${AE_STEP_FLAGS:-} -- $stepcmd >"$out/step.out" 2>"$out/step.err")
echo $? >"$out/step.status"
