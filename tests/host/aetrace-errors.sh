#!/usr/bin/env bash
# aetrace on bad input: a corrupt or truncated trace, the wrong program, or
# a program or twin changed after aecc linked them,
# gives a clear error naming the file or the trace offset, never a crash,
# and never a regenerated trace passed off as good.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/oracle/corpus-lib.sh"
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
for t in bin/aecc bin/aerun bin/aetrace build/tests/trace_mutate; do
	if [ ! -x "$top/$t" ]; then
		echo "ok 1 - aetrace-errors # SKIP $t not built"
		exit 0
	fi
done
d=$(mktemp -d "${TMPDIR:-/tmp}/aetrace-errors.XXXXXX")
trap 'rm -rf "$d"' EXIT
cd "$d"
"$top/bin/aecc" -O2 -o p "$top/tests/corpus/interp.c" || exit 1
"$top/bin/aecc" -O2 -o q "$top/tests/corpus/recursion.c" || exit 1
"$top/bin/aerun" -q -o t.zst -- ./p >/dev/null || exit 1
"$top/bin/aetrace" regen t.zst p > good || exit 1

# expect_error NAME PATTERN CMD...: exit status 1 (not a signal), message
# matching PATTERN on stderr.
expect_error() {
	local name=$1 pat=$2 rc
	shift 2
	"$@" > out 2> err
	rc=$?
	if [ $rc -eq 1 ] && grep -qE "$pat" err; then
		ok "$name: $(head -c 160 err | tr '\n' ' ')"
	else
		not_ok "$name (status $rc)"
		sed 's/^/# /' err | head -5
	fi
}

# refused_run NAME PATTERN PROG MODE: ./PROG MODE traced by aerun, its
# capture refused with PATTERN
refused_run() {
	"$top/bin/aerun" -q -o "$4.zst" -- "./$3" "$4" >/dev/null 2>&1
	expect_error "$1" "$2" "$top/bin/aetrace" regen "$4.zst" "$3"
}

# all_exit ZST PROG N: aetrace stats of capture ZST ends N tasks at their
# exit (the table in out)
all_exit() {
	"$top/bin/aetrace" stats "$1" "$2" >out 2>err && [ "$(awk '$NF == "exit"' out | wc -l)" = "$3" ]
}

# result NAME: ok NAME if the command just run succeeded, else not ok
# with the head of err
result() {
	if [ $? = 0 ]; then
		ok "$1"
	else
		not_ok "$1"
		sed 's/^/# /' err | head -3
	fi
}

expect_error "missing trace file" "nosuch.zst" "$top/bin/aetrace" regen nosuch.zst p
cp p lone
expect_error "missing twin" "lone.orig" "$top/bin/aetrace" regen t.zst lone
expect_error "the twin given for the program" "p.orig: a twin \\(PROG.orig\\)\\? give the program" \
	"$top/bin/aetrace" regen t.zst p.orig
expect_error "wrong program" "offset|not instrumented|witness|left unread|none of the given programs" \
	"$top/bin/aetrace" regen t.zst q
# a capture whose END chunk says its producer lost data (bdump: sub-buffers
# or markers it could not deliver; aerun: threads killed without an exit
# stop): the regeneration goes on and says so, naming the file and the
# count (it used to say nothing); a complete capture says nothing of it
"$top/build/tests/trace_mutate" --end-drops t.zst drops.zst 3 &&
	"$top/bin/aetrace" regen drops.zst p >/dev/null 2>err &&
	grep -q "^aetrace: warning: drops.zst: its producer lost 3 sub-buffers, markers or task ends" err &&
	"$top/bin/aetrace" regen t.zst p >/dev/null 2>err && ! grep -q "producer lost" err
result "a capture whose END counts drops: regenerated, with a warning naming the file and the count"
# chunks left out of the capture, each chunk's CRC intact (found by
# cutting chunks out): END's counters name the loss; without END, the
# capture was cut short, which regen says while it regenerates the rest
# (they used to pass without a word)
python3 - t.zst "$top/tests/host" <<'PY'
import struct, subprocess, sys
sys.path.insert(0, sys.argv[2])
from aewire import crc32c_fast
raw = subprocess.run(["zstd", "-dc", sys.argv[1]], capture_output=True, check=True).stdout
chunks, o = [], 0
while o < len(raw):
	ln = struct.unpack_from("<IHHQII", raw, o)[4]
	chunks.append(raw[o:o + 24 + ln])
	o += 24 + ln
typ = [struct.unpack_from("<IHHQII", c)[1] for c in chunks]
last_data = max(i for i, t in enumerate(typ) if t == 2)
def put(name, cs):
	subprocess.run(["zstd", "-q", "-f", "-o", name], input=b"".join(cs), check=True)
put("nodata.zst", chunks[:last_data] + chunks[last_data + 1:])
put("noend.zst", [c for c, t in zip(chunks, typ) if t != 4])
put("afterend.zst", chunks + [chunks[last_data]])
# the last DATA chunk on region 5000 (aerun's regions stop at 4096), its
# CRC recomputed
c = bytearray(chunks[last_data])
struct.pack_into("<H", c, 6, 5000)
struct.pack_into("<I", c, 20, 0)
struct.pack_into("<I", c, 20, crc32c_fast(bytes(c)))
put("badcpu.zst", chunks[:last_data] + [bytes(c)] + chunks[last_data + 1:])
# a bit of the first DATA chunk's payload flipped (its CRC then fails), in
# a file whose name says "truncated"
c = bytearray(chunks[typ.index(2)])
c[24] ^= 1
put("truncated_run.zst", chunks[:typ.index(2)] + [bytes(c)] + chunks[typ.index(2) + 1:])
PY
expect_error "a DATA chunk cut out" \
	"nodata.zst: END chunk at offset [0-9]* counts [0-9]* DATA chunks.*: chunks are missing" \
	"$top/bin/aetrace" regen nodata.zst p
expect_error "a chunk after END" "afterend.zst: chunk type 2 at offset [0-9]* after the END chunk" \
	"$top/bin/aetrace" regen afterend.zst p
"$top/bin/aetrace" salvage afterend.zst ae.zst 2>err &&
	grep -q "afterend.zst: chunks after the END chunk, from offset [0-9]*: left out" err &&
	grep -q "END included: the capture was complete" err &&
	"$top/bin/aetrace" regen ae.zst p >out 2>err && cmp -s out good
result "salvage of a file written on after its END: the capture up to its END, whole"
expect_error "salvage of a file missing a DATA chunk (damaged, not cut)" \
	"nodata.zst: the END chunk at offset [0-9]* does not count the chunks before it.*damaged, not cut short: nothing salvaged" \
	"$top/bin/aetrace" salvage nodata.zst nd.zst
[ ! -e nd.zst ]
result "... and leaves no OUT behind"
expect_error "a DATA chunk of a region the capture cannot have" \
	"badcpu.zst: DATA chunk cpu 5000 seq [0-9]* at offset [0-9]*: the capture has [0-9]* cpus" \
	"$top/bin/aetrace" regen badcpu.zst p
"$top/bin/bdump" --check truncated_run.zst >err 2>&1
[ $? != 0 ] && grep -q "CRC" err && ! grep -q "truncated at chunk" err
result "bdump --check of a corrupt file named truncated_run.zst: a CRC mismatch, not a truncation"
"$top/bin/aetrace" regen noend.zst p >out 2>err && cmp -s out good &&
	grep -q "^aetrace: warning: noend.zst: no END chunk: the capture was cut short" err &&
	! grep -q "no END" <("$top/bin/aetrace" regen t.zst p 2>&1 >/dev/null)
result "a capture without END: regenerated, with a warning naming the file"
# --thread with a tid no task has: an error, not an empty trace
expect_error "--thread of no task" "thread 1: no task of the capture with that tid" \
	"$top/bin/aetrace" regen --thread 1 t.zst p
# a tid past an int's range named as given, not wrapped onto another
# thread's tid (2^32 + a real tid regenerated that thread)
tid=$("$top/bin/schedlog" print t.zst | awk 'NR == 1 { split($4, a, "/"); print a[2] }')
"$top/bin/aetrace" regen --thread $((tid + 4294967296)) t.zst p >out 2>err
rc=$?
if [ $rc -eq 2 ] && grep -q -- "--thread $((tid + 4294967296)): not a thread id" err && [ ! -s out ]; then
	ok "--thread 2^32 + a task's tid: status 2, the value named"
else
	not_ok "--thread 2^32 + a task's tid: status 2, the value named (status $rc)"
fi
# map-lackey reads whole lines: the tail of a long valgrind line is no
# record (fgets read 255 bytes at a time: a line of 249 X's and the
# banner split where the record begins), and an address that does not fit
# 64 bits is an error naming the line
m=$(nm p | awk '$3 == "main" { print $1 }')
if printf 'I  %s,4\n' "$m" | "$top/bin/aetrace" map-lackey p | grep -q '^I ' &&
   python3 -c "print('==1== ' + 'X' * 249 + 'I  $m,4')" | "$top/bin/aetrace" map-lackey p >out 2>err &&
   [ ! -s out ]; then
	ok "map-lackey: a record at the end of a 270-byte line is not read as one"
else
	not_ok "map-lackey: a record at the end of a 270-byte line is not read as one"
fi
expect_error "map-lackey: an address of 17 hex digits" "standard input, line 2: not a lackey I line" \
	sh -c "printf 'I  %s,4\nI  1%016x,4\n' '$m' 0 | '$top/bin/aetrace' map-lackey p"
# a capture cut short (its writer killed): every reader refuses it, and
# `aetrace salvage` copies its sound chunks into one that regenerates, a
# prefix of the whole capture's trace, with the warning that it was cut
"$top/bin/aerun" -q --subbuf-size 4K -o small.zst -- ./p >/dev/null &&
	"$top/bin/aetrace" regen small.zst p >small.good &&
	head -c $(( $(stat -c %s small.zst) * 3 / 5 )) small.zst >cut.zst
