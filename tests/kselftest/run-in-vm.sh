#!/usr/bin/env bash
# Runs the /dev/trbuf kselftests inside the aetrace VM (vm/run) and relays
# their TAP output; fails when trbuf.ko is not loaded.  Builds nothing: the
# host builds build/tests/kselftest/trbuf_test (make all) and trbuf.ko
# (make trbuf-ko), and the guest init loads trbuf.ko.
#
# usage: tests/kselftest/run-in-vm.sh [--rollback]
#   --rollback  only the rollback tests, with AE_TRBUF_ROLLBACK=1; run it
#               under `vm/run --singlestep` (see tests/kselftest/rollback-vm.sh)
# Environment: AE_TRBUF_SCALE multiplies the record counts (default 1).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$top/build/tests/kselftest/trbuf_test

if [ ! -x "$bin" ]; then
	echo "not ok 1 - $bin exists (run make all on the host)"
	exit 1
fi
# In the VM the module must be there: a failed insmod fails the suite
# instead of turning every test into a skip.
if [ ! -e /dev/trbuf ]; then
	echo "# $(dmesg | grep -i trbuf | tail -3)"
	echo "not ok 1 - /dev/trbuf exists (trbuf.ko loaded by guest-init; make trbuf-ko on the host)"
	exit 1
fi
if [ "${1:-}" = --rollback ]; then
	export AE_TRBUF_ROLLBACK=1 AE_TRBUF_ONLY=rollback
fi
exec "$bin"
