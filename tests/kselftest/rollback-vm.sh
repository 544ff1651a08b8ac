#!/usr/bin/env bash
# Host side of the rollback tests: boots the VM with QEMU -singlestep (so
# interrupts can cut a two-instruction sequence; plain TCG never does) on
# one CPU and runs tests/kselftest/run-in-vm.sh --rollback there.  Slow:
# about 100x plain TCG.
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
exec "$top/vm/run" --singlestep --smp 1 --timeout 3600 -- \
	tests/kselftest/run-in-vm.sh --rollback