expect_error "a capture cut short" "cut.zst: truncated" "$top/bin/aetrace" regen cut.zst p
if "$top/bin/aetrace" salvage cut.zst sal.zst 2>err &&
   grep -q "^aetrace salvage: sal.zst: [0-9]* chunks kept ([1-9][0-9]* DATA chunks.*no END" err &&
   "$top/bin/aetrace" regen sal.zst p >out 2>err && grep -q "sal.zst: no END chunk" err &&
   [ -s out ] && [ "$(wc -l <out)" -lt "$(wc -l <small.good)" ] &&
   cmp -s out <(head -n "$(wc -l <out)" small.good); then
	ok "salvage of a capture cut at 3/5: $(wc -l <out) of $(wc -l <small.good) lines, a prefix of the whole"
else
	not_ok "salvage of a capture cut at 3/5 regenerates a prefix"
	sed 's/^/# /' err | head -3
fi
expect_error "salvage of a file that is no capture" "salvage: p: " "$top/bin/aetrace" salvage p x.zst
[ ! -e x.zst ]
result "a failed salvage leaves no OUT behind"
cp small.zst same.zst
"$top/bin/aetrace" salvage same.zst same.zst 2>err
[ $? = 2 ] && grep -q "are one file" err && cmp -s same.zst small.zst
result "salvage onto its own input: refused, the input kept"
# is_prefix FILE FULLDIR: FILE's bytes begin FULLDIR's file of its name
is_prefix() {
	cmp -s "$1" <(head -c "$(stat -c %s "$1")" "$2/${1##*/}")
}
# Tasks cut off: aerun writes a task's markers with its sub-buffer, and
# the threads' often come before their parent's FORK, which a cut can
# leave out: those tasks are skipped with a warning (they were an error
# that stopped the whole regeneration); every task regenerated is a
# prefix of its whole trace.
wl=$top/build/tests/workload
if [ -x "$wl/threads" ] && cp "$wl/threads" "$wl/threads.orig" . &&
   "$top/bin/aerun" -q --subbuf-size 4K --subbufs 64 -o th.zst -- ./threads >/dev/null &&
   "$top/bin/aetrace" regen --split thfull th.zst threads; then
	bad= nf=0 nskip=0
	for k in 2 5 8; do
		head -c $(( $(stat -c %s th.zst) * k / 10 )) th.zst >thc.zst
		rm -rf thcut
		if ! "$top/bin/aetrace" salvage thc.zst ths.zst 2>/dev/null; then
			continue	# (nothing whole before the cut)
		fi
		"$top/bin/aetrace" regen --split thcut ths.zst threads 2>err || bad="$bad $k:rc"
		nskip=$((nskip + $(grep -c 'before the cut.*skipped' err)))
		for f in thcut/*; do
			[ -e "$f" ] || continue
			nf=$((nf + 1))
			is_prefix "$f" thfull || bad="$bad $k:${f##*/}"
		done
	done
	if [ -z "$bad" ] && [ "$nf" -gt 0 ]; then
		ok "salvage of a threaded capture cut at 2/10, 5/10, 8/10: $nf task traces, each a prefix of its whole one; $nskip tasks skipped as cut off"
	else
		not_ok "salvage of a threaded capture: every task regenerated is a prefix ($nf files; bad:$bad)"
		sed 's/^/# /' err | head -3
	fi
else
	not_ok "salvage of a threaded capture: the capture"
fi
# cut_prefixes CAPTURE FULLDIR STEP PROG...: the capture's decompressed
# stream cut every STEP bytes, each cut salvaged and regenerated (--split):
# prints "CUTS BAD CUTWARNINGS REUSED"; a cut is bad if regen fails or a
# task's trace is not a prefix of its whole one (FULLDIR); each bad one in
# cutbad. REUSED counts the cuts where the first PROG's task was cut short
# (its trace a strict prefix) and a later task on its tid regenerated too.
cut_prefixes() {
	local cap=$1 full=$2 step=$3 k sz n=0 nbad=0 ncut=0 nreuse=0 f tid
	shift 3
	: >cutbad
	zstd -qdc "$cap" >cp.raw
	sz=$(stat -c %s cp.raw)
	for ((k = step; k < sz; k += step)); do
		head -c $k cp.raw | zstd -q >cp.zst
		"$top/bin/aetrace" salvage cp.zst cps.zst 2>/dev/null || continue
		rm -rf cpout
		n=$((n + 1))
		if ! "$top/bin/aetrace" regen --split cpout cps.zst "$@" >/dev/null 2>cperr; then
			nbad=$((nbad + 1))
			echo "cut at $k: $(grep -v warning cperr | head -1)" >>cutbad
		fi
		ncut=$((ncut + $(grep -c "in a capture cut short, before it left that cpu" cperr)))
		for f in cpout/*; do
			[ -e "$f" ] || continue
			is_prefix "$f" "$full" ||
				{ nbad=$((nbad + 1)); echo "cut at $k: ${f##*/} is not a prefix" >>cutbad; }
		done
		for tid in $(sed -n 's|.*warning: task [0-9]*/\([0-9]*\): its bytes on cpu.*cut short.*|\1|p' cperr | sort -u); do
			reused "$tid" "$full" "$1" && nreuse=$((nreuse + 1))
		done
	done
	echo "$n $nbad $ncut $nreuse"
}
# reused TID FULLDIR PROG: cpout holds a strict prefix of PROG's trace on
# TID and a non-empty trace of another task on TID
reused() {
	local f short= other=
	for f in cpout/*."$1"."$3".* cpout/*."$1".*; do
		[ -s "$f" ] || continue
		if [ -z "$short" ]; then
			[ "$(stat -c %s "$f")" -lt "$(stat -c %s "$2/${f##*/}")" ] || return 1
			short=$f
		elif [ "$f" != "$short" ]; then
			other=$f
		fi
	done
	[ -n "$short" ] && [ -n "$other" ]
}
# A cut inside a DATA chunk whose MARKERS chunk was kept (aerun writes a
# sub-buffer's markers, then its data): the markers point past the bytes
# there are, and the tasks end there, each a prefix (such a cut was
# refused whole: 9 of these)
if [ -x "$wl/threads" ] &&
   "$top/bin/aerun" -q --subbuf-size 4K --subbufs 64 -o th3.zst -- ./threads 300 >/dev/null &&
   "$top/bin/aetrace" regen --split th3full th3.zst threads; then
	read -r nc nb _ < <(cut_prefixes th3.zst th3full 2011 threads)
	[ "${nb:-1}" = 0 ] && [ "${nc:-0}" -ge 50 ]
	result "salvage of a threaded capture cut every 2011 bytes (${nc:-0} cuts, most inside a DATA chunk after its markers): every cut regenerates, each task a prefix of its whole trace"
	sed 's/^/# /' cutbad | head -3
else
	not_ok "salvage of a threaded capture cut every 2011 bytes: the capture"
fi
# Whole-system captures (build/tests/capmix: two programs mixed on two
# CPUs, tasks migrating): a cut can take a CPU's last sub-buffer with a
# task's bytes before its switch-in elsewhere; joining what follows onto
# them regenerated wrong instructions with status 0 (11 of these). The
# task ends there.
if [ -x "$top/build/tests/capmix" ] &&
   "$top/bin/aerun" -q --subbuf-size 4K -o q.zst -- ./q >/dev/null &&
   "$top/build/tests/capmix" mix.zst 2 4096 7 small.zst q.zst 2>err &&
   "$top/bin/aetrace" regen --split mixfull mix.zst p q 2>err; then
	read -r nc nb ncut _ < <(cut_prefixes mix.zst mixfull 397 p q)
	[ "${nb:-1}" = 0 ] && [ "${nc:-0}" -ge 50 ] && [ "${ncut:-0}" -gt 0 ]
	result "salvage of a whole-system capture cut every 397 bytes (${nc:-0} cuts): each task a prefix of its whole trace, ${ncut:-0} tasks ended where a cpu's bytes ran out before they left it"
	sed 's/^/# /' cutbad | head -3
else
	not_ok "salvage of a whole-system capture: the capture"
	sed 's/^/# /' err | head -3
fi
# A tid reused after its task was cut (capmix --reuse-tid: q takes p's pid
# and tid once p has exited): the later task is traced whole, not skipped
# with the cut one's markers.
if [ -x "$top/build/tests/capmix" ] &&
   "$top/build/tests/capmix" --reuse-tid mixr.zst 2 4096 3 small.zst q.zst 2>err &&
   "$top/bin/aetrace" regen --split mixrfull mixr.zst p q 2>err &&
   [ "$(ls mixrfull | cut -d. -f2 | sort -u | wc -l)" = 1 ]; then
	read -r nc nb ncut nre < <(cut_prefixes mixr.zst mixrfull 397 p q)
	[ "${nb:-1}" = 0 ] && [ "${nre:-0}" -gt 0 ]
	result "salvage of a capture whose tid is reused (${nc:-0} cuts): in ${nre:-0} of them the first task is cut and the next one on its tid regenerated, each a prefix of its whole trace"
	sed 's/^/# /' cutbad | head -3
else
	not_ok "salvage of a capture whose tid is reused: the capture (one tid in it)"
	sed 's/^/# /' err | head -3
fi
# an EXIT marker with a flag bit set (only SIGRETURN markers carry flags;
# regen's own raw-capture flag must not be read from a file)
exit_mk=$("$top/bin/schedlog" print t.zst | awk '$5 == "EXIT" { print $1; exit }')
if [ -n "$exit_mk" ] && "$top/build/tests/trace_mutate" --marker t.zst exitf.zst "$exit_mk" flags 1; then
	expect_error "an EXIT marker with flags" "exitf.zst: marker $exit_mk: unknown flags 0x1" \
		"$top/bin/aetrace" regen exitf.zst p
else
	not_ok "an EXIT marker with flags: the capture has an EXIT marker"
fi
cp p notaecc
objcopy --remove-section=.ae_schema notaecc
cp p.orig notaecc.orig
expect_error "program without schema" "schema" "$top/bin/aetrace" stats t.zst notaecc
# A program or twin changed after aecc linked them (one code byte of the
# twin, one byte of the program's instruction map) would decode into a
# different trace: the .ae_check hashes name the changed file. strip -g
# (debug info and symbols only) keeps both usable.
# sec_off FILE NAME: the file offset (hex) of section NAME
sec_off() { readelf -S -W "$1" | awk -v s="$2" '{ for (i = 1; i < NF; i++) if ($i == s) print $(i + 3) }'; }
off=$(sec_off p.orig .text)
cp p chg && cp p.orig chg.orig
printf '\x90' | dd of=chg.orig bs=1 seek=$((0x$off + 64)) conv=notrunc 2>/dev/null
expect_error "twin code byte changed" "chg.orig: changed since aecc linked it" \
	"$top/bin/aetrace" regen t.zst chg
