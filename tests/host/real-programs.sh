#!/usr/bin/env bash
# Real programs on the tracing musl: the musl recipe's guarantees, Lua 5.4
# (n-queens), bzip2 and SQLite's shell (a query) built with aecc (or its
# stand-in), run natively
# against their twins, then traced with aerun and compared with valgrind
# lackey on the twin when the tracing tools exist. TAP output.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
musl=$top/build/musl
real=$top/build/real
tmp=$(mktemp -d "${TMPDIR:-/tmp}/real-programs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }

# --- the tracing musl ------------------------------------------------------
# Built by `make musl` (part of `make all`) with the compiler the Makefile
# chooses; rebuilding here with the script's default would switch build/musl.
if [ ! -e "$musl/.stamp" ] || [ ! -e "$musl/lib/libc.a" ]; then
	not_ok "musl is built (make musl)"
	echo "1..$n"
	exit 1
fi
ok "musl is built (make musl)"
check "no instruction in libc.a/crt*.o writes r15" \
	instrument/musl/check-r15.sh "$musl/lib/libc.a" "$musl"/lib/crt1.o \
	"$musl"/lib/crti.o "$musl"/lib/crtn.o

# The checker must catch what the unpatched longjmp does.
printf '\tmov 40(%%rdi),%%r15\n\tmov 48(%%rdi),%%rsp\n\tjmp *56(%%rdi)\n' > "$tmp/lj.s"
gcc -c "$tmp/lj.s" -o "$tmp/lj.o"
if instrument/musl/check-r15.sh "$tmp/lj.o" > "$tmp/lj.out" 2>&1; then
	not_ok "check-r15 catches the unpatched longjmp's r15 restore"
else
	check "check-r15 catches the unpatched longjmp's r15 restore" \
		grep -q 'mov.*0x28(%rdi),%r15' "$tmp/lj.out"
fi

# setjmp/longjmp leave r15 alone: tests/real/setjmp-r15.c (freestanding,
# linked with only libc.a's setjmp and longjmp members) points r15 into a
# buffer, setjmp, moves r15 forward by 4096, longjmp; r15 must keep the
# moved (live) value. Exit status 0 = live, 1 = restored.
mkdir -p "$tmp/sj"
if (cd "$tmp/sj" && ar x "$musl/lib/libc.a" $(ar t "$musl/lib/libc.a" | grep -E '^_?(setjmp|longjmp)\.l?o$')) &&
   gcc -O2 -ffixed-r15 -static -nostdlib -no-pie -o "$tmp/sj/sj" tests/real/setjmp-r15.c "$tmp"/sj/*.*o; then
	check "longjmp keeps the live r15 (not the one setjmp saw)" "$tmp/sj/sj"
else
	not_ok "longjmp keeps the live r15 (not the one setjmp saw)"
fi
# Without VDSO_USEFUL, musl has no vDSO lookup (__vdsosym) at all.
check "libc has no vDSO lookup (clock_gettime/time use the syscall)" \
	bash -c "nm '$musl/lib/libc.a' 2>/dev/null | grep -q ' T clock_gettime\$\| W clock_gettime\$' && ! nm '$musl/lib/libc.a' 2>/dev/null | grep -q __vdsosym"
# x86_64/memcpy.s defines __memcpy_fwd; the generic C memcpy does not.
check "string functions come from C, not x86_64 assembly" \
	bash -c "nm '$musl/lib/libc.a' 2>/dev/null | grep -q ' T memcpy\$' && ! nm '$musl/lib/libc.a' 2>/dev/null | grep -q __memcpy_fwd"

# --- Lua -------------------------------------------------------------------
lua_ok=0
if tests/real/lua.sh >&2 && [ -x "$real/lua/lua" ] && [ -x "$real/lua/lua.orig" ]; then
	ok "lua builds (lua and lua.orig)"
	lua_ok=1
else
	not_ok "lua builds (lua and lua.orig)"
fi
# r15 writers in the programs: none in the twins; in the instrumented
# binaries only sequence commits and the tracing runtime (ae_*, _ae_*).
r15_check() {
	local prog=$1
	check "$(basename "$prog").orig: no instruction writes r15" \
		instrument/musl/check-r15.sh "$prog.orig"
	check "$(basename "$prog"): only commits and the runtime write r15" \
		instrument/musl/check-r15.sh --allow-func '^<_?_?ae_' "$prog"
}
if [ $lua_ok = 1 ]; then
	r15_check "$real/lua/lua"
	# 8 queens has 92 solutions (a known value, computed independently).
	out=$("$real/lua/lua" tests/real/queens.lua 8 1)
	check "lua: queens(8) finds the 92 solutions" \
		grep -q '^queens(8) x 1 = 92 ' <<< "$out"
	a=$("$real/lua/lua" tests/real/queens.lua 10 1)
	b=$("$real/lua/lua.orig" tests/real/queens.lua 10 1)
	check "lua and lua.orig print the same" test -n "$a" -a "$a" = "$b"
	# pairs() order depends on the string hash seed; unneutralised it mixes
	# in a stack address (ASLR) and time(NULL), so runs would differ.
	order='local t = {} for i = 1, 200 do t["k" .. i] = i end
		local s = {} for k in pairs(t) do s[#s + 1] = k end print(table.concat(s, " "))'
	first=$("$real/lua/lua" -e "$order")
	same=1
	for i in 1 2 3 4 5; do
		[ "$("$real/lua/lua" -e "$order")" = "$first" ] || same=0
		[ "$("$real/lua/lua.orig" -e "$order")" = "$first" ] || same=0
	done
	check "lua: table order identical across runs and in lua.orig (fixed hash seed)" \
		test $same = 1 -a -n "$first"
else
	skip "lua runs" "lua did not build"
fi

# --- bzip2 -----------------------------------------------------------------
bz_ok=0
if tests/real/bzip2.sh >&2 && [ -x "$real/bzip2/bzip2" ] && [ -x "$real/bzip2/bzip2.orig" ]; then
	ok "bzip2 builds (bzip2 and bzip2.orig)"
	bz_ok=1
else
	not_ok "bzip2 builds (bzip2 and bzip2.orig)"
fi
if [ $bz_ok = 1 ]; then
	r15_check "$real/bzip2/bzip2"
	tests/real/gen-input.sh 2097152 > "$tmp/in"
	rc=0
	"$real/bzip2/bzip2" -c < "$tmp/in" > "$tmp/in.bz2" || rc=$?
	check "bzip2 compresses 2 MiB (exit status 0)" test $rc = 0
	"$real/bzip2/bzip2.orig" -c < "$tmp/in" > "$tmp/in.orig.bz2"
	check "bzip2 and bzip2.orig compress to the same bytes" \
		cmp -s "$tmp/in.bz2" "$tmp/in.orig.bz2"
	check "bzip2.orig output is smaller than its input" \
		test "$(stat -c %s "$tmp/in.orig.bz2")" -lt "$(stat -c %s "$tmp/in")"
	"$real/bzip2/bzip2" -dc < "$tmp/in.orig.bz2" > "$tmp/out"
	check "bzip2 -d restores the input" cmp -s "$tmp/in" "$tmp/out"
else
	skip "bzip2 runs" "bzip2 did not build"
fi

# --- sqlite3 ---------------------------------------------------------------
sq_ok=0
if tests/real/sqlite3.sh >&2 && [ -x "$real/sqlite3/sqlite3" ] && [ -x "$real/sqlite3/sqlite3.orig" ]; then
	ok "sqlite3 builds (sqlite3 and sqlite3.orig)"
	sq_ok=1
	r15_check "$real/sqlite3/sqlite3"
	a=$("$real/sqlite3/sqlite3" -init /dev/null :memory: ".read tests/real/query.sql")
	b=$("$real/sqlite3/sqlite3.orig" -init /dev/null :memory: ".read tests/real/query.sql")
	check "sqlite3 and sqlite3.orig answer the query alike (${#a} bytes)" \
		test -n "$a" -a "$a" = "$b"
else
	not_ok "sqlite3 builds (sqlite3 and sqlite3.orig)"
fi

# --- traced runs against the ptrace single-stepper -------------------------
# regen_vs_stepper NAME PROG ARGS...: trace PROG with aerun, regenerate its
# instruction trace, and compare it, instruction for instruction over the
# whole run, with build/tests/ae-step single-stepping PROG.orig. Both run
# from a directory of their own as ./NAME with the same arguments and a
# clean environment, so the twin sees exactly the traced program's stack
# (tests/oracle/README.md). valgrind lackey is not used here: it runs the
# program with another stack, environment and heap, and Lua (malloc) and
# bzip2 (getenv, strlen on argv) take data-dependent paths there; the
# corpus (tests/host/trace-exact.sh) is compared with lackey as well.
# Lua and bzip2 run at once (the stepper is the slow part, one core each);
# ae-step's results are cached (tests/host/step-cache.sh).
tools_missing=""
for t in bin/aerun bin/aetrace build/tests/ae-tracecmp build/tests/ae-step; do
	[ -x "$t" ] || tools_missing="$tools_missing $t"
done
# Programs built by the stand-in are not instrumented: nothing to trace.
[ -x bin/aecc ] || tools_missing="$tools_missing bin/aecc"
clean_env="env -i PATH=/usr/bin:/bin LC_ALL=C"
. "$top/tests/host/step-cache.sh"
# INPUT, when given, is copied beside both runs and named by its basename
# in ARGS. Result lines go to $tmp/trace-NAME/res, printed by print_res.
regen_vs_stepper() {
	local name=$1 prog=$2 d=$tmp/trace-$1 input=$3 keys=()
	shift 3
	mkdir -p "$d/i" "$d/o"
	cp "$prog" "$d/i/$name"
	cp "$prog.orig" "$d/i/$name.orig"
	cp "$prog.orig" "$d/o/$name"
	if [ -n "$input" ]; then
		cp "$input" "$d/i/" && cp "$input" "$d/o/"
		keys=(--key-file "$(basename "$input")")
	fi
	local r=$d/res
	if ! (cd "$d/i" && $clean_env "$top/bin/aerun" -q -o "$d/t.zst" -- "./$name" "$@" \
		> "$d/out1" < /dev/null); then
		echo "not ok - $name: aerun captures a trace" >>"$r"
		return
	fi
	echo "status 0" >>"$d/out1"
	echo "ok - $name: aerun captures a trace" >>"$r"
	if ! bin/aetrace regen --format=lackey "$d/t.zst" "$d/i/$name" > "$d/regen"; then
		echo "not ok - $name: regenerated trace equals the single-stepper's" >>"$r"
		return
	fi
	(cd "$d/o" && ae_step_cached "$d/step" "$d/out2" --clean-env ${keys[@]+"${keys[@]}"} \
		-- "./$name" "$@")
	if cmp -s "$d/out1" "$d/out2"; then
		echo "ok - $name: same output traced and single-stepped" >>"$r"
	else
		echo "not ok - $name: same output traced and single-stepped" >>"$r"
	fi
	if build/tests/ae-tracecmp "$d/regen" "$d/step" > "$d/cmp"; then
		echo "ok - $name: regenerated trace equals the single-stepper's ($(sed -n 's/^identical: //p' "$d/cmp"))" >>"$r"
	else
		echo "not ok - $name: regenerated trace equals the single-stepper's" >>"$r"
		sed 's/^/# /' "$d/cmp" | head -30 >>"$r"
	fi
}
# print_res NAME: regen_vs_stepper NAME's lines, numbered.
print_res() {
	local line
	[ -s "$tmp/trace-$1/res" ] || echo "not ok - $1: no result" >"$tmp/trace-$1/res"
	while IFS= read -r line; do
		case "$line" in
		"not ok - "*) not_ok "${line#not ok - }" ;;
		"ok - "*) ok "${line#ok - }" ;;
		*) echo "$line" ;;
		esac
	done <"$tmp/trace-$1/res"
}
if [ -n "$tools_missing" ]; then
	skip "lua queens traced = single-stepped" "missing:$tools_missing"
	skip "bzip2 traced = single-stepped" "missing:$tools_missing"
	skip "sqlite3 traced = single-stepped" "missing:$tools_missing"
else
	# ae-step runs ~30k instructions/s here: keep the problems small
	# (5 queens: ~0.95M instructions; bzip2 -1 of 1 KiB: ~1M).
	[ $lua_ok = 1 ] && regen_vs_stepper lua "$real/lua/lua" "$top/tests/real/queens.lua" \
		queens.lua 5 1 &
	if [ $bz_ok = 1 ]; then
		tests/real/gen-input.sh 1024 > "$tmp/small"
		regen_vs_stepper bzip2 "$real/bzip2/bzip2" "$tmp/small" -1 -c small &
	fi
	# (2.5M instructions; -init: no ~/.sqliterc)
	[ $sq_ok = 1 ] && regen_vs_stepper sqlite3 "$real/sqlite3/sqlite3" \
		"$top/tests/real/query.sql" -init /dev/null :memory: ".read query.sql" &
	wait
	[ $lua_ok = 1 ] && print_res lua
	[ $bz_ok = 1 ] && print_res bzip2
	[ $sq_ok = 1 ] && print_res sqlite3
fi
echo "1..$n"
