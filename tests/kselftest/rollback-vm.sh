#!/usr/bin/env bash
# Host side of the rollback tests: boots the VM with QEMU -singlestep (so
# interrupts can land between any two instructions; plain TCG never cuts a
# two-instruction sequence) on two CPUs (the rollback tests include
# migrations) and runs tests/kselftest/run-in-vm.sh --rollback there.
# The tests arm trbuf.ko's test_cut_us knob, which every millisecond
# closes the sub-buffer under the traced task it interrupts in user mode
# and forces a reschedule, so sequences are cut by construction: one boot,
# and a run without a cut fails.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v qemu-system-x86_64 >/dev/null; then
	echo "ok 1 - rollback tests # SKIP qemu-system-x86_64 missing"
	exit 0
fi
if ! "$top/vm/build-module.sh" >/dev/null; then
	echo "not ok 1 - trbuf.ko builds against the guest kernel"
	exit 1
fi
exec "$top/vm/run" --singlestep --smp 2 --timeout 3600 -- \
	env AE_KSFT_WATCHDOG=3300 tests/kselftest/run-in-vm.sh --rollback