cp p.orig chg.orig
off=$(sec_off p .ae_imap)
printf '\x01' | dd of=chg bs=1 seek=$((0x$off + 40)) conv=notrunc 2>/dev/null
expect_error "program's instruction map changed" "chg: changed since aecc linked it" \
	"$top/bin/aetrace" regen t.zst chg
# .ae_check version 1 (24 bytes, before own routines were recorded) is
# still read; a bit for no routine in the own-routines mask is not.
objcopy --dump-section .ae_check=chk.bin p
python3 -c 'import struct, sys; d = open("chk.bin", "rb").read(); open("v1.bin", "wb").write(d[:4] + struct.pack("<I", 1) + d[8:24]); open("badown.bin", "wb").write(d[:24] + struct.pack("<II", 1 << 20, 0))'
cp p v1 && cp p.orig v1.orig && objcopy --update-section .ae_check=v1.bin v1
"$top/bin/aetrace" regen t.zst v1 > out 2> err && cmp -s out good
result ".ae_check version 1 is still read"
cp p badown && cp p.orig badown.orig && objcopy --update-section .ae_check=badown.bin badown
expect_error "own-routine mask with a bit for no routine" "badown: corrupt .ae_check" \
	"$top/bin/aetrace" regen t.zst badown
# Schema versions: a record coding needs the version that brought it
# (schema.h ae_event_version); an object claiming an older one is corrupt,
# one newer than this aetrace knows is refused by name. schema_patch.py
# rewrites an object's version and the .ae_check hash ("same": the hash
# alone, which must leave the program usable).
"$top/bin/aecc" -fae-data -O2 -o vl "$top/tests/data/vc_low.c" || exit 1
"$top/bin/aecc" -fae-data -fno-ae-vcache -O2 -c -o segv.o "$top/tests/data/vc_signal_segv.c" || exit 1
"$top/bin/aecc" -fae-data -O2 -o vs "$top/tests/data/vc_signal.c" segv.o || exit 1
"$top/bin/aerun" -q -o vl.zst -- ./vl >/dev/null || exit 1
"$top/bin/aerun" -q -o vs.zst -- ./vs >/dev/null || exit 1
# schema_case NAME WHAT PROG: a copy of PROG (and twin) as NAME, patched
schema_case() {
	cp "$3" "$1" && cp "$3.orig" "$1.orig" &&
	python3 "$top/tests/host/schema_patch.py" "$1" "$2" >/dev/null
}
"$top/bin/aetrace" regen --format=lackey vl.zst vl > vl.good || exit 1
schema_case same same vl && "$top/bin/aetrace" regen --format=lackey vl.zst same > out 2> err &&
   cmp -s out vl.good
result "schema rewritten with its own version and a new hash: the same trace"
# a count its record cannot hold is corrupt, not an allocation to try
schema_case nevbig nevbig vl || exit 1
expect_error "an object counting 2^30 events" "nevbig: corrupt schema record" \
	"$top/bin/aetrace" regen --format=lackey vl.zst nevbig
schema_case low4 low-at-4 vl || exit 1
expect_error "low-half records in a version 4 object" "low4: corrupt schema event" \
	"$top/bin/aetrace" regen --format=lackey vl.zst low4
schema_case addr5 addr-at-5 vs || exit 1
expect_error "address-cache records in a version 5 object" "addr5: corrupt schema event" \
	"$top/bin/aetrace" regen --format=lackey vs.zst addr5
# a switch's jump table: its index is known, no byte (AE_VAL_JTIDX_KNOWN)
"$top/bin/aecc" -fae-data -O2 -o sw "$top/tests/corpus/switch_dense.c" || exit 1
"$top/bin/aerun" -q -o sw.zst -- ./sw >/dev/null || exit 1
schema_case jt6 jt-at-6 sw || exit 1
expect_error "known table indices in a version 6 object" "jt6: corrupt schema event" \
	"$top/bin/aetrace" regen --format=lackey sw.zst jt6
# its bounds check tests the index the table needs: decided, no witness
schema_case pred7 pred-at-7 sw || exit 1
expect_error "decided branches in a version 7 object" "pred7: corrupt schema event" \
	"$top/bin/aetrace" regen --format=lackey sw.zst pred7
# pick()'s fall-through side begins with a value-cache record, no witness
"$top/bin/aecc" -fae-data -O2 -o vk "$top/tests/data/vc_kill.c" || exit 1
"$top/bin/aerun" -q -o vk.zst -- ./vk >/dev/null || exit 1
schema_case vk8 vcside-at-8 vk || exit 1
expect_error "record-first sides in a version 8 object" "vk8: corrupt schema event" \
	"$top/bin/aetrace" regen --format=lackey vk.zst vk8
schema_case vkpool vcpool vk || exit 1
expect_error "a record-first side's other witness not a witness byte" "vkpool: corrupt schema event" \
	"$top/bin/aetrace" regen --format=lackey vk.zst vkpool
# call_take()'s argument records form a value-cache group (AE_VC_GROUP)
"$top/bin/aecc" -fae-data -fno-ae-vcache -O2 -c -o gsegv.o "$top/tests/data/vc_group_segv.c" || exit 1
"$top/bin/aecc" -fae-data -O2 -o vg "$top/tests/data/vc_group.c" gsegv.o || exit 1
"$top/bin/aerun" -q -o vg.zst -- ./vg >/dev/null || exit 1
schema_case vg10 group-at-10 vg || exit 1
expect_error "value-cache groups in a version 10 object" "vg10: corrupt schema event" \
	"$top/bin/aetrace" regen --format=lackey vg.zst vg10
schema_case vgbig groupbig vg || exit 1
expect_error "a group counting more records than follow it" "vgbig: corrupt schema event" \
	"$top/bin/aetrace" regen --format=lackey vg.zst vgbig
schema_case newer newer vl || exit 1
expect_error "a schema version newer than this aetrace" "newer: built by a newer aecc" \
	"$top/bin/aetrace" regen --format=lackey vl.zst newer
cp p st && cp p.orig st.orig && strip -g st st.orig
"$top/bin/aetrace" regen t.zst st > out 2> err && cmp -s out good
result "strip -g: program and twin still regenerate the same trace"
head -c 100 /dev/urandom > junk.zst
expect_error "not a trace" "junk.zst" "$top/bin/aetrace" regen junk.zst p
size=$(stat -c %s t.zst)
for cut in 7 $((size / 3)) $((size - 9)); do
	head -c $cut t.zst > cut.zst
	expect_error "trace cut at byte $cut of $size" "offset" "$top/bin/aetrace" regen cut.zst p
done

# A full disk: the regeneration stops at the first failed write (a flipped
# byte near the trace's end, megabytes of output later, goes unread) and
# says which file; the rest of the capture is not read (no task of it is
# said to be unknown). The old code regenerated to the end.
"$top/bin/aerun" -q -o q.zst -- ./q >/dev/null || exit 1
qlen=$("$top/build/tests/trace_mutate" --data-len q.zst)
"$top/build/tests/trace_mutate" q.zst qm.zst $((qlen - 200)) 0x55 || exit 1
"$top/bin/aetrace" regen qm.zst q 2>err >/dev/null
if grep -q "corrupt trace" err; then
	expect_error "output on a full disk: stops there" '^aetrace: writing /dev/full: No space left' \
		"$top/bin/aetrace" regen -o /dev/full qm.zst q
	if [ "$(wc -l < err)" -ne 1 ]; then
		not_ok "... and says nothing else"
		sed 's/^/# /' err | head -3
	else
		ok "... and says nothing else"
	fi
else
	not_ok "output on a full disk: the flipped byte near the end is not detected"
	not_ok "... and says nothing else"
fi

# Flipped witness bytes: each run must end in an error naming the trace
# offset, or (if the flip happens to be consistent) in a trace that is not
# the good one. It must never crash or hang.
len=$("$top/build/tests/trace_mutate" --data-len t.zst)
bad=0 detected=0
for i in $(seq 1 40); do
	off=$(( (i * 7919) % len ))
	"$top/build/tests/trace_mutate" t.zst m.zst $off 0x5a || { bad=1; break; }
	timeout 60 "$top/bin/aetrace" regen m.zst p > out 2> err
	rc=$?
	if [ $rc -eq 1 ] && grep -q "offset" err; then
		detected=$((detected + 1))
	elif [ $rc -eq 0 ] && ! cmp -s out good; then
		:
	else
		bad=1
		echo "# flip at $off: status $rc"
		sed 's/^/# /' err | head -3
		break
	fi
done
if [ $bad = 0 ]; then
	ok "40 flipped witness bytes: no crash, no good-looking trace ($detected reported with an offset)"
else
	not_ok "flipped witness bytes"
fi

