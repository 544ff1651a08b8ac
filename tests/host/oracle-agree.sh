#!/usr/bin/env bash
# oracle-agree: the two independent oracles must agree on every corpus
# program built with musl-gcc -static -O2: the ptrace stepper (ae-step) and
# valgrind lackey (tests/oracle/lackey.sh) give identical instruction
# streams from the documented window on (tests/oracle/README.md), and the
# window is small. Also checks that ae-tracecmp does detect a divergence.
# ae-step's results are cached (tests/host/step-cache.sh); both oracles
# run in the same clean environment (the cache's key).
# Needs: make tests-oracles tests-corpus (done by `make all` with musl-gcc).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/oracle/corpus-lib.sh"
. "$top/tests/host/step-cache.sh"
bt=$top/build/tests
step=$bt/ae-step cmp=$bt/ae-tracecmp
jobs=${AE_TEST_JOBS:-2}

if [ ! -x "$step" ] || [ ! -x "$cmp" ] || ! command -v valgrind >/dev/null ||
   [ ! -d "$bt/corpus/musl" ]; then
	echo "ok 1 - oracle-agree # SKIP oracles/corpus not built or valgrind missing"
	exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/oracle-agree.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The stepper runs ~30k instructions/s here (single-step traps are slow in
# this VM), so big_witness runs with a small count in this suite.
oracle_args() {
	case "$1" in
	big_witness) echo 2 ;;
	*) ae_corpus_args "$1" ;;
	esac
}

# one NAME: writes $work/NAME.res = "ok|not ok" line text, plus details.
one() {
	local name=$1 prog=$bt/corpus/musl/$1 d=$work/$1 args from skips res
	local n_step n_win rc_s rc_l
	mkdir -p "$d"
	if ! ae_lackey_ok "$name"; then
		echo "ok - $name # SKIP lackey is not exact for it (tests/oracle/README.md)" >"$d/res"
		return
	fi
	args=$(oracle_args "$name")
	# shellcheck disable=SC2086
	# run as ./NAME: argv[0] (on the stack) must not hold the clone's path,
	# or the stepper's cache would miss in every new clone
	(cd "$bt/corpus/musl" && ae_step_cached "$d/step" "$d/out.step" --clean-env -- "./$name" $args)
	rc_s=$(sed -n '$s/^status //p' "$d/out.step")
	sed -i '$d' "$d/out.step"
	# shellcheck disable=SC2086
	(cd "$bt/corpus/musl" && env -i $ae_step_clean_env "$top/tests/oracle/lackey.sh" -o "$d/lackey" -- "./$name" $args \
		>"$d/out.lackey" 2>"$d/err.lackey")
	rc_l=$?
	from=$(ae_sym_addr "$prog" "$ae_lackey_from_sym")
	skips=$(ae_skip_opts "$prog" "$name") || skips=BAD
	n_step=$(grep -c '^I' "$d/step")
	if [ "$rc_s" -ne "$rc_l" ] || ! cmp -s "$d/out.step" "$d/out.lackey"; then
		res="not ok - $name: exit/output differ (stepper $rc_s, lackey $rc_l)"
	elif [ -z "$from" ] || [ "$skips" = BAD ]; then
		res="not ok - $name: window start or skip symbols missing"
	# shellcheck disable=SC2086
	elif "$cmp" $skips --from "$from" "$d/step" "$d/lackey" >"$d/cmp"; then
		n_win=$(sed -n 's/^identical: \([0-9]*\).*/\1/p' "$d/cmp")
		if [ $((n_win * 100)) -lt $((n_step * 90)) ] && [ -z "$skips" ]; then
			res="not ok - $name: window too large ($n_win of $n_step compared)"
		else
			res="ok - $name: stepper $n_step instructions, $n_win identical with lackey from $ae_lackey_from_sym"
		fi
	else
		res="not ok - $name: oracles diverge"
		sed 's/^/# /' "$d/cmp" | head -30 >"$d/detail"
	fi
	echo "$res" >"$d/res"
}

names=$(cd "$bt/corpus/musl" && ls)
export -f one ae_step_cached ae_step_prog_hash oracle_args ae_lackey_ok ae_corpus_args ae_sym_addr ae_sym_range ae_skip_opts
export ae_step_cache_dir ae_step_clean_env ae_step_cache_max top bt step cmp work ae_lackey_from_sym ae_lackey_inexact ae_async_progs ae_async_syms
printf '%s\n' $names | xargs -P "$jobs" -I{} bash -c 'one {}'

