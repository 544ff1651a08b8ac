#!/usr/bin/env bash
# bdump-bench.sh - bdump compression throughput on a witness-like synthetic
# stream (bdump --synthetic-source: hot loop bodies of small witness
# values, 1 piece in 8 carrying a recorded 8-byte value, ~25:1 at zstd -1):
# raw MB/s and CPU seconds per raw MB (shown as ms/MB) at zstd levels 1 and 3, with
# compression in bdump's thread (-T 0) and with 2 zstd workers (-T 2).
# CPU includes the synthetic generator.
# Writes its table, the command and the date into bench/RESULTS.md
# (section "bdump throughput").
# usage: bench/bdump-bench.sh   (BENCH_BYTES=512M, BENCH_ROUNDS=3)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bd=$top/bin/bdump
bytes=${BENCH_BYTES:-512M}
rounds=${BENCH_ROUNDS:-3}
results=$top/bench/RESULTS.md
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bdump-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
[ -x "$bd" ] || { echo "bdump-bench: $bd missing (run make)" >&2; exit 1; }
spec="bytes=$bytes,cpus=2,subbuf=1M,seed=1"

rows=()
for level in 1 3; do
	for threads in 0 2; do
		runs=()
		for ((r = 0; r < rounds; r++)); do
			TIMEFORMAT='%R %U %S'
			t=$( { time "$bd" -q -l $level -T $threads --synthetic-source "$spec" \
				"$tmp/t.zst" "$tmp/s.bin" >/dev/null 2>&1; } 2>&1 )
			"$bd" --check "$tmp/t.zst" >/dev/null
			raw=$("$top/build/tests/container_test" dump "$tmp/t.zst" |
				awk '/ type=2 /{split($5, a, "="); s += a[2]} END {print s}')
			comp=$(stat -c %s "$tmp/t.zst")
			runs+=("$(awk -v t="$t" -v raw="$raw" -v comp="$comp" 'BEGIN {
				split(t, x, " "); mb = raw / 1e6;
				printf "%.1f %.3f %.1f %.2f", mb / x[1], 1000 * (x[2] + x[3]) / mb, raw / comp, x[1] }')")
		done
		# median by MB/s
		med=$(printf '%s\n' "${runs[@]}" | sort -n | sed -n "$(( (rounds + 1) / 2 ))p")
		set -- $med
		rows+=("| $level | $([ $threads = 0 ] && echo "1 (in bdump)" || echo "2 (zstd workers)") | $1 | $2 | $3 | $4 |")
		echo "level $level threads $threads: $1 MB/s, $2 CPU ms/MB, ratio $3" >&2
	done
done

crc=$("$top/build/tests/container_test" crc-bench)
sect=$(mktemp)
{
	echo "## bdump throughput"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(uname -r); command: \`BENCH_BYTES=$bytes BENCH_ROUNDS=$rounds bench/bdump-bench.sh\`"
	echo "(median of $rounds runs; synthetic witness-like stream \`$spec\` written to a file;"
	echo "raw MB = 10^6 witness bytes in DATA chunks; CPU = user + sys of bdump incl. the generator)."
	echo
	echo "| zstd level | compression threads | raw MB/s | CPU ms per raw MB | ratio | wall s |"
	echo "|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "Chunk checksum (64 MiB buffer): $crc."
} > "$sect"
"$top/bench/replace-section.sh" "$results" "$sect"
rm -f "$sect"
printf '%s\n' "${rows[@]}"