# Library routines expanded from their arguments (aecc -fae-data, issue 12
# item 3): a size record beyond the address space is named as corrupt,
# and flipped bytes of such a trace never crash or hang the expander.
if [ -e "$top/build/musl-data/lib/libc.a" ] &&
   "$top/bin/aecc" -fae-data -O2 -o dp "$top/tests/corpus/memfns.c" &&
   "$top/bin/aerun" -q -o dt.zst -- ./dp >/dev/null &&
   "$top/bin/aetrace" regen dt.zst dp > dgood; then
	# flip XOR into byte BYTE of the first expanded routine's record
	# that matches RE (AETRACE_DEBUG names it): regen must name the error
	corrupt_record() {	# NAME RE BYTE XOR ERROR-PATTERN
		local off
		off=$(AETRACE_DEBUG=1 "$top/bin/aetrace" regen dt.zst dp 2>&1 >/dev/null |
			sed -n "s/.*expanded routine $2 at offset \([0-9]*\)\$/\1/p" | head -1)
		if [ -z "$off" ]; then
			not_ok "$1: the record is in the trace"
			return
		fi
		"$top/build/tests/trace_mutate" dt.zst m.zst $((off + $3)) "$4"
		expect_error "$1" "$5" "$top/bin/aetrace" regen m.zst dp
	}
	corrupt_record "strlen's length record beyond the address space" "4 at .*: result .*" \
		7 0x80 "corrupt trace: .*beyond the address space"
	# a compare's stop record whose two bytes are made equal (0x61 'a'
	# becomes 0x62 'b', the other area's byte): no memory stops there
	corrupt_record "memcmp's stop record with equal bytes" "7 at .*: result 0x6261000000000000" \
		6 0x03 "corrupt trace: no memory stops a compare"
	# flip NAME SED BYTE XOR ERROR-PATTERN: flip XOR into byte BYTE of
	# the first record whose offset SED finds in AETRACE_DEBUG's lines:
	# regen must name the error, in time
	flip() {
		local off
		off=$(AETRACE_DEBUG=1 "$top/bin/aetrace" regen dt.zst dp 2>&1 >/dev/null |
			sed -n "$2" | head -1)
		if [ -n "$off" ] && "$top/build/tests/trace_mutate" dt.zst m.zst $((off + $3)) "$4"; then
			expect_error "$1" "$5" timeout 30 "$top/bin/aetrace" regen m.zst dp
		else
			not_ok "$1: the record is in the trace"
		fi
	}
	mc=$(nm dp.orig | sed -n 's/^0*\([0-9a-f]*\) T memcpy$/\1/p')
	sl=$(nm dp.orig | sed -n 's/^0*\([0-9a-f]*\) T strlen$/\1/p')
	# a memcpy's size made 1 TiB larger (bit 40 of its rdx record): named
	# before the emulation, not after minutes of emulating up to the
	# expander's memory limit
	flip "memcpy's size record 1 TiB larger" \
		"s/.*reg rdx = 0x[0-9a-f]* at offset \([0-9]*\) before 0x${mc:-none}\$/\1/p" 5 0x01 \
		"a call of [0-9]* bytes: .*expander's limit"
	# a strlen's pointer record with bit 47 set: its area would lie past
	# the user address space, where the expander would make up memory
	# and write a trace with exit 0 (found by flipping bytes: a length
	# that walked past it took minutes and gigabytes)
	flip "strlen's pointer record past the user address space" \
		"s/.*reg rdi = 0x[0-9a-f]* at offset \([0-9]*\) before 0x${sl:-none}\$/\1/p" 5 0x80 \
		"corrupt trace: an expanded routine's area ends beyond the user address space"
	# a rep count made 2^32 larger (the rep stos that clears
	# __init_libc's auxv array on the stack): its stores would run
	# past the top of the address space, so the count is named as
	# corrupt, not regenerated for minutes (found by flipping bytes)
	flip "a stack rep stos's count record 2^32 larger" \
		's/.*rep count [0-9]* at offset \([0-9]*\) before .*/\1/p' 4 0x01 \
		"corrupt trace: a rep instruction's iterations run beyond the address space"
	# an argument that decides nothing (the destination of a 0-byte
	# memcpy, up to its alignment) may change and regenerate the same,
	# correct trace: only crashes and hangs are failures here. Low bits
	# are flipped: a size made larger than the expander's memory is an
	# error before the emulation; up to 16 MiB larger, it emulates.
	len=$("$top/build/tests/trace_mutate" --data-len dt.zst)
	bad=0 detected=0 same=0
	for i in $(seq 1 16); do
		off=$(( (i * 7919) % len ))
		"$top/build/tests/trace_mutate" dt.zst m.zst $off 0x01 || { bad=1; break; }
		timeout 120 "$top/bin/aetrace" regen m.zst dp > out 2> err
		rc=$?
		if [ $rc -eq 1 ] && grep -q "offset" err; then
			detected=$((detected + 1))
		elif [ $rc -eq 0 ]; then
			cmp -s out dgood && same=$((same + 1))
		else
			bad=1
			echo "# flip at $off: status $rc"
			sed 's/^/# /' err | head -3
			break
		fi
	done
	if [ $bad = 0 ]; then
		ok "16 flipped bytes amid expanded routines: no crash, no hang ($detected reported with an offset, $same without effect)"
	else
		not_ok "flipped bytes amid expanded routines"
	fi
else
	ok "expanded routines # SKIP no data-traced musl (make musl-data) or memfns did not build"
fi

# A fault inside an expanded routine (into an inaccessible page, the
# handler leaves by siglongjmp): in memcpy's rep movsq the marker's %rcx
# names the iteration, so it regenerates (data-exact's memfn_fault checks
# it against the stepper); in memmove's backward loop, whose iterations
# the marker's ip, %rsp and %rcx do not tell apart, regen must refuse,
# naming the routine's fault, instead of a trace with instructions that
# never ran.
cat > fault.c <<'EOF'
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static sigjmp_buf jb;
static void on_segv(int sig) { siglongjmp(jb, 1); }

