#!/usr/bin/env bash
# Regeneration speed: instructions regenerated per second on one core
# (aetrace is single-threaded), for a standalone capture of Lua n-queens
# (aerun) and for the same capture re-cut into a 2-CPU whole-system capture
# with 4 KiB sub-buffers (build/tests/capmix: the demultiplexer and the
# per-task coroutines at work), and for a capture of the same run of Lua
# built with aecc -fae-data (tests/real/data-build.sh), whose regeneration
# also emulates the registers and writes every data access. Output:
# --format=bin to /dev/null, and `aetrace stats` (no output). Best of
# BENCH_ROUNDS (default 5) runs.
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
dlua=$(tests/real/data-build.sh lua)
bin/aerun -q -o "$tmp/d.zst" -- "$dlua" tests/real/queens.lua "$n" 1 >/dev/null
dinsns=$(bin/aetrace stats "$tmp/d.zst" "$dlua" | awk '/^instructions/ { print $2 }')
drefs=$(bin/aetrace regen --format=lackey "$tmp/d.zst" "$dlua" | grep -c '^ [LSM]')
dbytes=$(stat -c %s "$tmp/d.zst")

# best NAME INSNS CMD...: best CPU time (user + sys) of $rounds runs
# of a capture of INSNS instructions
rows=()
best() {
	local name=$1 n=$2 t b=
	shift 2
	for _ in $(seq 1 "$rounds"); do
		/usr/bin/time -o "$tmp/time" -f '%e %U %S' "$@" >/dev/null 2>&1
		t=$(awk '{ printf "%.2f", $2 + $3 }' "$tmp/time")	# CPU time: per core
		if [ -z "$b" ] || awk -v a="$t" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$t; fi
	done
	rows+=("| $name | $b | $(awk -v i="$n" -v t="$b" 'BEGIN { if (t > 0) printf "%.1f", i / t / 1e6; else print "(under 0.01 s)" }') |")
}
best "regen --format=bin (aerun capture)" "$insns" bin/aetrace regen --format=bin -o /dev/null "$tmp/t.zst" "$lua"
best "regen --format=lackey (aerun capture)" "$insns" bin/aetrace regen -o /dev/null "$tmp/t.zst" "$lua"
best "stats (aerun capture)" "$insns" bin/aetrace stats "$tmp/t.zst" "$lua"
best "regen --format=bin (2 cpus, 4 KiB sub-buffers)" "$insns" bin/aetrace regen --format=bin -o /dev/null "$tmp/m.zst" "$lua"
best "regen --format=bin (-fae-data capture: instructions and data)" "$dinsns" \
	bin/aetrace regen --format=bin -o /dev/null "$tmp/d.zst" "$dlua"
best "stats (-fae-data capture)" "$dinsns" bin/aetrace stats "$tmp/d.zst" "$dlua"
best "zstd -dc (decompression alone)" "$insns" zstd -qdc "$tmp/t.zst"

cmdline="bench/regen-bench.sh"
{
	echo "## Regeneration speed"
	echo
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($cpu), Linux $(uname -r); command: \`$cmdline\`"
	echo "(best of $rounds runs, CPU time user + sys: aetrace is single-threaded, and the"
	echo "machine is shared, so wall time would measure the other load)."
	echo "Workload: \`lua queens.lua $n 1\` captured by aerun: $insns instructions, $bytes bytes compressed;"
	echo "built with \`aecc -fae-data\`: $dinsns instructions and $drefs data accesses, $dbytes bytes compressed."
	echo "Goal: at least 50 M instructions/s per core."
	echo
	echo "| run | best CPU s | M instructions/s/core |"
	echo "|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
} > "$tmp/section"
cat "$tmp/section"
"$top/bench/replace-section.sh" "$results" "$tmp/section"
