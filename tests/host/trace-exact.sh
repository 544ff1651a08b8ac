#!/usr/bin/env bash
# trace-exact: invariant 8 (regeneration is exact) on the test corpus.
# For every program in tests/corpus/:
#   bin/aecc -O2 -o D/i/p prog.c          (D/i/p traced, D/i/p.orig twin)
#   cp D/i/p.orig D/o/p
#   cd D/i && bin/aerun -o D/t.zst -- ./p args   (the twin runs as ./p in
#                                         D/o: same stack and auxv)
#   bin/aetrace regen --format=lackey D/t.zst D/i/p > D/regen
# and D/regen must equal
#   - ae-step -- ./p args in D/o over the whole run (from the entry point), and
#   - lackey on ./p in D/o from the first instruction of __init_tls on
#     (tests/oracle/README.md), for the programs too slow for ae-step
#     (AE_TRACE_EXACT_LACKEY=all: for every program lackey runs exactly).
# The programs come from `make tests-corpus-aecc` (tests/host/corpus-aecc.sh)
# and ae-step's results are cached (tests/host/step-cache.sh). Lackey is
# not run where ae-step runs: that the two oracles agree is proven by
# oracle-agree.sh, and regen = lackey on the very traced run by
# lackey-same-run.sh.
# signal_async: on_alarm, wait_for_alarm and __restore_rt (address ranges
# from nm -S on the twin) are removed from both sides; a separate test
# checks that D/regen does contain on_alarm executions.
# big_witness is compared with lackey only (ae-step runs ~30k
# instructions/s in this VM) and runs with a count of 40 (9M instructions,
# AE_BIG_WITNESS_ARGS=1000 for the full ~200M) and aerun --subbuf-size 64K.
# Env: AE_TEST_JOBS (default 2) parallel programs, AE_TRACE_EXACT_ONLY="a b",
# AE_BIN (default bin/) where aecc, aerun and aetrace are.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/oracle/corpus-lib.sh"
. "$top/tests/host/corpus-aecc.sh"
. "$top/tests/host/step-cache.sh"
bt=$top/build/tests
step=$bt/ae-step cmp=$bt/ae-tracecmp
bin=${AE_BIN:-$top/bin}
aecc=$bin/aecc aerun=$bin/aerun aetrace=$bin/aetrace
jobs=${AE_TEST_JOBS:-2}

for t in "$aecc" "$aerun" "$aetrace"; do
	if [ ! -x "$t" ]; then
		echo "ok 1 - trace-exact # SKIP $(basename "$t") not built yet"
		exit 0
	fi
done
if [ ! -x "$step" ] || [ ! -x "$cmp" ] || ! command -v valgrind >/dev/null; then
	echo "ok 1 - trace-exact # SKIP oracles not built or valgrind missing"
	exit 0
fi
# The traced program and the twin must see byte-identical environments (the
# stack layout, hence alignment-dependent paths in libc, depends on them):
# bash would add "_=<tool path>" and the exported functions below.
clean_env="env -i PATH=/usr/bin:/bin LC_ALL=C"
# The lackey-only list: too slow for ae-step.
lackey_only="big_witness"

work=$(mktemp -d "${TMPDIR:-/tmp}/trace-exact.XXXXXX")
trap 'rm -rf "$work"' EXIT

# compare_to LABEL ORACLE-TRACE FROM: appends a result line to $d/res.
compare_to() {
	local label=$1 oracle=$2 from=$3 n fromopt=
	[ -n "$from" ] && fromopt="--from $from"
	# shellcheck disable=SC2086
	if "$cmp" $skips $fromopt "$d/regen" "$oracle" >"$d/cmp.$label"; then
		n=$(sed -n 's/^identical: \([0-9]*\).*/\1/p' "$d/cmp.$label")
		echo "ok - $name: regen = $label${from:+ from $ae_lackey_from_sym} ($n instructions)" >>"$d/res"
	else
		echo "not ok - $name: regen differs from $label" >>"$d/res"
		sed 's/^/# /' "$d/cmp.$label" | head -30 >>"$d/res"
	fi
}

