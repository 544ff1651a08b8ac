#!/usr/bin/env bash
# aerun standalone capture: overflow across many sub-buffers loses or
# duplicates no byte, exit status propagation, --discard, the runtime's
# discard mode, and an untraced-identical process start (stack, fds).
. "$(dirname "$0")/aerun-lib.sh"
need_tools

# Many overflows: 2 x 4 KiB sub-buffers, the tracee waits for the writer.
check "tiny sub-buffers (2 x 4K): 20000 blocks exact" sh -c \
	"'$AERUN' -q -o '$tmp/a.zst' --subbuf-size 4K --subbufs 2 '$PROD' 20000 && \
	 '$CHECK' --blocks 20000 --status 0 '$tmp/a.zst'"
check "64K x 3 sub-buffers: 300000 blocks exact" sh -c \
	"'$AERUN' -q -o '$tmp/b.zst' --subbuf-size 64K --subbufs 3 '$PROD' 300000 && \
	 '$CHECK' --blocks 300000 --status 0 '$tmp/b.zst'"
check "default geometry, zstd -l 9: 100000 blocks exact" sh -c \
	"'$AERUN' -q -l 9 -o '$tmp/c.zst' '$PROD' 100000 && \
	 '$CHECK' --blocks 100000 --status 0 '$tmp/c.zst'"

# Exit status: aerun's own and the EXIT chunk's.
"$AERUN" -q -o "$tmp/d.zst" --subbuf-size 16K "$PROD" 5000 7; rc=$?
if [ $rc -eq 7 ] && "$CHECK" --blocks 5000 --status $((7 << 8)) "$tmp/d.zst" >"$tmp/out" 2>&1; then
	ok "exit status 7 propagated (aerun and EXIT chunk)"
else
	not_ok "exit status 7 propagated (aerun and EXIT chunk)" "rc=$rc" "$(cat "$tmp/out")"
fi
"$AERUN" -q -o "$tmp/e.zst" --subbuf-size 16K "$PROD" 5000 143; rc=$?
if [ $rc -eq 143 ] && "$CHECK" --blocks 5000 --status 15 "$tmp/e.zst" >"$tmp/out" 2>&1; then
	ok "death by SIGTERM gives 128+15 and a complete trace"
else
	not_ok "death by SIGTERM gives 128+15 and a complete trace" "rc=$rc" "$(cat "$tmp/out")"
fi

