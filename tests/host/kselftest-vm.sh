#!/usr/bin/env bash
# Kernel self-tests: builds trbuf.ko against the cached guest kernel, boots
# the VM with 2 CPUs, runs tests/kselftest/run-in-vm.sh there and relays its
# TAP lines; then fails if the guest's kernel log has a WARNING/BUG/Oops.
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
trap 'rm -f "$out"' EXIT
# The guest prints the kernel log between two markers after the tests.
"$top/vm/run" --smp 2 -- bash -c '
	"./$1"; st=$?
	echo "# aevm-dmesg-begin"; dmesg; echo "# aevm-dmesg-end"
	exit $st' bash "$inner" 2>&1 |
	tee "$out" | sed -n '/^# aevm-dmesg-begin$/,/^# aevm-dmesg-end$/!p'
rc=${PIPESTATUS[0]}

n=$(grep -cE '^ *(not )?ok [0-9]+' "$out")
bad=$(sed -n '/^# aevm-dmesg-begin$/,/^# aevm-dmesg-end$/p' "$out" |
	grep -E 'WARNING:|BUG:|BUG |Oops|Kernel panic|general protection fault|RIP:')
n=$((n + 1))
if ! grep -q '^# aevm-dmesg-end$' "$out"; then
	echo "not ok $n - guest kernel log collected (the VM died: status $rc)"
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
