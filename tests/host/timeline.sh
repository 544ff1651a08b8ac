#!/usr/bin/env bash
# timeline.sh - `aetrace timeline` on hand-built schedules
# (tests/host/timeline_gen.py draws the true slices, then writes the
# markers and the BPF log they imply): the JSON parses and holds exactly
# the true slices (cpu, task, start, end, traced or not) per CPU, with the
# BPF log and from the markers alone; the SVG is well-formed XML with one
# rectangle per slice and renders; hostile process names stay escaped;
# malformed inputs give one clear line and status 1. TAP output.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }
ae=bin/aetrace
[ -x $ae ] || { echo "not ok 1 - $ae built (run make)"; exit 1; }
w=$(mktemp -d /tmp/timeline.XXXXXX)
[ -n "${AE_KEEP:-}" ] || trap 'rm -rf "$w"' EXIT

# compare.py JSON TRUTH MODE: exact slices (bpf) or traced slices (markers)
cat >"$w/compare.py" <<'EOT'
import json, sys
t = json.load(open(sys.argv[1]))
truth = json.load(open(sys.argv[2]))
mode = sys.argv[3]
x = [e for e in t['traceEvents'] if e['ph'] == 'X']
t0 = t['otherData']['t0_ns']
def ns(us):                      # "123.456" us -> exact ns
    a, b = ('%s' % us).split('.') if '.' in '%s' % us else ('%s' % us, '0')
    return int(a) * 1000 + int(b.ljust(3, '0')[:3])
got = sorted((e['tid'], e['args']['tid'], ns(e['ts']) + t0, ns(e['ts']) + ns(e['dur']) + t0,
              1 if e['args']['traced'] else 0) for e in x)
if mode == 'bpf':
    want = sorted(tuple(s) for s in truth['slices'])
    per = {c: sum(1 for s in want if s[0] == c) for c in range(truth['ncpu'])}
    print('# slices per CPU:', per, 'traced', sum(s[4] for s in want))
    bad = [(a, b) for a, b in zip(got, want) if a != b]
    ok = len(got) == len(want) and not bad
    if not ok:
        print('# got %d want %d; first difference %s' % (len(got), len(want), bad[:1]))
else:
    # markers alone: one traced slice per switch-in, starting at the marker
    want = sorted((int(c), t) for c, ts in truth['switch_ins'].items() for t in ts)
    g = sorted((s[0], s[2]) for s in got)
    ok = g == want and all(s[4] == 1 for s in got)
    if not ok:
        print('# got %d want %d' % (len(g), len(want)))
names = {e['args']['comm'] for e in x}
ok = ok and mode != 'bpf' or ok and 'srv"<&>\\x' in names and any(n.startswith('kworker/0:1\x01') for n in names)
sys.exit(0 if ok else 1)
EOT

for seed in 1 2 3; do
	python3 tests/host/timeline_gen.py "$w" $seed
	$ae timeline --sched "$w/sched.bin" --bpf "$w/all.bin" -o "$w/t.json" 2>"$w/err"
	rc=$?
	check "seed $seed: JSON written, no warning" '[ $rc -eq 0 ] && [ ! -s "$w/err" ]'
	python3 -m json.tool "$w/t.json" >/dev/null 2>&1
	check "seed $seed: JSON parses (python3 -m json.tool)" '[ $? -eq 0 ]'
	python3 "$w/compare.py" "$w/t.json" "$w/truth.json" bpf
	check "seed $seed: with the BPF log, exactly the true slices per CPU (times, tasks, traced or not)" '[ $? -eq 0 ]'
	$ae timeline --sched "$w/sched.bin" -o "$w/m.json" 2>"$w/err" &&
		python3 "$w/compare.py" "$w/m.json" "$w/truth.json" markers
	check "seed $seed: from the markers alone, one traced slice per switch-in" '[ $? -eq 0 ]'