# --discard: the dummy run writes nothing and still counts every byte.
(cd "$tmp" && "$AERUN" --discard --subbuf-size 8K "$PROD" 10000 3 2>"$tmp/disc.err"); rc=$?
# the blocks and the runtime's registration record (32 bytes, the path)
bytes=$((10000 * 128 + 32 + (${#PROD} + 8) / 8 * 8))
if [ $rc -eq 3 ] && grep -q "exit 3, $bytes witness bytes in [0-9]* sub-buffers (discarded)" "$tmp/disc.err" &&
   [ -z "$(ls "$tmp" | grep zst | grep -v '^[a-e].zst$')" ]; then
	ok "--discard counts $bytes bytes, writes no file, keeps the status"
else
	not_ok "--discard counts $bytes bytes, writes no file, keeps the status" "rc=$rc" "$(cat "$tmp/disc.err")" "$(ls "$tmp")"
fi

# Runtime mode 3 (no kernel, no aerun): private buffer wrapping on overflow.
"$PROD" 50000 9 2>"$tmp/rt.err"; rc=$?
if [ $rc -eq 9 ] && [ "$(grep -c 'witnesses are discarded' "$tmp/rt.err")" = 1 ]; then
	ok "runtime discard mode: 6.4 MB through a 1 MiB buffer, one note, status kept"
else
	not_ok "runtime discard mode: 6.4 MB through a 1 MiB buffer, one note, status kept" "rc=$rc" "$(cat "$tmp/rt.err")"
fi

# A real fault in discard mode kills the program with SIGSEGV, as in the
# twin: the runtime keeps its guard-page handler installed (its seccomp
# filter turns the reset into a no-op), so it must not return into the
# fault forever.
printf 'int main(int c, char **v) { (void)v; return *(volatile int *)(long)(c * 8); }\n' >"$tmp/segv.c"
if "$top/bin/aecc" -O2 -o "$tmp/segv" "$tmp/segv.c" 2>"$tmp/segv.err"; then
	# (in $(): the shell's own "Segmentation fault" line goes nowhere)
	rc=$(timeout 20 "$tmp/segv" 2>>"$tmp/segv.err"; echo $?) 2>/dev/null
	rc_twin=$("$tmp/segv.orig"; echo $?) 2>/dev/null
	if [ $rc -eq 139 ] && [ $rc_twin -eq 139 ]; then
		ok "runtime discard mode: a real fault dies of SIGSEGV like the twin (rc $rc)"
	else
		not_ok "runtime discard mode: a real fault dies of SIGSEGV like the twin" \
			"rc=$rc (124: hung), twin rc=$rc_twin" "$(cat "$tmp/segv.err")"
	fi
else
	not_ok "runtime discard mode: a real fault dies of SIGSEGV like the twin" "aecc failed" "$(cat "$tmp/segv.err")"
fi

# A traced program exec'd by another in discard mode: the first one's
# seccomp filter outlives the exec, and turned the second one's own
# handler install into a no-op: it died of SIGSEGV at its first wrap.
printf '#include <unistd.h>\nint main(int c, char **v) { if (c > 1) execv(v[1], v + 1); return 1; }\n' >"$tmp/ex.c"
if "$top/bin/aecc" -O2 -o "$tmp/ex" "$tmp/ex.c" 2>"$tmp/ex.err"; then
	rc=$(timeout 60 "$tmp/ex" "$tmp/ex" "$PROD" 50000 9 2>"$tmp/ex.err"; echo $?) 2>/dev/null
	if [ "$rc" = 9 ] && [ "$(grep -c 'witnesses are discarded' "$tmp/ex.err")" = 3 ]; then
		ok "runtime discard mode through two execs: 6.4 MB through the last one's buffer, status kept"
	else
		not_ok "runtime discard mode through two execs" "rc=$rc (139: the wrap's SIGSEGV)" "$(cat "$tmp/ex.err")"
	fi
else
	not_ok "runtime discard mode through two execs" "aecc failed" "$(cat "$tmp/ex.err")"
fi

# An exec'd image that dies before its runtime asks aerun for its cursor
# (tests/data/exec_dies.c: an address space limit its trace buffer does
# not fit in): the region keeps the old image's bytes up to its EXEC (it
# was committed empty, and the EXEC marker past its end had the whole
# capture refused).
if "$top/bin/aecc" -O2 -o "$tmp/ed" "$top/tests/data/exec_dies.c" 2>"$tmp/ed.err"; then
	"$AERUN" -q -o "$tmp/ed.zst" --subbuf-size 16M -- "$tmp/ed" >/dev/null 2>"$tmp/ed.err"
	line=$("$top/bin/aetrace" stats "$tmp/ed.zst" "$tmp/ed" 2>"$tmp/ed.rerr" | awk '$3 == "ed"')
	if grep -q 'cannot reserve the trace buffer' "$tmp/ed.err" &&
	   [ "$(echo "$line" | awk '{ print $NF }')" = exec ] &&
	   [ "$(echo "$line" | awk '{ print $8 }')" -gt 100000 ]; then
		ok "an exec'd image dies before its runtime starts: the old image's trace ends at its EXEC ($line)"
	else
		not_ok "an exec'd image dies before its runtime starts: the old image's trace ends at its EXEC" \
			"stats: $line" "$(cat "$tmp/ed.err" "$tmp/ed.rerr")"
	fi
else
	not_ok "exec_dies.c builds" "$(cat "$tmp/ed.err")"
fi

# A thread execs while the leader writes (tests/data/thread_exec.c): the
# exec kills the leader at an overflow stop, before aerun wrote its new
# cursor, or with no exit stop at all, and its tid STARTs again; its
# trace had no end then, and the capture was refused ("START while it is
# traced already": about one in ten with 4 KiB sub-buffers). 30 runs,
# each must regenerate.
if "$top/bin/aecc" -O2 -o "$tmp/te" "$top/tests/data/thread_exec.c" -lpthread 2>"$tmp/te.err"; then
	bad= lost=0
	for i in $(seq 1 30); do
		if ! "$AERUN" -q -o "$tmp/te.zst" --subbuf-size 4K -- "$tmp/te" >"$tmp/te.out" 2>"$tmp/te.err" ||
		   ! grep -q 'the new image ran' "$tmp/te.out"; then
			bad="run $i: aerun: $(cat "$tmp/te.err")"
		elif ! "$top/bin/aetrace" stats "$tmp/te.zst" "$tmp/te" >/dev/null 2>"$tmp/te.rerr"; then
			bad="run $i: $(grep -v warning "$tmp/te.rerr" | head -2)"
		fi
		grep -q 'without an exit stop\|killed before aerun gave it' "$tmp/te.err" && lost=$((lost + 1))
		[ -n "$bad" ] && break
	done
	if [ -z "$bad" ]; then
		ok "a thread execs while the leader writes: 30 captures regenerate ($lost with the leader killed at an overflow or without an exit stop)"
	else
		not_ok "a thread execs while the leader writes: every capture regenerates" "$bad"
	fi
else
	not_ok "thread_exec.c builds" "$(cat "$tmp/te.err")"
fi

# Process start identical to an untraced run with ASLR off: same entry
# stack pointer (same env and argv), fd 1023 closed by the runtime, and
# _ae_start hands rdx (0 from the kernel for a static program) to _start.
# env -i: bash would put each command's own path in $_.
a=$(env -i AE_TEST=1 "$AERUN" -q -o "$tmp/f.zst" "$PROD" sp)
b=$(env -i AE_TEST=1 setarch -R "$PROD" sp 2>/dev/null)
if [ -n "$a" ] && [ "$a" = "$b" ] && [[ "$a" == *" rdx=0x0000000000000000 fd1023=closed" ]]; then
	ok "entry stack, rdx and fd table equal an untraced run ($a)"
else
	not_ok "entry stack, rdx and fd table equal an untraced run" "aerun: $a" "setarch -R: $b"
fi
finish
