#!/usr/bin/env bash
# aerun command line and refusals: clear errors and distinct exit codes,
# a fork is followed, uninstrumented programs still run.
. "$(dirname "$0")/aerun-lib.sh"
need_tools

expect() {	# expect NAME RC PATTERN CMD...: exit code RC, stderr matches PATTERN
	local name=$1 want=$2 pat=$3; shift 3
	"$@" >"$tmp/o" 2>"$tmp/e"; local rc=$?
	if [ $rc -eq "$want" ] && grep -q -- "$pat" "$tmp/e"; then
		ok "$name"
	else
		not_ok "$name" "rc=$rc (want $want)" "$(cat "$tmp/e")"
	fi
}

expect "bad option: usage, exit 2" 2 "usage: aerun" "$AERUN" --bogus "$PROD" 1
expect "no program: exit 2" 2 "no program given" "$AERUN" -o "$tmp/x.zst"
expect "missing program: exit 127, named" 127 "$tmp/nope: no such program" "$AERUN" -o "$tmp/x.zst" "$tmp/nope"
touch "$tmp/noexec"
expect "non-executable program: exit 126" 126 "Permission denied" "$AERUN" -o "$tmp/x.zst" "$tmp/noexec"
expect "bad --subbuf-size: exit 2, value named" 2 "subbuf-size '5000'" "$AERUN" --subbuf-size 5000 "$PROD" 1
expect "bad --subbufs: exit 2" 2 "subbufs '1'" "$AERUN" --subbufs 1 "$PROD" 1
expect "unwritable output: exit 125, file named" 125 "$tmp/no/dir.zst" "$AERUN" -o "$tmp/no/dir.zst" "$PROD" 1
# -o naming the program: refused before anything is written (the capture
# used to overwrite it, then fail: "Text file busy")
cp "$PROD" "$tmp/self" && cp "$PROD" "$tmp/self.keep"
expect "-o naming the program itself: exit 125, refused" 125 "is the program .* or its twin" \
	"$AERUN" -o "$tmp/self" "$tmp/self" 1
if cmp -s "$tmp/self" "$tmp/self.keep"; then
	ok "-o naming the program itself: the program is left as it was"
else
	not_ok "-o naming the program itself: the program is left as it was"
fi
if "$top/bin/aecc" -O2 -o "$tmp/tw" "$top/tests/corpus/recursion.c" 2>"$tmp/e"; then
	expect "the twin traced: exit 126, named as a twin" 126 "a twin (PROG.orig)" \
		"$AERUN" -o "$tmp/tw.zst" "$tmp/tw.orig"
	cp "$tmp/tw.orig" "$tmp/tw.keep"
	expect "-o naming the program's twin: exit 125, refused" 125 "or its twin" \
		"$AERUN" -o "$tmp/tw.orig" "$tmp/tw"
	if cmp -s "$tmp/tw.orig" "$tmp/tw.keep"; then
		ok "-o naming the twin: the twin is left as it was"
	else
		not_ok "-o naming the twin: the twin is left as it was"
	fi
else
	not_ok "the twin traced: aecc builds a program" "$(cat "$tmp/e")"
fi
expect "fork followed: both processes traced" 0 "2 threads, 2 traced and 0 untraced images, 1 forks" \
	"$AERUN" -o "$tmp/f.zst" "$PROD" fork
expect "uninstrumented program runs, with a warning" 1 "never mapped the trace buffer" \
	"$AERUN" -o "$tmp/u.zst" false
expect "zstd level 0: exit 2, value named" 2 "\-l '0'" "$AERUN" -l 0 -o "$tmp/l.zst" "$PROD" 1
if "$AERUN" -q -l -5 -o "$tmp/fast.zst" "$PROD" 1 >/dev/null 2>&1 &&
	"$AERUN" -q -l 1 -o "$tmp/l1.zst" "$PROD" 1 >/dev/null 2>&1 &&
	"$CHECK" "$tmp/fast.zst" >/dev/null 2>&1; then
	ok "zstd fast level -5 writes a capture the checker accepts"
else
	not_ok "zstd fast level -5 writes a capture the checker accepts"
fi
expect "zstd level -65: exit 2, value named" 2 "\-l '-65'" "$AERUN" -l -65 -o "$tmp/l.zst" "$PROD" 1
if "$AERUN" -q -l -64 -o "$tmp/fast.zst" "$PROD" 1000 >/dev/null 2>&1 &&
	"$CHECK" "$tmp/fast.zst" >/dev/null 2>&1; then
	ok "zstd fastest level -64 writes a capture the checker accepts"
else
	not_ok "zstd fastest level -64 writes a capture the checker accepts"