done
# the comparison is not vacuous: one slice cut short must fail
python3 - "$w/t.json" <<'EOT'
import json, sys
t = json.load(open(sys.argv[1]))
x = [e for e in t['traceEvents'] if e['ph'] == 'X']
x[len(x) // 2]['dur'] = 1
json.dump(t, open(sys.argv[1], 'w'))
EOT
python3 "$w/compare.py" "$w/t.json" "$w/truth.json" bpf >/dev/null
check "the comparison rejects a timeline with one slice cut short" '[ $? -ne 0 ]'

$ae timeline --sched "$w/sched.bin" --bpf "$w/all.bin" -o "$w/t.svg"
check "SVG written" '[ $? -eq 0 ] && [ -s "$w/t.svg" ]'
if command -v xmllint >/dev/null; then
	xmllint --noout "$w/t.svg" 2>"$w/err"
	check "SVG is well-formed XML (xmllint)" '[ $? -eq 0 ]'
else
	skip "SVG is well-formed XML" "xmllint missing (scripts/deps.sh check)"
fi
nsl=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["slices"]))' "$w/truth.json")
ntr=$(python3 -c 'import json,sys; print(sum(s[4] for s in json.load(open(sys.argv[1]))["slices"]))' "$w/truth.json")
check "SVG: one rectangle per slice ($nsl), $ntr of them traced" \
	'[ $(grep -o "class=\"slice " "$w/t.svg" | wc -l) -eq $nsl ] && [ $(grep -o "class=\"slice traced\"" "$w/t.svg" | wc -l) -eq $ntr ]'
if command -v rsvg-convert >/dev/null; then
	rsvg-convert -o "$w/t.png" "$w/t.svg" 2>"$w/err"
	check "SVG renders (rsvg-convert)" '[ $? -eq 0 ] && [ -s "$w/t.png" ] && [ ! -s "$w/err" ]'
else
	skip "SVG renders" "rsvg-convert missing (scripts/deps.sh check)"
fi

# bad input: one line naming the file and where, status 1
head -c 100 "$w/sched.bin" >"$w/cut.bin"
$ae timeline --sched "$w/cut.bin" -o "$w/x.json" 2>"$w/err"
check "sched.bin cut inside a marker: status 1, names file and offset" \
	'[ $? -eq 1 ] && grep -q "cut.bin: 100 bytes.*offset 72" "$w/err" && [ $(wc -l <"$w/err") -eq 1 ]'
cp "$w/sched.bin" "$w/badtype.bin"
printf '\x2a' | dd of="$w/badtype.bin" bs=1 seek=$((72 * 3 + 8)) conv=notrunc 2>/dev/null
$ae timeline --sched "$w/badtype.bin" -o "$w/x.json" 2>"$w/err"
check "unknown marker type: status 1, names marker 3" '[ $? -eq 1 ] && grep -q "marker 3 (offset 216): unknown type 42" "$w/err"'
cp "$w/sched.bin" "$w/badcpu.bin"
printf '\xff\xff' | dd of="$w/badcpu.bin" bs=1 seek=$((72 * 3 + 12)) conv=notrunc 2>/dev/null
$ae timeline --sched "$w/badcpu.bin" -o "$w/x.json" 2>"$w/err"
check "marker cpu 65535: status 1, names marker 3 (it drew 65536 lanes)" \
	'[ $? -eq 1 ] && grep -q "badcpu.bin: marker 3: cpu 65535" "$w/err"'
$ae timeline --sched "$w/sched.bin" --bpf "$w/sched.bin" -o "$w/x.json" 2>"$w/err"
check "not a BPF log: status 1, says so" '[ $? -eq 1 ] && grep -q "not a BPF schedule log" "$w/err"'
head -c $(( $(stat -c %s "$w/all.bin") - 30 )) "$w/all.bin" >"$w/cutall.bin"
$ae timeline --sched "$w/sched.bin" --bpf "$w/cutall.bin" -o "$w/x.json" 2>"$w/err"
check "BPF log cut inside a record: warns with the offset, still draws" \
	'[ $? -eq 0 ] && grep -q "cut inside a record at offset" "$w/err" && python3 -m json.tool "$w/x.json" >/dev/null'
# a record's time near 2^64 (a hostile review's mutant): the SVG's axis
# took 10 ticks of a wrapped step, and wrote without end
cp "$w/all.bin" "$w/late.bin"
printf '\xff\xff\xff\xff\xff\xff\xff\xff' | dd of="$w/late.bin" bs=1 \
	seek=$((64 + ($(stat -c %s "$w/all.bin") - 64) / 80 / 2 * 80)) conv=notrunc 2>/dev/null
