#!/usr/bin/env bash
# bdump-format.sh - the trace container codec (schedlog/container.c): round trip,
# and clear errors (never a crash) on truncated, bit-flipped, garbage, empty
# and crafted-bad files. TAP output.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
ct=${CONTAINER_TEST:-$top/build/tests/container_test}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }

if [ ! -x "$ct" ]; then
	echo "not ok 1 - $ct missing (run make)"
	exit 1
fi

# A failure must be exit status 1 (not a signal) with a message naming the
# file and an offset.
clear_error() { # FILE
	local rc
	"$ct" dump "$1" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -eq 1 ] && grep -q -- "$1" "$tmp/err" && grep -q "offset" "$tmp/err"
}

# every_truncation FILE: bad = how many cut points of FILE (0..size-1)
# give no clear error.
every_truncation() {
	local size i
	size=$(stat -c %s "$1")
	bad=0
	for ((i = 0; i < size; i++)); do
		head -c $i "$1" > "$tmp/trunc.zst"
		clear_error "$tmp/trunc.zst" || { bad=$((bad + 1)); echo "# truncation at $i: $(cat "$tmp/err")"; }
	done
}

# every_flip FILE DUMP DIR: each bit of FILE flipped, into DIR; errs = clear
# errors, bad = results that are neither a clear error nor DUMP's chunks
# (zstd may ignore a few bits): never silent corruption or a crash.
every_flip() {
	local f rc
	python3 - "$1" "$3" <<'PY'
import sys, os
data = open(sys.argv[1], 'rb').read()
os.makedirs(sys.argv[2])
for i in range(len(data) * 8):
    b = bytearray(data); b[i // 8] ^= 1 << (i % 8)
    open(f"{sys.argv[2]}/{i}.zst", 'wb').write(b)
PY
	bad=0 errs=0
	for f in "$3"/*.zst; do
		"$ct" dump "$f" > "$tmp/flip.dump" 2>"$tmp/err"
		rc=$?
		if [ $rc -eq 1 ] && grep -q -- "$f" "$tmp/err" && grep -q offset "$tmp/err"; then
			errs=$((errs + 1))
		elif [ $rc -eq 0 ] && cmp -s "$tmp/flip.dump" "$2"; then
			:
		else
			bad=$((bad + 1)); echo "# flip $f: rc $rc $(head -c 300 "$tmp/err")"
		fi
	done
}

check "crc32c fast path equals bitwise reference" '"$ct" crc'

for cfg in "1 0" "3 0" "1 2" "19 1"; do
	set -- $cfg
	# write fails when the writer's final byte count is not the file's size
	check "round trip level $1 threads $2 (40 chunks, 0..300 KB), size counted" \
		'"$ct" write "$tmp/rt.zst" 40 "$1" "$2" && "$ct" check "$tmp/rt.zst" 40'
done

check "output is a plain zstd stream (zstd -t accepts it)" 'zstd -q -t "$tmp/rt.zst"'
check "round trip through stdin ('-')" '"$ct" check - 40 < "$tmp/rt.zst"'
check "check detects a different file (oracle can fail)" '! "$ct" check "$tmp/rt.zst" 39 2>/dev/null'

# Payloads of frame_min bytes or more are frames of their own without
# worker threads (compressed without a copy); with them, zstd's jobs split
# the one stream; below the default (2 MiB; the driver's sub-buffers are
# 64 KiB) the stream is one frame. Truncated at every frame end (a chunk
# header ends a frame, its payload but the last byte is the next one) and
# a byte either side: a clear error, never a short read taken for the end.
"$ct" write "$tmp/mixed.zst" 8 1 0 65536
"$ct" frames "$tmp/mixed.zst" > "$tmp/mixed.frames"
check "frame_min 64 KiB: the 70000- and 300000-byte payloads are frames of their own ($(wc -l < "$tmp/mixed.frames") frames)" \
	'[ $(wc -l < "$tmp/mixed.frames") -eq 5 ] && "$ct" check "$tmp/mixed.zst" 8'
"$ct" write "$tmp/mixed2.zst" 8 1 2 65536
check "with 2 worker threads the same chunks are one frame" \
	'[ $("$ct" frames "$tmp/mixed2.zst" | wc -l) -eq 1 ] && "$ct" check "$tmp/mixed2.zst" 8'
"$ct" write "$tmp/mixed3.zst" 8
check "the default frame_min keeps payloads under 2 MiB in the stream's one frame" \
	'[ $("$ct" frames "$tmp/mixed3.zst" | wc -l) -eq 1 ] && "$ct" check "$tmp/mixed3.zst" 8'
"$ct" write "$tmp/mixed4.zst" 8 3 0 65536
check "above level 1 the same chunks are one frame (its window reaches across chunks)" \
	'[ $("$ct" frames "$tmp/mixed4.zst" | wc -l) -eq 1 ] && "$ct" check "$tmp/mixed4.zst" 8'
"$ct" write "$tmp/mixed5.zst" 8 1 0 70000
"$ct" write "$tmp/mixed6.zst" 8 1 0 70001
check "a payload of exactly frame_min bytes is a frame of its own, one byte less is not" \
	'[ $("$ct" frames "$tmp/mixed5.zst" | wc -l) -eq 5 ] && [ $("$ct" frames "$tmp/mixed6.zst" | wc -l) -eq 3 ] &&
	 "$ct" check "$tmp/mixed5.zst" 8 && "$ct" check "$tmp/mixed6.zst" 8'

# Pacing (ae_writer_pace): the ladder down and back up, each level seen
# in the chunks' compressed sizes, the file read back chunk for chunk;
# streamed (a level change ends the frame after a chunk header), as frames
# of their own, and with worker threads. A cut where a level change ended
# a frame is still a clear error.
for v in "0 0" "0 1" "2 0"; do
	"$ct" pace "$tmp/pace.zst" $v > "$tmp/pace.out" 2>&1
	prc=$?
	check "pacing, threads ${v% *}, frame_min ${v#* }: $(tail -1 "$tmp/pace.out")" '[ $prc -eq 0 ]'
	[ "$v" = "0 0" ] && cp "$tmp/pace.zst" "$tmp/pace-stream.zst"
done
bad=0
pframes=$("$ct" frames "$tmp/pace-stream.zst")
psize=$(stat -c %s "$tmp/pace-stream.zst")
for e in $pframes; do
	[ "$e" -ge "$psize" ] && continue
	head -c "$e" "$tmp/pace-stream.zst" > "$tmp/trunc.zst"
	clear_error "$tmp/trunc.zst" || { bad=$((bad + 1)); echo "# truncation at $e: $(cat "$tmp/err")"; }
done
check "pacing: $(echo "$pframes" | wc -l) frames (one more than the 16 steps), a cut at each frame end gives a clear error" \
	'[ $bad -eq 0 ] && [ $(echo "$pframes" | wc -l) -eq 17 ]'

# frame_min 1: every payload but the empty one is a frame (a 1-byte one
# an empty frame and its byte in the stream). Every truncation point and
# every flipped bit: a clear error, or (a flip zstd ignores) the same
# chunks.
"$ct" write "$tmp/every.zst" 5 1 0 1
"$ct" dump "$tmp/every.zst" > "$tmp/every.dump"
esize=$(stat -c %s "$tmp/every.zst")
check "frame_min 1: 5 chunks in $("$ct" frames "$tmp/every.zst" | wc -l) frames ($esize bytes)" \
	'[ $("$ct" frames "$tmp/every.zst" | wc -l) -eq 9 ] && "$ct" check "$tmp/every.zst" 5'
every_truncation "$tmp/every.zst"
check "frame_min 1: every truncation point (0..$((esize - 1))) gives a clear error" '[ $bad -eq 0 ]'
every_flip "$tmp/every.zst" "$tmp/every.dump" "$tmp/eflips"
check "frame_min 1: every flipped bit ($((esize * 8))): a clear error or the same chunks" '[ $bad -eq 0 ]'
bad=0
msize=$(stat -c %s "$tmp/mixed.zst")
for e in $(cat "$tmp/mixed.frames"); do
	for i in $((e - 1)) "$e" $((e + 1)); do
		[ "$i" -ge "$msize" ] && continue
		head -c "$i" "$tmp/mixed.zst" > "$tmp/trunc.zst"
		clear_error "$tmp/trunc.zst" || { bad=$((bad + 1)); echo "# truncation at $i: $(cat "$tmp/err")"; }
	done
done
check "truncated at each frame end and a byte either side: a clear error" '[ $bad -eq 0 ]'

# Small file for the exhaustive cases.
"$ct" write "$tmp/small.zst" 5
size=$(stat -c %s "$tmp/small.zst")
"$ct" dump "$tmp/small.zst" > "$tmp/small.dump"
check "small file has 5 chunks ($size bytes compressed)" '[ $(wc -l < "$tmp/small.dump") -eq 5 ]'

every_truncation "$tmp/small.zst"
check "every truncation point (0..$((size - 1))) gives a clear error" '[ $bad -eq 0 ]'
head -c 0 "$tmp/small.zst" > "$tmp/trunc.zst"; clear_error "$tmp/trunc.zst"
check "empty file: clear error" 'grep -q "empty file" "$tmp/err"'

# Bit flips: each bit of the file.
every_flip "$tmp/small.zst" "$tmp/small.dump" "$tmp/flips"
check "every flipped bit ($((size * 8))): clear error or identical chunks ($errs errors)" '[ $bad -eq 0 ] && [ $errs -gt $((size * 4)) ]'

cp "$tmp/small.zst" "$tmp/garb.zst"; printf 'garbage!garbage!' >> "$tmp/garb.zst"
check "trailing garbage after the frame: clear error" 'clear_error "$tmp/garb.zst" && grep -q "trailing garbage" "$tmp/err"'
head -c 5000 /dev/urandom > "$tmp/rand.zst"
check "random bytes: clear error" 'clear_error "$tmp/rand.zst"'

for c in huge-len bad-magic bad-type bad-crc; do
	"$ct" craft "$tmp/$c.zst" $c
	check "crafted $c: clear error" 'clear_error "$tmp/$c.zst"'
done
grep -q "exceeds the maximum" <("$ct" dump "$tmp/huge-len.zst" 2>&1) && ok "huge len reported as such" || nok "huge len reported as such"
grep -q "CRC-32C mismatch" <("$ct" dump "$tmp/bad-crc.zst" 2>&1) && ok "bad crc reported as such" || nok "bad crc reported as such"
"$ct" craft "$tmp/two.zst" two-frames
check "two concatenated zstd frames read as one stream" '[ $("$ct" dump "$tmp/two.zst" | wc -l) -eq 2 ]'

# The same hostile inputs under valgrind: no invalid access, no leak.
if command -v valgrind >/dev/null; then
	vbad=0
	head -c $((size / 2)) "$tmp/small.zst" > "$tmp/trunc.zst"
	for f in "$tmp/trunc.zst" "$tmp/garb.zst" "$tmp/rand.zst" "$tmp/huge-len.zst" \
		 "$tmp/bad-crc.zst" "$tmp/flips/100.zst" "$tmp/flips/1000.zst" "$tmp/flips/1500.zst" "$tmp/small.zst"; do
		valgrind -q --error-exitcode=99 --leak-check=full "$ct" dump "$f" >/dev/null 2>"$tmp/vg"
		[ $? -eq 99 ] && { vbad=$((vbad + 1)); head -20 "$tmp/vg"; }
	done
	check "valgrind: hostile inputs cause no memory errors" '[ $vbad -eq 0 ]'
else
	ok "valgrind: hostile inputs cause no memory errors # SKIP valgrind not installed"
fi
echo "1..$n"
