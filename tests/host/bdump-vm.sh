#!/usr/bin/env bash
# bdump-vm.sh - bdump on the real /dev/trbuf, in the VM (vm/run --smp 2):
# one boot runs the same traced workload twice (self-checking producer
# processes x threads, tests/host/bdump_vm_prod.c, plus aecc-built
# tests/corpus/interp.c), once with bdump writing a local file under build/
# and once with bdump streaming to bdump-recv on the host (10.0.2.2 in the
# guest is the host's 127.0.0.1 under QEMU user networking).  On the host,
# both captures must pass `bdump --check` (chunk by chunk, SCHED equal to the
# MARKERS chunks) and bdump_vm_check (every producer record present exactly
# once and inside a segment the markers attribute to the thread that wrote
# it), and interp's output in the guest must equal its native output.
# A third run stops bdump while a CPU's ring is full (bdump-vm-fullring.sh):
# nothing of the producer that filled it may be missing.
# TAP output.  Skips when QEMU is missing.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }

NPROD=3 NTHR=3 NREC=${AE_BDVM_NREC:-60000} NPROG=2
# full-ring end (bdump-vm-fullring.sh): records filling 3.1 to 3.9 of the
# 4 KiB sub-buffers of a CPU's ring of 4
FULL_NREC="1600 1700 1800 1900 2000"
# pacing (bdump-vm-pace.sh): 24 MB of records against zstd level 12
PACE_NREC=3000000
prod=build/tests/host/bdump_vm_prod
chk=build/tests/host/bdump_vm_check
for f in bin/bdump bin/bdump-recv bin/aecc bin/aerun bin/aetrace $prod $chk; do
	[ -x "$f" ] || { echo "not ok 1 - $f built (run make)"; exit 1; }
done
if ! command -v qemu-system-x86_64 >/dev/null; then
	echo "ok 1 - bdump in the VM # SKIP qemu-system-x86_64 missing (scripts/deps.sh vm)"
	exit 0
fi
if ! "$top/vm/build-module.sh" >/dev/null; then
	echo "not ok 1 - trbuf.ko builds against the guest kernel (vm/build-module.sh)"
	exit 1
fi

# Work directory inside the repository: the guest sees it at /aetrace.
w=build/bdump-vm/run.$$
rm -rf "$w" && mkdir -p "$w/store"
recv_pid=
cleanup() {
	[ -n "$recv_pid" ] && { kill "$recv_pid" 2>/dev/null; wait "$recv_pid" 2>/dev/null; }
	if [ -n "${AE_BDVM_KEEP:-}" ]; then echo "# kept $w"; else rm -rf "$w"; fi
}
trap cleanup EXIT
od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$w/secret"

bin/aecc -O2 -o "$w/interp" tests/corpus/interp.c 2>"$w/aecc.log"
check "interp.c builds with bin/aecc" '[ -x "$w/interp" ] && [ -x "$w/interp.orig" ]'
"$w/interp.orig" >"$w/native.out"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
bin/bdump-recv --listen 127.0.0.1:$port --dir "$w/store" --secret "$w/secret" 2>"$w/recv.log" &
recv_pid=$!
sleep 0.3
check "bdump-recv listens on 127.0.0.1:$port" 'kill -0 $recv_pid 2>/dev/null'

g=tests/host/bdump-vm-guest.sh
args="$NPROD $NTHR $NREC $w/interp $NPROG"
start=$(date +%s)
vm/run --smp 2 --timeout 300 -- bash -c "
	$g $w/local $w/local/trace.zst $args; echo \"guest local: rc \$?\"
	$g $w/net tcp://10.0.2.2:$port $args $w/secret; echo \"guest net: rc \$?\"
	tests/host/bdump-vm-fullring.sh $w/full $FULL_NREC; echo \"guest full ring: rc \$?\"
	tests/host/bdump-vm-pace.sh $w/pace $PACE_NREC; echo \"guest pace: rc \$?\"
	" >"$w/vm.log" 2>&1
vm_rc=$?
sed 's/^/# vm: /' "$w/vm.log"
echo "# VM run: $(($(date +%s) - start)) s, $NPROD producers x $NTHR threads x $NREC records + $NPROG x interp"
check "VM run exits 0" '[ $vm_rc -eq 0 ]'

sess=$(ls "$w/store" 2>/dev/null | head -1)
check "bdump-recv stored one complete session ($sess)" \
	'[ $(ls "$w/store" | wc -l) -eq 1 ] && grep -q "complete 1" "$w/store/$sess/state"'

