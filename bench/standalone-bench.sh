#!/usr/bin/env bash
# Standalone capture cost on real programs (Lua n-queens, bzip2 of 4 MiB):
# the untraced twin, `aerun --discard` (witnesses written, then dropped)
# and `aerun -o FILE` (compressed to disk), measured side by side in one
# run with interleaved repetitions (each round runs every configuration
# once, in hyperfine), plus witness bytes per executed instruction
# (`aetrace stats`) and the zstd ratio of the written trace.
# Writes the section "Standalone capture" of bench/RESULTS.md.
# usage: bench/standalone-bench.sh   (BENCH_ROUNDS=N, default 10)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
rounds=${BENCH_ROUNDS:-10}
results=$top/bench/RESULTS.md
tmp=$(mktemp -d "${TMPDIR:-/tmp}/standalone-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
command -v hyperfine >/dev/null || "$top/scripts/deps.sh" bench

tests/real/lua.sh
tests/real/bzip2.sh
tests/real/gen-input.sh > "$tmp/in"
lua=$top/build/real/lua/lua
bz=$top/build/real/bzip2/bzip2

have_aerun=0
# Without bin/aecc the programs come from the uninstrumented stand-in.
[ -x bin/aerun ] && [ -x bin/aetrace ] && [ -x bin/aecc ] && have_aerun=1

# workload NAME PROG ARGS...: one table row per configuration.
rows=()
workload() {
	local name=$1 prog=$2 cmds=() labels=() i
	shift 2
	cmds+=("$prog.orig $*"); labels+=("untraced $(basename "$prog").orig")
	if [ $have_aerun = 1 ]; then
		cmds+=("bin/aerun --discard -- $prog $*"); labels+=("aerun --discard")
		cmds+=("bin/aerun -o $tmp/$name.zst -- $prog $*"); labels+=("aerun -o FILE")
	fi
	# One warm-up round, then interleaved rounds: every configuration once
	# per hyperfine call.
	for i in $(seq 0 "$rounds"); do
		hyperfine -N --runs 1 --style none --export-json "$tmp/$name.$i.json" \
			"${cmds[@]}" > /dev/null
	done
	rm -f "$tmp/$name.0.json"
	local stats="n/a" bpi="n/a" ratio="n/a" wbytes insns zsize
	if [ $have_aerun = 1 ]; then
		bin/aerun -q -o "$tmp/$name.zst" -- "$prog" "$@" > /dev/null
		stats=$(bin/aetrace stats "$tmp/$name.zst" "$prog" 2>&1 || true)
		echo "$stats" > "$tmp/$name.stats"
		# aetrace stats prints "instructions N", "trace bytes N" (witness +
		# value bytes written through r15), ... one per line.
		wbytes=$(awk '/^trace bytes[ \t]/ { print $3; exit }' "$tmp/$name.stats")
		insns=$(awk '/^instructions[ \t]/ { print $2; exit }' "$tmp/$name.stats")
		zsize=$(stat -c %s "$tmp/$name.zst")
		if [ -n "$wbytes" ] && [ -n "$insns" ] && [ "$insns" -gt 0 ]; then
			bpi=$(awk -v w="$wbytes" -v n="$insns" 'BEGIN { printf "%.3f", w / n }')
		fi
		if [ -n "$wbytes" ] && [ "$zsize" -gt 0 ]; then
			ratio=$(awk -v w="$wbytes" -v z="$zsize" 'BEGIN { printf "%.1f:1", w / z }')
		fi
	fi
	python3 - "$tmp" "$name" "$rounds" "$bpi" "$ratio" "${labels[@]}" >> "$tmp/rows" <<'EOF'
import json, statistics, sys
tmp, name, rounds, bpi, ratio = sys.argv[1:6]
labels = sys.argv[6:]
times = [[] for _ in labels]
for i in range(1, int(rounds) + 1):
    with open(f"{tmp}/{name}.{i}.json") as f:
        for k, r in enumerate(json.load(f)["results"]):
            times[k].append(r["times"][0] if r.get("times") else r["mean"])
base = statistics.median(times[0])
for k, label in enumerate(labels):
    t = times[k]
    med = statistics.median(t)
    sd = statistics.stdev(t) if len(t) > 1 else 0.0
    traced = k > 0
    print(f"| {name} | {label} | {med:.3f} | {sd:.3f} | {min(t):.3f} | "
          f"{med / base:.2f}x | {bpi if traced else ''} | {ratio if k == 2 else ''} |")
EOF
}

workload lua-queens "$lua" tests/real/queens.lua
workload bzip2-4MiB "$bz" -c "$tmp/in"

cmdline="BENCH_ROUNDS=$rounds bench/standalone-bench.sh"
{
	echo "## Standalone capture"
	echo
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($cpu), Linux $(uname -r); command: \`$cmdline\`"
	echo "(medians of $rounds interleaved rounds after one warm-up; times in seconds;"
	echo "the machine is shared, so the spread can be large: see stddev and min)."
	[ $have_aerun = 1 ] || echo "bin/aecc, bin/aerun or bin/aetrace missing: untraced rows only."
	echo "Workloads: \`lua queens.lua\` (12 queens, twice), \`bzip2 -c\` of the 4 MiB tests/real/gen-input.sh output."
	echo
	echo "| workload | configuration | median s | stddev s | min s | vs untraced | trace B/insn | zstd ratio |"
	echo "|---|---|---|---|---|---|---|---|"
	cat "$tmp/rows"
	for f in "$tmp"/*.stats; do
		[ -e "$f" ] || continue
		echo
		echo "\`aetrace stats\` for $(basename "$f" .stats):"
		echo
		echo '```'
		cat "$f"
		echo '```'
	done
	echo
} > "$tmp/section"
cat "$tmp/section"

"$top/bench/replace-section.sh" "$results" "$tmp/section"
