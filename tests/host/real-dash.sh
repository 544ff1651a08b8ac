#!/usr/bin/env bash
# dash, a real program of many tasks: Debian's dash 0.5.12 built with aecc
# (tests/real/dash.sh; -fae-data too) runs tests/real/script.dash under
# aerun: pipelines and command substitutions fork, and the script ends in
# an exec chain into dash itself. Every task image that `aetrace regen
# --split` writes must equal the one the ptrace single-stepper writes for
# the twin (ae-step --split), instruction for instruction and, in the
# -fae-data build, every data address; the tasks are paired by their
# place in the fork tree (tests/oracle/fork-labels.py).
#
# The two runs are made alike as the oracle needs (tests/oracle/README.md):
# the same argv and environment, directories of the same length, and each
# as pid 1 of a pid namespace of its own (dash formats its parent's pid at
# start-up: the number of digits would change the instructions). dash
# catches SIGCHLD, which comes when a child ends, at whatever instruction
# the parent is at then: its handler (onsig) and musl's signal return are
# left out of both traces (--skip-range), the rest of each task's run does
# not depend on that timing (tests/real/script.dash says how). TAP output.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
. "$top/tests/oracle/corpus-lib.sh"
. "$top/tests/host/step-cache.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/real-dash.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
clean_env="env -i PATH=/usr/bin:/bin LC_ALL=C"
script=$top/tests/real/script.dash

missing=
for t in bin/aecc bin/aerun bin/aetrace bin/schedlog build/tests/ae-step build/tests/ae-tracecmp; do
	[ -x "$t" ] || missing="$missing $t"
done
if [ -n "$missing" ]; then
	skip "dash: every task = the stepper's" "missing:$missing"
	echo "1..$n"
	exit 0
fi
if ! ae_pidns_works; then
	skip "dash: every task = the stepper's" "no pid namespace here (${ae_pidns[*]} failed; needs root)"
	echo "1..$n"
	exit 0
fi

# Timing: where SIGCHLD lands (its handler, onsig, and musl's signal
# return), and how the shell waits for its children. Which of two
# children ends first, and whether one has ended when the shell first
# asks, depend on the scheduler: the wait loops (waitforjob, dowait,
# waitone) and what they call (wait4, sigsuspend, the signal masks, errno)
# run a different number of times, in another order. Everything else in
# each task must be the same.
dash_async_syms="onsig __restore_rt waitforjob dowait waitone wait3 wait4 sigsuspend
	sigblockall sigfillset sigemptyset sigprocmask pthread_sigmask __syscall_cp sccp
	__syscall_ret __errno_location"

