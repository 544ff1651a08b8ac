#!/usr/bin/env bash
# regen-vm.sh - the whole pipeline on the tracing kernel (vm/run --smp 2):
# bdump captures a workload of different traced programs running at once
# (tests/workload/runall: the pipe ping-pong pair, forkexec (fork + exec of
# the traced leaf), the 4-thread program, Lua n-queens when built), once
# with the default sub-buffers and once with 4 KiB ones (boundaries
# everywhere); on the host `aetrace regen --split` regenerates every thread
# and program image, and each must equal the ptrace single-stepper's trace
# of the same thread of the twins, run in the same guest (threads matched
# by creation order; the joining main thread without pthread_join's
# waits); a third capture adds Lua n-queens, whose 800K instructions are
# too many to single-step under TCG (and the host's stepper sees another
# kernel's process start): there the other threads are compared (all but
# runall's main thread, whose argv differs), Lua is regenerated; a
# fourth runs sigthreads (signals raised in 4 threads: the kernel's SIGNAL
# and SIGRETURN markers), its workers compared with the stepper, and
# sigfork (children forked inside signal handlers; its first 7 rounds,
# before the thread whose join waits as often as the schedule says),
# every task; a fifth
# runs the workload, sigthreads, sigfork and spawn -t (a thread that
# posix_spawns and vforks its own program, each child's two images in
# files of their own) built with -fae-data, every thread's
# loads and stores compared with the stepper's (ae-step --data); four
# more run tests/data/ctx_change.c, whose handler changes %rbx, the flags,
# a gather's index register or nothing in its frame: the first three are
# refused by name; three run tests/data/ctx_values.c, whose handlers write
# frame bytes nothing loads, or whose second thread flips a register in
# the frames: every return's marker must say what the program found;
# --per-cpu counts add up, and slices end at the points the kernel's
# SWITCH_IN markers name; schedlog check accepts the schedule;
# malformed pairs (a cut sched.bin, a cut trace, another capture's
# schedule) fail with a clear error. TAP output; skips without QEMU.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
bt=build/tests wl=build/tests/workload
i=0 failed=0
ok() { i=$((i + 1)); echo "ok $i - $*"; }
nok() { i=$((i + 1)); echo "not ok $i - $*"; failed=1; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else nok "$name"; fi; }
for t in bin/bdump bin/aetrace bin/schedlog $bt/ae-step $bt/ae-tracecmp $wl/runall; do
	[ -x "$t" ] || { echo "not ok 1 - $t built (run make)"; exit 1; }
done
if ! command -v qemu-system-x86_64 >/dev/null; then
	echo "ok 1 - regen in the VM # SKIP qemu-system-x86_64 missing (scripts/deps.sh vm)"
	exit 0
fi
vm/build-module.sh >/dev/null || { echo "not ok 1 - trbuf.ko builds (vm/build-module.sh)"; exit 1; }
w=build/regen-vm/run.$$
rm -rf "$w" && mkdir -p "$w/i" "$w/o"
# kept on request or after a failure (its path is printed), else removed
trap 'if [ -n "${AE_REGEN_VM_KEEP:-}" ] || [ $failed = 1 ]; then echo "# kept $w"; else rm -rf "$w"; fi' EXIT
for p in runall pingpong forkexec leaf threads sigthreads sigfork; do
	cp "$wl/$p" "$wl/$p.orig" "$w/i/"
	cp "$wl/$p.orig" "$w/o/$p"
done
cmd="./runall ./pingpong 30 : ./forkexec ./leaf 60 : ./threads 40"
# the data-traced workload: its own build in $w/d (i: traced, o: twins)
dcmd="$cmd : ./sigthreads 10 : ./sigfork 7 : ./spawn -t 2"
mkdir -p "$w/d/i" "$w/d/o"
for p in runall pingpong forkexec leaf threads sigthreads sigfork spawn; do
	bin/aecc -fae-data -O2 -Wall -o "$w/d/i/$p" "tests/workload/$p.c" >"$w/d/aecc.log" 2>&1 &&
		cp "$w/d/i/$p.orig" "$w/d/o/$p" || break
done
check "the workload builds with aecc -fae-data" test -x "$w/d/o/spawn"
# handlers that change their frame (tests/data/ctx_change.c, -fae-data)
mkdir -p "$w/c/i"
bin/aecc -fae-data -O2 -o "$w/c/i/ctxd" tests/data/ctx_change.c >"$w/c/aecc.log" 2>&1
check "ctx_change builds with aecc -fae-data" test -x "$w/c/i/ctxd"
bin/aecc -O2 -o "$w/c/i/cv" tests/data/ctx_values.c -lpthread >"$w/c/aecc-cv.log" 2>&1
check "ctx_values builds with aecc" test -x "$w/c/i/cv"
lua=build/real/lua/lua luacmd=
if [ -x "$lua" ] && [ -x "$lua.orig" ] && readelf -S "$lua" | grep -q ae_schema; then
	cp "$lua" "$lua.orig" tests/real/queens.lua "$w/i/"
	luacmd="$cmd : ./lua queens.lua 4 1"
