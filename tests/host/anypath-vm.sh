#!/usr/bin/env bash
# anypath-vm.sh - the project works from a clone in any directory (issue 8
# item 0): a `git clone` of HEAD into a path with a blank under build/ and
# into a temporary directory under $HOME (the guest's stage 1 covers /root
# and /tmp with tmpfs), then in each clone `make all` (the top Makefile
# re-runs itself through a blank-free link, see its head), `make kernel`
# (vm/build.mk's recipes through that link; the kernel is the cached one,
# same key), and one short VM boot from the clone that captures a traced
# workload with bdump: self-checking producer threads and an aecc-built
# program, checked on the host (bdump --check, bdump_vm_check, the
# program's output equal to its native output).  TAP.  Skips when QEMU is
# missing; a few minutes (two `make all`, two boots).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { if [ "$2" -eq 0 ]; then ok "$1"; else nok "$1"; fi; }

if ! command -v qemu-system-x86_64 >/dev/null; then
	echo "ok 1 - clones in any path # SKIP qemu-system-x86_64 missing (scripts/deps.sh vm)"
	exit 0
fi
NTHR=2 NREC=3000
# Run from `make check`, the outer make's flags (TOP=<its tree>, jobserver)
# must not leak into the clones' makes.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
clones=()
cache=${AE_CACHE:-$HOME/.cache/aetrace}
cleanup() {
	local c h
	for c in "${clones[@]}"; do
		# the Makefile's blank-free link to the clone (see its head)
		h=$(printf %s "$(cd "$c/aetrace" 2>/dev/null && pwd -P)" | sha256sum | cut -c1-16)
		[ -L "$cache/links/$h" ] && rm -f "$cache/links/$h"
		rm -rf "$c"
	done
}
trap cleanup EXIT

mkdir -p build/anypath
for parent in "$top/build/anypath" "$HOME"; do
	base=$(mktemp -d "$parent/aetrace any path.XXXXXX")
	clones+=("$base")
	c=$base/aetrace
	w=build/av
	log=$base/log
	git clone -q "$top" "$c" >"$log" 2>&1
	check "git clone of HEAD into '$c'" $?
	start=$(date +%s)
	make -C "$c" -j2 all >>"$log" 2>&1
	rc=$?
	[ $rc -eq 0 ] || tail -15 "$log" | sed 's/^/# /'
	check "make all in '$c' ($(($(date +%s) - start)) s)" $rc
	[ $rc -eq 0 ] || continue
	[ "$("$c/vm/build-kernel.sh" --key)" = "$("$top/vm/build-kernel.sh" --key)" ] ||
		echo "# uncommitted kernel changes: the clone (HEAD) builds another kernel key"
	make -C "$c" kernel >>"$log" 2>&1
	rc=$?
	[ $rc -eq 0 ] || tail -5 "$log" | sed 's/^/# /'
	check "make kernel in '$c' (the cached kernel)" $rc

	# The traced workload, from the clone, in one boot.
	(
		cd "$c" || exit 1
		mkdir -p "$w"
		vm/build-module.sh >/dev/null || exit 1
		bin/aecc -O2 -o "$w/interp" tests/corpus/interp.c 2>"$w/aecc.log" || exit 1
		"$w/interp.orig" >"$w/native.out" || exit 1
	) >>"$log" 2>&1
	check "trbuf.ko and an aecc-built program build in the clone" $?
	start=$(date +%s)
	(cd "$c" && vm/run --smp 2 --timeout 300 -- tests/host/bdump-vm-guest.sh \
		"$w" "$w/trace.zst" 1 $NTHR $NREC "$w/interp" 1) >"$base/vm.log" 2>&1
	rc=$?
	tail -5 "$base/vm.log" | sed 's/^/# vm: /'
	check "vm/run from the clone boots and runs the traced workload (status $rc, $(($(date +%s) - start)) s)" $rc
	d=$c/$w
	[ "$(cat "$d/status" 2>/dev/null)" = "0 0 0" ]
	check "producer, program and bdump exit 0 in the guest ($(cat "$d/status" 2>/dev/null))" $?
	out=$("$c/bin/bdump" --check "$d/trace.zst" "$d/sched.bin" 2>&1)
	rc=$?
	echo "$out" | tail -3 | sed 's/^/# /'
	check "bdump --check accepts the clone's capture" $rc
	out=$("$c/build/tests/host/bdump_vm_check" "$d/trace.zst" $NREC $NTHR $(cat "$d/pids" 2>/dev/null) 2>&1)
	rc=$?
	echo "$out" | tail -3 | sed 's/^/# /'
	check "$NTHR producer streams x $NREC records intact in the clone's capture" $rc
	[ -s "$d/native.out" ] && cmp -s "$d/prog.1.out" "$d/native.out"
	check "the aecc-built program's output in the guest equals its native output" $?
done
echo "1..$n"
