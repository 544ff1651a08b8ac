#!/usr/bin/env bash
# lackey-same-run: invariant 8 against valgrind lackey on the very run that
# was traced. The instrumented program runs under lackey with
# AE_CAPTURE=FILE (instrument/runtime/capture.c: the witness bytes go to
# FILE at exit); `aetrace regen --original-only FILE PROG` must equal
# lackey's instruction trace of that run translated to PROG.orig's
# addresses (`aetrace map-lackey PROG`: instrumentation and runtime
# instructions dropped), from the first instruction to the last, nothing
# excluded. (Assembler padding nops, which are in neither the program's
# source nor its instrumented twin, are left out; the single-stepper
# comparisons include them.) This covers what comparing with lackey on
# prog.orig cannot: valgrind gives its client another stack, environment
# and heap, so the real programs (Lua's malloc, bzip2's getenv) take other
# paths there than natively.
# Programs with signal handlers are not run here: a raw capture has no
# signal markers (those need aerun or the tracing kernel).
# The programs come from `make tests-corpus-aecc`; AE_TEST_JOBS (default 2)
# of them run at once.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/oracle/corpus-lib.sh"
. "$top/tests/host/corpus-aecc.sh"
jobs=${AE_TEST_JOBS:-2}
# Each program writes its result lines to $work/NAME/res ("ok - ...",
# "not ok - ...", "# detail"); they are numbered at the end, in order.
ok() { echo "ok - $1" >>"$d/res"; }
not_ok() { echo "not ok - $1" >>"$d/res"; }
for t in bin/aecc bin/aetrace build/tests/ae-tracecmp; do
	if [ ! -x "$top/$t" ]; then
		echo "ok 1 - lackey-same-run # SKIP $t not built"
		exit 0
	fi
done
if ! command -v valgrind >/dev/null; then
	echo "ok 1 - lackey-same-run # SKIP valgrind missing"
	exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/lackey-same-run.XXXXXX")
trap 'rm -rf "$work"' EXIT
cmp=$top/build/tests/ae-tracecmp

# same_run NAME PROG ARGS...
same_run() {
	local name=$1 prog=$2 res
	d=$work/$1
	shift 2
	mkdir -p "$d"
	# (the program's exit status is its own: exit_nested exits 3)
	AE_CAPTURE=$d/cap "$top/tests/oracle/lackey.sh" -o "$d/lackey" -- "$prog" "$@" \
		> "$d/out" 2> "$d/err" < /dev/null
	if [ ! -s "$d/cap" ] || [ ! -s "$d/lackey" ]; then
		not_ok "$name: runs under lackey with AE_CAPTURE"
		sed 's/^/# /' "$d/err" | tail -5 >>"$d/res"
		return
	fi
	if ! "$top/bin/aetrace" regen --original-only "$d/cap" "$prog" > "$d/regen" 2> "$d/err"; then
		not_ok "$name: regenerated from the capture"
		sed 's/^/# /' "$d/err" | tail -5 >>"$d/res"
		return
	fi
	"$top/bin/aetrace" map-lackey "$prog" < "$d/lackey" > "$d/lackey.orig"
	if "$cmp" "$d/regen" "$d/lackey.orig" > "$d/cmp"; then
		res=$(sed -n 's/^identical: //p' "$d/cmp")
		ok "$name: regen = lackey, same run ($res)"
	else
		not_ok "$name: regen = lackey, same run"
		sed 's/^/# /' "$d/cmp" | head -30 >>"$d/res"
	fi
}

# one NAME: a corpus program, or lua or bzip2 (tests/real).
one() {
	local name=$1 args
	d=$work/$name
	mkdir -p "$d"
	case $name in
	lua)
		if [ -x "$top/build/real/lua/lua" ]; then
			same_run lua "$top/build/real/lua/lua" "$top/tests/real/queens.lua" 7 1
		else
			ok "lua # SKIP build/real/lua/lua not built (make real-programs)"
		fi ;;
	bzip2)
		if [ -x "$top/build/real/bzip2/bzip2" ]; then
			"$top/tests/real/gen-input.sh" 8192 > "$d/small"
			same_run bzip2 "$top/build/real/bzip2/bzip2" -1 -c "$d/small"
		else
			ok "bzip2 # SKIP build/real/bzip2/bzip2 not built (make real-programs)"
		fi ;;
	*)
		if ! ae_corpus_aecc "$name" "$d/$name.bin" "$top/bin/aecc"; then
			not_ok "$name: builds"
			return
		fi
		args=$(ae_corpus_args "$name")
		# big_witness: 40 rounds (9M instructions) keep lackey under 15 s.
		[ "$name" = big_witness ] && args=40
		# shellcheck disable=SC2086
		same_run "$name" "$d/$name.bin" $args ;;
	esac
}

names=
for src in "$top"/tests/corpus/*.c; do
	name=$(basename "$src" .c)
	case " $ae_async_progs $ae_signal_progs " in *" $name "*) continue ;; esac
	names="$names $name"
done
names="$names lua bzip2"
export -f one same_run ok not_ok ae_corpus_aecc ae_corpus_args
export top work cmp
# The longest (big_witness, lua) first so the two cores stay busy.
{ printf '%s\n' $names | grep -xE 'big_witness|lua'
  printf '%s\n' $names | grep -vxE 'big_witness|lua'; } |
	xargs -P "$jobs" -I{} bash -c 'one {}'

n=0
for name in $names; do
	[ -s "$work/$name/res" ] || echo "not ok - $name: no result" >"$work/$name/res"
	while IFS= read -r line; do
		case "$line" in
		"not ok - "*) n=$((n + 1)); echo "not ok $n - ${line#not ok - }" ;;
		"ok - "*) n=$((n + 1)); echo "ok $n - ${line#ok - }" ;;
		*) echo "$line" ;;
		esac
	done <"$work/$name/res"
done
echo "1..$n"
