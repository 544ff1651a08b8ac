#!/usr/bin/env bash
# fuzz.sh - run the libFuzzer targets of tests/fuzz (ASan + UBSan) for a
# fixed number of iterations from a fixed seed, starting from small valid
# inputs made here: the container reader + capture check, and bdump-recv's
# message parser. TAP output.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
fz=${FUZZ_DIR:-$top/build/fuzz}
bd=${BDUMP:-$top/bin/bdump}
ct=${CONTAINER_TEST:-$top/build/tests/container_test}
runs=${FUZZ_RUNS:-20000}
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; }

if [ ! -x "$fz/fuzz_container" ] || [ ! -x "$fz/fuzz_wire" ]; then
	echo "ok 1 - fuzz targets # SKIP not built (clang missing: scripts/deps.sh check)"
	echo "1..1"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
mkdir cc wc

# Container seeds: a small synthetic capture as a file (byte 0 = 0) and as
# its decompressed chunk stream (byte 0 = 1: the target compresses it).
"$bd" -q --synthetic-source bytes=32K,cpus=2,subbuf=8K small.zst small.sched
{ printf '\0'; cat small.zst; } > cc/file
{ printf '\1'; zstd -q -dc small.zst; } > cc/raw
{ printf '\3'; zstd -q -dc small.zst | head -c 300; } > cc/cut
if [ -x "$ct" ]; then	# every chunk type, odd lengths
	"$ct" write types.zst 9 && { printf '\1'; zstd -q -dc types.zst | head -c 60000; } > cc/types
fi

# Wire seeds from the independent Python implementation: a hello, a
# segment and a FIN, unkeyed (byte 0 = 0) and under the target's fixed keys.
PYTHONPATH=$top/tests/host python3 - <<'PY'
import struct
from aewire import *
hello = struct.pack('<IIQ64s32s32s', 2, 0, 1, b'h', b'\1' * 32, b'\2' * 32) + b'\0' * 32
seg = struct.pack('<QII', 0, 0, 0) + b'data' * 10
fin = struct.pack('<Q', 1)
open('wc/plain', 'wb').write(b'\0' + frame(CLI_HELLO, hello) + frame(SEGMENT, seg) + frame(FIN, fin))
n1, n2, tok = bytes([1]) + bytes(31), bytes([2]) + bytes(31), bytes([3]) + bytes(31)
k = hkdf(NO_SECRET + tok, n1 + n2, b"aetrace-bdump-v2 c2s")
open('wc/keyed', 'wb').write(b'\1' + frame(SEGMENT, seg, k, 0) + frame(SEGMENT, seg, k, 1) + frame(FIN, fin, k, 2))
PY

fuzz() { # NAME TARGET CORPUS MAXLEN
	local log=$1.log rc
	timeout 300 "$fz/$2" -seed=1 -runs=$runs -max_len=$4 -max_total_time=120 \
		-print_final_stats=1 "$3" > "$log" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -q "^Done [0-9]* runs" "$log"; then
		ok "$1: $(grep -o "^Done [0-9]* runs" "$log" | cut -d' ' -f2) runs under ASan/UBSan, no crash, leak or UB ($(grep -o "cov: [0-9]*" "$log" | tail -1))"
	else
		nok "$1: fuzzer failed (exit $rc)"
		grep -E "ERROR|runtime error|SUMMARY|==[0-9]+==" "$log" | head -20 | sed 's/^/# /'
	fi
}
fuzz "container reader + capture check" fuzz_container cc 65536
fuzz "receiver message parser" fuzz_wire wc 8192
echo "1..$n"
