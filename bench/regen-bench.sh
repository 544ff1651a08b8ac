#!/usr/bin/env bash
# Regeneration speed: instructions regenerated per second on one core
# (aetrace is single-threaded), for a standalone capture of Lua n-queens
# (aerun) and for the same capture re-cut into a 2-CPU whole-system capture
# with 4 KiB sub-buffers (build/tests/capmix: the demultiplexer and the
# per-task coroutines at work). Output: --format=bin to /dev/null, and
# `aetrace stats` (no output). Best of BENCH_ROUNDS (default 5) runs.
# Writes the section "Regeneration speed" of bench/RESULTS.md.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
rounds=${BENCH_ROUNDS:-5}
results=$top/bench/RESULTS.md
tmp=$(mktemp -d "${TMPDIR:-/tmp}/regen-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tests/real/lua.sh >/dev/null
lua=$top/build/real/lua/lua
n=${BENCH_QUEENS:-10}
bin/aerun -q -o "$tmp/t.zst" -- "$lua" tests/real/queens.lua "$n" 1 >/dev/null
build/tests/capmix "$tmp/m.zst" 2 4096 1 "$tmp/t.zst"
insns=$(bin/aetrace stats "$tmp/t.zst" "$lua" | awk '/^instructions/ { print $2 }')
bytes=$(stat -c %s "$tmp/t.zst")

# best NAME CMD...: best wall time of $rounds runs (user + sys checked too)
rows=()
best() {
	local name=$1 t b=
	shift
	for _ in $(seq 1 "$rounds"); do
		t=$( { /usr/bin/time -f '%e %U %S' "$@" >/dev/null 2>/dev/null; } 2>&1 | tail -1)
		t=$(echo "$t" | awk '{ print $1 }')
		if [ -z "$b" ] || awk -v a="$t" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$t; fi
	done
	rows+=("| $name | $b | $(awk -v i="$insns" -v t="$b" 'BEGIN { printf "%.1f", i / t / 1e6 }') |")
}
best "regen --format=bin (aerun capture)" bin/aetrace regen --format=bin -o /dev/null "$tmp/t.zst" "$lua"
best "regen --format=lackey (aerun capture)" bin/aetrace regen -o /dev/null "$tmp/t.zst" "$lua"
best "stats (aerun capture)" bin/aetrace stats "$tmp/t.zst" "$lua"
best "regen --format=bin (2 cpus, 4 KiB sub-buffers)" bin/aetrace regen --format=bin -o /dev/null "$tmp/m.zst" "$lua"
best "zstd -dc (decompression alone)" zstd -qdc "$tmp/t.zst"

cmdline="bench/regen-bench.sh"
{
	echo "## Regeneration speed"
	echo
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($cpu), Linux $(uname -r); command: \`$cmdline\`"
	echo "(best of $rounds runs; one core: aetrace is single-threaded; the machine is shared)."
	echo "Workload: \`lua queens.lua $n 1\` captured by aerun: $insns instructions, $bytes bytes compressed."
	echo "Goal: at least 50 M instructions/s per core."
	echo
	echo "| run | best s | M instructions/s/core |"
	echo "|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
} > "$tmp/section"
cat "$tmp/section"
"$top/bench/replace-section.sh" "$results" "$tmp/section"
