#!/usr/bin/env bash
# regen-vm.sh - the whole pipeline on the tracing kernel (vm/run --smp 2):
# bdump captures a workload of different traced programs running at once
# (tests/workload/runall: the pipe ping-pong pair, forkexec (fork + exec of
# the traced leaf), the 4-thread program, Lua n-queens when built), once
# with the default sub-buffers and once with 4 KiB ones (boundaries
# everywhere); on the host `aetrace regen --split` regenerates every thread
# and program image and each must equal the ptrace single-stepper's trace
# of the same thread of the twins run in the same guest (threads matched
# by creation order; the joining main thread without pthread_join's
# waits); --per-cpu counts add up; schedlog check accepts the schedule;
# malformed pairs (a cut sched.bin, a cut trace, another capture's
# schedule) fail with a clear error. TAP output; skips without QEMU.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
. tests/oracle/corpus-lib.sh
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
trap '[ -n "${AE_REGEN_VM_KEEP:-}" ] && echo "# kept $w" || rm -rf "$w"' EXIT
for p in runall pingpong forkexec leaf threads; do
	cp "$wl/$p" "$wl/$p.orig" "$w/i/"
	cp "$wl/$p.orig" "$w/o/$p"
done
cmd=(./runall ./pingpong 30 : ./forkexec ./leaf 60 : ./threads 40)
lua=build/real/lua/lua
if [ -x "$lua" ] && [ -x "$lua.orig" ] && readelf -S "$lua" | grep -q ae_schema; then
	cp "$lua" "$lua.orig" tests/real/queens.lua "$w/i/"
	cp "$lua.orig" "$w/o/lua"
	cp tests/real/queens.lua "$w/o/"
	cmd+=(: ./lua queens.lua 4 1)
else
	ok "lua in the VM workload # SKIP build/real/lua not built with aecc (make real-programs)"
fi
g=tests/host/regen-vm-guest.sh
start=$(date +%s)
vm/run --smp 2 --timeout 600 -- bash -c "
	$g $w $w/default 0 ${cmd[*]}; echo \"guest default: rc \$?\"
	$g $w $w/tiny 4096 ${cmd[*]}; echo \"guest tiny: rc \$?\"
	" >"$w/vm.log" 2>&1
vm_rc=$?
sed 's/^/# vm: /' "$w/vm.log" | tail -5
echo "# VM run: $(($(date +%s) - start)) s"
check "VM run exits 0" test $vm_rc = 0

labels() {
	python3 -c '
import sys
pairs = [l.split() for l in open(sys.argv[1]) if l.strip()]
children, kids = {}, set()
for p, c in pairs:
	children.setdefault(p, []).append(c)
	kids.add(c)
roots = [p for p, _ in pairs if p not in kids]
label = {roots[0]: "0"} if roots else {}
todo = list(label)
while todo:
	p = todo.pop()
	for k, c in enumerate(children.get(p, [])):
		label[c] = "%s.%d" % (label[p], k)
		todo.append(c)
for t, l in label.items():
	print(t, l)
' "$1"
}
join_skips=
for s in __pthread_timedjoin_np __pthread_join __timedwait_cp __timedwait __wait \
	 __syscall_cp __syscall_cp_c __pthread_setcancelstate __pthread_testcancel __testcancel \
	 __tl_sync __wake; do
	r=$(ae_sym_range "$wl/threads.orig" "$s")
	[ -n "$r" ] && join_skips="$join_skips --skip-range $r"
done

for mode in default tiny; do
	d=$w/$mode
	check "$mode: workload, bdump and stepper exit 0 ($(tr '\n' ' ' < $d/status 2>/dev/null))" \
		test "$(tr '\n' ' ' < $d/status 2>/dev/null)" = "0 0 step 0 "
	sed "s/^/# $mode bdump: /" "$d/bdump.log" | tail -2
	check "$mode: schedlog check: order, pairing, positions against the data" \
		bin/schedlog check "$d/sched.bin" "$d/trace.zst"
	(cd "$w/i" && "$top/bin/aetrace" regen --sched "$top/$d/sched.bin" --split "$top/$d/sp" \
		"$top/$d/trace.zst" 2>"$top/$d/regen.err")
	rc=$?
	check "$mode: aetrace regen --split: every thread regenerates$(head -c 300 "$d/regen.err" | tr '\n' ' ')" \
		test $rc = 0 -a ! -s "$d/regen.err" -a -n "$(ls "$d/sp" 2>/dev/null)"
	bin/schedlog print "$d/sched.bin" | awk '$5 == "FORK" { print $2, $4, $9 }' | sort -n |
		awk '{ split($2, a, "/"); sub("child=", "", $3); print a[2], $3 }' >"$d/forks"
	labels "$d/forks" >"$d/labels"
	labels "$d/step.forks" >"$d/step.labels"
	n=0
	for f in "$d"/sp/*.lackey; do
		[ -e "$f" ] || continue
		tid=$(basename "$f" | cut -d. -f2)
		prog=$(basename "$f" | cut -d. -f3)
		label=$(awk -v t="$tid" '($1 "") == t { print $2 }' "$d/labels")
		other=$(awk -v l="$label" '($2 "") == l { print $1 }' "$d/step.labels")
		other=$(ls "$d/step/"*".$other.$prog.lackey" 2>/dev/null | head -1)
		n=$((n + 1))
		if [ -z "$label" ] || [ -z "$other" ]; then
			nok "$mode: $prog thread $tid: no stepper thread for label '$label'"
			continue
		fi
		skips=
		[ "$prog" = threads ] && [ "$(ls "$d"/sp/*.$tid.threads.lackey | wc -l)" = 1 ] &&
			[ "$(awk -v t="$tid" '($1 "") == t' "$d/forks" | wc -l)" -gt 0 ] && skips=$join_skips
		# shellcheck disable=SC2086
		if $bt/ae-tracecmp $skips "$f" "$other" >"$d/cmp.out" 2>&1; then
			ok "$mode: $prog thread $label = stepper in the same guest ($(head -1 "$d/cmp.out")${skips:+, without pthread_join})"
		else
			nok "$mode: $prog thread $label differs from the stepper"
			sed 's/^/# /' "$d/cmp.out" | head -8
		fi
	done
	check "$mode: $n thread images regenerated, as many as the stepper's $(ls "$d/step" 2>/dev/null | wc -l)" \
		test "$n" = "$(ls "$d/step" 2>/dev/null | wc -l)" -a "$n" -gt 0
	(cd "$w/i" && "$top/bin/aetrace" regen --per-cpu "$top/$d/pc" "$top/$d/trace.zst" 2>/dev/null)
	check "$mode: --per-cpu: $(ls "$d/pc" 2>/dev/null | wc -l) cpu traces, their instructions add up to all threads'" \
		test "$(cat "$d"/pc/* 2>/dev/null | grep -c '^I')" = "$(cat "$d"/sp/* | wc -l)"
done

# malformed pairs: a clear error naming the file, the offset or the marker
d=$w/default
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
	"$top/bin/aetrace" regen --sched "$top/$w/tiny/sched.bin" --split "$top/$w/x3" "$top/$d/trace.zst"
echo "1..$i"
exit $failed
