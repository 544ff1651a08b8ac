#!/usr/bin/env bash
# Data tracing cost (issue 12 item 6) on Lua (queens.lua 7 1) and bzip2
# (-c of 64 KiB of tests/real/gen-input.sh), all configurations side by
# side in one run with interleaved repetitions (hyperfine, one run each per
# round, medians): the untraced twin, the instruction-only build and the
# -fae-data build under `aerun --discard` and `aerun -o FILE` (zstd, as
# bdump writes it), the same without the value cache (-fno-ae-vcache), and
# valgrind lackey --trace-mem=yes on the twin writing its text trace. Bytes per memory reference: raw trace bytes (DATA
# payload, trace_mutate --data-len) and the .zst file size over the L+S+M
# records of `aetrace regen --format=lackey`; lackey's text log (and the
# same log through zstd -1) over its own L+S+M lines. Sanity check: the
# -fae-data program run under lackey with AE_CAPTURE must regenerate (with
# --lackey-compat: lackey also logs the stores it invents for bt) the
# same number of data references as lackey counts on that very run
# (mapped to the twin by aetrace map-lackey), else the figures are marked.
# Writes the section "Data tracing" of bench/RESULTS.md.
# usage: bench/data-bench.sh   (BENCH_ROUNDS=N, default 5)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. tests/oracle/corpus-lib.sh
rounds=${BENCH_ROUNDS:-5}
results=$top/bench/RESULTS.md
aecc=$top/bin/aecc aerun=$top/bin/aerun aetrace=$top/bin/aetrace
mutate=$top/build/tests/trace_mutate
for t in "$aecc" "$aerun" "$aetrace" "$mutate"; do
	[ -x "$t" ] || { echo "data-bench: $t not built (make all)" >&2; exit 1; }
