#!/usr/bin/env bash
# vm/run: boots the guest kernel with 2 CPUs, the repository writable at
# /aetrace, exit statuses propagate, timeouts are reported.
# Skips only when QEMU is missing.  Builds the kernel if it is not cached.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { # name, condition status
	if [ "$2" -eq 0 ]; then ok "$1"; else notok "$1"; fi
}

if ! command -v qemu-system-x86_64 >/dev/null; then
	echo "ok 1 - vm boot # SKIP qemu-system-x86_64 missing (scripts/deps.sh vm)"
	exit 0
fi
# AE_KERNEL (a bzImage, also honoured by vm/run) skips the kernel build.
if [ -z "${AE_KERNEL:-}" ]; then
	if ! kdir=$("$top/vm/kernel-path" --build); then
		notok "guest kernel builds (vm/kernel-path --build)"
		exit 1
	fi
	ok "guest kernel built: $kdir"
fi

# One boot: report nproc, write a random token into the repository.
mkdir -p "$top/build/vm-test"
probe=$(mktemp "$top/build/vm-test/probe.XXXXXX")
rm -f "$probe"
token=$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
out=$(mktemp)
tfile=$out.t
# A one-request HTTP server on the host's loopback, reachable from the
# guest as 10.0.2.2 through QEMU's user-mode network.
web=$(mktemp -d)
echo "net-$token" >"$web/token"
(cd "$web" && exec python3 -c '
import http.server, socketserver, sys
s = socketserver.TCPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
print(s.server_address[1], flush=True)
s.timeout = 300
s.handle_request()' >"$web/port" 2>/dev/null) &
web_pid=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$web/port" ] && break; sleep 0.5; done
port=$(cat "$web/port")
t0=$(date +%s.%N)
"$top/vm/run" --smp 2 -- bash -c \
	'echo command-started; echo "nproc=$(nproc)"; echo "cwd=$(pwd)"; echo "$1" >"$2"
	exec 3<>"/dev/tcp/10.0.2.2/$3" && printf "GET /token HTTP/1.0\r\n\r\n" >&3 &&
		echo "net=$(tail -n 1 <&3)"' \
	bash "$token" "/aetrace/${probe#$top/}" "$port" 2>&1 |
	while IFS= read -r l; do
		[ "$l" = command-started ] && date +%s.%N >"$tfile"
		echo "$l"
	done >"$out"
rc=${PIPESTATUS[0]}
sed 's/^/# /' "$out"
check "vm/run of a succeeding command exits 0 (got $rc)" $((rc != 0))
[ -s "$tfile" ] && awk -v a="$t0" -v b="$(cat "$tfile")" 'BEGIN { printf "# boot to command: %.1f s\n", b - a }'
rm -f "$tfile"
grep -qx 'nproc=2' "$out"
check "guest sees 2 CPUs with --smp 2" $?
grep -qx 'cwd=/aetrace' "$out"
check "command runs in /aetrace" $?
[ "$(cat "$probe" 2>/dev/null)" = "$token" ]
check "/aetrace is the repository, writable from the guest" $?
grep -qx "net=net-$token" "$out"
check "the guest reaches the host at 10.0.2.2 (user-mode network)" $?
kill "$web_pid" 2>/dev/null
wait "$web_pid" 2>/dev/null
rm -rf "$probe" "$out" "$web"

"$top/vm/run" -- sh -c 'exit 7' >/dev/null 2>&1
rc=$?
check "non-zero exit status propagates (want 7, got $rc)" $((rc != 7))

"$top/vm/run" --timeout 2 -- sleep 100 >/dev/null 2>&1
rc=$?
check "a timeout gives status 124 (got $rc)" $((rc != 124))

# --no-module keeps trbuf.ko out of the guest (the baseline kernel's boots);
# without it the guest loads the module when it is built.
if [ -n "$("$top/vm/build-module.sh" 2>/dev/null)" ]; then
	"$top/vm/run" -- sh -c '[ -e /sys/module/trbuf ]' >/dev/null 2>&1
	check "the guest loads trbuf.ko when it is built" $?
	"$top/vm/run" --no-module -- sh -c '[ ! -e /sys/module/trbuf ] && [ ! -e /dev/trbuf ]' >/dev/null 2>&1
	check "vm/run --no-module boots without trbuf.ko" $?
fi

# The kselftest wrapper reports a kernel WARNING in the guest's log, and
# relays the inner script's TAP lines.
fake=$(mktemp "$top/build/vm-test/fake-kselftest.XXXXXX")
cat >"$fake" <<'FAKE'
#!/bin/sh
echo "ok 1 - fake inner test"
echo "WARNING: CPU: 0 PID: 1 at fake/vm-boot.c:1 (injected by vm-boot.sh)" >/dev/kmsg
FAKE
chmod +x "$fake"
out=$(AE_KSELFTEST_INNER=${fake#$top/} "$top/tests/host/kselftest-vm.sh" 2>&1)
echo "$out" | sed 's/^/# /'
echo "$out" | grep -q '^ok 1 - fake inner test$'
check "kselftest-vm.sh relays the inner TAP lines" $?
echo "$out" | grep -q '^not ok [0-9]* - guest kernel log has no WARNING/BUG/Oops$'
check "kselftest-vm.sh reports a WARNING in the guest kernel log" $?
rm -f "$fake"

# The upstream selftest comparison (tests/kselftest/upstream-vm.sh) fails
# on each kind of difference: fed doctored copies of two clean boots' logs.
up=$top/tests/kselftest/upstream-vm.sh
ul=$(mktemp -d)
tests="sigreturn_64 single_step_syscall_64 ptrace_syscall_64 fsgsbase_64 basic_test basic_percpu_ops_test param_test"
mklog() { # label, kernel word, file
	{
		echo "kernel $2"
		for t in $tests; do echo "$1 $t 0 1s"; done
		[ "$1" = base ] || echo "traced workload ok"
		echo "# aevm-dmesg-begin"; echo "[    1.0] clean boot"; echo "# aevm-dmesg-end"
	} >"$3"
}
mklog base unpatched "$ul/base"
mklog traced patched "$ul/traced"
"$up" --compare "$ul/base" "$ul/traced" >"$ul/out" 2>&1
! grep -q '^not ok' "$ul/out" && [ "$(grep -c '^ok' "$ul/out")" -eq 18 ]
check "upstream-vm.sh --compare passes two clean logs" $?
upfails() { # name, sed script for the traced log, sed script for the base log
	sed "$2" "$ul/traced" >"$ul/t2"
	sed "$3" "$ul/base" >"$ul/b2"
	"$up" --compare "$ul/b2" "$ul/t2" >"$ul/out" 2>&1
	grep -q '^not ok' "$ul/out"
	check "upstream-vm.sh --compare fails when $1" $?
}
upfails "a selftest fails only on the tracing kernel" 's/^traced fsgsbase_64 0 /traced fsgsbase_64 1 /' ''
upfails "a selftest skips only on the tracing kernel" 's/^traced param_test 0 /traced param_test 4 /' ''
upfails "a selftest's result is missing" '/^traced sigreturn_64 /d' ''
upfails "a selftest fails on both kernels" 's/^traced basic_test 0 /traced basic_test 1 /' \
	's/^base basic_test 0 /base basic_test 1 /'
upfails "the tracing kernel logs a WARNING" \
	's/clean boot/WARNING: CPU: 1 PID: 9 at kernel\/sched\/core.c:1 x/' ''
upfails "the tracing kernel logs a lockdep report" \
	's/clean boot/======================================================\n[ 1.0] possible circular locking dependency detected/' ''
upfails "the tracing kernel logs an RCU stall" \
	's/clean boot/rcu: INFO: rcu_preempt self-detected stall on CPU/' ''
upfails "the tracing kernel log is cut off" '/^# aevm-dmesg-end$/d' ''
upfails "the traced workload failed" '/^traced workload ok$/d' ''
upfails "the base boot ran the patched kernel" '' 's/^kernel unpatched$/kernel patched/'
rm -rf "$ul"

# A clone anywhere: under /tmp and under the home directory (both covered
# by tmpfs in the guest's stage 1), with blanks and a comma in the path.
# The copy holds what vm/run needs (same kernel key, so the cached kernel).
for parent in /tmp "$HOME"; do
	clone=$(mktemp -d "$parent/aetrace clone,XXXXXX")
	cp -r "$top/vm" "$top/kernel-patches" "$clone/"
	echo "clone-$token" >"$clone/marker"
	out=$("$clone/vm/run" --timeout 300 -- sh -c 'cat marker; echo "cwd=$(pwd)"' 2>&1)
	rc=$?
	echo "$out" | tail -3 | sed 's/^/# /'
	[ "$rc" -eq 0 ] && echo "$out" | grep -qx "clone-$token" && echo "$out" | grep -qx 'cwd=/aetrace'
	check "vm/run from a clone in '$clone' boots and shares that clone (got $rc)" $?
	rm -rf "$clone"
done

# A kernel panic (here: no init) ends vm/run with 125 and says so.
out=$(AE_VM_APPEND=init=/nonexistent-init "$top/vm/run" --timeout 120 -- true 2>&1)
rc=$?
echo "$out" | tail -3 | sed 's/^/# /'
[ "$rc" -eq 125 ] && echo "$out" | grep -q '^vm/run: kernel panic in the guest'
check "a kernel panic gives status 125 and a message (got $rc)" $?