else
	ok "lua in the VM workload # SKIP build/real/lua not built with aecc (make real-programs)"
fi
start=$(date +%s)
g=tests/host/regen-vm-guest.sh
vm/run --smp 2 --timeout 1200 -- bash -c "
	$g $w $w/run '0 4096' '$cmd' '$cmd' || exit 1
	$g $w $w/sig 0 './sigthreads 10' './sigthreads 10' || exit 1
	$g $w $w/sigf 0 './sigfork 7' './sigfork 7' || exit 1
	AE_STEP_FLAGS=--data $g $w/d $w/data 0 '$dcmd' '$dcmd' || exit 1
	for m in none reg flags vector; do $g $w/c $w/ctx-\$m 0 \"./ctxd \$m\" '' || exit 1; done
	for m in pad race gpr; do $g $w/c $w/cv-\$m 0 \"./cv \$m\" '' || exit 1; done
	[ -z '$luacmd' ] || $g $w $w/lua 0 '$luacmd' ''" >"$w/vm.log" 2>&1
vm_rc=$?
sed 's/^/# vm: /' "$w/vm.log" | tail -3
echo "# VM run: $(($(date +%s) - start)) s"
# vm/run sometimes misses the guest's exit line on a busy console (125);
# the guest's own status files below say whether every step ran
finished=1
for f in run/0/status run/4096/status run/step.status sig/0/status sig/step.status \
	 sigf/0/status sigf/step.status \
	 data/0/status data/step.status ctx-none/0/status ctx-reg/0/status ctx-flags/0/status ctx-vector/0/status \
	 cv-pad/0/status cv-race/0/status cv-gpr/0/status \
	 ${luacmd:+lua/0/status}; do
	[ -s "$w/$f" ] || finished=0
done
check "VM run finishes (vm/run $vm_rc, every status file written: $finished)" \
	test $finished = 1 -a \( $vm_rc = 0 -o $vm_rc = 125 \)
check "stepper on the twins in the guest exits 0" test "$(cat "$w/run/step.status" 2>/dev/null)" = 0

