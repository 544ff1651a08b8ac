#!/usr/bin/env bash
# Runs the /dev/trbuf kselftests inside the aetrace VM (vm/run) and relays
# their TAP output.  Builds nothing: the host builds
# build/tests/kselftest/trbuf_test (make all) and trbuf.ko (make trbuf-ko),
# and the guest init loads trbuf.ko.
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
if [ ! -e /dev/trbuf ]; then
	# The binary reports each test as skipped; say why once.
	echo "# /dev/trbuf absent: trbuf.ko not loaded (make trbuf-ko on the host)"
fi
if [ "${1:-}" = --rollback ]; then
	export AE_TRBUF_ROLLBACK=1 AE_TRBUF_ONLY=rollback
fi
exec "$bin"