int main(void)
{
	static char src[8192];
	char *p = mmap(0, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile size_t n = 4096;

	if (p == MAP_FAILED || mprotect(p + 8192, 4096, PROT_NONE))
		return 1;
	signal(SIGSEGV, on_segv);
	if (!sigsetjmp(jb, 1))
		memcpy(p + 6144, src, n);
	puts("faulted");
	return 0;
}
EOF
sed 's/memcpy(p + 6144, src, n)/memmove(p + 6152, p + 6144, n)/' fault.c > mfault.c
if [ -e "$top/build/musl-data/lib/libc.a" ] &&
   "$top/bin/aecc" -fae-data -O2 -o fp fault.c &&
   "$top/bin/aerun" -q -o ft.zst -- ./fp >/dev/null &&
   "$top/bin/aecc" -fae-data -O2 -o mfp mfault.c &&
   "$top/bin/aerun" -q -o mft.zst -- ./mfp >/dev/null; then
	"$top/bin/aetrace" regen --format=lackey ft.zst fp >out 2>err
	result "a fault inside an expanded memcpy's rep movsq regenerates"
	expect_error "a fault inside an expanded memmove's loop" \
		"signal 11 .a fault. inside an expanded library routine" \
		"$top/bin/aetrace" regen --format=lackey mft.zst mfp
	# two memcpys with no byte between them, the second faulting: its
	# marker fits the first call too, which must not take it
	"$top/bin/aecc" -fae-data -O2 -o mf2 "$top/tests/data/memfn_fault.c" &&
		"$top/bin/aerun" -q -o mf2.zst -- ./mf2 two >/dev/null
	expect_error "a fault that fits two expanded calls at one offset" \
		"marker [0-9]+ was placed in an expanded call that another one at its offset fits as well" \
		"$top/bin/aetrace" regen --format=lackey mf2.zst mf2
	# a fault amid an expanded memcpy whose handler forks: a child that
	# exits in the handler regenerates (it replays its parent through
	# the expansion to the fork); one that returns into the routine is
	# refused by name (the expansion would read its parent's markers)
	"$top/bin/aerun" -q -o mff.zst -- ./mf2 fork >/dev/null && all_exit mff.zst mf2 2
	result "a fault amid an expanded memcpy whose handler forks a child that exits there: both regenerate"
	"$top/bin/aerun" -q -o mfr.zst -- ./mf2 forkret >/dev/null
	expect_error "... one whose child returns into the memcpy: refused by name" \
		"forked inside a signal handler that interrupted an expanded library routine, it returned into the routine: not supported" \
		"$top/bin/aetrace" regen --format=lackey mfr.zst mf2
	# ... and one whose child, forked in a handler nested in that one,
	# returns into the outer handler (not the routine) and exits there
	"$top/bin/aerun" -q -o mfn.zst -- ./mf2 forknest >/dev/null && all_exit mfn.zst mf2 2
	result "... one whose child, forked in a nested handler, returns into the outer handler and exits: both regenerate"
	# a fault in strlen, whose result record comes after the handler's
	# bytes, the handler returning: it was taken at the entry, silently
	cat > sfault.c <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static char *buf;
static void on_segv(int s) { (void)s; mprotect(buf + 4096, 4096, PROT_READ | PROT_WRITE); }

int main(void)
{
	volatile size_t n;

	buf = mmap(0, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(buf + 4000, 'x', 96);
	signal(SIGSEGV, on_segv);
	mprotect(buf + 4096, 4096, PROT_NONE);
	n = strlen(buf + 4000);
	printf("%zu\n", n);
	return 0;
}
EOF
	"$top/bin/aecc" -fae-data -O2 -o sfault sfault.c && "$top/bin/aerun" -q -o sfault.zst -- ./sfault >/dev/null
	expect_error "a fault inside an expanded strlen whose handler returns" \
		"signal 11 .a fault. inside an expanded library routine at 0x[0-9a-f]+, taken at its entry" \
		"$top/bin/aetrace" regen --format=lackey sfault.zst sfault
	# the same handler leaving by siglongjmp: the routine's instructions
	# before the fault would come after the handler, which never
	# returns (a review: the regeneration had none of them, silently)
	sed -e 's|#include <string.h>|#include <string.h>\n#include <setjmp.h>\nstatic sigjmp_buf jb;|' \
	    -e 's|^static void on_segv.*|static void on_segv(int s) { (void)s; siglongjmp(jb, 1); }|' \
	    -e 's|n = strlen(buf + 4000);|n = sigsetjmp(jb, 1) ? 0 : strlen(buf + 4000);|' sfault.c >sfaultlj.c
	"$top/bin/aecc" -fae-data -O2 -o sfaultlj sfaultlj.c &&
		"$top/bin/aerun" -q -o sfaultlj.zst -- ./sfaultlj >/dev/null
	expect_error "a fault inside an expanded strlen whose handler leaves by siglongjmp" \
		"a signal handler left an expanded library routine it interrupted by longjmp" \
		"$top/bin/aetrace" regen --format=lackey sfaultlj.zst sfaultlj
else
	ok "fault inside an expanded routine # SKIP no data-traced musl or the program did not build"
	ok "fault inside an expanded memmove # SKIP no data-traced musl or the program did not build"
	ok "a fault that fits two expanded calls # SKIP no data-traced musl or the program did not build"
	ok "a fault amid an expanded memcpy whose handler forks # SKIP no data-traced musl or the program did not build"
	ok "... one whose child returns into the memcpy # SKIP no data-traced musl or the program did not build"
	ok "... one whose child, forked in a nested handler, returns into the outer handler # SKIP no data-traced musl or the program did not build"
	ok "a fault inside an expanded strlen # SKIP no data-traced musl or the program did not build"
	ok "a fault inside an expanded strlen, siglongjmp # SKIP no data-traced musl or the program did not build"
fi
# A handler that changes, in its ucontext, a register the data trace's
# regeneration follows (%rbx, an address from memory), the status flags
# of a branch it decides, %rbx in a callee that restored it already (the
# return restores the caller's), %rbx after a nested handler on an
# alternate stack above its frame, or a faulting gather's index register
# (tests/data/ctx_change.c): aerun's SIGRETURN says what changed, and the
# regeneration must refuse it (it used to follow the old values,
# silently). A build without -fae-data decides nothing from registers:
# its trace regenerates, the branch's side the handler chose included.
# a string instruction after a popfq in the same function: the direction
# flag came from the stack, which no record gives; refused by name (it
# used to keep the std before the popfq, and stored downwards, silently)
cat > popf.c <<'EOF'
#include <stdio.h>
static long b[8];
int main(void)
{
	long *p = b, n = 8;

	__asm__ volatile("pushfq\n\tstd\n\tpopfq" : : : "cc");
	__asm__ volatile("rep stosq" : "+D"(p), "+c"(n) : "a"(1L) : "memory");
	printf("%ld %ld\n", b[0], b[7]);
	return 0;
}
EOF
if [ -e "$top/build/musl-data/lib/libc.a" ] && "$top/bin/aecc" -fae-data -O2 -o popf popf.c; then
	refused_run "a rep stosq after a popfq: refused, naming the direction flag" \
		"an address needs the direction flag, which the trace does not give \(a popfq" popf x
else
	not_ok "a rep stosq after a popfq: aecc -fae-data failed"
fi

ctx=$top/tests/data/ctx_change.c
if [ -e "$top/build/musl-data/lib/libc.a" ] && "$top/bin/aecc" -fae-data -O2 -o ctxd "$ctx" &&
   "$top/bin/aecc" -O2 -o ctxi "$ctx"; then
	refused_run "a handler that changes a followed register in its ucontext" \
		"signal handler changed %rbx in its ucontext, which the regeneration follows" ctxd reg
	refused_run "a handler that changes the status flags of a decided branch" \
		"signal handler changed the status flags in its ucontext, which the regeneration follows" ctxd flags
	refused_run "a handler that changes a callee-saved register its callee restored" \
		"signal handler changed %rbx in its ucontext, which the regeneration follows" ctxd saved
	refused_run "a handler that changes %rbx after a nested handler on an alternate stack" \
		"signal handler changed %rbx in its ucontext, which the regeneration follows" ctxd nested
	# the child of a fork in the handler returns from its copy of the
	# frame: aerun compares that return too (the child's change to %rbx
	# is seen, nothing goes unchecked); the child replays its parent's
	# trace to the fork and is refused at that return by name, as the
	# parent would be, and the parent regenerates
	refused_run "a task forked inside a signal handler that changes %rbx: the child refused by that name" \
		"task [0-9]+/[0-9]+ \(ctxd\): signal handler changed %rbx in its ucontext" ctxd fork
	"$top/bin/aetrace" stats fork.zst ctxd >out 2>err
	[ "$(awk '$NF == "FAILED"' out | wc -l)" = 1 ] && [ "$(awk '$NF == "exit"' out | wc -l)" = 1 ]
	result "... the parent regenerated to its exit, the child alone failed"
	"$top/bin/schedlog" print fork.zst >out 2>err &&
	   [ "$(awk '$5 == "SIGRETURN" && / changed=0$/' out | wc -l)" = 1 ] &&
	   [ "$(awk '$5 == "SIGRETURN" && / changed=0x8$/' out | wc -l)" = 1 ] &&
	   [ "$(awk '$5 == "SIGRETURN"' out | wc -l)" = 2 ]
	result "... and aerun compared the child's return from the handler (%rbx changed) as well as the parent's"
	if ./ctxd.orig vector | grep -q 'gathered 100 101 102 103$'; then
		refused_run "a handler that changes a faulting gather's index register" \
			"signal handler changed the vector or x87 registers in its ucontext" ctxd vector
	else
		ok "a handler that changes a faulting gather's index register # SKIP no avx2: $(./ctxd.orig vector)"
	fi
	zero=$(printf '%08x' "0x$(nm ctxi.orig | awk '$3 == "ctx_change_zero" { print $1 }')")
	"$top/bin/aerun" -q -o ctxi.zst -- ./ctxi flags >ctxi.out 2>&1 &&
		"$top/bin/aetrace" regen --format=lackey ctxi.zst ctxi >ctxi.lk 2>err &&
		grep -q 'zero side 1$' ctxi.out && grep -q "^I  $zero," ctxi.lk
	result "without -fae-data, a handler that changes the flags: regenerated, with the side it chose"
	# hand-made SIGRETURNs of the handler that changed nothing: a mask
	# naming %rbx is refused like the real one; one naming no register,
	# or flags a producer never writes, is a corrupt trace; without the
	# flags the return counts as unchecked
	"$top/bin/aerun" -q -o ctxn.zst -- ./ctxd none >/dev/null 2>&1
	k=$("$top/bin/schedlog" print ctxn.zst | awk '$5 == "SIGRETURN" { print $1; exit }')
	mut() { "$top/build/tests/trace_mutate" --marker ctxn.zst "$1.zst" "${k:-0}" "$2" "$3"; }
	mut ctxm1 arg 8 && expect_error "a SIGRETURN whose mask names %rbx" \
		"signal handler changed %rbx in its ucontext" "$top/bin/aetrace" regen ctxm1.zst ctxd
	mut ctxm2 arg $((1 << 20)) && expect_error "a SIGRETURN whose mask names no register" \
		"corrupt trace: SIGRETURN marker ${k:-x} \\(flags 0x3, changed 0x100000\\): the mask names what was not compared" \
		"$top/bin/aetrace" regen ctxm2.zst ctxd
	mut ctxm3 flags 2 && expect_error "a SIGRETURN compared in full but not checked" \
		"corrupt trace: SIGRETURN marker ${k:-x} \\(flags 0x2, changed 0\\): the flags say what was compared without saying anything was" "$top/bin/aetrace" regen ctxm3.zst ctxd
	mut ctxm4 flags 0 && "$top/bin/aetrace" stats ctxm4.zst ctxd >out 2>err &&
		grep -q "^unchecked  *1 handlers' returns" out
	result "a SIGRETURN that compared nothing: regenerated, counted as unchecked"
	# a trbuf.ko that compared the general registers and the flags, not
	# the vector state (TRBUF_MKF_CTX_FLAGS)
	mut ctxm5 flags 5 && "$top/bin/aetrace" stats ctxm5.zst ctxd >out 2>err &&
		grep -q "^unchecked  *0 handlers' returns .*, 0 with only the general registers compared, 1 without the vector state$" out
	result "a SIGRETURN that compared the registers and the flags: regenerated, counted as without the vector state"
	# (each made from ctxm5; a mutation that fails is a failed test)
	mut5() { "$top/build/tests/trace_mutate" --marker ctxm5.zst "$1.zst" "${k:-0}" "$2" "$3" ||
		 { : >"$1.zst"; echo "trace_mutate failed" >err; }; }
	mut5 ctxm6 arg $((1 << 16))
	expect_error "a SIGRETURN that compared the flags and names a status flag" \
		"signal handler changed the status flags in its ucontext, which the regeneration follows" \
		"$top/bin/aetrace" regen ctxm6.zst ctxd
	mut5 ctxm7 arg $((1 << 18))
	expect_error "a SIGRETURN that compared the flags and names the vector state" \
		"corrupt trace: SIGRETURN marker ${k:-x} \\(flags 0x5, changed 0x40000\\): the mask names what was not compared" \
		"$top/bin/aetrace" regen ctxm7.zst ctxd
	mut5 ctxm8 flags 4
	expect_error "a SIGRETURN with the flags compared but not checked" \
		"corrupt trace: SIGRETURN marker ${k:-x} \\(flags 0x4, changed 0\\): the flags say what was compared without saying anything was" "$top/bin/aetrace" regen ctxm8.zst ctxd
	mut5 ctxm9 flags 7
	expect_error "a SIGRETURN compared in full and with the flags only" \
		"corrupt trace: SIGRETURN marker ${k:-x} \\(flags 0x7, changed 0\\): the flags say the vector state was compared and that it was not" "$top/bin/aetrace" regen ctxm9.zst ctxd
else
	ok "a handler that changes a followed register # SKIP no data-traced musl or the program did not build"
	ok "a handler that changes the status flags # SKIP no data-traced musl or the program did not build"
	ok "a handler that changes a callee-saved register # SKIP no data-traced musl or the program did not build"
	ok "a handler that changes %rbx after a nested handler # SKIP no data-traced musl or the program did not build"
	ok "a task forked inside a signal handler # SKIP no data-traced musl or the program did not build"
	ok "... the parent regenerated # SKIP no data-traced musl or the program did not build"
	ok "... and aerun compared the child's return # SKIP no data-traced musl or the program did not build"
	ok "a handler that changes a gather's index # SKIP no data-traced musl or the program did not build"
	ok "without -fae-data, a handler that changes the flags # SKIP the program did not build"
	for c in "names %rbx" "names no register" "compared in full but not checked" "that compared nothing" \
		"that compared the flags" "that compared the flags, a status flag" \
		"that compared the flags, the vector state" "with the flags but not checked" \
		"in full and with the flags only"; do
		ok "a SIGRETURN whose mask $c # SKIP the program did not build"
	done
fi

# A gather that faults at its fifth element, on the page after the first
# four (tests/data/gather_fault.c span): the CPU loaded some before the
# fault, which the trace does not say (the regeneration used to give all
# eight after the handler, silently)
if "$top/bin/aecc" -fae-data -O2 -o gf "$top/tests/data/gather_fault.c" 2>/dev/null &&
   "$top/bin/aerun" -q -o gf.zst -- ./gf span >gf.out && ! grep -q '^no avx2' gf.out; then
	expect_error "a fault at a gather whose elements span two pages" \
		"signal 11 .a fault. at a gather whose elements lie on more than one page" \
		"$top/bin/aetrace" regen --format=lackey gf.zst gf
else
	ok "a fault at a gather whose elements span two pages # SKIP no AVX2, or it did not build"
fi
# The same in a compare, which faults in the scan at its entry, before its
# stop record: called directly (past its argument records) and through a
# pointer (after them).
sed 's/memcpy(p + 6144, src, n)/n = memcmp(p + 6144, src, n)/' fault.c > cfault.c
sed 's/memcpy(p + 6144, src, n)/n = p_cmp(p + 6144, src, n)/; s/^static sigjmp_buf jb;/&\nstatic int (*volatile p_cmp)(const void *, const void *, size_t) = memcmp;/' \
	fault.c > cfault2.c
for f in cfault cfault2; do
	if [ -e "$top/build/musl-data/lib/libc.a" ] &&
	   "$top/bin/aecc" -fae-data -O2 -o $f $f.c &&
	   "$top/bin/aerun" -q -o $f.zst -- ./$f >/dev/null; then
		expect_error "a fault inside an expanded memcmp ($f)" \
			"signal 11 .a fault. inside an expanded library routine .reading a compare" \
			"$top/bin/aetrace" regen --format=lackey $f.zst $f
	else
		ok "fault inside an expanded compare # SKIP no data-traced musl or $f did not build"
	fi
done
# A signal whose marker fits two visits (tests/data/sig_twice.c: one
# leaf called twice from one frame, no byte between) is refused, not
# placed at the first: in an instruction trace and in this program's
# data trace (its pointers are known at both calls: no record between).
# A rep instruction's count record tells its visits apart: a fault in
# the first of two is that visit's, and regenerates, the handler after
# the iterations that ran; where its handler ends the program, the rep
# does not run after it.
twice_re="SIGNAL marker [0-9]* at offset [0-9]*: its ip is reached again with its %rsp 0x[0-9a-f]* before another trace byte is read: which visit the signal interrupted is ambiguous"
if "$top/bin/aecc" -O2 -o twice "$top/tests/data/sig_twice.c" &&
   "$top/bin/aerun" -q -o twice.zst -- ./twice >/dev/null &&
   "$top/bin/aerun" -q -o rep.zst -- ./twice rep >/dev/null &&
   "$top/bin/aerun" -q -o exit.zst -- ./twice exit >/dev/null; then
	expect_error "a signal that fits two visits of its ip" "$twice_re" \
		"$top/bin/aetrace" regen twice.zst twice
	# fill's first and past-last address, the handler's, as regen prints
	# them (8 hex digits)
	read -r f e h < <(nm -S twice.orig | awk '$4 ~ /^fill/ { f = $1; n = $2 }
		$4 == "on_segv" { h = $1 } END { print f, n, h }' |
		{ read -r f n h; printf '%08x %08x %08x\n' $((16#$f)) $((16#$f + 16#$n)) $((16#$h)); })
	# (and after the 96 iterations of its rep that ran before the
	# fault: the SIGNAL marker's %rcx says how many were left)
	"$top/bin/aetrace" regen rep.zst twice >out 2>err &&
	   [ "$(awk -v f="$f" -v e="$e" -v h="$h" '/^I/ { split($2, a, ",")
		if (a[1] == f) nf++; if (a[1] > f && a[1] < e && ++c[a[1]] > m) m = c[a[1]]
		if (a[1] == h) { print nf, m; exit } }' out)" = "1 96" ]
	result "a fault in the first of two rep instructions: regenerated, its handler after the first call's 96 iterations"
	"$top/bin/aetrace" regen exit.zst twice >out 2>err &&
	   [ "$(awk -v f="$f" -v e="$e" -v h="$h" '/^I/ { split($2, a, ","); if (a[1] == h) inh = 1
		if (inh && a[1] >= f && a[1] < e) late++ } END { print inh + 0, late + 0 }' out)" = "1 0" ]
	result "a handler that ends the program: the rep it interrupted does not run after it"
else
	not_ok "sig_twice.c builds and runs under aerun"
fi
if [ -e "$top/build/musl-data/lib/libc.a" ] &&
   "$top/bin/aecc" -fae-data -O2 -o dtwice "$top/tests/data/sig_twice.c" &&
   "$top/bin/aerun" -q -o dtwice.zst -- ./dtwice >/dev/null; then
	expect_error "the same in a data trace" "$twice_re" \
		"$top/bin/aetrace" regen --format=lackey dtwice.zst dtwice
else
	ok "sig_twice.c as a data trace # SKIP no data-traced musl or it did not build"
fi
# Markers amid rep instructions, on hand-made input: a SIGNAL whose %rcx
# is more than its rep had left is an error naming it; one moved past a
# repe (into its count-after record's sequence, %rcx the count it ended
# with: as a timer signal there would be) comes after all of the rep's
# iterations, though the record it precedes tells how many there were.
if "$top/bin/aecc" -O2 -o rsig "$top/tests/data/rep_signal.c" &&
   "$top/bin/aerun" -q -o rsig.zst -- ./rsig >/dev/null; then
	# the instrumented fill's rep, cmp's repz cmpsb; the twin's cmpsb
	rep_ip() { objdump -d --no-show-raw-insn "$1" | awk -v f="<$2" -v i="$3" '
		/^[0-9a-f]+ </ { in_f = $2 == f ">:" || index($2, f ".") == 1 }
		in_f && index($0, i) { sub(":", "", $1); print $1; exit }'; }
	fi=$(rep_ip rsig fill "rep stos") ci=$(rep_ip rsig cmp "repz cmpsb")
	co=$(rep_ip rsig.orig cmp "repz cmpsb")
	hi=$(nm rsig.orig | awk '$3 == "on_segv" { print $1 }')
	mk_at() { "$top/bin/schedlog" print rsig.zst | awk -v ip="ip=0x$1" '$5 == "SIGNAL" && $7 == ip { print $1; exit }'; }
	# the offset of marker $2 of capture $1 (in its sub-buffer: these
	# small captures have one, so it is trace_mutate's DATA offset too)
	mk_off() { "$top/bin/schedlog" print "$1" | awk -v k="$2" '$1 == k { split($6, a, ":"); print a[2] }'; }
	# cmp's cmpsb records before each entry of the handler, and after
	# the last one
	per_handler() {
		awk -v c="$(printf '%08x' $((0x$co)))" -v h="$(printf '%08x' $((0x$hi)))" '/^I/ {
			split($2, a, ","); if (a[1] == c) n++; if (a[1] == h) { s = s " " n + 0; n = 0 } }
			END { print s " " n + 0 }' "$1"
	}
	fk=$(mk_at "$fi") ck=$(mk_at "$ci")
	if [ -n "$fk" ] && [ -n "$ck" ] && [ -n "$co" ] && [ -n "$hi" ]; then
		"$top/build/tests/trace_mutate" --marker rsig.zst cx.zst "$fk" cx 1000
		expect_error "a SIGNAL marker's %rcx more than its rep had left" \
			"SIGNAL marker $fk: its %rcx 0x3e8 does not fit the 200 iterations the rep instruction had left" \
			"$top/bin/aetrace" regen cx.zst rsig
		# a count past the address space (a flipped byte): an error,
		# not 2^48 iterations
		fo=$(mk_off rsig.zst "$fk")
		"$top/build/tests/trace_mutate" rsig.zst big.zst $((fo - 2)) 1
		expect_error "a rep count beyond the address space" \
			"corrupt trace: a rep instruction's iterations run beyond the address space" \
			timeout 60 "$top/bin/aetrace" regen big.zst rsig
		next=$(printf '%x' $((0x$ci + 2)))
		"$top/build/tests/trace_mutate" --marker rsig.zst m1.zst "$ck" ip "0x$next" &&
		"$top/build/tests/trace_mutate" --marker m1.zst m2.zst "$ck" cx 139 &&
		"$top/build/tests/trace_mutate" --marker m2.zst m3.zst $((ck + 1)) cx 139 &&
		"$top/build/tests/trace_mutate" --marker m3.zst past.zst $((ck + 1)) ip "0x$next"
		"$top/bin/aetrace" regen past.zst rsig >out 2>err &&
		   [ "$(per_handler out)" = " 0 0 61 0 0" ]
		result "a signal after a repe's last iteration: its handler after all 61"
		# a kill there: the count after it is never written; moved
		# from amid the repe (40 run) to past it, 50 run
		"$top/bin/aerun" -q -o kc.zst -- ./rsig killcmp >/dev/null 2>&1
		kk=$("$top/bin/schedlog" print kc.zst | awk '$5 == "EXIT" { print $1 }')
		[ -n "$kk" ] &&
		   "$top/build/tests/trace_mutate" --marker kc.zst k1.zst "$kk" ip "0x$next" &&
		   "$top/build/tests/trace_mutate" --marker k1.zst k2.zst "$kk" cx 150 &&
		   "$top/bin/aetrace" regen k2.zst rsig >out 2>err &&
		   [ "$(awk -v c="$(printf '%08x' $((0x$co)))" '/^I/ { split($2, a, ","); n += a[1] == c; l = a[1] }
			END { print n, l == c }' out)" = "50 1" ]
		result "a kill after a repe's last iteration: its 50 iterations, then the end"
		# the same signal past a repe of count 0 (its count record and
		# the one after it made 0): its one execution before the handler
		so=$(mk_off rsig.zst "$ck") ro=$(mk_off rsig.zst $((ck + 1)))
		"$top/build/tests/trace_mutate" m2.zst z1.zst $((so - 8)) 200 &&
		   "$top/build/tests/trace_mutate" z1.zst z2.zst "$ro" 139 &&
		   "$top/build/tests/trace_mutate" --marker z2.zst z3.zst "$ck" cx 0 &&
		   "$top/build/tests/trace_mutate" --marker z3.zst z4.zst $((ck + 1)) cx 0 &&
		   "$top/build/tests/trace_mutate" --marker z4.zst zero.zst $((ck + 1)) ip "0x$next" &&
		   "$top/bin/aetrace" regen zero.zst rsig >out 2>err &&
		   [ "$(per_handler out)" = " 0 0 1 0 0" ]
		result "a signal past a repe of count 0: its one execution before the handler"
		# a kill in a loop's back-edge witness (its only byte), after
		# the first iteration, the data cut there (moved from the later
		# fault): the body once, not stopped at the loop head's first
		# visit at that offset
		jt=$(objdump -d --no-show-raw-insn rsig.orig | awk '/^[0-9a-f]+ </ { f = $2 ~ /^<spin/ }
			f && /jne/ { sub(":", "", $1); print $1; exit }')
		st=$(objdump -d --no-show-raw-insn rsig | awk '/^[0-9a-f]+ </ { f = $2 ~ /^<spin/ }
			f && /jne/ { print $(NF - 1); exit }')
		"$top/bin/aerun" -q -o kl.zst -- ./rsig killloop >/dev/null 2>&1
		# (its %rsp in spin, a leaf: 8 below main's, where it died)
		read -r kk ksp < <("$top/bin/schedlog" print kl.zst |
			awk '$5 == "EXIT" { sub("sp=", "", $8); print $1, $8 }')
		wo=$(AETRACE_DEBUG=1 "$top/bin/aetrace" regen kl.zst rsig 2>&1 >/dev/null |
			sed -n "s/.*witness [0-9]* at 0x$jt, offset \([0-9]*\)\$/\1/p" | head -1)
		[ -n "$jt" ] && [ -n "$st" ] && [ -n "$kk" ] && [ -n "$wo" ] &&
		   "$top/build/tests/trace_mutate" --marker kl.zst l1.zst "$kk" offset "$wo" &&
		   "$top/build/tests/trace_mutate" --marker l1.zst l2.zst "$kk" ip "0x$st" &&
		   "$top/build/tests/trace_mutate" --marker l2.zst l3.zst "$kk" sp $((ksp - 8)) &&
		   "$top/build/tests/trace_mutate" --data-cut l3.zst l4.zst "$wo" &&
		   timeout 60 "$top/bin/aetrace" regen l4.zst rsig 2>err | head -c 10000000 >out &&
		   [ "$(awk -v j="$(printf '%08x' $((0x$jt)))" '/^I/ { split($2, a, ","); n += a[1] == j; l = a[1] }
			END { print n, l == j }' out)" = "1 1" ]
		result "a kill in a loop's back-edge witness: the body once, then the end"
		# the same with the %rsp it had where it died: an error, not
		# the loop again and again
		"$top/build/tests/trace_mutate" --data-cut l2.zst l5.zst "$wo"
		expect_error "a kill in a loop's back-edge witness with another %rsp" \
			"EXIT marker $kk: its %rsp 0x[0-9a-f]* is not the 0x[0-9a-f]* of the edge whose witness it cut" \
			timeout 60 "$top/bin/aetrace" regen l5.zst rsig
		# a handler that changes how many iterations its rep has left
		refused_run "a handler that changes its rep's %rcx" \
			"signal handler changed the %rcx of the instruction it interrupted" rsig setcx
	else
		not_ok "rep_signal.c: its rep instructions and SIGNAL markers found ($fi $ci $co $hi $fk $ck)"
	fi
else
	not_ok "rep_signal.c builds and runs under aerun"
fi
# A kill between two records an instruction writes before it (stos2's
# count and %rdi in a data trace; moved from its rep, with the data cut
# there): the task ends before the instruction, not "truncated".
if [ -e "$top/build/musl-data/lib/libc.a" ] &&
   "$top/bin/aecc" -fae-data -O2 -o drsig "$top/tests/data/rep_signal.c" &&
   { "$top/bin/aerun" -q -o dk.zst -- ./drsig kill2 >/dev/null 2>&1; [ -s dk.zst ]; }; then
	sa=$(objdump -d --no-show-raw-insn drsig | awk '/^[0-9a-f]+ </ { f = $2 == "<stos2>:" }
		f && /mov +%rdi,\(%r15\)/ { sub(":", "", $1); print $1; exit }')
	read -r dk de < <("$top/bin/schedlog" print dk.zst | awk '$5 == "EXIT" { split($6, a, ":"); print $1, a[2] }')
	# fill2's call of stos2 in the twin: the last instruction to run
	fc=$(objdump -d --no-show-raw-insn drsig.orig | awk '/^[0-9a-f]+ </ { f = $2 ~ /^<fill2/ }
		f && /call.*<stos2>/ { sub(":", "", $1); print $1; exit }')
	[ -n "$sa" ] && [ -n "$dk" ] && [ -n "$fc" ] &&
	   "$top/build/tests/trace_mutate" --marker dk.zst d1.zst "$dk" offset $((de - 8)) &&
	   "$top/build/tests/trace_mutate" --marker d1.zst d2.zst "$dk" ip "0x$sa" &&
	   "$top/build/tests/trace_mutate" --data-cut d2.zst d3.zst $((de - 8)) &&
	   "$top/bin/aetrace" regen d3.zst drsig >out 2>err &&
	   [ "$(awk '/^I/ { split($2, a, ","); l = a[1] } END { print l }' out)" = "$(printf '%08x' $((0x$fc)))" ]
	result "a kill between an instruction's two records before it: the task ends before it"
	# a kill between a call's return and the records after it (get's
	# result, moved there from the later fault, the data cut there):
	# the task ends at get's ret
	tc=$(objdump -d --no-show-raw-insn drsig.orig | awk '/^[0-9a-f]+ </ { f = $2 == "<main>:" }
		f && /call.*<get/ { sub(":", "", $1); print $1; exit }')
	ic=$(objdump -d --no-show-raw-insn drsig | awk '/^[0-9a-f]+ </ { f = $2 == "<main>:" }
		f && /call.*<get/ { getline; sub(":", "", $1); print $1; exit }')
	"$top/bin/aerun" -q -o kr.zst -- ./drsig killret >/dev/null 2>&1
	kk=$("$top/bin/schedlog" print kr.zst | awk '$5 == "EXIT" { print $1 }')
	ro=$(AETRACE_DEBUG=1 "$top/bin/aetrace" regen kr.zst drsig 2>&1 >/dev/null |
		sed -n "s/.*reg rax = 0x[0-9a-f]* at offset \([0-9]*\) after 0x$tc, .*/\1/p" | head -1)
	read -r glo ghi < <(nm -S drsig.orig | awk '$4 ~ /^get/ { print $1, $2 }')
	[ -n "$tc" ] && [ -n "$ic" ] && [ -n "$kk" ] && [ -n "$ro" ] && [ -n "$glo" ] &&
	   "$top/build/tests/trace_mutate" --marker kr.zst r1.zst "$kk" offset "$ro" &&
	   "$top/build/tests/trace_mutate" --marker r1.zst r2.zst "$kk" ip "0x$ic" &&
	   "$top/build/tests/trace_mutate" --data-cut r2.zst r3.zst "$ro" &&
	   "$top/bin/aetrace" regen r3.zst drsig >out 2>err &&
	   last=$(awk '/^I/ { split($2, a, ","); l = a[1] } END { print l }' out) &&
	   [ $((0x$last)) -ge $((0x$glo)) ] && [ $((0x$last)) -lt $((0x$glo + 0x$ghi)) ]
	result "a kill between a call's return and the records after it: the task ends at the callee's ret"
	# killed inside an expanded memset's rep stosq: the task ends there
	read -r mlo mhi < <(nm -S drsig.orig | awk '$4 == "memset" { print $1, $2 }')
	"$top/bin/aerun" -q -o km.zst -- ./drsig killmemset >/dev/null 2>&1
	[ -n "$mlo" ] && "$top/bin/aetrace" regen km.zst drsig >out 2>err &&
	   last=$(awk '/^I/ { split($2, a, ","); l = a[1] } END { print l }' out) &&
	   [ $((0x$last)) -ge $((0x$mlo)) ] && [ $((0x$last)) -lt $((0x$mlo + 0x$mhi)) ]
	result "a kill inside an expanded memset: the task ends inside it"
	# one whose result record follows its body: said, not "truncated"
	refused_run "a kill inside an expanded strlen (before its result record)" \
		"the task was killed inside an expanded library routine \\(before its result record\\): not regenerated exactly" \
		drsig killstrlen
else
	ok "a kill between an instruction's two records # SKIP no data-traced musl or it did not build"
	ok "a kill between a call's return and its records # SKIP no data-traced musl or it did not build"
	ok "a kill inside an expanded memset # SKIP no data-traced musl or it did not build"
	ok "a kill inside an expanded strlen # SKIP no data-traced musl or it did not build"
fi
# value-cache profiles (aecc -fae-vc-profile): hostile or foreign ones
# are errors naming the file and line, or change nothing
if [ -e "$top/build/musl-data/lib/libc.a" ] &&
   "$top/bin/aecc" -fae-data -O2 -o vp "$top/tests/corpus/interp.c" &&
   "$top/bin/aerun" -q -o vp.zst -- ./vp >/dev/null 2>&1 &&
   "$top/bin/aetrace" stats --vc-profile vp.prof vp.zst vp >/dev/null 2>err; then
	awk 'NR > 1 && !(NF == 8 && ($3 == "a" || $3 == "b") && $5 >= $6 && $5 >= $7 &&
			 $8 <= 9 * $5) { bad = 1 }
	     NR > 1 && $6 > 0 { lc = 1 }
	     END { exit bad || NR < 2 || !lc }' vp.prof &&
	   head -1 vp.prof | grep -qx 'aetrace-vcprof 2'
	result "aetrace stats --vc-profile writes a header and one line per value-cache place, some with address-cache hits"
	expect_error "a missing profile" "aecc: -fae-vc-profile: nosuch.prof: No such file" \
		"$top/bin/aecc" -fae-data -fae-vc-profile=nosuch.prof -O2 -o vq "$top/tests/corpus/interp.c"
	tail -n +2 vp.prof >nohdr.prof
	expect_error "a profile without its header line" "nohdr.prof:1: not a value-cache profile" \
		"$top/bin/aecc" -fae-data -fae-vc-profile=nohdr.prof -O2 -o vq "$top/tests/corpus/interp.c"
	{ head -2 vp.prof; echo "0badc0de 12 a 3 5 6 0 9"; } >over.prof
	expect_error "a profile line whose address hits exceed its records" "over.prof:3: not a profile line" \
		"$top/bin/aecc" -fae-data -fae-vc-profile=over.prof -O2 -o vq "$top/tests/corpus/interp.c"
	{ head -2 vp.prof; echo "0badc0de 12 a 16 5 4 0 9"; } >reg.prof
	expect_error "a profile line naming register 16" "reg.prof:3: not a profile line" \
		"$top/bin/aecc" -fae-data -fae-vc-profile=reg.prof -O2 -o vq "$top/tests/corpus/interp.c"
	{ head -1 vp.prof; echo "0x0badc0 12 a 3 -5 4 0 9"; } >sign.prof
	expect_error "a profile line with 0x and a sign" "sign.prof:2: not a profile line" \
		"$top/bin/aecc" -fae-data -fae-vc-profile=sign.prof -O2 -o vq "$top/tests/corpus/interp.c"
	: >empty.prof
	expect_error "an empty profile" "empty.prof: empty" \
		"$top/bin/aecc" -fae-data -fae-vc-profile=empty.prof -O2 -o vq "$top/tests/corpus/interp.c"
	mkdir -p dir.prof
	expect_error "a directory for a profile" "dir.prof: Is a directory" \
		"$top/bin/aecc" -fae-data -fae-vc-profile=dir.prof -O2 -o vq "$top/tests/corpus/interp.c"
	{ head -1 vp.prof; printf '0badc0de 1\0002 a 3 1 1 0 9\n'; } >nul.prof
	expect_error "a NUL byte in a profile" "nul.prof:2: a NUL byte" \
		"$top/bin/aecc" -fae-data -fae-vc-profile=nul.prof -O2 -o vq "$top/tests/corpus/interp.c"
	{ head -1 vp.prof; echo "0badc0de 12 c 3 5 4 0 9"; } >when.prof
	expect_error "a profile line whose place is neither before (b) nor after (a)" "when.prof:2: not a profile line" \
		"$top/bin/aecc" -fae-data -fae-vc-profile=when.prof -O2 -o vq "$top/tests/corpus/interp.c"
	{ echo "aetrace-vcprof 1"; echo "0badc0de 12 3 5 4 0"; } >v1.prof
	expect_error "a profile of the first version" 'v1.prof:1: not a value-cache profile .the first line must be "aetrace-vcprof 2"' \
		"$top/bin/aecc" -fae-data -fae-vc-profile=v1.prof -O2 -o vq "$top/tests/corpus/interp.c"
	"$top/bin/aecc" -fae-vc-profile=vp.prof -O2 -o vq "$top/tests/corpus/interp.c" >out 2>err
	rc=$?
	[ $rc = 2 ] && grep -q 'needs the value cache' err
	result "-fae-vc-profile without -fae-data: status 2, said ($rc)"
	# a foreign profile (another object's ids) names no place here: the
	# same program as without one; one that says every place hit the
	# address cache most, joined twice with cat (the header repeats, the
	# counts add up), changes the program and not its twin
	awk 'NR == 1 { print; next } { $1 = "00000000"; print }' vp.prof >foreign.prof
	awk 'NR == 1 { print; next } { $6 = $5; $7 = 0; $8 = $5; print }' vp.prof >first.prof
	cat first.prof first.prof >twice.prof
	"$top/bin/aecc" -fae-data -O2 -o v0 "$top/tests/corpus/interp.c" &&
	   "$top/bin/aecc" -fae-data -fae-vc-profile=foreign.prof -O2 -o vf "$top/tests/corpus/interp.c" &&
	   "$top/bin/aecc" -fae-data -fae-vc-profile=twice.prof -O2 -o v2 "$top/tests/corpus/interp.c" &&
	   cmp -s v0 vf && cmp -s v0.orig vf.orig && cmp -s v0.orig v2.orig && ! cmp -s v0 v2
	result "a foreign profile changes nothing; a joined one changes the program, not its twin"
	# one that says the cache saved nothing anywhere (9 bytes a record,
	# enough records): plain records, every place; the run regenerates
	# to the same instructions and data records (the twin may move: the
	# rollback sequences it carries are fewer)
	awk 'NR == 1 { print; next } { if ($5 < 64) $5 = 64; $8 = 9 * $5; print }' vp.prof >plain.prof
	if "$top/bin/aecc" -fae-data -fae-vc-profile=plain.prof -O2 -o vn "$top/tests/corpus/interp.c" &&
	   "$top/bin/aerun" -q -o vn.zst -- ./vn >/dev/null 2>&1; then
		a=$("$top/bin/aetrace" regen --format=lackey vp.zst vp | awk '/^I/ { i++ } /^ [LSM]/ { m++ } END { print i, m }')
		b=$("$top/bin/aetrace" regen --format=lackey vn.zst vn | awk '/^I/ { i++ } /^ [LSM]/ { m++ } END { print i, m }')
		read -r pl vc < <(ae_value_recs vn.zst vn)
		read -r pl0 _ < <(ae_value_recs vp.zst vp)
		[ -n "$a" ] && [ "$a" = "$b" ] && [ "${pl:-0}" -gt $((pl0 + 1000)) ] && [ "${vc:-1}" -lt 100 ]
		result "a profile where the cache saved nothing: plain records ($pl against $pl0, $vc coded), the same instructions and data records ($b against $a)"
		# the profile of that build names its plain places as plain:
		# used again (each place's records scaled as above), it builds
		# the same program
		"$top/bin/aetrace" stats --vc-profile vn.prof vn.zst vn >/dev/null &&
		   awk 'NR == 1 { print; next } { if ($5 < 64) { $8 = int($8 * 64 / $5); $5 = 64 } print }' \
			vn.prof >vn64.prof &&
		   "$top/bin/aecc" -fae-data -fae-vc-profile=vn64.prof -O2 -o vm "$top/tests/corpus/interp.c" &&
		   cmp -s vn vm
		result "... and the profile of its run, used again, builds the same program"
		# a build without the cache says nothing of it: its plain
		# records are not profiled (a profile of it would make every
		# place of a build with the cache plain)
		"$top/bin/aecc" -fae-data -fno-ae-vcache -O2 -o vx "$top/tests/corpus/interp.c" &&
		   "$top/bin/aerun" -q -o vx.zst -- ./vx >/dev/null 2>&1 &&
		   "$top/bin/aetrace" stats --vc-profile vx.prof vx.zst vx >/dev/null &&
		   read -r px _ < <(ae_value_recs vx.zst vx) &&
		   rx=$(awk 'NR > 1 { n += $5 } END { print n + 0 }' vx.prof) &&
		   [ "$px" -gt 10000 ] && [ "$rx" -lt 1000 ]
		result "the profile of a build without the cache leaves out its plain records (${rx:-?} records profiled of ${px:-?} plain)"
	else
		result "a profile where the cache saved nothing: the build or its run failed"
	fi
	expect_error "stats --vc-profile into a missing directory" "aetrace: nosuch/x.prof: No such file" \
		"$top/bin/aetrace" stats --vc-profile nosuch/x.prof vp.zst vp
else
	ok "value-cache profiles # SKIP no data-traced musl, or interp.c did not build and run"
fi

# A vfork's FORK marker naming another child (a hostile review's mutant):
# the parent waits for a child whose trace never comes, while the reader
# grows (moves) its markers; the FORK it was at was then read from freed
# memory. valgrind must see no invalid access, and the capture be refused.
sf=$top/build/tests/workload/sigfork
if [ -x "$sf" ] && command -v valgrind >/dev/null &&
   "$top/bin/aerun" -q --subbuf-size 4K -o sf.zst -- "$sf" 8 >/dev/null 2>&1; then
	bad= nvf=0
	while read -r idx child; do
		nvf=$((nvf + 1))
		"$top/build/tests/trace_mutate" --marker sf.zst sfm.zst "$idx" arg $((child + 64)) || { bad="trace_mutate failed"; break; }
		valgrind -q --error-exitcode=99 "$top/bin/aetrace" regen -o /dev/null sfm.zst "$sf" 2>sfm.err
		rc=$?
		if [ $rc -ne 1 ] || ! grep -q "^aetrace: " sfm.err; then
			bad="FORK marker $idx: status $rc: $(grep -v '^aetrace: warning' sfm.err | head -3 | tr '\n' ' ')"
			break
		fi
	done < <("$top/bin/schedlog" print sf.zst |
		 awk '$5 == "FORK" && $NF ~ /^flags=0x.*4...$/ { sub("child=", "", $(NF - 1)); print $1, $(NF - 1) }')
	if [ -n "$bad" ]; then
		not_ok "a vfork's FORK naming another child: refused, no invalid memory access ($bad)"
	elif [ "$nvf" = 0 ]; then
		not_ok "a vfork's FORK naming another child: sigfork's capture has no vfork FORK marker"
	else
		ok "a vfork's FORK naming another child: refused, no invalid memory access ($nvf markers)"
	fi
else
	ok "a vfork's FORK naming another child # SKIP no sigfork workload, valgrind, or capture"
fi

# A child's first marker made earlier than its parent's FORK (a hostile
# review's mutant): it is an unknown task's, and the FORK that later
# announced its tid retired it silently, with the child's whole trace.
fl=$top/build/tests/workload/forkloop
if [ -x "$fl" ] && "$top/bin/aerun" -q --subbuf-size 4K -o fl.zst -- "$fl" 3 >/dev/null 2>&1; then
	"$top/bin/schedlog" print fl.zst >fl.txt
	child=$(awk '$5 == "FORK" { sub("child=", "", $(NF - 1)); print $(NF - 1); exit }' fl.txt)
	first=$(awk -v c="$child" '{ split($4, a, "/") } a[2] == c { print $1; exit }' fl.txt)
	if [ -n "$first" ] && "$top/build/tests/trace_mutate" --marker fl.zst flm.zst "$first" time 1; then
		expect_error "a child's first marker before its parent's FORK" \
			"task [0-9]+/$child: marker $first .* \(unknown task\)" \
			"$top/bin/aetrace" regen flm.zst "$fl"
	else
		not_ok "a child's first marker before its parent's FORK: no child marker in forkloop's capture"
	fi
else
	ok "a child's first marker before its parent's FORK # SKIP no forkloop workload or capture"
fi
echo "1..$n"
