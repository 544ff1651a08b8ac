#!/usr/bin/env bash
# oracle-split: the single-stepper's --split mode (one trace per thread and
# program image) on the workload twins (tests/workload/*.orig):
#   - single-process mode is unchanged: it still refuses a fork;
#   - forkexec: the file of each exec'd leaf equals the single-process
#     stepper and valgrind lackey (from __init_tls) on leaf.orig with the same
#     argv; the execve syscall ends each forked child's forkexec file;
#   - pingpong: two processes; the child's first instruction is the one after
#     the parent's fork syscall; the server's file ends in its exit syscall;
#   - threads: five files, one per thread; every worker runs worker_main once,
#     `work` is entered 8 times over all files, and two runs give identical
#     worker traces (control flow independent of the schedule);
#   - --split refuses -o/--from and a missing directory with a clear error.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/oracle/corpus-lib.sh"
bt=$top/build/tests
step=$bt/ae-step cmp=$bt/ae-tracecmp wl=$bt/workload
i=0 failed=0

ok() { i=$((i + 1)); echo "ok $i - $*"; }
nok() { i=$((i + 1)); echo "not ok $i - $*"; failed=1; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else nok "$name"; fi; }

if [ ! -x "$step" ] || [ ! -x "$wl/threads.orig" ] || [ ! -x "$wl/leaf.orig" ]; then
	echo "ok 1 - oracle-split # SKIP ae-step or the workload not built"
	exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/oracle-split.XXXXXX")
trap 'rm -rf "$work"' EXIT
env0="env -i PATH=/usr/bin:/bin LC_ALL=C"

# Files of a --split DIR matching PATTERN, in the order their tasks were
# created (DIR.forks, from --forks; tid order breaks when pids wrap).
files() {
	local t
	for t in $(awk 'NR == 1 { print $1 } { print $2 }' "$1.forks"); do
		ls "$1" | grep -- "$2" | grep "^[0-9]*\\.$t\\." | sed "s|^|$1/|"
	done
}
# addr of the Nth-last I line of FILE
last_addr() { grep '^I' "$1" | tail -n "$2" | head -1 | sed 's/^I *\([0-9a-f]*\),.*/\1/'; }
first_addr() { grep -m1 '^I' "$1" | sed 's/^I *\([0-9a-f]*\),.*/\1/'; }
# is the instruction at hex ADDR in PROG a syscall?
is_syscall() {
	objdump -d --start-address=0x$2 --stop-address=$((0x$2 + 2)) "$1" | grep -q 'syscall'
}

# 1: single-process mode still refuses to follow a fork.
$env0 "$step" -o "$work/single" -- "$wl/pingpong.orig" 3 >/dev/null 2>"$work/single.err"
rc=$?
check "single-process mode refuses a fork (exit $rc)" \
	test $rc = 125 -a -n "$(grep 'single-threaded oracle only' "$work/single.err")"

# 2-3: usage errors.
$env0 "$step" --split "$work/nodir" -- "$wl/leaf.orig" 5 >/dev/null 2>"$work/e1"
rc=$?
check "--split on a missing directory: exit 2, names it" \
	test $rc = 2 -a -n "$(grep -F "$work/nodir" "$work/e1")"
mkdir -p "$work/x"
$env0 "$step" --split "$work/x" -o "$work/y" -- "$wl/leaf.orig" 5 >/dev/null 2>"$work/e2"
rc=$?
check "--split with -o: exit 2 with a message" test $rc = 2 -a -s "$work/e2"

# forkexec: two exec'd leaves.
d=$work/fe
mkdir -p "$d"
n=120
$env0 "$step" --split "$d" --forks "$d.forks" -- "$wl/forkexec.orig" "$wl/leaf.orig" $n >"$d.out" 2>"$d.err"
rc=$?
check "forkexec under --split: exit 0, both leaves ran" \
	test $rc = 0 -a "$(grep -c '^leaf:' "$d.out")" = 2