expect_status="$(printf '0 %.0s' $(seq 1 $((NPROD + NPROG + 1))) | sed 's/ $//')"
pids_all=()
for mode in local net; do
	d=$w/$mode
	if [ $mode = local ]; then trace=$d/trace.zst; sched=$d/sched.bin
	else trace=$w/store/$sess/trace.zst; sched=$w/store/$sess/sched.bin; fi
	check "$mode: producers, programs and bdump exit 0 ($(cat $d/status 2>/dev/null))" \
		'[ "$(cat $d/status 2>/dev/null)" = "$expect_status" ]'
	sed "s/^/# $mode bdump: /" "$d/bdump.log"
	check "$mode: bdump stopped by SIGINT with a summary, 0 drops" \
		'grep -q " 0 drops" "$d/bdump.log"'
	bin/bdump --check "$trace" "$sched" >"$d/check.out" 2>&1
	crc=$?
	sed "s/^/# $mode: /" "$d/check.out"
	check "$mode: bdump --check: decodes chunk by chunk, END counters, SCHED = MARKERS" \
		'[ $crc -eq 0 ]'
	if [ $mode = net ]; then
		check "net: sched.bin stored by bdump-recv equals the guest's SCHED file" \
			'cmp -s "$sched" "$d/sched.bin"'
	fi
	"$chk" "$trace" $NREC $((NPROD * NTHR)) $(cat "$d/pids" 2>/dev/null) >"$d/pat.out" 2>&1
	prc=$?
	sed "s/^/# $mode: /" "$d/pat.out"
	check "$mode: $((NPROD * NTHR)) producer streams x $NREC records intact, each in its own task's segments" \
		'[ $prc -eq 0 ]'
	same=1
	for i in $(seq 1 $NPROG); do
		cmp -s "$d/prog.$i.out" "$w/native.out" || same=0
	done
	check "$mode: aecc-built interp output in the guest ($NPROG runs) equals the native output" \
		'[ $same -eq 1 ] && [ -s "$w/native.out" ]'
	# the checker is not vacuous: one record more per stream must fail
	"$chk" "$trace" $((NREC + 1)) $((NPROD * NTHR)) $(cat "$d/pids" 2>/dev/null) >/dev/null 2>&1
	check "$mode: checker rejects the capture when one record per stream is missing" '[ $? -ne 0 ]'
done
# The byte streams differ (scheduling), the content must not: the same
# producer streams and records, the same witness bytes of the other tasks.
sum_of() { grep -o 'producer_bytes [0-9]* other_bytes [0-9]* unattributed 0 streams [0-9/]* complete [0-9]* records [0-9]*' "$1"; }
check "local capture and the one stored by bdump-recv hold the same per-task content" \
	'[ -n "$(sum_of $w/local/pat.out)" ] && [ "$(sum_of $w/local/pat.out)" = "$(sum_of $w/net/pat.out)" ]'

# bdump's end takes the last sub-buffer of a CPU whose ring is full: every
# record and the EXIT marker of a producer that exited while bdump stood
for nr in $FULL_NREC; do
	d=$w/full/$nr
	"$chk" "$d/trace.zst" "$nr" 1 "$(cat "$d/pid" 2>/dev/null)" >"$d/pat.out" 2>&1
	prc=$?
	nexit=$(bin/schedlog print "$d/sched.bin" 2>/dev/null | grep -c ' EXIT ')
	check "full ring at bdump's end, $nr records: producer and bdump exit 0, producer never waited ($(cat "$d/status" 2>/dev/null)), all records ($(grep -o 'records [0-9]* missing [0-9]*' "$d/pat.out")), $nexit EXIT marker, 0 drops" \
		'[ "$(cat "$d/status" 2>/dev/null)" = "0 0 0" ] && [ $prc -eq 0 ] && [ "$nexit" = 1 ] && grep -q " 0 drops" "$d/bdump.log"'
done

# Pacing on the real device: a producer the level-12 writer cannot keep up
# with waits in the kernel, and bdump goes lower; every record is there.
d=$w/pace
sed "s/^/# pace bdump: /" "$d/bdump.log"
"$chk" "$d/trace.zst" "$PACE_NREC" 1 "$(cat "$d/pid" 2>/dev/null)" >"$d/pat.out" 2>&1
prc=$?
check "pacing: the producer outruns level 12 and bdump goes lower ($(grep -o 'zstd level 12 paced[^)]*)' "$d/bdump.log")), all $PACE_NREC records ($(cat "$d/status" 2>/dev/null))" \
	'[ "$(cat "$d/status" 2>/dev/null)" = "0 0" ] && [ $prc -eq 0 ] && grep -q "zstd level 12 paced down to " "$d/bdump.log" &&
	 bin/bdump --check "$d/trace.zst" "$d/sched.bin" >/dev/null 2>&1'

# A standalone trace (aerun -o) shipped by `bdump --from` through a pipe
# and through bdump-recv still regenerates to the same instruction trace.
mkdir -p "$w/fwd"
(cd "$w/fwd" && cp "$top/$w/interp" "$top/$w/interp.orig" . &&
	"$top/bin/aerun" -q -o t.zst -- ./interp > /dev/null &&
	"$top/bin/aetrace" regen t.zst interp > regen.orig)
check "standalone trace regenerates" '[ -s "$w/fwd/regen.orig" ]'
bin/bdump -q --from "$w/fwd/t.zst" "|cat > $w/fwd/piped.zst" "$w/fwd/piped.sched"
bin/aetrace regen "$w/fwd/piped.zst" "$w/fwd/interp" > "$w/fwd/regen.piped"
check "standalone trace through bdump's pipe target regenerates the same" \
	'cmp -s "$w/fwd/regen.orig" "$w/fwd/regen.piped"'
before=$(ls "$w/store" | sort)
bin/bdump -q --from "$w/fwd/t.zst" --secret "$w/secret" "tcp://127.0.0.1:$port" "$w/fwd/net.sched"
fsess=$(ls "$w/store" | sort | comm -13 <(echo "$before") - | head -1)
[ -n "$fsess" ] && bin/aetrace regen "$w/store/$fsess/trace.zst" "$w/fwd/interp" > "$w/fwd/regen.net"
check "standalone trace through bdump-recv ($fsess) regenerates the same" \
	'[ -n "$fsess" ] && cmp -s "$w/fwd/regen.orig" "$w/fwd/regen.net"'
echo "1..$n"
