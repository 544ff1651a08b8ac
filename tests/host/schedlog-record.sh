#!/usr/bin/env bash
# schedlog-record.sh - the BPF scheduler recorder on this host's kernel:
# a known workload (fork, exec, 50 sleeps, exit 7) recorded and checked by
# an independent reader (tests/host/schedlog_check.py): every event of the
# child present, per-CPU switch chains unbroken, times ordered; SIGTERM
# stops cleanly; a stalled reader loses events and says so (never
# silently); no BTF and no privilege give the distinct status 3 with the
# reason; a full disk is an error. TAP output; skips the BPF parts when the
# recorder was not built or BPF cannot be used here.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }
rec=bin/schedlog-record
wl=build/tests/host/sched_workload
chk=tests/host/schedlog_check.py
NOBPF=3

if [ ! -x $rec ]; then
	skip "schedlog-record" "not built (needs clang, bpftool, libbpf-dev: scripts/deps.sh bpf; and kernel BTF)"
	exit 0
fi
[ -x $wl ] || { echo "not ok 1 - $wl built (run make)"; exit 1; }
w=$(mktemp -d /tmp/schedlog-rec.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$w"
}
trap cleanup EXIT

$rec >/dev/null 2>&1
check "no -o: usage, status 2" '[ $? -eq 2 ]'
$rec -o "$w/x" -b 3 2>"$w/err"
check "-b 3 (not a power of 2): status 2 naming the value" '[ $? -eq 2 ] && grep -q "bad value .3." "$w/err"'

# start the recorder; wait until its programs are attached
start_rec() {
	rm -f "$w/ready" && mkfifo "$w/ready"
	$rec "$@" --ready-fd 3 3>"$w/ready" 2>"$w/rec.err" &
	rp=$!
	pids+=($rp)
	timeout 30 head -c1 "$w/ready" >/dev/null
}

start_rec -o "$w/all.bin"
wait_rc() { wait "$rp"; rc=$?; }
if ! kill -0 $rp 2>/dev/null; then
	wait_rc
	if [ $rc -eq $NOBPF ]; then
		skip "recording on this kernel" "BPF unavailable: $(cat "$w/rec.err")"
		exit 0
	fi
	nok "recorder starts (status $rc: $(cat "$w/rec.err"))"
	exit 1
fi
out=$($wl sleep 50)
kill -INT $rp
wait_rc
sed 's/^/# /' "$w/rec.err"
check "SIGINT: clean stop, status 0, summary with 0 lost" '[ $rc -eq 0 ] && grep -q " 0 lost" "$w/rec.err"'
set -- $out
python3 $chk workload "$w/all.bin" "$2" "$4" 50 >"$w/chk.out" 2>&1
crc=$?
sed 's/^/# /' "$w/chk.out"
check "workload (fork, exec, 50 sleeps, exit 7) fully in the log; chains, times, END consistent" \
	'[ $crc -eq 0 ] && [ $(grep -c "^ok:" "$w/chk.out") -ge 18 ]'
# the checker is not vacuous: one sleep more than happened must fail
python3 $chk workload "$w/all.bin" "$2" "$4" 52 >/dev/null 2>&1
check "checker rejects the log when 52 sleeps are claimed" '[ $? -ne 0 ]'

start_rec -o "$w/term.bin"
sleep 0.3
kill -TERM $rp
wait_rc
python3 $chk valid "$w/term.bin" >"$w/chk.out" 2>&1
crc=$?
check "SIGTERM: clean stop, status 0, valid log" '[ $rc -eq 0 ] && [ $crc -eq 0 ]'

# A stopped reader with a 1 MiB ring buffer and ~60000 switches: losses.
start_rec -o "$w/lost.bin" -b 1
kill -STOP $rp
$wl pingpong 30000
kill -CONT $rp
sleep 0.3
check "a stop/continue does not end the recording" 'kill -INT $rp'
wait_rc
sed 's/^/# /' "$w/rec.err"
check "lost events: status 1, LOST on stderr" '[ $rc -eq 1 ] && grep -q "LOST [0-9]* events" "$w/rec.err"'
python3 $chk lost "$w/lost.bin" >"$w/chk.out" 2>&1
crc=$?
sed 's/^/# /' "$w/chk.out"
check "lost events counted in LOST records, END and the header" '[ $crc -eq 0 ]'