modes="run/0 run/4096 sig/0 sigf/0 data/0"
[ -n "$luacmd" ] && modes="$modes lua/0"
for mode in $modes; do
	d=$w/$mode wi=$w/i torig=$wl/threads.orig data=
	case $mode in
	run/0) name="default sub-buffers" nostep= sd=$w/run ;;
	run/4096) name="4 KiB sub-buffers" nostep= sd=$w/run ;;
	# the kernel's SIGNAL/SIGRETURN markers (40 signals in 4 threads);
	# the main thread's pthread_join waits depend on timing
	sig/0) name="signals in threads" nostep="0" sd=$w/sig ;;
	# children forked inside handlers (the kernel's markers of a fork
	# in a handler; each child replays its parent to the fork)
	sigf/0) name="forks inside handlers" nostep= sd=$w/sigf ;;
	lua/0) name="with lua" nostep="lua 0 0.3" sd=$w/run ;;	# runall's argv differs; 0.3 runs lua
	# 0.3, 0.5: sigthreads' and spawn's main threads (their joins)
	data/0) name="data traces" nostep="0.3 0.5" sd=$w/data wi=$w/d/i torig=$w/d/i/threads.orig data=data ;;
	esac
	check "$name: workload and bdump exit 0 ($(cat $d/status 2>/dev/null))" \
		test "$(cat $d/status 2>/dev/null)" = "0 0"
	sed "s/^/# $name: /" "$d/bdump.log" | tail -1
	check "$name: schedlog check: order, pairing, positions against the data" \
		bin/schedlog check "$d/sched.bin" "$d/trace.zst"
	(cd "$wi" && "$top/bin/aetrace" regen --sched "$top/$d/sched.bin" --split "$top/$d/sp" \
		"$top/$d/trace.zst" 2>"$top/$d/regen.err")
	rc=$?
	check "$name: aetrace regen --split: every thread regenerates ($(ls "$d/sp" 2>/dev/null | wc -l) images)$(head -c 300 "$d/regen.err" | tr '\n' ' ')" \
		test $rc = 0 -a ! -s "$d/regen.err" -a -n "$(ls "$d/sp" 2>/dev/null)"
	tests/host/regen-compare.sh "$d" "$sd" "$torig" "$nostep" $data >"$d/compare"
	rc=$?
	while read -r line; do
		case $line in
		"ok - "*) ok "$name: ${line#ok - }" ;;
		"not ok - "*) nok "$name: ${line#not ok - }" ;;
		*) echo "$line" ;;
		esac
	done <"$d/compare"
	check "$name: every thread image equals the stepper's, as many as it ran" test $rc = 0
	# a mismatch: how each task's trace ended, and bdump's own account
	if [ $rc != 0 ]; then
		(cd "$wi" && "$top/bin/aetrace" stats --sched "$top/$d/sched.bin" "$top/$d/trace.zst" 2>&1) |
			sed "s/^/# $name: stats: /" | head -40
		sed "s/^/# $name: bdump: /" "$d/bdump.log" | tail -5
	fi
	if [ $mode = lua/0 ]; then
		f=$(ls "$d"/sp/*.lua.lackey 2>/dev/null | head -1)
		check "$name: lua n-queens regenerated ($(cat "$f" 2>/dev/null | wc -l) instructions)" \
			test -n "$f" -a "$(cat "$f" 2>/dev/null | wc -l)" -gt 500000
	fi
	(cd "$wi" && "$top/bin/aetrace" regen --per-cpu "$top/$d/pc" "$top/$d/trace.zst" 2>/dev/null)
	check "$name: --per-cpu: $(ls "$d/pc" 2>/dev/null | wc -l) cpu traces, their instructions add up to all threads'" \
		test "$(cat "$d"/pc/* 2>/dev/null | grep -c '^I')" = "$(cat "$d"/sp/* | grep -c '^I')" -a -n "$(ls "$d/pc" 2>/dev/null)"
	# and each task's are where its switch lines (and `# late` blocks:
	# a slice regenerated after the next task's switch) put them
	read -r ntask nbad < <(python3 "$top/tests/host/percpu_tasks.py" "$d/pc" "$d/sp" 2>"$d/pcbad")
	check "$name: --per-cpu: each of ${ntask:-0} tasks' instructions where its switch and late lines say ($(cat "$d"/pc/* 2>/dev/null | grep -c '^# late') late blocks)" \
		test "${nbad:-1}" = 0 -a "${ntask:-0}" -gt 0
	sed "s/^/# $name: /" "$d/pcbad" | head -3
	# slices end where the next SWITCH_IN resumes the task: the switch
	# points the regeneration reached are at the kernel's ip and %rsp (and
	# a rep's %rcx) at their offset, not only at the next byte (1% may
	# be ambiguous: an ip reached twice at one offset with one %rsp);
	# not counted: those whose ip is in code the twin lacks (a task
	# switched out in the runtime's exit hook, which closes /dev/trbuf:
	# as many as the kernel preempts it there)
	(cd "$wi" && "$top/bin/aetrace" stats --sched "$top/$d/sched.bin" "$top/$d/trace.zst" 2>/dev/null) >"$d/stats"
	sw=$(sed -n 's/^switch points  *\([0-9]*\) reached, \([0-9]*\) of them not at their ip (\([0-9]*\) in code the twin lacks)$/\1 \2 \3/p' "$d/stats")
	read -r reached off noip <<<"${sw:-0 0 0}"
	check "$name: slice ends: $(sed -n 's/^slice ends  *//p' "$d/stats"); switch points: $reached reached, $off not at their ip, $noip of them in code the twin lacks" \
		test "$reached" -gt 10 -a "$(((off - noip) * 100))" -le "$reached"
	# the kernel's SIGRETURNs compare the general registers, the flags
	# and the vector state (item 30): every handler's return, all of it
	if [ $mode = sig/0 ]; then
		read -r nsig unch gprs nvec < <(sed -n 's/^signals  *\([0-9]*\) .*/\1/p; s/^unchecked  *\([0-9]*\) .*, \([0-9]*\) with only the general registers compared, \([0-9]*\) without the vector state$/\1 \2 \3/p' "$d/stats" | tr '\n' ' ')
		check "$name: every handler's return compared its general registers, flags and vector state ($nsig signals: $unch unchecked, $gprs the registers only, $nvec without the vector state)" \
			test "${nsig:-0}" -gt 0 -a "${unch:-1}" = 0 -a "${gprs:-1}" = 0 -a "${nvec:-1}" = 0
	fi
done

# the kernel's SIGRETURN says what a handler changed in its frame, and
# the regeneration refuses a change to what it follows (item 30): %rbx,
# the address of the load after the fault (reg), the status flags a
# decided branch reads (flags: the hook compares the flags), or the index
# register of the gather that faulted (vector: the FPU state, compared as values); a
# handler that changed nothing regenerates
for m in none reg flags vector; do
	d=$w/ctx-$m
	check "ctx_change $m: workload and bdump exit 0 ($(cat "$d/0/status" 2>/dev/null))" \
		test "$(cat "$d/0/status" 2>/dev/null)" = "0 0"
	(cd "$w/c/i" && "$top/bin/aetrace" regen --sched "$top/$d/0/sched.bin" "$top/$d/0/trace.zst" \
		>/dev/null 2>"$top/$d/regen.err")
	rc=$?
	case $m in
	none)
		(cd "$w/c/i" && "$top/bin/aetrace" stats --sched "$top/$d/0/sched.bin" \
			"$top/$d/0/trace.zst" 2>/dev/null) >"$d/stats"
		check "a handler that changes nothing: regenerated, its return compared with the flags and the vector state ($(head -c 200 "$d/regen.err"))" \
			test $rc = 0 -a -n "$(grep "^unchecked  *0 .*, 0 with only the general registers compared, 0 without the vector state$" "$d/stats")" ;;
	reg) check "a handler that changes %rbx: refused, naming it ($(head -c 200 "$d/regen.err"))" \
		grep -q 'signal handler changed %rbx in its ucontext' "$d/regen.err" ;;
	flags) check "a handler that changes a decided branch's flags: refused, naming them ($(head -c 200 "$d/regen.err"))" \
		grep -q 'signal handler changed the status flags in its ucontext' "$d/regen.err" ;;
	vector)
		if grep -q '^no avx2$' "$d/0/out"; then
			ok "a handler that changes a gather's index # SKIP the guest's CPU has no AVX2"
		else
			check "a handler that changes a gather's index: refused, naming the vector registers ($(head -c 200 "$d/regen.err"))" \
				grep -q 'signal handler changed the vector or x87 registers in its ucontext' "$d/regen.err"
		fi ;;
	esac
