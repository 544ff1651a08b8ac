#!/usr/bin/env bash
# schedlog-vm.sh - the BPF scheduler recorder on the tracing kernel (vm/run
# --smp 2; the guest kernel needs CONFIG_DEBUG_INFO_BTF): the known
# workload's events and an unbroken per-CPU switch chain with the idle task;
# then `bdump --bpf-sched` beside a real capture: for every SWITCH_IN marker
# of a traced task in sched.bin, the last sched_switch the recorder saw on
# that CPU before it ran that thread, at most 100 ms earlier (and the same
# markers with their CPUs swapped do not match), and `aetrace
# timeline` of the pair draws them as traced slices with no unmatched
# marker. TAP output; skips without QEMU, the recorder, or kernel BTF.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }
chk=tests/host/schedlog_check.py

for f in bin/bdump bin/aecc bin/aetrace build/tests/host/bdump_vm_prod build/tests/host/sched_workload; do
	[ -x "$f" ] || { echo "not ok 1 - $f built (run make)"; exit 1; }
done
if [ ! -x bin/schedlog-record ]; then
	skip "BPF recorder in the VM" "bin/schedlog-record not built (scripts/deps.sh bpf)"
	exit 0
fi
if ! command -v qemu-system-x86_64 >/dev/null; then
	skip "BPF recorder in the VM" "qemu-system-x86_64 missing (scripts/deps.sh vm)"
	exit 0
fi
if ! vm/build-module.sh >/dev/null; then
	echo "not ok 1 - trbuf.ko builds against the guest kernel (vm/build-module.sh)"
	exit 1
fi
kdir=$(vm/kernel-path)
if ! grep -q '^CONFIG_DEBUG_INFO_BTF=y' "$kdir/config"; then
	skip "BPF recorder in the VM" "guest kernel $kdir built without CONFIG_DEBUG_INFO_BTF"
	exit 0
fi

w=build/schedlog-vm/run.$$
rm -rf "$w" && mkdir -p "$w"
cleanup() { if [ -n "${AE_SLVM_KEEP:-}" ]; then echo "# kept $w"; else rm -rf "$w"; fi; }
trap cleanup EXIT
bin/aecc -O2 -o "$w/interp" tests/corpus/interp.c 2>"$w/aecc.log"
check "interp.c builds with bin/aecc" '[ -x "$w/interp" ]'

start=$(date +%s)
vm/run --smp 2 --timeout 400 -- tests/host/schedlog-vm-guest.sh "$w" "$w/interp" >"$w/vm.log" 2>&1
vm_rc=$?
sed 's/^/# vm: /' "$w/vm.log"
echo "# VM run: $(($(date +%s) - start)) s"
check "VM run exits 0" '[ $vm_rc -eq 0 ]'
sed 's/^/# recorder: /' "$w/known.err" 2>/dev/null
check "workload, recorder, producers, program and bdump exit 0 ($(cat $w/status 2>/dev/null))" \
	'[ "$(cat $w/status 2>/dev/null)" = "0 0 0 0 0 0" ]'

set -- $(cat "$w/known.out" 2>/dev/null) x x x x
python3 $chk workload "$w/known.bin" "$2" "$4" 20 >"$w/chk.out" 2>&1
crc=$?
sed 's/^/# /' "$w/chk.out"
check "known workload in the guest: fork, exec, 20 sleeps, exit 7 all logged" '[ $crc -eq 0 ]'
python3 $chk strict "$w/known.bin" >"$w/chk.out" 2>&1
crc=$?
grep -v '^ok' "$w/chk.out" | sed 's/^/# /'
check "tracing kernel: no switch missing from any CPU's chain, idle included" '[ $crc -eq 0 ]'

sed 's/^/# bdump: /' "$w/bdump.log"
bin/bdump --check "$w/trace.zst" "$w/sched.bin" >"$w/check.out" 2>&1
check "the capture beside the recorder is complete (bdump --check)" '[ $? -eq 0 ]'
python3 $chk markers "$w/all.bin" "$w/sched.bin" >"$w/chk.out" 2>&1
crc=$?
sed 's/^/# /' "$w/chk.out"
check "every SWITCH_IN marker of a traced task matches a sched_switch of the BPF log" '[ $crc -eq 0 ]'
nsw=$(grep -o '[0-9]* SWITCH_IN markers inside' "$w/chk.out" | cut -d' ' -f1)
# not vacuous: the same markers with their CPUs swapped must not match
python3 - "$w/sched.bin" "$w/swapped.bin" <<'EOT'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
for o in range(0, len(d), 72):  # struct trbuf_marker
    d[o + 12] ^= 1          # struct trbuf_marker.cpu (2 CPUs)
open(sys.argv[2], 'wb').write(d)
EOT
python3 $chk markers "$w/all.bin" "$w/swapped.bin" >/dev/null 2>&1
check "the matching rejects the markers with their CPUs swapped" '[ $? -ne 0 ]'

bin/aetrace timeline --sched "$w/sched.bin" --bpf "$w/all.bin" -o "$w/t.json" 2>"$w/tl.err"
rc=$?
sed 's/^/# timeline: /' "$w/tl.err"
ntr=$(python3 -c 'import json,sys; print(sum(1 for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("cat") == "traced"))' "$w/t.json" 2>/dev/null)
check "aetrace timeline of the capture: no unmatched marker, $ntr traced slices ($nsw switch-ins)" \
	'[ $rc -eq 0 ] && ! grep -q "match no switch" "$w/tl.err" && [ -n "$ntr" ] && [ "$ntr" -gt 0 ]'
bin/aetrace timeline --sched "$w/sched.bin" --bpf "$w/all.bin" -o "$w/t.svg" 2>/dev/null &&
	xmllint --noout "$w/t.svg" && cp "$w/t.svg" build/schedlog-vm/last-timeline.svg
check "SVG of the capture is well-formed (build/schedlog-vm/last-timeline.svg)" '[ $? -eq 0 ]'
echo "1..$n"