# No kernel BTF (hidden by an empty tmpfs in a private mount namespace).
if unshare -m true 2>/dev/null; then
	unshare -m sh -c "mount -t tmpfs none /sys/kernel/btf && exec $rec -o $w/nobtf.bin" 2>"$w/err"
	rc=$?
	check "no kernel BTF: status $NOBPF, says why ($(cat "$w/err"))" \
		'[ $rc -eq $NOBPF ] && grep -q "BPF unavailable: kernel BTF" "$w/err"'
else
	skip "no kernel BTF" "unshare -m not permitted"
fi
# No privilege.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 777 "$w"
	setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all \
		$rec -o "$w/nopriv.bin" 2>"$w/err"
	rc=$?
	check "unprivileged: status $NOBPF, says why ($(cat "$w/err"))" \
		'[ $rc -eq $NOBPF ] && grep -q "BPF unavailable: .*permission denied" "$w/err"'
else
	skip "unprivileged" "needs root and setpriv to drop privileges"
fi
# A full disk.
$rec -o /dev/full -d 0.2 2>"$w/err"
rc=$?
check "output on a full disk: status 1, names the file" '[ $rc -eq 1 ] && grep -q "/dev/full" "$w/err"'

# bdump --bpf-sched: the recorder runs beside a (synthetic) capture.
bd=bin/bdump
syn=bytes=2M,cpus=2,subbuf=64K,rate=4M
$bd -q -d 0.5 --synthetic-source $syn --bpf-sched "$w/b.bin" "$w/t.zst" "$w/s.bin" 2>"$w/err"
rc=$?
bpid=$(python3 $chk dump "$w/b.bin" 2>/dev/null | awk '$4 == "SWITCH" && $6 == "bdump" {split($5, a, "/"); print a[1]; exit}')
check "bdump --bpf-sched: status 0, a valid log holding bdump's own switches" \
	'[ $rc -eq 0 ] && python3 $chk valid "$w/b.bin" >/dev/null && [ -n "$bpid" ]'
# A stand-in recorder proves the order: attached before the SESSION chunk
# is written, stopped only once the capture is complete (END, closed).
cat >"$w/fake-rec" <<EOT
#!/usr/bin/env bash
while [ \$# -gt 0 ]; do case \$1 in -o) out=\$2; shift;; --ready-fd) fd=\$2; shift;; esac; shift; done
[ -e "$w/t2.zst" ] && echo "capture began before the recorder was ready" >"\$out"
trap '$top/$bd --check "$w/t2.zst" "$w/s2.bin" >/dev/null 2>&1 && echo "stopped after END" >>"\$out"; exit 0' TERM
echo -n R >&\$fd; eval "exec \$fd>&-"
while :; do sleep 0.05; done
EOT
chmod +x "$w/fake-rec"
AE_SCHEDLOG_RECORD="$w/fake-rec" $bd -q -d 0.3 --synthetic-source $syn --bpf-sched "$w/b2" "$w/t2.zst" "$w/s2.bin"
rc=$?
check "bdump --bpf-sched: recorder ready before the capture starts, stopped after END ($(cat "$w/b2" 2>/dev/null))" \
	'[ $rc -eq 0 ] && [ "$(cat "$w/b2")" = "stopped after END" ]'
printf '#!/bin/sh\necho "schedlog-record: BPF unavailable: test" >&2\nexit %d\n' $NOBPF >"$w/nobpf-rec"
chmod +x "$w/nobpf-rec"
AE_SCHEDLOG_RECORD="$w/nobpf-rec" $bd -q -d 0.3 --synthetic-source $syn --bpf-sched "$w/b3" "$w/t3.zst" "$w/s3.bin" 2>"$w/err"
rc=$?
check "bdump --bpf-sched without BPF: status 1, says so, no capture started" \
	'[ $rc -eq 1 ] && grep -q "bdump: --bpf-sched .*BPF unavailable" "$w/err" && [ ! -e "$w/t3.zst" ]'
echo "1..$n"