timeout 60 $ae timeline --sched "$w/sched.bin" --bpf "$w/late.bin" -o "$w/late.svg" 2>"$w/err"
check "a BPF record at time 2^64-1: the SVG ends (under 1 MB)" \
	'[ $? -eq 0 ] && [ $(stat -c %s "$w/late.svg") -lt 1048576 ]'
$ae timeline --sched "$w/sched.bin" -o "$w/x.txt" 2>"$w/err"
check "output neither .json nor .svg: status 2" '[ $? -eq 2 ] && grep -q "must end in .json or .svg" "$w/err"'
$ae timeline --sched "$w/nonexistent" -o "$w/x.json" 2>"$w/err"
check "missing sched.bin: status 1, names it" '[ $? -eq 1 ] && grep -q "nonexistent: No such file" "$w/err"'
$ae timeline --sched "$w/sched.bin" --format json -o /dev/full 2>"$w/err"
check "full disk: status 1, write failed" '[ $? -eq 1 ] && grep -q "/dev/full: write failed" "$w/err"'

# Instruction counts: an aecc-built program captured by aerun (markers in
# the trace), regenerated by the timeline: its slices add up to the
# instructions `aetrace regen` prints, and carry the program's name.
if [ -x bin/aecc ] && [ -x bin/aerun ] && bin/aecc -O2 -o "$w/interp" tests/corpus/interp.c 2>"$w/err"; then
	(cd "$w" && "$top/bin/aerun" -q -o cap.zst -- ./interp >/dev/null)
	nins=$($ae regen "$w/cap.zst" "$w/interp" | wc -l)
	$ae timeline --trace "$w/cap.zst" "$w/interp" -o "$w/i.json" 2>"$w/err"
	rc=$?
	sum=$(python3 -c 'import json,sys; x=[e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"]=="X"]; print(sum(e["args"].get("instructions",0) for e in x), all(e["args"]["comm"]=="interp" for e in x))' "$w/i.json" 2>/dev/null)
	check "timeline --trace: slice instruction counts add up to aetrace regen's $nins, named after the program ($sum)" \
		'[ $rc -eq 0 ] && [ "$sum" = "$nins True" ] && [ "$nins" -gt 1000 ]'
	# (the names come from the regenerator, which has freed its programs
	# when the counts are added: memcheck sees a read of one)
	timeout 600 valgrind -q --error-exitcode=9 $ae timeline --trace "$w/cap.zst" "$w/interp" \
		-o "$w/v.json" 2>"$w/verr"
	check "timeline --trace under valgrind memcheck: no invalid read or leak of a name" \
		'[ $? -eq 0 ] && cmp -s "$w/i.json" "$w/v.json"'
	$ae timeline --sched "$w/cap.zst" --trace "$w/cap.zst" "$w/interp" -o "$w/i.svg" 2>"$w/err" &&
		xmllint --noout "$w/i.svg" && grep -q "interp [0-9]*/[0-9]* $nins insns" "$w/i.svg"
	check "SVG slice labels carry the instruction count" '[ $? -eq 0 ]'
	$ae timeline --trace "$w/cap.zst" "$w/nonexistent-prog" -o "$w/x.json" 2>"$w/err"
	check "timeline --trace with a missing program: status 1, names it" \
		'[ $? -eq 1 ] && grep -q "nonexistent-prog" "$w/err"'
else
	skip "timeline --trace" "bin/aecc or bin/aerun not built"
fi

# A real BPF log of this machine, when the recorder works here.
if [ -x bin/schedlog-record ] && bin/schedlog-record -q -o "$w/real.bin" -d 0.3 2>/dev/null; then
	: >"$w/none.bin"
	$ae timeline --sched "$w/none.bin" --bpf "$w/real.bin" -o "$w/real.json" &&
		$ae timeline --sched "$w/none.bin" --bpf "$w/real.bin" -o "$w/real.svg" &&
		python3 -m json.tool "$w/real.json" >/dev/null && xmllint --noout "$w/real.svg"
	check "a real BPF log of this machine: JSON and SVG valid" '[ $? -eq 0 ]'
else
	skip "a real BPF log of this machine" "schedlog-record not built or BPF unavailable"
fi
echo "1..$n"
