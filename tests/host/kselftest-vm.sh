#!/usr/bin/env bash
# Kernel self-tests: builds trbuf.ko against the cached guest kernel, boots
# the VM with 2 CPUs, runs tests/kselftest/run-in-vm.sh there and relays its
# TAP lines, unloads the module; then fails if that failed or the guest's
# kernel log has a WARNING/BUG/Oops.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
# AE_KSELFTEST_INNER: another script, relative to the repository (used by
# tests/host/vm-boot.sh to check the dmesg check).
inner=${AE_KSELFTEST_INNER:-tests/kselftest/run-in-vm.sh}

if [ ! -x "$top/$inner" ]; then
	echo "ok 1 - kernel self-tests # SKIP $inner does not exist yet"
	exit 0
fi
if ! command -v qemu-system-x86_64 >/dev/null; then
	echo "ok 1 - kernel self-tests # SKIP qemu-system-x86_64 missing (scripts/deps.sh vm)"
	exit 0
fi
if ! ko=$("$top/vm/build-module.sh"); then
	echo "not ok 1 - trbuf.ko builds against the guest kernel"
	exit 1
fi
[ -n "$ko" ] && echo "# module: $ko"

out=$(mktemp)
times=$(mktemp) running=$(mktemp)
trap 'rm -f "$out" "$times" "$running"' EXIT
# Each line as it comes, into $out, and each test's time as the host saw
# it into $times (the harness prints none; a slow test is named below);
# a test that never printed its result (kselftest_harness's "#  RUN name
# ..." without "ok"/"not ok") is left in $running.
record() {
	local line name= t0=0
	while IFS= read -r line || [ -n "$line" ]; do
		printf '%s\n' "$line" >>"$out"
		case $line in
		"#  RUN "*) read -r _ _ name _ <<<"$line"; t0=$SECONDS ;;
		"ok "*|"not ok "*) [ -n "$name" ] && echo "$((SECONDS - t0)) $name" >>"$times"; name= ;;
		esac
		printf '%s\n' "$line"
	done
	printf '%s' "$name" >"$running"
}
# The guest unloads the module after the tests (its exit warns about
# state a task left behind: signal frames, buffers) and prints the kernel
# log between two markers.
"$top/vm/run" --smp 2 -- bash -c '
	"./$1"; st=$?
	rmmod trbuf 2>&1 | sed "s/^/# rmmod: /"
	echo "# aevm-rmmod ${PIPESTATUS[0]}"
	echo "# aevm-dmesg-begin"; dmesg; echo "# aevm-dmesg-end"
	exit $st' bash "$inner" 2>&1 |
	record | sed -n '/^# aevm-dmesg-begin$/,/^# aevm-dmesg-end$/!p'
rc=${PIPESTATUS[0]}
echo "# slowest tests (s): $(sort -rn "$times" | head -4 | tr '\n' ' ')"

n=$(grep -cE '^ *(not )?ok [0-9]+' "$out")
bad=$(sed -n '/^# aevm-dmesg-begin$/,/^# aevm-dmesg-end$/p' "$out" |
	grep -E 'WARNING:|BUG:|BUG |Oops|Kernel panic|general protection fault|RIP:|blocked for more than|soft lockup|hard LOCKUP')
last=$(cat "$running")
if grep -q '^# watchdog:' "$out"; then
	n=$((n + 1))
	echo "not ok $n - the tests finish before the guest's watchdog (hung in ${last:-?})"
fi
n=$((n + 1))
if grep -q '^# aevm-rmmod 0$' "$out"; then
	echo "ok $n - trbuf.ko unloads after the tests"
else
	echo "not ok $n - trbuf.ko unloads after the tests ($(grep '^# rmmod: ' "$out" | head -1))"
fi
n=$((n + 1))
if ! grep -q '^# aevm-dmesg-end$' "$out"; then
	echo "not ok $n - guest kernel log collected (the VM died: status $rc${last:+, in test $last})"
elif [ -n "$bad" ]; then
	echo "$bad" | sed 's/^/# dmesg: /'
	echo "not ok $n - guest kernel log has no WARNING/BUG/Oops"
else
	echo "ok $n - guest kernel log has no WARNING/BUG/Oops"
fi
if [ "$rc" -ne 0 ] && ! grep -qE '^ *not ok [0-9]+' "$out"; then
	n=$((n + 1))
	echo "not ok $n - $inner exited with status $rc"
fi
exit 0