mapfile -t leaves < <(files "$d" '\.leaf\.orig\.lackey$')
mapfile -t fchild < <(files "$d" '\.forkexec\.orig\.lackey$')
check "forkexec: 2 leaf files and 3 forkexec files" test ${#leaves[@]} = 2 -a ${#fchild[@]} = 3
k=0
for arg in $n $((n / 2)); do
	f=${leaves[$k]:-/nonexistent}
	k=$((k + 1))
	$env0 "$step" -o "$d/leaf$arg.step" -- "$wl/leaf.orig" $arg >/dev/null 2>&1
	if "$cmp" "$f" "$d/leaf$arg.step" >"$d/cmp$arg"; then
		ok "exec'd leaf $arg = single-process stepper on leaf.orig $arg ($(head -1 "$d/cmp$arg"))"
	else
		nok "exec'd leaf $arg differs from the single-process stepper"
		sed 's/^/# /' "$d/cmp$arg" | head -20
	fi
	if command -v valgrind >/dev/null; then
		$env0 "$top/tests/oracle/lackey.sh" -o "$d/leaf$arg.lackey" -- "$wl/leaf.orig" $arg >/dev/null 2>&1
		from=$(ae_sym_addr "$wl/leaf.orig" "$ae_lackey_from_sym")
		if "$cmp" --from "$from" "$f" "$d/leaf$arg.lackey" >"$d/lcmp$arg"; then
			ok "exec'd leaf $arg = lackey on leaf.orig $arg from $ae_lackey_from_sym ($(head -1 "$d/lcmp$arg"))"
		else
			nok "exec'd leaf $arg differs from lackey"
			sed 's/^/# /' "$d/lcmp$arg" | head -20
		fi
	else
		ok "exec'd leaf $arg = lackey # SKIP valgrind missing"
	fi
done
# Each forked child's forkexec file ends with the execve syscall, and its
# pid/tid match the leaf file that follows it.
bad=
for f in "${fchild[@]:1}"; do
	a=$(last_addr "$f" 1)
	is_syscall "$wl/forkexec.orig" "$a" || bad="$bad $(basename "$f"):$a"
	pt=$(basename "$f" | cut -d. -f1-2)
	ls "$d/$pt.leaf.orig.lackey" >/dev/null 2>&1 || bad="$bad no-leaf-for-$pt"
done
check "each forked child's file ends in a syscall (execve) and continues as leaf${bad:+:$bad}" test -z "$bad"

# pingpong: the child starts right after the parent's fork syscall.
d=$work/pp
mkdir -p "$d"
$env0 "$step" --split "$d" --forks "$d.forks" -- "$wl/pingpong.orig" 30 >/dev/null 2>"$d.err"
rc=$?
mapfile -t pp < <(files "$d" '\.pingpong\.orig\.lackey$')
check "pingpong under --split: exit $rc, ${#pp[@]} files" test $rc = 0 -a ${#pp[@]} = 2
if [ ${#pp[@]} = 2 ]; then
	c1=$(first_addr "${pp[1]}")
	pa=$(grep '^I' "${pp[0]}" | grep -n "I  $c1," | head -1 | cut -d: -f1)
	if [ -n "$pa" ] && [ "$pa" -gt 1 ]; then
		sa=$(grep '^I' "${pp[0]}" | sed -n "$((pa - 1))p" | sed 's/^I *\([0-9a-f]*\),.*/\1/')
	else
		sa=
	fi
	check "pingpong: the server's first instruction ($c1) follows a syscall in the client's stream" \
		eval '[ -n "$sa" ] && is_syscall "$wl/pingpong.orig" "$sa"'
	check "pingpong: the server's file ends in its exit syscall" \
		is_syscall "$wl/pingpong.orig" "$(last_addr "${pp[1]}" 1)"
fi

# threads: one file per thread; deterministic workers.
wm=$(printf '%x' "0x$(ae_sym_addr "$wl/threads.orig" worker_main)")
wk=$(printf '%x' "0x$(ae_sym_addr "$wl/threads.orig" work)")
for r in 1 2; do
	d=$work/th$r
	mkdir -p "$d"
	$env0 "$step" --split "$d" --forks "$d.forks" -- "$wl/threads.orig" 60 >/dev/null 2>"$d.err"
	echo $? >"$d.rc"
done
mapfile -t th1 < <(files "$work/th1" '\.threads\.orig\.lackey$')
mapfile -t th2 < <(files "$work/th2" '\.threads\.orig\.lackey$')
check "threads under --split: exit $(cat "$work/th1.rc"), ${#th1[@]} files (main + 4 workers)" \
	test "$(cat "$work/th1.rc")" = 0 -a ${#th1[@]} = 5
bad=
for f in "${th1[@]:1}"; do
	[ "$(grep -c "^I  0*$wm," "$f")" = 1 ] || bad="$bad $(basename "$f")"
done
check "threads: each worker enters worker_main once${bad:+ (not:$bad)}" test -z "$bad" -a -n "$wm"
nw=$(cat "${th1[@]}" | grep -c "^I  0*$wk,")
check "threads: work() entered 8 times over all threads ($nw)" test "$nw" = 8
bad=
for k in 1 2 3 4; do
	cmp -s "${th1[$k]:-/x}" "${th2[$k]:-/y}" || bad="$bad $k"
done
check "threads: two runs give identical worker traces${bad:+ (differ:$bad)}" test -z "$bad"

echo "1..$i"
exit $failed
