#!/usr/bin/env bash
# regen-workload.sh - whole-capture regeneration of a multi-process,
# multi-threaded workload on the host: aerun (following forks, threads and
# execs) captures tests/workload/runall starting the pipe ping-pong pair,
# forkexec (fork + exec of the traced leaf), the 4-thread program and, when
# built, Lua n-queens, all at once; `aetrace regen --split` regenerates
# every thread and program image, fork children and threads included, and
# each must equal the ptrace single-stepper's trace of the same thread of
# the twins (ae-step --split; threads are matched by creation order), the
# joining main thread of `threads` without pthread_join's waits. Also with
# 4 KiB sub-buffers, and --per-cpu counts adding up. TAP output.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/oracle/corpus-lib.sh"
. "$top/tests/host/step-cache.sh"
bt=$top/build/tests wl=$bt/workload
step=$bt/ae-step cmp=$bt/ae-tracecmp
aerun=$top/bin/aerun aetrace=$top/bin/aetrace schedlog=$top/bin/schedlog
i=0 failed=0
ok() { i=$((i + 1)); echo "ok $i - $*"; }
nok() { i=$((i + 1)); echo "not ok $i - $*"; failed=1; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else nok "$name"; fi; }
for t in "$aerun" "$aetrace" "$schedlog" "$step" "$cmp" "$wl/runall" "$wl/threads.orig"; do
	if [ ! -x "$t" ]; then
		echo "ok 1 - regen-workload # SKIP $t not built"
		exit 0
	fi
done
work=$(mktemp -d "${TMPDIR:-/tmp}/regen-workload.XXXXXX")
trap 'rm -rf "$work"' EXIT
clean_env="env -i PATH=/usr/bin:/bin LC_ALL=C"
mkdir -p "$work/i" "$work/o"
for p in runall pingpong forkexec leaf threads; do
	cp "$wl/$p" "$wl/$p.orig" "$work/i/"
	cp "$wl/$p.orig" "$work/o/$p"
done
cmd=(./runall ./pingpong 30 : ./forkexec ./leaf 80 : ./threads 60)
lua=$top/build/real/lua/lua
if [ -x "$lua" ] && [ -x "$lua.orig" ] && readelf -S "$lua" | grep -q ae_schema; then
	cp "$lua" "$lua.orig" "$work/i/"
	cp "$lua.orig" "$work/o/lua"
	cp "$top/tests/real/queens.lua" "$work/i/"
	cp "$top/tests/real/queens.lua" "$work/o/"
	cmd+=(: ./lua queens.lua 4 1)
fi

labels() { python3 "$top/tests/oracle/fork-labels.py" "$1"; }

# every program the workload execs is in the stepper cache's key
keys=()
for f in "$work"/o/*; do keys+=(--key-file "$f"); done
(cd "$work/o" && ae_step_cached "$work/step" "$work/out.step" --clean-env --split "${keys[@]}" -- \
	"${cmd[@]}")
check "stepper runs the twin workload" test "$(tail -1 "$work/out.step")" = "status 0"
labels "$work/step.forks" >"$work/step.labels"
join_skips=$(ae_join_skips "$wl/threads.orig")

run() {
	local name=$1 d=$work/$1 f tid label prog other skips n=0 bad=0
	shift
	mkdir -p "$d"
	(cd "$work/i" && $clean_env "$aerun" -q "$@" -o "$d/t.zst" -- "${cmd[@]}" >"$d/out" 2>"$d/err")
	check "$name: aerun runs the workload" test $? = 0
	(cd "$work/i" && "$aetrace" regen --split "$d/sp" "$d/t.zst" 2>"$d/regen.err")
	rc=$?
	check "$name: aetrace regen --split: every task regenerates$(head -c 300 "$d/regen.err" | tr '\n' ' ')" \
		test $rc = 0 -a ! -s "$d/regen.err"
	ae_capture_forks "$schedlog" "$d/t.zst" >"$d/forks"
	labels "$d/forks" >"$d/labels"
	for f in "$d"/sp/*.lackey; do
		tid=$(basename "$f" | cut -d. -f2)
		prog=$(basename "$f" | cut -d. -f3)
		label=$(awk -v t="$tid" '($1 "") == t { print $2 }' "$d/labels")
		other=$(awk -v l="$label" '($2 "") == l { print $1 }' "$work/step.labels")
		other=$(ls "$work/step/"*".$other.$(basename "$f" | cut -d. -f3-)" 2>/dev/null | head -1)
		n=$((n + 1))
		if [ -z "$label" ] || [ -z "$other" ]; then
			nok "$name: $prog thread $tid: no stepper thread for label '$label'"
			continue
		fi
		skips=
		[ "$prog" = threads ] && [ "$label" = 0.2 ] && skips=$join_skips
		# shellcheck disable=SC2086
		if "$cmp" $skips "$f" "$other" >"$d/cmp.out" 2>&1; then
			ok "$name: $prog thread $label = stepper ($(head -1 "$d/cmp.out")${skips:+, without pthread_join})"
		else
			nok "$name: $prog thread $label differs from the stepper"
			sed 's/^/# /' "$d/cmp.out" | head -8
		fi
	done
	check "$name: $n thread images regenerated, as many as the stepper's $(ls "$work/step" | wc -l)" \
		test "$n" = "$(ls "$work/step" | wc -l)"
	(cd "$work/i" && "$aetrace" regen --per-cpu "$d/pc" "$d/t.zst" 2>/dev/null)
	check "$name: --per-cpu: the regions' instructions add up to all threads'" \
		test "$(cat "$d"/pc/* | grep -c '^I')" = "$(cat "$d"/sp/* | wc -l)"
}
run default --subbufs 32
run tiny --subbufs 64 --subbuf-size 4K
echo "1..$i"
exit $failed