i=0 failed=0
for name in $names; do
	i=$((i + 1))
	r=$(cat "$work/$name/res" 2>/dev/null || echo "not ok - $name: no result")
	case "$r" in not*) failed=1 ;; esac
	echo "${r/ok -/ok $i -}"
	[ -f "$work/$name/detail" ] && cat "$work/$name/detail"
done

# Every corpus program, built by gcc -O2 and musl-gcc -static -O2, prints the
# same output and exit status twice, and both builds agree.
i=$((i + 1))
bad=
for name in $names; do
	args=$(ae_corpus_args "$name")
	ref=
	for prog in "$bt/corpus/gcc/$name" "$bt/corpus/musl/$name" "$bt/corpus/musl/$name"; do
		# shellcheck disable=SC2086
		out=$("$prog" $args 2>&1; echo "status $?")
		[ -n "$ref" ] || ref=$out
		[ "$out" = "$ref" ] || bad="$bad $name"
	done
done
if [ -z "$bad" ] && [ -d "$bt/corpus/gcc" ]; then
	echo "ok $i - corpus deterministic: $(echo $names | wc -w) programs, gcc and musl builds agree"
else
	echo "not ok $i - corpus output differs between runs/builds:${bad:- gcc build missing}"
	failed=1
fi

# The comparison can fail: two different runs must be reported as diverging.
i=$((i + 1))
d=$work/neg
mkdir -p "$d"
(cd "$bt/corpus/musl" && ae_step_cached "$d/a" "$d/a.out" --clean-env -- ./big_witness 1 &&
 ae_step_cached "$d/b" "$d/b.out" --clean-env -- ./big_witness 2)
if "$cmp" "$d/a" "$d/b" >"$d/cmp"; then
	echo "not ok $i - ae-tracecmp reports different runs as identical"
	failed=1
elif grep -q '^diverge at instruction' "$d/cmp"; then
	echo "ok $i - ae-tracecmp detects a divergence ($(head -1 "$d/cmp"))"
else
	echo "not ok $i - ae-tracecmp failed: $(head -3 "$d/cmp")"
	failed=1
fi
# Around a skipped handler, an instruction right before the cut and again
# right after it counts once (valgrind reports the one a signal cut twice);
# a different instruction there is still a divergence.
i=$((i + 1))
printf 'I  00401000,2\nI  00401002,3\nI  00402000,1\nI  00401005,2\n' >"$work/cut.a"
printf 'I  00401000,2\nI  00401002,3\nI  00402000,1\nI  00402001,1\nI  00401002,3\nI  00401005,2\n' >"$work/cut.b"
printf 'I  00401000,2\nI  00401002,3\nI  00402000,1\nI  00401000,2\nI  00401005,2\n' >"$work/cut.c"
if "$cmp" --skip-range 402000-402010 "$work/cut.a" "$work/cut.b" >/dev/null &&
   ! "$cmp" "$work/cut.a" "$work/cut.b" >/dev/null &&
   ! "$cmp" --skip-range 402000-402010 "$work/cut.a" "$work/cut.c" >/dev/null; then
	echo "ok $i - ae-tracecmp: an instruction repeated across a skipped range counts once, another one diverges"
else
	echo "not ok $i - ae-tracecmp around a skipped range"
	failed=1
fi
# ae-step follows one thread: a fork must stop it with an error (status 125).
i=$((i + 1))
printf '#include <unistd.h>\n#include <sys/wait.h>\nint main(void){if(!fork())_exit(0);wait(0);return 0;}\n' >"$work/fork.c"
if ! musl-gcc -static -O2 -o "$work/fork" "$work/fork.c"; then
	echo "not ok $i - cannot build the fork test program"
	failed=1
else
	"$step" -o /dev/null -- "$work/fork" 2>"$work/fork.err"
	rc=$?
	if [ "$rc" -eq 125 ] && grep -q 'forked/cloned' "$work/fork.err"; then
		echo "ok $i - ae-step reports fork as an error"
	else
		echo "not ok $i - ae-step on a forking program: status $rc, $(head -1 "$work/fork.err")"
		failed=1
	fi
fi
exit $failed