fi
# Pacing: a producer that writes 128 MB at memory speed outruns a level-9
# writer, which goes lower while the producer waits (two sub-buffers: the
# queue cannot grow, the program waiting says it); the capture is whole
# across the level changes. --fixed-level keeps level 9 under the same
# pressure: -v names every level change, and there is none. (Not the
# file's size: on this producer's trace levels 1 and 9 differ by under
# 1%, less than a paced run's frames do from run to run.)
"$AERUN" -l 9 --subbufs 2 -o "$tmp/pace.zst" "$PROD" 1000000 >/dev/null 2>"$tmp/e"
if grep -q "zstd level 9 paced down to -*[0-9]* (steps: [1-9][0-9]* down" "$tmp/e" &&
	"$CHECK" "$tmp/pace.zst" >"$tmp/c" 2>&1 && grep -q "blocks=1000000 " "$tmp/c"; then
	ok "a writer behind the program paces down ($(grep -o 'zstd level 9 paced[^)]*)' "$tmp/e")), the capture whole"
else
	not_ok "a writer behind the program paces down, the capture whole" "$(cat "$tmp/e" "$tmp/c")"
fi
"$AERUN" -v -l 9 --subbufs 2 --fixed-level -o "$tmp/fixed.zst" "$PROD" 1000000 >/dev/null 2>"$tmp/e"
if ! grep -q "paced\|zstd level" "$tmp/e" && grep -q "exit 0" "$tmp/e" &&
	"$CHECK" "$tmp/fixed.zst" >"$tmp/c" 2>&1 && grep -q "blocks=1000000 " "$tmp/c"; then
	ok "--fixed-level: level 9 throughout (no level change with two sub-buffers), the capture whole"
else
	not_ok "--fixed-level: level 9 throughout, the capture whole" "$(cat "$tmp/e" "$tmp/c")"
fi
# A producer a little faster than level 9 (1 MiB every 2.5 ms at most),
# with 64 sub-buffers of 1 MiB: the queue grows long before the program
# would wait, and that alone must take the level down.
"$AERUN" -v -l 9 --subbufs 64 --subbuf-size 1M -o "$tmp/grew.zst" "$PROD" 600000 0 0 2500 0 >/dev/null 2>"$tmp/e"
if grep -q "zstd level 4 after [0-9]* MB (the queue grew)" "$tmp/e" &&
	"$CHECK" "$tmp/grew.zst" >"$tmp/c" 2>&1 && grep -q "blocks=600000 " "$tmp/c"; then
	ok "a queue that grows paces down before the program waits ($(grep -o 'zstd level 9 paced[^)]*)' "$tmp/e"))"
else
	not_ok "a queue that grows paces down before the program waits" "$(cat "$tmp/e" "$tmp/c")"
fi
# A producer that slows down (300000 blocks at memory speed, then 1 MiB
# every 20 ms): level 9 goes down while the program waits, and back up
# once the writer waits for it. One that is slow throughout leaves level 1
# alone.
"$AERUN" -v -l 9 -o "$tmp/pace2.zst" "$PROD" 600000 0 0 20000 300000 >/dev/null 2>"$tmp/e"
if grep -q "zstd level [-0-9]* after [0-9]* MB (the program waited)" "$tmp/e" &&
	grep -q "zstd level [-0-9]* after [0-9]* MB (the writer waited)" "$tmp/e" &&
	grep -q "paced down to -*[0-9]* (steps: [0-9]* down, [1-9][0-9]* up" "$tmp/e" &&
	"$CHECK" "$tmp/pace2.zst" >"$tmp/c" 2>&1 && grep -q "blocks=600000 " "$tmp/c"; then
	ok "a producer that slows down: the level goes down, then back up $(grep -o '(steps:[^)]*)' "$tmp/e")"
else
	not_ok "a producer that slows down: the level goes down, then back up" "$(cat "$tmp/e" "$tmp/c")"
fi
"$AERUN" -l 1 -o "$tmp/slow.zst" "$PROD" 300000 0 0 20000 0 >/dev/null 2>"$tmp/e"
if ! grep -q "paced" "$tmp/e" && grep -q "exit 0" "$tmp/e" &&
	"$CHECK" "$tmp/slow.zst" >"$tmp/c" 2>&1 && grep -q "blocks=300000 " "$tmp/c"; then
	ok "a producer slower than the writer: level 1 throughout"
else
	not_ok "a producer slower than the writer: level 1 throughout" "$(cat "$tmp/e" "$tmp/c")"
fi
expect "zstd threads -1: exit 2, value named" 2 "\-T '-1'" "$AERUN" -T -1 -o "$tmp/t.zst" "$PROD" 1
if "$AERUN" -q -T 2 -o "$tmp/t2.zst" "$PROD" 1 >/dev/null 2>&1 &&
	"$CHECK" "$tmp/t2.zst" >/dev/null 2>&1; then
	ok "zstd with 2 worker threads writes a capture the checker accepts"
else
	not_ok "zstd with 2 worker threads writes a capture the checker accepts"
fi
# The summary's byte count is the file's size, the zstd stream's end included.
"$AERUN" -o "$tmp/sz.zst" "$PROD" 1 >/dev/null 2>"$tmp/e"
said=$(sed -n 's/.* -> [^ ]* \([0-9]*\) bytes (.*/\1/p' "$tmp/e")
if [ -n "$said" ] && [ "$said" -eq "$(stat -c %s "$tmp/sz.zst")" ]; then
	ok "summary counts every byte of the file"
