#!/usr/bin/env bash
# capture-demo.sh - the whole pipeline on the tracing kernel (make demo):
# boot the VM (2 CPUs), run the workload (tests/workload/runall: the pipe
# ping-pong pair, forkexec + the traced leaf, the 4-thread program, Lua
# n-queens when built) under `bdump trace.zst sched.bin`, then in the same
# guest the ptrace single-stepper on the twins, with the BPF recorder of
# every context switch beside bdump when it can run (bdump --bpf-sched); on
# the host check the schedule, regenerate every thread (`aetrace regen
# --split`), print the instructions per process and thread, draw the
# timeline (Perfetto JSON and SVG) and the exactness result against the
# stepper. Results in build/demo/. A few minutes under TCG.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
d=build/demo wl=build/tests/workload
for f in bin/bdump bin/aetrace bin/schedlog build/tests/ae-step $wl/runall; do
	[ -x "$f" ] || { echo "capture-demo: $f missing (run make all)" >&2; exit 1; }
done
vm/build-module.sh >/dev/null || { echo "capture-demo: trbuf.ko does not build (vm/build-module.sh)" >&2; exit 1; }
rm -rf "$d" && mkdir -p "$d/i" "$d/o"
progs=(./runall ./pingpong ./forkexec ./leaf ./threads)
for p in runall pingpong forkexec leaf threads; do
	cp "$wl/$p" "$wl/$p.orig" "$d/i/"
	cp "$wl/$p.orig" "$d/o/$p"
done
cmd="./runall ./pingpong 30 : ./forkexec ./leaf 60 : ./threads 40"
stepcmd=$cmd nostep=
lua=build/real/lua/lua
if [ -x "$lua" ] && [ -x "$lua.orig" ] && readelf -S "$lua" | grep -q ae_schema; then
	cp "$lua" "$lua.orig" tests/real/queens.lua "$d/i/"
	cp "$lua.orig" "$d/o/lua"
	cp tests/real/queens.lua "$d/o/"
	cmd="$cmd : ./lua queens.lua 5 1"
	progs+=(./lua)
	nostep="lua 0 0.3"	# runall's own argv differs from the stepper's; 0.3 runs lua
fi
echo "workload: $cmd"
echo "(the stepper, slow under TCG, runs it without lua: lua's exactness is part 1 of the demo)"
start=$(date +%s)
bpf=
[ -x bin/schedlog-record ] && bpf=bpf || echo "(bin/schedlog-record not built: no BPF schedule log; make deps installs clang and bpftool)"
vm/run --smp 2 --timeout 800 -- tests/host/regen-vm-guest.sh "$d" "$d/run" 0 "$cmd" "$stepcmd" $bpf >"$d/vm.log" 2>&1
rc=$?
echo "VM run $(($(date +%s) - start)) s, exit $rc; workload and bdump: $(cat "$d/run/0/status" 2>/dev/null), stepper: $(cat "$d/run/step.status" 2>/dev/null)"
cat "$d/run/0/bdump.log"
mv "$d/run/0"/* "$d/run/" && rmdir "$d/run/0"
bin/schedlog check "$d/run/sched.bin" "$d/run/trace.zst" || rc=1
echo
echo "regeneration: aetrace regen --sched sched.bin --split DIR trace.zst"
t0=$(date +%s.%N)
(cd "$d/i" && "$top/bin/aetrace" regen --sched "$top/$d/run/sched.bin" --split "$top/$d/run/sp" \
	"$top/$d/run/trace.zst") || rc=1
t1=$(date +%s.%N)
(cd "$d/i" && "$top/bin/aetrace" regen --sched "$top/$d/run/sched.bin" --per-cpu "$top/$d/run/pc" \
	"$top/$d/run/trace.zst") || rc=1
echo
echo "instructions per thread (pid.tid.program):"
for f in "$d"/run/sp/*.lackey; do
	printf '  %-40s %10d\n' "$(basename "$f" .lackey)" "$(wc -l <"$f")"
done
echo "instructions per process:"
for f in "$d"/run/sp/*.lackey; do
	echo "$(basename "$f" | cut -d. -f1) $(wc -l <"$f")"
done | awk '{ s[$1] += $2 } END { for (p in s) printf "  pid %-8s %10d\n", p, s[p] }' | sort
total=$(cat "$d"/run/sp/*.lackey | wc -l)
echo "per CPU (--per-cpu): $(for f in "$d"/run/pc/*; do printf '%s %d  ' "$(basename "$f" .lackey)" "$(grep -c '^I' "$f")"; done)= $(cat "$d"/run/pc/* | grep -c '^I') of $total"
awk -v t="$total" -v a="$t0" -v b="$t1" 'BEGIN { printf "regenerated %d instructions in %.2f s\n", t, b - a }'
echo
bpfarg=()
[ -s "$d/run/all.bin" ] && bpfarg=(--bpf "$top/$d/run/all.bin")
for fmt in json svg; do
	(cd "$d/i" && "$top/bin/aetrace" timeline --sched "$top/$d/run/sched.bin" "${bpfarg[@]}" \
		-o "$top/$d/run/timeline.$fmt" --trace "$top/$d/run/trace.zst" "${progs[@]}") || rc=1
done
echo "timeline: $d/run/timeline.json (ui.perfetto.dev), $d/run/timeline.svg${bpfarg:+ (with the BPF log of every context switch: untraced slices too)}"
echo
echo "exactness: every thread vs the ptrace single-stepper on the twins (same guest)"
tests/host/regen-compare.sh "$d/run" "$d/run" "$wl/threads.orig" "$nostep" >"$d/run/compare"
crc=$?
sed 's/^/  /' "$d/run/compare"
if [ $crc = 0 ]; then
	echo "EXACT: every regenerated thread equals the stepper's, instruction for instruction"
else
	echo "NOT EXACT (see above)"
	rc=1
fi
exit $rc
