#!/usr/bin/env bash
# step-cache-test: tests/host/step-cache.sh returns what a fresh ae-step run
# returns, reuses an entry only for the same stepper, program bytes, argv,
# environment and input files, and never keeps a failed run. TAP output.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
step=$top/build/tests/ae-step
if [ ! -x "$step" ] || ! command -v musl-gcc >/dev/null; then
	echo "ok 1 - step-cache # SKIP ae-step not built or musl-gcc missing"
	exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/step-cache.XXXXXX")
trap 'rm -rf "$work"' EXIT
export AE_STEP_CACHE_DIR=$work/cache
. "$top/tests/host/step-cache.sh"
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }
entries() { find "$AE_STEP_CACHE_DIR" -mindepth 1 -maxdepth 1 -name '[0-9a-f]*' 2>/dev/null | wc -l; }

cd "$work"
printf '#include <stdio.h>\nint main(int c, char **v) { puts(c > 1 ? v[1] : "none"); return c; }\n' >p.c
if ! musl-gcc -static -O2 -o p p.c; then
	echo "not ok 1 - cannot build the test program"
	exit 1
fi
echo input-1 >in

AE_STEP_CACHE=0 ae_step_cached fresh.t fresh.o --clean-env -- ./p a
ae_step_cached t1 t1.o --clean-env -- ./p a
check "first run: one entry, same trace and output as an uncached run" \
	test "$(entries)" = 1 -a -s t1 -a "$(grep -c '^I' t1)" -gt 100
check "... byte for byte" cmp -s t1 fresh.t
check "... output and status kept (status 2)" bash -c 'cmp -s t1.o fresh.o && tail -1 t1.o | grep -qx "status 2"'
# A marked entry shows whether the next call read the cache.
c=$(find "$AE_STEP_CACHE_DIR" -mindepth 1 -maxdepth 1 -name '[0-9a-f]*')
echo "I  cafe,1" >>"$c/trace"
ae_step_cached t2 t2.o --clean-env -- ./p a
check "same call again: answered from the cache, no new entry" \
	test "$(entries)" = 1 -a "$(tail -1 t2)" = "I  cafe,1"
ae_step_cached t3 t3.o --clean-env -- ./p b
check "other argv: a new entry" test "$(entries)" = 2 -a "$(tail -1 t3)" != "I  cafe,1"
X=1 ae_step_cached t4 t4.o -- ./p a
X=2 ae_step_cached t5 t5.o -- ./p a
check "other environment: a new entry each" test "$(entries)" = 4
cp p p.keep && sed -i 's/none/nonf/' p
ae_step_cached t6 t6.o --clean-env -- ./p a
check "other program bytes, same path: a new entry" test "$(entries)" = 5 -a "$(tail -1 t6)" != "I  cafe,1"
# symbols name the clone's paths and change nothing that runs: a program
# that differs only there is answered from the same entry
strip -s -o p p.keep
ae_step_cached t6s t6s.o --clean-env -- ./p a
check "same program without its symbols: answered from the cache" \
	test "$(entries)" = 5 -a "$(tail -1 t6s)" = "I  cafe,1"
cp p.keep p
ae_step_cached t7 t7.o --clean-env --key-file in -- ./p a
echo input-2 >in
ae_step_cached t8 t8.o --clean-env --key-file in -- ./p a
check "other input file contents: a new entry" test "$(entries)" = 7
# --split: a directory of per-task traces and the forks file round-trip
ae_step_cached s1 s1.o --clean-env --split -- ./p a
ae_step_cached s2 s2.o --clean-env --split -- ./p a
split_same() {
	test "$(entries)" = 8 -a -n "$(ls s2)" -a -f s2.forks -a "$(tail -1 s2.o)" = "status 2" &&
		diff -r s1 s2 >/dev/null && cmp -s s1.forks s2.forks
}
check "--split: one new entry, the second call restores the same traces and forks file" split_same
ae_step_cached t9 t9.o --clean-env -- ./nonexistent
rc=$?
check "a run the stepper cannot make: returns 1, nothing kept" test $rc = 1 -a "$(entries)" = 8
ae_step_cache_max=2
sleep 1	# mtime granularity: the hit below is the most recent use
ae_step_cached t10 t10.o --clean-env -- ./p a
sleep 1
ae_step_cached t11 t11.o --clean-env -- ./p c
check "bounded: beyond ae_step_cache_max entries the least recently used go" \
	test "$(entries)" = 2 -a -d "$c"
check "no half-written entries left" test -z "$(find "$AE_STEP_CACHE_DIR" -name '.new.*')"
echo "1..$n"
exit $failed
