#!/usr/bin/env bash
# bdump-pipe.sh - bdump to files and to '|command' with the synthetic
# source: complete verified captures, clean stop on SIGINT/-d, readable
# while growing, clear failures of the command. TAP output.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
bd=${BDUMP:-$top/bin/bdump}
ct=${CONTAINER_TEST:-$top/build/tests/container_test}
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null; done; rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }
# The chunks of a capture without its SESSION chunk (which holds host and
# start time): equal for two captures of the same synthetic run.
chunks() { "$ct" dump "$1" | grep -v ' type=1 ' | cut -d' ' -f2-; }

if [ ! -x "$bd" ] || [ ! -x "$ct" ]; then
	echo "not ok 1 - bdump not built (run make)"
	exit 1
fi
spec=bytes=24M,cpus=3,subbuf=256K,seed=7
cd "$tmp"

"$bd" -q --synthetic-source $spec file.zst file.sched
check "file capture: exit 0" '[ $? -eq 0 ]'
check "file capture verifies (payloads, seqs, END, SCHED)" '"$bd" --check file.zst file.sched >/dev/null'
check "check fails on a different SCHED (oracle can fail)" '! "$bd" --check file.zst /dev/null 2>/dev/null'
"$bd" --synthetic-source $spec sum.zst sum.sched 2>sum.err
said=$(sed -n 's/.* -> \([0-9]*\) compressed .*/\1/p' sum.err)
check "summary counts every byte of the file" '[ -n "$said" ] && [ "$said" -eq $(stat -c %s sum.zst) ]'

# A capture over the last one's files replaces them (a reader holding
# the old ones keeps them whole; the new ones keep their mode), writes
# through a symlink, truncates a file with another name in place, and
# opens a FIFO once (schedlog_open_output).
cp file.zst old.zst && cp file.sched old.sched && chmod 640 old.zst && ln -f old.sched old2.sched &&
	cp file.zst target.zst && ln -sf target.zst link.zst
exec 7<old.zst
"$bd" -q --synthetic-source ${spec/seed=7/seed=9} old.zst old.sched
check "a capture over the last one: a reader holding the old TRACE still reads it whole, the new one has its mode" \
	'cmp -s /dev/fd/7 file.zst && "$bd" --check old.zst old.sched >/dev/null && ! cmp -s old.zst file.zst &&
	 [ "$(stat -c %a old.zst)" = 640 ]'
exec 7<&-
check "... the SCHED file's other name, truncated in place, holds the new one" 'cmp -s old.sched old2.sched'
ino=$(stat -c %i target.zst)
"$bd" -q --synthetic-source ${spec/seed=7/seed=9} link.zst link.sched
check "a TRACE that is a symlink: written through it, the link kept" \
	'[ -L link.zst ] && [ "$(stat -c %i target.zst)" = "$ino" ] && ! cmp -s target.zst file.zst &&
	 "$bd" --check target.zst link.sched >/dev/null'
mkfifo fifo.zst
timeout 60 cat fifo.zst >fifo.got &	# (ends if bdump never opens it)
pid=$!; pids+=($pid)
"$bd" -q --synthetic-source $spec fifo.zst fifo.sched
check "a TRACE that is a FIFO: opened once, its reader gets the whole capture" \
	'wait $pid && [ -p fifo.zst ] && "$bd" --check fifo.got fifo.sched >/dev/null'

"$bd" -q --synthetic-source $spec '|cat > pipe.zst' pipe.sched
check "|command capture: exit 0" '[ $? -eq 0 ]'
check "|command capture verifies" '"$bd" --check pipe.zst pipe.sched >/dev/null'
check "|command capture has the same chunks as the file capture" 'cmp -s <(chunks file.zst) <(chunks pipe.zst)'
check "|command capture of another seed differs (comparison can fail)" \
	'"$bd" -q --synthetic-source ${spec/seed=7/seed=8} other.zst other.sched && ! cmp -s <(chunks file.zst) <(chunks other.zst)'
check "|zstd -dc decodes the stream with the standard tool" \
	'"$bd" -q --synthetic-source $spec "|zstd -q -dc > raw.bin" raw.sched && [ $(stat -c %s raw.bin) -gt 24000000 ]'
check "-l 3 -T 2 capture verifies" '"$bd" -q -l 3 -T 2 --synthetic-source $spec lt.zst lt.sched && "$bd" --check lt.zst lt.sched >/dev/null'

"$bd" -q --synthetic-source $spec '|exit 3' x.sched 2>err.txt
rc=$?
check "failing command: exit status != 0 and message" '[ $rc -ne 0 ] && grep -q "command failed" err.txt'
"$bd" -q --synthetic-source $spec '|head -c 100 >/dev/null' x.sched 2>err.txt
rc=$?
check "command closing its input early: clear error, no crash" '[ $rc -eq 1 ] && grep -q "Broken pipe" err.txt'
"$bd" -q --synthetic-source $spec /nonexistent/dir/t.zst x.sched 2>err.txt
check "unwritable TRACE: error names the file" '[ $? -eq 1 ] && grep -q /nonexistent/dir/t.zst err.txt'
"$bd" -q --synthetic-source bogus=1 t.zst x.sched 2>err.txt
check "bad synthetic spec: error" '[ $? -eq 1 ] && grep -q "bad synthetic spec" err.txt'