done

# the kernel compares values (item 30; tests/data/ctx_values.c): handlers
# that write frame bytes nothing loads (pad) change nothing, and while
# another thread flips a bit of %xmm15 (race) or %r12 (gpr) in the frames,
# each return's marker says what the program found in the register after
# it, none unchecked (the kernel keeps the registers at delivery itself)
for m in pad race gpr; do
	d=$w/cv-$m
	want=$(sed -n "s/^ctx_values $m: 200 returns, [0-9]* changed %[a-z0-9]*: //p" "$d/0/out" 2>/dev/null)
	mask=0x40000
	[ $m = gpr ] && mask=0x1000
	got=$(tests/host/sigreturn-bits.sh "$d/0/sched.bin" $mask 2>/dev/null)
	check "ctx_values $m: each of 200 returns compared, saying what the program found ($(printf '%s' "$want" | tr -d 0 | wc -c) changed; status $(cat "$d/0/status" 2>/dev/null))" \
		test "${#want}" = 200 -a "$got" = "$want" -a "$(cat "$d/0/status" 2>/dev/null)" = "0 0"
done

# malformed pairs: a clear error naming the file, the offset or the marker
d=$w/run/0
expect_error() {
	local name=$1 pat=$2 rc
	shift 2
	(cd "$w/i" && "$@") >"$w/x.out" 2>"$w/x.err"
	rc=$?
	if [ $rc -eq 1 ] && grep -qE "$pat" "$w/x.err"; then
		ok "$name: $(head -c 200 "$w/x.err" | tr '\n' ' ')"
	else
		nok "$name (status $rc)"
		sed 's/^/# /' "$w/x.err" | head -5
	fi
}
head -c $(($(stat -c %s "$d/sched.bin") / 2 + 13)) "$d/sched.bin" >"$w/cut.bin"
expect_error "cut sched.bin: the truncated marker is named" "cut.bin: truncated marker [0-9]+ at byte offset" \
	"$top/bin/aetrace" regen --sched "$top/$w/cut.bin" --split "$top/$w/x1" "$top/$d/trace.zst"
zstd -dc "$d/trace.zst" 2>/dev/null | head -c $(($(zstd -dc "$d/trace.zst" | wc -c) / 2)) | zstd -q -1 >"$w/cut.zst"
expect_error "cut trace.zst: named with its offset" "cut.zst: .*offset [0-9]+" \
	"$top/bin/aetrace" regen --sched "$top/$d/sched.bin" --split "$top/$w/x2" "$top/$w/cut.zst"
expect_error "another capture's schedule: a clear error" "sub-buffer|marker [0-9]+|unknown task|corrupt trace|no traced task" \
	"$top/bin/aetrace" regen --sched "$top/$w/run/4096/sched.bin" --split "$top/$w/x3" "$top/$d/trace.zst"
echo "1..$i"
exit $failed