else
	not_ok "summary counts every byte of the file" "said '$said'" "$(ls -l "$tmp/sz.zst")"
fi
# Malformed program files: one line naming the file and the cause, exit 126,
# never a crash nor a run without the rollback table.
size=$(stat -c %s "$PROD")
head -c 40 "$PROD" >"$tmp/trunc-header"
head -c $((size / 2)) "$PROD" >"$tmp/trunc-half"
head -c $((size - 8)) "$PROD" >"$tmp/trunc-tail"
chmod +x "$tmp"/trunc-*
expect "ELF cut inside its header: exit 126, named" 126 "$tmp/trunc-header: not an x86-64 ELF64" \
	"$AERUN" -o "$tmp/x.zst" "$tmp/trunc-header" 1
expect "ELF cut in half: exit 126, named" 126 "$tmp/trunc-half: .*run past the end" \
	"$AERUN" -o "$tmp/x.zst" "$tmp/trunc-half" 1
expect "ELF missing its last 8 bytes: exit 126, named" 126 "$tmp/trunc-tail: .*run past the end" \
	"$AERUN" -o "$tmp/x.zst" "$tmp/trunc-tail" 1
for m in shoff:"run past the end" shstrndx:"bad name offset" name:"bad name offset" \
	 seqtab-offset:"cannot read __ae_seqtab" seqtab-order:"entry 1 is not sorted"; do
	mode=${m%%:*} pat=${m#*:}
	if python3 "$top/tests/host/elf_corrupt.py" "$mode" "$PROD" "$tmp/bad-$mode" 2>"$tmp/e"; then
		chmod +x "$tmp/bad-$mode"
		expect "corrupted ELF ($mode): exit 126, named" 126 "$tmp/bad-$mode: .*$pat" \
			"$AERUN" -o "$tmp/x.zst" "$tmp/bad-$mode" 1
	else
		not_ok "corrupted ELF ($mode): exit 126, named" "$(cat "$tmp/e")"
	fi
done
# -o over the last capture replaces it: a reader holding the old file
# keeps it whole (ext4 pays for a file truncated to zero at its close),
# the new one has its mode; a symlink is written through, a file with
# another name truncated in place, a FIFO opened once (its reader gets
# the whole capture) (schedlog_open_output)
"$AERUN" -q -o "$tmp/r1.zst" "$PROD" 1000 >/dev/null 2>&1 && cp "$tmp/r1.zst" "$tmp/r.zst" &&
	chmod 640 "$tmp/r.zst" && ln -f "$tmp/r1.zst" "$tmp/r1b.zst" &&
	cp "$tmp/r1.zst" "$tmp/rt.zst" && cp "$tmp/rt.zst" "$tmp/rt0.zst" && ln -sf "$tmp/rt.zst" "$tmp/rl.zst"
ino=$(stat -c %i "$tmp/rt.zst")
exec 7<"$tmp/r.zst"
if "$AERUN" -q -o "$tmp/r.zst" "$PROD" 2000 >/dev/null 2>&1 && cmp -s /dev/fd/7 "$tmp/r1.zst" &&
	! cmp -s "$tmp/r.zst" "$tmp/r1.zst" && "$CHECK" "$tmp/r.zst" >/dev/null 2>&1 &&
	[ "$(stat -c %a "$tmp/r.zst")" = 640 ] && [ -z "$(ls "$tmp"/r.zst.* 2>/dev/null)" ]; then
	ok "-o over the last capture: a new file with the old one's mode, the old one whole for its reader"
else
	not_ok "-o over the last capture: a new file with the old one's mode, the old one whole for its reader"
fi
exec 7<&-
mkfifo "$tmp/rf.zst"
timeout 60 cat "$tmp/rf.zst" >"$tmp/rf.got" &	# (ends if aerun never opens it)
if "$AERUN" -q -o "$tmp/r1.zst" "$PROD" 2000 >/dev/null 2>&1 && cmp -s "$tmp/r1.zst" "$tmp/r1b.zst" &&
	"$AERUN" -q -o "$tmp/rl.zst" "$PROD" 2000 >/dev/null 2>&1 && [ -L "$tmp/rl.zst" ] &&
	"$CHECK" "$tmp/rt.zst" >/dev/null 2>&1 && ! cmp -s "$tmp/rt.zst" "$tmp/rt0.zst" &&
	[ "$(stat -c %i "$tmp/rt.zst")" = "$ino" ] &&
	"$AERUN" -q -o "$tmp/rf.zst" "$PROD" 10 >/dev/null 2>&1 && wait $! && [ -p "$tmp/rf.zst" ] &&
	"$CHECK" "$tmp/rf.got" >/dev/null 2>&1; then
	ok "-o: a file with another name truncated in place, a symlink written through, a FIFO's reader gets the capture"
else
	not_ok "-o: a file with another name truncated in place, a symlink written through, a FIFO's reader gets the capture"
fi
expect "PATH lookup and argv passed unchanged" 0 "exit 0" \
	"$AERUN" -o "$tmp/p.zst" sh -c 'test "$0" = sh && test "$1" = "a b"' sh "a b"
finish
