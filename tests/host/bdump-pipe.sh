#!/usr/bin/env bash
# bdump-pipe.sh - bdump to files and to '|command' with the synthetic
# source: complete verified captures, clean stop on SIGINT/-d, readable
# while growing, clear failures of the command. TAP output.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
bd=${BDUMP:-$top/bin/bdump}
ct=${CONTAINER_TEST:-$top/build/bdump/container_test}
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
echo "1..$n"