# SIGINT: flush, END trailer, exit 0, one-line summary.
"$bd" -f 100 --synthetic-source bytes=1G,cpus=2,subbuf=64K,rate=4M '|cat > int.zst' int.sched 2>int.err &
pid=$!; pids+=($pid)
sleep 1.5
# while it runs, the flushed stream is readable up to the last chunk end
"$ct" dump int.zst > grow.dump 2>grow.err
check "growing file: flushed chunks readable while bdump runs" \
	'[ $(grep -c " type=2 " grow.dump) -ge 5 ] && grep -q "truncated" grow.err'
kill -INT $pid; wait $pid
rc=$?
check "SIGINT: exit 0" '[ $rc -eq 0 ]'
check "SIGINT: one-line summary on stderr" '[ $(grep -c "sub-buffers" int.err) -eq 1 ]'
check "SIGINT: capture ends with END and verifies as a prefix" '"$bd" --check int.zst int.sched >/dev/null'
"$bd" -q --synthetic-source bytes=1G,cpus=2,subbuf=64K,rate=4M term.zst term.sched &
pid=$!; pids+=($pid)
sleep 1; kill -TERM $pid; wait $pid
rc=$?
check "SIGTERM: exit 0, capture ends with END and verifies" \
	'[ $rc -eq 0 ] && "$bd" --check term.zst term.sched >/dev/null'
"$bd" -q -d 1 --synthetic-source bytes=1G,cpus=2,subbuf=64K,rate=4M dur.zst dur.sched
rc=$?
check "-d 1: exit 0, verifies, stopped early" \
	'[ $rc -eq 0 ] && "$bd" --check dur.zst dur.sched > dur.out && [ $(grep -o "[0-9]* data chunks" dur.out | cut -d" " -f1) -lt 200 ]'
# Progress line on a tty (script(1) gives bdump one), none otherwise.
if command -v script >/dev/null; then
	script -qec "$bd -d 1.5 --synthetic-source bytes=1G,subbuf=64K,rate=4M tty.zst tty.sched" /dev/null > tty.out 2>&1
	check "progress on a tty: raw, compressed, MB/s, ratio, sub-buffers, markers, drops" \
		'grep -a "compressed" tty.out | grep -a "MB/s ratio" | grep -a "sub-buffers" | grep -a markers | grep -aq drops'
else
	ok "progress on a tty # SKIP script(1) missing"
fi
check "no progress line when stderr is not a tty" '! grep -q "MB/s ratio" int.err'
"$bd" -q /dev/null x.sched --device /nonexistent/trbuf 2>err.txt
check "missing trace device: clear error naming it" '[ $? -eq 1 ] && grep -q "/nonexistent/trbuf" err.txt'

# --from forwards losslessly (issue 10.7): a capture with several SESSION
# strings, DATA before any MARKERS, an EXIT chunk and END, built here by an
# independent Python writer, decodes after forwarding to the same chunks.
PYTHONPATH=$top/tests/host python3 - <<'PY' | zstd -q -c > craft.zst
import struct, sys
from aewire import crc32c_fast as crc
def chunk(t, cpu, seq, pl):
    h = struct.pack('<IHHQII', 0x4b484541, t, cpu, seq, len(pl), 0)
    return struct.pack('<IHHQII', 0x4b484541, t, cpu, seq, len(pl), crc(h + pl)) + pl
strings = b'host=a\0prog=/bin/true\0argv=x y\0'
sess = struct.pack('<IIIIIIQ', 2, 1, 1, 4096, 4, len(strings), 123) + strings	# version 2
mk = bytes(range(144))		# two struct trbuf_marker (72 bytes)
out = chunk(1, 0, 0, sess) + chunk(2, 0, 0, b'\x11' * 100) + chunk(3, 0, 2, mk) + \
      chunk(2, 0, 1, b'\x22' * 50) + chunk(5, 0, 4, struct.pack('<iiQ', 42, 0x100, 0x401000)) + \
      chunk(4, 0, 5, struct.pack('<QQQQ', 150, 2, 2, 0))
sys.stdout.buffer.write(out)
PY
dumpall() { "$ct" dump "$1" && "$ct" payloads "$1" | od -An -tx1; }
"$bd" -q --from craft.zst fwd.zst fwd.sched 2>fwd.err
check "--from: DATA before MARKERS, EXIT, several SESSION strings: exit 0, nothing on stderr (UBSan builds: no memcpy(NULL))" \
	'[ $? -eq 0 ] && [ ! -s fwd.err ] && "$bd" --check craft.zst >/dev/null'
check "--from: forwarded capture has the same chunks, byte for byte (SESSION, EXIT, END included)" \
	'grep -q " type=5 " <("$ct" dump fwd.zst) && cmp -s <(dumpall craft.zst) <(dumpall fwd.zst)'