# one NAME: all results of NAME into $work/NAME/res.
one() {
	local name=$1 src=$top/tests/corpus/$1.c args from r n
	d=$work/$name
	mkdir -p "$d/i" "$d/o"
	: >"$d/res"
	args=$(ae_corpus_args "$name") aerun_opts=
	if [ "$name" = big_witness ]; then
		# Lackey runs ~0.9M instructions/s: the ARGS count (200M
		# instructions) takes ~4 min and ~5 GB of log; 40 takes 10 s.
		# Small sub-buffers keep the buffer filling many times.
		args=${AE_BIG_WITNESS_ARGS:-40}
		aerun_opts="--subbuf-size 64K"
	fi
	if ! ae_corpus_aecc "$name" "$d/i/p" "$aecc"; then
		{ echo "not ok - $name: aecc failed"; sed 's/^/# /' "$d/i/p.log" | head -20; } >>"$d/res"
		return
	fi
	cp "$d/i/p.orig" "$d/o/p"
	# shellcheck disable=SC2086
	(cd "$d/i" && $clean_env "$aerun" $aerun_opts -o "$d/t.zst" -- ./p $args \
		>"$d/out.aerun" 2>"$d/err.aerun")
	echo "status $?" >>"$d/out.aerun"
	if [ ! -s "$d/t.zst" ]; then
		{ echo "not ok - $name: aerun wrote no trace"; sed 's/^/# /' "$d/err.aerun" | head -20; } >>"$d/res"
		return
	fi
	if ! "$aetrace" regen --format=lackey "$d/t.zst" "$d/i/p" >"$d/regen" 2>"$d/err.regen"; then
		{ echo "not ok - $name: aetrace regen failed"; sed 's/^/# /' "$d/err.regen" | head -20; } >>"$d/res"
		return
	fi
	skips=$(ae_skip_opts "$d/o/p" "$name") || skips=BAD
	if [ "$skips" = BAD ]; then
		echo "not ok - $name: skip symbols missing in the twin" >>"$d/res"
		return
	fi
	case " $lackey_only " in
	*" $name "*) ;;
	*)	# shellcheck disable=SC2086
		(cd "$d/o" && ae_step_cached "$d/step" "$d/out.twin" --clean-env -- ./p $args)
		compare_to ae-step "$d/step" "" ;;
	esac
	if ae_lackey_ok "$name" && { [ ! -f "$d/out.twin" ] ||
	   [ "${AE_TRACE_EXACT_LACKEY:-}" = all ]; }; then
		from=$(ae_sym_addr "$d/o/p" "$ae_lackey_from_sym")
		# shellcheck disable=SC2086
		(cd "$d/o" && $clean_env "$top/tests/oracle/lackey.sh" -o "$d/lackey" -- ./p $args \
			>"$d/out.lackey" 2>"$d/err.lackey")
		echo "status $?" >>"$d/out.lackey"
		[ -f "$d/out.twin" ] || cp "$d/out.lackey" "$d/out.twin"
		if [ -z "$from" ]; then
			echo "not ok - $name: no $ae_lackey_from_sym in the twin" >>"$d/res"
		else
			compare_to lackey "$d/lackey" "$from"
		fi
	fi
	# The traced program behaves like its twin (same output, same status).
	if [ ! -f "$d/out.twin" ]; then
		:
	elif cmp -s "$d/out.aerun" "$d/out.twin"; then
		echo "ok - $name: traced run and twin agree ($(tail -1 "$d/out.twin"))" >>"$d/res"
	else
		{ echo "not ok - $name: traced run and twin differ in output or status"
		  diff "$d/out.aerun" "$d/out.twin" | head -10 | sed 's/^/# /'; } >>"$d/res"
	fi
	if [ -n "$skips" ]; then
		r=$(ae_sym_range "$d/o/p" on_alarm)
		n=$(ae_count_in_range "$d/regen" "$r")
		if [ "$n" -gt 0 ]; then
			echo "ok - $name: regen contains $n handler instructions" >>"$d/res"
		else
			echo "not ok - $name: regen contains no on_alarm execution" >>"$d/res"
		fi
	fi
	rm -f "$d/step" "$d/lackey" "$d/t.zst"
}

names=${AE_TRACE_EXACT_ONLY:-$(cd "$top/tests/corpus" && ls *.c | sed 's/\.c$//')}
export -f one compare_to ae_corpus_aecc ae_step_cached ae_step_prog_hash ae_lackey_ok ae_corpus_args ae_sym_addr ae_sym_range \
	ae_skip_opts ae_count_in_range
export ae_step_cache_dir ae_step_clean_env ae_step_cache_max clean_env top bt step cmp aecc aerun aetrace work lackey_only ae_lackey_from_sym \
	ae_lackey_inexact ae_async_progs ae_async_syms
# The longest (big_witness) first so the two cores stay busy.
{ printf '%s\n' $names | grep -x big_witness
  printf '%s\n' $names | grep -vx big_witness; } |
	xargs -P "$jobs" -I{} bash -c 'one {}'

i=0 failed=0
for name in $names; do
	[ -s "$work/$name/res" ] || echo "not ok - $name: no result" >"$work/$name/res"
	while IFS= read -r line; do
		case "$line" in
		"not ok - "*) i=$((i + 1)); failed=1; echo "not ok $i - ${line#not ok - }" ;;
		"ok - "*) i=$((i + 1)); echo "ok $i - ${line#ok - }" ;;
		*) echo "$line" ;;
		esac
	done <"$work/$name/res"
done
exit $failed
