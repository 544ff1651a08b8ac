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
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/oracle/corpus-lib.sh"
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
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
	local name=$1 prog=$2 d=$work/$1 res
	shift 2
	mkdir -p "$d"
	# (the program's exit status is its own: exit_nested exits 3)
	AE_CAPTURE=$d/cap "$top/tests/oracle/lackey.sh" -o "$d/lackey" -- "$prog" "$@" \
		> "$d/out" 2> "$d/err" < /dev/null
	if [ ! -s "$d/cap" ] || [ ! -s "$d/lackey" ]; then
		not_ok "$name: runs under lackey with AE_CAPTURE"
		sed 's/^/# /' "$d/err" | tail -5
		return
	fi
	if ! "$top/bin/aetrace" regen --original-only "$d/cap" "$prog" > "$d/regen" 2> "$d/err"; then
		not_ok "$name: regenerated from the capture"
		sed 's/^/# /' "$d/err" | tail -5
		return
	fi
	"$top/bin/aetrace" map-lackey "$prog" < "$d/lackey" > "$d/lackey.orig"
	if "$cmp" "$d/regen" "$d/lackey.orig" > "$d/cmp"; then
		res=$(sed -n 's/^identical: //p' "$d/cmp")
		ok "$name: regen = lackey, same run ($res)"
	else
		not_ok "$name: regen = lackey, same run"
		sed 's/^/# /' "$d/cmp" | head -30
	fi
}

for src in "$top"/tests/corpus/*.c; do
	name=$(basename "$src" .c)
	case " $ae_async_progs signal_sync sigsetjmp_handler " in *" $name "*) continue ;; esac
	"$top/bin/aecc" -O2 -o "$work/$name.bin" "$src" 2> "$work/$name.cc" || {
		not_ok "$name: builds"; continue; }
	args=$(ae_corpus_args "$name")
	# big_witness: 40 rounds (9M instructions) keep lackey under 15 s.
	[ "$name" = big_witness ] && args=40
	# shellcheck disable=SC2086
	same_run "$name" "$work/$name.bin" $args
done
if [ -x "$top/build/real/lua/lua" ]; then
	same_run lua "$top/build/real/lua/lua" "$top/tests/real/queens.lua" 7 1
else
	ok "lua # SKIP build/real/lua/lua not built (make real-programs)"
fi
if [ -x "$top/build/real/bzip2/bzip2" ]; then
	"$top/tests/real/gen-input.sh" 8192 > "$work/small"
	same_run bzip2 "$top/build/real/bzip2/bzip2" -1 -c "$work/small"
else
	ok "bzip2 # SKIP build/real/bzip2/bzip2 not built (make real-programs)"
fi
echo "1..$n"