check "--from: SCHED holds the MARKERS bytes" \
	'cmp -s fwd.sched <(python3 -c "import sys; sys.stdout.buffer.write(bytes(range(144)))")'
"$bd" -q --from file.zst '|cat > fwdp.zst' fwdp.sched
check "--from a synthetic capture through |command: same chunks, still verifies its payloads" \
	'cmp -s <(dumpall file.zst) <(dumpall fwdp.zst) && "$bd" --check fwdp.zst fwdp.sched | grep -q "synthetic payloads verified"'
cat craft.zst craft.zst > two.zst
"$bd" -q --from two.zst fwd2.zst fwd2.sched 2>fwd2.err
check "--from two concatenated captures: refused with a clear error (not a capture failing --check)" \
	'[ $? -eq 1 ] && grep -q "two.zst: offset [0-9]*: more chunks after END" fwd2.err'

# A capture cut short (bdump killed): --check says truncated, not corrupt.
"$bd" -q -f 100 --synthetic-source bytes=1G,cpus=2,subbuf=64K,rate=8M kill.zst kill.sched &
pid=$!; pids+=($pid)
sleep 1.5; kill -9 $pid; wait $pid 2>/dev/null
"$bd" --check kill.zst kill.sched > kill.out 2>&1
check "killed bdump: --check fails with 'truncated at chunk N (incomplete session)'" \
	'[ $? -eq 1 ] && grep -q "kill.zst: truncated at chunk [1-9][0-9]* (incomplete session)" kill.out && ! grep -q differs kill.out'
# --ready FILE: created with bdump's pid once it consumes (scripts start
# the workload after it), not before; a path it cannot create is an error
# naming it, and no capture is claimed
rm -f ready
"$bd" -q --synthetic-source bytes=64M,cpus=2,subbuf=1M,rate=50M,seed=3 --ready ready rdy.zst rdy.sched &
pid=$!
for i in $(seq 100); do [ -e ready ] && break; sleep 0.1; done
check "--ready: the file appears while bdump runs, naming its pid" '[ "$(cat ready 2>/dev/null)" = "$pid" ] && kill -0 $pid'
kill -INT $pid; wait $pid
"$bd" -q --synthetic-source $spec --ready /nonexistent/ready bad.zst bad.sched 2>bad.err
check "--ready in a missing directory: status 1, the path named" \
	'[ $? -eq 1 ] && grep -q -- "--ready /nonexistent/ready: No such file or directory" bad.err'
# Pacing: a producer at 400 MB/s outruns zstd level 9 (about 130 MB/s on
# this data), so the level goes down while it is behind and back up when
# bdump waits for it, and the capture is whole; a producer at 20 MB/s
# leaves level 9 alone (a sixth of its speed: at 50 MB/s a CI machine
# busy with other suites once paced down); --fixed-level keeps level 9 and a smaller file.
# Level -64 is the fastest accepted, -65 is refused.
"$bd" -l 9 --synthetic-source bytes=128M,cpus=2,subbuf=1M,rate=400M,seed=4 pace.zst pace.sched 2>pace.err
prc=$?
check "pacing: level 9 behind a 400 MB/s producer goes down and up ($(grep -o 'zstd level 9 paced[^)]*)' pace.err)), the capture verifies" \
	'[ $prc -eq 0 ] && grep -q "zstd level 9 paced down to -*[0-9]* (steps: [1-9][0-9]* down, [1-9][0-9]* up" pace.err &&
	 "$bd" --check pace.zst pace.sched >/dev/null'
"$bd" -l 9 --synthetic-source bytes=32M,cpus=2,subbuf=1M,rate=20M,seed=4 slow.zst slow.sched 2>slow.err
prc=$?
check "pacing: level 9 ahead of a 20 MB/s producer stays, the capture verifies" \
	'[ $prc -eq 0 ] && ! grep -q paced slow.err && "$bd" --check slow.zst slow.sched >/dev/null'
"$bd" -l 9 --fixed-level --synthetic-source bytes=128M,cpus=2,subbuf=1M,rate=400M,seed=4 fixed.zst fixed.sched 2>fixed.err
check "--fixed-level: level 9 throughout (a smaller file), the capture verifies" \
	'[ $? -eq 0 ] && ! grep -q paced fixed.err && "$bd" --check fixed.zst fixed.sched >/dev/null &&
	 [ $(stat -c %s fixed.zst) -lt $(stat -c %s pace.zst) ]'
"$bd" -q -l -64 --synthetic-source $spec fast.zst fast.sched
check "-l -64: the capture verifies" '[ $? -eq 0 ] && "$bd" --check fast.zst fast.sched >/dev/null'
"$bd" -q -l -65 --synthetic-source $spec bad.zst bad.sched 2>bad.err
check "-l -65: status 2, the value named" '[ $? -eq 2 ] && grep -q -- "-65" bad.err'
echo "1..$n"