# whole NAME DIR [data]: dash of build DIR runs the script traced and
# single-stepped; one result line per task image.
whole() {
	local name=$1 dir=$2 data=${3:-} d=$tmp/$1 f tid img label st skips s r cmp sflags=() nimg=0 nsig=0
	mkdir -p "$d/i" "$d/o" "$d/rg"
	cp "$dir/dash" "$dir/dash.orig" "$script" "$d/i/"
	cp "$dir/dash.orig" "$d/o/dash"
	cp "$script" "$d/o/"
	cmp=("$top/build/tests/ae-tracecmp")
	if [ -n "$data" ]; then
		cmp=(python3 "$top/tests/oracle/datacmp.py")
		sflags=(--data)
	fi
	# shellcheck disable=SC2086
	if ! (cd "$d/i" && "${ae_pidns[@]}" $clean_env "$top/bin/aerun" -q -o "$d/t.zst" -- \
		./dash script.dash >"$d/out" 2>"$d/err" </dev/null); then
		not_ok "$name: aerun captures the script's run: $(head -2 "$d/err")"
		return
	fi
	echo "status 0" >>"$d/out"
	if ! bin/aetrace regen --split "$d/rg" "$d/t.zst" "$d/i/dash" 2>"$d/err" || [ -s "$d/err" ]; then
		not_ok "$name: every task regenerates: $(head -2 "$d/err")"
		return
	fi
	if ! (cd "$d/o" && ae_step_cached "$d/st" "$d/out.step" --clean-env --pidns ${sflags[@]+"${sflags[@]}"} \
		--split --key-file script.dash -- ./dash script.dash); then
		not_ok "$name: the stepper runs the twin: $(head -2 "$d/out.step.err")"
		return
	fi
	if cmp -s "$d/out" "$d/out.step" && grep -q '^last$' "$d/out"; then
		ok "$name: the same output traced and single-stepped ($(wc -l <"$d/out") lines)"
	else
		not_ok "$name: the same output traced and single-stepped"
		diff "$d/out" "$d/out.step" | head -5 | sed 's/^/# /'
	fi
	ae_capture_forks "$top/bin/schedlog" "$d/t.zst" >"$d/forks"
	python3 tests/oracle/fork-labels.py --label-first "$d/forks" >"$d/labels"
	python3 tests/oracle/fork-labels.py --label-first "$d/st.forks" >"$d/st.labels"
	skips=
	for s in $dash_async_syms; do
		r=$(ae_sym_range "$d/o/dash" "$s")
		[ -n "$r" ] || { not_ok "$name: the twin has the symbol $s"; return; }
		skips="$skips --skip-range $r"
	done
	for f in "$d/rg/"*.lackey; do
		tid=$(basename "$f" | cut -d. -f2)
		img=$(basename "$f" | cut -d. -f3-)	# dash[.K].lackey
		label=$(awk -v t="$tid" '($2 "") == t { print $1 }' "$d/labels")
		[ -n "$label" ] || label=0	# no fork at all: the root
		st=$(awk -v l="$label" '($1 "") == l { print $2 }' "$d/st.labels")
		[ -n "$st" ] || st=$(ls "$d/st" | head -1 | cut -d. -f2)
		nimg=$((nimg + 1))
		r=$(ae_count_in_range "$d/st/"*".$st.$img" "$(ae_sym_range "$d/o/dash" __restore_rt)")
		[ "${r:-0}" -gt 0 ] && nsig=$((nsig + 1))
		# shellcheck disable=SC2086
		if "${cmp[@]}" $skips "$f" "$d/st/"*".$st.$img" >"$d/cmp" 2>&1; then
			# (datacmp's first line: "A FILE: I=.. L=.. S=.. M=..")
			ok "$name: task $label, $img = stepper ($(head -1 "$d/cmp" | sed 's/^A [^ ]*: //'))"
		else
			not_ok "$name: task $label, $img differs from the stepper"
			sed 's/^/# /' "$d/cmp" | head -14
		fi
	done
	if [ "$nimg" -ge 8 ] && [ "$nimg" = "$(ls "$d/st" | wc -l)" ]; then
		ok "$name: $nimg task images, as many as the stepper's"
	else
		not_ok "$name: $nimg task images regenerated, the stepper has $(ls "$d/st" | wc -l)"
	fi
	# the exec chain: three images of dash under the root's pid
	if [ "$(ls "$d/rg" | grep -cE '^[0-9]+\.[0-9]+\.dash\.[23]\.lackey$')" = 2 ]; then
		ok "$name: the exec chain's images have files of their own (dash.2, dash.3)"
	else
		not_ok "$name: the exec chain's images have files of their own: $(ls "$d/rg" | tr '\n' ' ')"
	fi
	echo "# $name: $nsig of the stepper's task images return from a SIGCHLD handler"
}

if tests/real/dash.sh >&2 && [ -x build/real/dash/dash ]; then
	whole dash build/real/dash
else
	not_ok "dash builds with aecc (tests/real/dash.sh)"
fi
if p=$(tests/real/data-build.sh dash) && [ -x "$p" ]; then
	whole dash-data "$(dirname "$p")" data
else
	not_ok "dash builds with aecc -fae-data (tests/real/data-build.sh dash)"
fi
echo "1..$n"