done
[ -e build/musl-data/lib/libc.a ] || make --no-print-directory musl-data
command -v hyperfine >/dev/null || "$top/scripts/deps.sh" bench
command -v valgrind >/dev/null || { echo "data-bench: valgrind missing" >&2; exit 1; }
tmp=$(mktemp -d "$top/build/data-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
clean_env="env -i PATH=/usr/bin:/bin LC_ALL=C"

tests/real/lua.sh
tests/real/bzip2.sh
tests/real/gen-input.sh 65536 > "$tmp/in"

echo "  BUILD   lua, bzip2 with -fae-data, and without the value cache"
dlua=$(tests/real/data-build.sh lua)
dbz=$(tests/real/data-build.sh bzip2)
dluanv=$(tests/real/data-build.sh lua -fno-ae-vcache)
dbznv=$(tests/real/data-build.sh bzip2 -fno-ae-vcache)

rows=$tmp/rows
: >"$rows"
# workload NAME PLAIN DATA NOVC STDIN ARGS...: one table row per
# configuration (NOVC: DATA built with -fno-ae-vcache).
workload() {
	local name=$1 plain=$2 data=$3 novc=$4 in=$5 i cmds labels r lk
	shift 5
	local args="$*"
	# hyperfine 1.15 has no --input: every command is one sh -c with the
	# same redirection, so the shell's cost is the same in every row.
	cmds=()
	for c in "$data.orig $args" \
		"$aerun --discard -- $plain $args" "$aerun --fixed-level -o $tmp/$name.i.zst -- $plain $args" \
		"$aerun --discard -- $data $args" "$aerun --fixed-level -o $tmp/$name.d.zst -- $data $args" \
		"valgrind --tool=lackey --trace-mem=yes --log-file=$tmp/$name.lk $data.orig $args" \
		"$aerun --fixed-level -o $tmp/$name.n.zst -- $novc $args"; do
		cmds+=("sh -c '$c <$in >/dev/null'")
	done
	labels=("untraced twin" "instructions only, aerun --discard"
		"instructions only, aerun --fixed-level -o FILE"
		"-fae-data, aerun --discard" "-fae-data, aerun --fixed-level -o FILE"
		"lackey --trace-mem=yes > FILE" "-fae-data -fno-ae-vcache, aerun --fixed-level -o FILE")
	echo "  RUN     $name: 1 warm-up + $rounds interleaved rounds of ${#cmds[@]} configurations"
	for i in $(seq 0 "$rounds"); do
		hyperfine -N --runs 1 --style none --export-json "$tmp/$name.$i.json" \
			"${cmds[@]}" > /dev/null
		[ -t 1 ] && printf '\r  round %d/%d' "$i" "$rounds"
	done
	[ -t 1 ] && echo
	rm -f "$tmp/$name.0.json"
	# Our data trace: raw and compressed bytes per L+S+M record.
	r=$("$aetrace" regen --format=lackey "$tmp/$name.d.zst" "$data" |
		awk '/^I/ { i++ } /^ [LSM]/ { m++ } END { printf "%d %d", i, m }')
	local refs=${r#* } raw zst iraw izst nraw nzst
	raw=$("$mutate" --data-len "$tmp/$name.d.zst")
	zst=$(stat -c %s "$tmp/$name.d.zst")
	nraw=$("$mutate" --data-len "$tmp/$name.n.zst")
	nzst=$(stat -c %s "$tmp/$name.n.zst")
	iraw=$("$mutate" --data-len "$tmp/$name.i.zst")
	izst=$(stat -c %s "$tmp/$name.i.zst")
	# Lackey's text trace, and through zstd -1 (the level bdump uses).
	lk=$(awk '/^I/ { i++ } /^ [LSM]/ { m++ } END { printf "%d %d", i, m }' "$tmp/$name.lk")
	local lrefs=${lk#* } lraw lzst
	lraw=$(stat -c %s "$tmp/$name.lk")
	lzst=$(zstd -1 -q -c "$tmp/$name.lk" | wc -c)
	# Sanity: the same run under lackey with AE_CAPTURE.
	local same="n/a"
	# shellcheck disable=SC2086
	timeout 600 $clean_env AE_CAPTURE="$tmp/cap" setarch "$(uname -m)" -R valgrind --tool=lackey \
		--trace-mem=yes --vex-guest-chase=no --log-file="$tmp/lk.same" "$data" "$@" \
		<"$in" >/dev/null 2>&1 || true
	if [ -s "$tmp/cap" ] &&
	   "$aetrace" regen --original-only --lackey-compat --format=lackey "$tmp/cap" "$data" >"$tmp/regen.same" 2>/dev/null; then
		local a b
		a=$(grep -c '^ [LSM]' "$tmp/regen.same" || true)
		"$aetrace" map-lackey "$data" <"$tmp/lk.same" | grep -c '^ [LSM]' >"$tmp/b" || true
		b=$(cat "$tmp/b")
		if [ "$a" = "$b" ]; then
			same="equal ($a references)"
		else
			same="DIFFERENT: regen $a, lackey $b -- the figures below are suspect"
		fi
	else
		same="FAILED: the same-run capture did not regenerate"
	fi
	rm -f "$tmp/cap" "$tmp/lk.same" "$tmp/regen.same"
	echo "$name: regenerated data references vs lackey on the same run: $same" >>"$tmp/sanity"
	python3 - "$tmp" "$name" "$rounds" "$refs" "$raw" "$zst" "$iraw" "$izst" \
		"$lrefs" "$lraw" "$lzst" "${r% *}" "$nraw" "$nzst" "${labels[@]}" >>"$rows" <<'EOF'
import json, statistics, sys
tmp, name, rounds = sys.argv[1:4]
refs, raw, zst, iraw, izst, lrefs, lraw, lzst, insns, nraw, nzst = map(int, sys.argv[4:15])
labels = sys.argv[15:]
times = [[] for _ in labels]
for i in range(1, int(rounds) + 1):
    with open(f"{tmp}/{name}.{i}.json") as f:
        for k, r in enumerate(json.load(f)["results"]):
            times[k].append(r["times"][0] if r.get("times") else r["mean"])
base = statistics.median(times[0])
def bpr(b, n):
    return f"{b / n:.3f}" if n else "n/a"
extra = {2: (bpr(iraw, insns) + " B/insn", bpr(izst, insns) + " B/insn"),
         4: (bpr(raw, refs), bpr(zst, refs)),
         5: (bpr(lraw, lrefs), bpr(lzst, lrefs)),
         6: (bpr(nraw, refs), bpr(nzst, refs))}
for k, label in enumerate(labels):
    t = times[k]
    med = statistics.median(t)
    x = extra.get(k, ("", ""))
    print(f"| {name} | {label} | {med:.3f} | {min(t):.3f} | {med / base:.2f}x | {x[0]} | {x[1]} |")
print(f"| {name} | (references: {refs} regenerated, {lrefs} in lackey's twin run; "
      f"{insns} instructions) | | | | | |")
if refs:
    with open(f"{tmp}/goals", "a") as g:
        x = raw / refs
        g.write(f"{name}: {x:.2f} raw trace bytes per reference (goal 0.3: {'met' if x <= 0.3 else 'NOT met'})\n")
        # the paper's memory reference traces count instruction fetches
        # too; its ~0.67 may be per fetch or data access, so both are shown
        y = raw / (refs + insns)
        g.write(f"{name}: {y:.2f} raw trace bytes per memory reference counting instruction fetches "
                f"(I+L+S+M; against the same goal: {'met' if y <= 0.3 else 'NOT met'})\n")
EOF
}

# profiled NAME DATA STDIN ARGS...: DATA built again with the value-cache
# profile (aecc -fae-vc-profile) of a run on STDIN ARGS (the small
# workload: the timed runs are larger); prints the program's path. The
# profile orders the cache's tests and makes plain the records of places
# where the cache saved little: the sanity line gives the raw bytes and
# the plain register records of that run with both (from one path, which
# Lua keeps in its data).
profiled() {
	local name=$1 data=$2 in=$3 p b0 b1 same=$tmp/same/${2##*/}
	shift 3
	mkdir -p "$tmp/same"
	cp "$data" "$same" && cp "$data.orig" "$same.orig"
	# shellcheck disable=SC2086
	if ! $clean_env "$aerun" -o "$tmp/$name.s0.zst" -- "$same" "$@" <"$in" >/dev/null 2>&1 ||
	   ! "$aetrace" stats --vc-profile "$tmp/$name.prof" "$tmp/$name.s0.zst" "$same" >/dev/null ||
	   ! p=$(tests/real/data-build.sh "${data##*/}" "-fae-vc-profile=$tmp/$name.prof"); then
		echo "data-bench: $name: the profiling run or the build with its profile failed" >&2
		return 1
	fi
	local p0 p1
	read -r p0 _ < <(ae_value_recs "$tmp/$name.s0.zst" "$same")
	cp "$p" "$same" && cp "$p.orig" "$same.orig"
	# shellcheck disable=SC2086
	$clean_env "$aerun" -o "$tmp/$name.s1.zst" -- "$same" "$@" <"$in" >/dev/null 2>&1
	b0=$("$mutate" --data-len "$tmp/$name.s0.zst")
	b1=$("$mutate" --data-len "$tmp/$name.s1.zst")
	read -r p1 _ < <(ae_value_recs "$tmp/$name.s1.zst" "$same")
	# the twin moves when the code grows or shrinks (the data layout)
	local twin=' (the same twin)'
	cmp -s "$data.orig" "$p.orig" || twin=' (the twin moved with the code: another data layout)'
	echo "$name: built with its value-cache profile ($(awk 'NR > 1 && $6 > $7' "$tmp/$name.prof" | wc -l) places try the address cache first): $b1 raw bytes against $b0 without, $p1 plain register records against $p0$twin" >>"$tmp/sanity"
	rm -rf "$tmp/same" "$tmp/$name.s0.zst" "$tmp/$name.s1.zst"
	echo "$p"
}

# timing NAME PLAIN DATA PROF NOVC STDIN ARGS...: the slowdowns on runs
# long enough that aerun's start-up does not count (the standalone bench's
# sizes); lackey would take an hour there, so it only runs the small ones
# above. PROF: DATA built with its profile.
timing() {
	local name=$1 plain=$2 data=$3 prof=$4 novc=$5 in=$6 i cmds labels
	shift 6
	local args="$*"
	cmds=()
	for c in "$data.orig $args" \
		"$aerun --discard -- $plain $args" "$aerun -o $tmp/$name.i.zst -- $plain $args" \
		"$aerun --discard -- $data $args" "$aerun -o $tmp/$name.d.zst -- $data $args" \
		"$aerun -T 2 -o $tmp/$name.t.zst -- $data $args" \
		"$aerun --fixed-level -o $tmp/$name.f.zst -- $data $args" \
		"$aerun --discard -- $prof $args" "$aerun -o $tmp/$name.p.zst -- $prof $args" \
		"$aerun --discard -- $novc $args" "$aerun -o $tmp/$name.n.zst -- $novc $args"; do
		cmds+=("sh -c '$c <$in >/dev/null'")
	done
	labels=("untraced twin" "instructions only, aerun --discard" "instructions only, aerun -o FILE"
		"-fae-data, aerun --discard" "-fae-data, aerun -o FILE"
		"-fae-data, aerun -T 2 -o FILE (2 zstd workers)"
		"-fae-data, aerun --fixed-level -o FILE (zstd level 1 throughout)"
		"-fae-data -fae-vc-profile, aerun --discard"
		"-fae-data -fae-vc-profile, aerun -o FILE"
		"-fae-data -fno-ae-vcache, aerun --discard" "-fae-data -fno-ae-vcache, aerun -o FILE")
	echo "  RUN     $name: 1 warm-up + $rounds interleaved rounds of ${#cmds[@]} configurations"
	# each run after a sync: the gigabytes the other runs wrote are not
	# still being written back while it runs
	for i in $(seq 0 "$rounds"); do
		hyperfine -N --runs 1 --style none --prepare sync --export-json "$tmp/$name.$i.json" \
			"${cmds[@]}" > /dev/null
	done
	rm -f "$tmp/$name.0.json"
	# how low pacing took the level, in one more run
	sh -c "$aerun -o $tmp/$name.r.zst -- $data $args <$in >/dev/null" 2>"$tmp/$name.r.err"
	echo "$name: -fae-data, aerun -o FILE, one more run: $(grep -o 'zstd level [^)]*)' "$tmp/$name.r.err" ||
		echo 'zstd level 1 throughout')" >>"$tmp/pacing"
	rm -f "$tmp/$name.r.zst"
	local dz iz tz fz nz pz
	dz=$(stat -c %s "$tmp/$name.d.zst")
	pz=$(stat -c %s "$tmp/$name.p.zst")
	fz=$(stat -c %s "$tmp/$name.f.zst")
	iz=$(stat -c %s "$tmp/$name.i.zst")
	tz=$(stat -c %s "$tmp/$name.t.zst")
	nz=$(stat -c %s "$tmp/$name.n.zst")
	rm -f "$tmp/$name.d.zst" "$tmp/$name.i.zst" "$tmp/$name.t.zst" "$tmp/$name.f.zst" \
		"$tmp/$name.n.zst" "$tmp/$name.p.zst"
	python3 - "$tmp" "$name" "$rounds" "$iz" "$dz" "$tz" "$fz" "$nz" "$pz" "${labels[@]}" >>"$tmp/timing" <<'EOF'
import json, statistics, sys
tmp, name, rounds = sys.argv[1:4]
iz, dz, tz, fz, nz, pz = map(int, sys.argv[4:10])
labels = sys.argv[10:]
times = [[] for _ in labels]
for i in range(1, int(rounds) + 1):
    with open(f"{tmp}/{name}.{i}.json") as f:
        for k, r in enumerate(json.load(f)["results"]):
            times[k].append(r["times"][0] if r.get("times") else r["mean"])
base = statistics.median(times[0])
fastest = min(times[0])
size = {2: f"{iz / 1e6:.1f} MB", 4: f"{dz / 1e6:.1f} MB", 5: f"{tz / 1e6:.1f} MB",
        6: f"{fz / 1e6:.1f} MB", 8: f"{pz / 1e6:.1f} MB", 10: f"{nz / 1e6:.1f} MB"}
for k, label in enumerate(labels):
    t = times[k]
    med = statistics.median(t)
    print(f"| {name} | {label} | {med:.3f} | {min(t):.3f} | {med / base:.2f}x | "
          f"{min(t) / fastest:.2f}x | {size.get(k, '')} |")
# judged on medians; the ratio of the fastest runs beside them, because
# this machine's noise only ever adds time
with open(f"{tmp}/goals", "a") as g:
    for k, goal in ((3, 1.6), (4, 2.0), (5, 2.0), (7, 1.6), (8, 2.0)):
        x = statistics.median(times[k]) / base
        y = min(times[k]) / fastest
        g.write(f"{name}: {labels[k]} {x:.2f}x, fastest runs {y:.2f}x "
                f"(goal {goal}x: {'met' if x <= goal else 'NOT met'})\n")
EOF
}

workload lua-queens7 "$top/build/real/lua/lua" "$dlua" "$dluanv" /dev/null tests/real/queens.lua 7 1
workload bzip2-64KiB "$top/build/real/bzip2/bzip2" "$dbz" "$dbznv" "$tmp/in" -c
: >"$tmp/timing"
: >"$tmp/pacing"
tests/real/gen-input.sh 4194304 > "$tmp/in4m"
echo "  BUILD   lua, bzip2 with the value-cache profiles of lua-queens7, bzip2-64KiB"
dluap=$(profiled lua-queens7 "$dlua" /dev/null tests/real/queens.lua 7 1) || exit 1
dbzp=$(profiled bzip2-64KiB "$dbz" "$tmp/in" -c) || exit 1
timing lua-queens12 "$top/build/real/lua/lua" "$dlua" "$dluap" "$dluanv" /dev/null tests/real/queens.lua 12 1
timing bzip2-4MiB "$top/build/real/bzip2/bzip2" "$dbz" "$dbzp" "$dbznv" "$tmp/in4m" -c

cmdline="BENCH_ROUNDS=$rounds bench/data-bench.sh"
{
	echo "## Data tracing"
	echo
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($cpu), Linux $(uname -r); command: \`$cmdline\`"
	echo "(medians of $rounds interleaved rounds after one warm-up, times in seconds; shared machine)."
	echo "Workloads: \`lua queens.lua 7 1\`, \`bzip2 -c\` of 64 KiB of tests/real/gen-input.sh output"
	echo "(smaller than the standalone bench so lackey finishes; the slowdowns at the end are on larger runs)."
	echo "B/ref = bytes per memory reference"
	echo "(L+S+M record): raw = DATA payload of the -fae-data capture (for lackey: its text log);"
	echo "zstd = the .zst file aerun wrote at level 1 (\`--fixed-level\`: no pacing, so the size does"
	echo "not depend on the machine's load; for lackey: its log through \`zstd -1\`). The"
	echo "instructions-only row shows witness bytes per instruction instead. Goals (issue 12):"
	echo "raw <= 0.3 B/ref (the paper: ~0.67); instruction-only figures no worse than before."
	echo "The \`-fno-ae-vcache\` rows: the same program built without the value cache"
	echo "(docs/ARCHITECTURE.md item 23), its 64-bit register records written whole"
	echo "(its own code: the C library it links keeps the cache)."
	echo
	echo "| workload | configuration | median s | min s | vs twin | raw B/ref | zstd B/ref |"
	echo "|---|---|---|---|---|---|---|"
	cat "$rows"
	echo
	echo "Slowdowns on the standalone bench's sizes (\`lua queens.lua 12 1\`, \`bzip2 -c\` of 4 MiB),"
	echo "where aerun's start-up does not count; goals (issue 12): at most 1.6x discarded,"
	echo "2x written with zstd (aerun -o paces: it lowers the zstd level while the program waits"
	echo "for the writer, README \"Pacing\"; --fixed-level: level 1 throughout, as before pacing;"
	echo "aerun -T 2: two zstd worker threads beside the program on this 2-CPU machine)."
	echo "\`-fae-vc-profile\`: built again with the value-cache profile of the small workload above"
	echo "(\`aetrace stats --vc-profile\`, docs/ARCHITECTURE.md item 23): the cache's tests in the order"
	echo "that hits first, and plain records where the cache saved under 2.5 bytes a record (more bytes, faster code)."
	echo "Each round writes over the last round's file, as a user who captures again does; each run"
	echo "starts after \`sync\`, so that the files the other runs wrote are not written back during it."
	echo "Size: the .zst file aerun wrote (paced runs: of the last round)."
	echo
	echo "| workload | configuration | median s | min s | vs twin | min vs twin's min | .zst size |"
	echo "|---|---|---|---|---|---|---|"
	cat "$tmp/timing"
	echo
	sed 's/^/- pacing: /' "$tmp/pacing"
	sed 's/^/- sanity: /' "$tmp/sanity"
	sed 's/^/- goal: /' "$tmp/goals"
	echo
} > "$tmp/section"
cat "$tmp/section"
"$top/bench/replace-section.sh" "$results" "$tmp/section"
