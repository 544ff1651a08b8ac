#!/usr/bin/env bash
# Runs the /dev/trbuf kselftests inside the aetrace VM (vm/run) and relays
# their TAP output; fails when trbuf.ko is not loaded.  Builds nothing: the
# host builds build/tests/kselftest/trbuf_test (make all) and trbuf.ko
# (make trbuf-ko), and the guest init loads trbuf.ko.
#
# usage: tests/kselftest/run-in-vm.sh [--rollback]
#   --rollback  only the rollback tests, with AE_TRBUF_ROLLBACK=1; run it
#               under `vm/run --singlestep` (see tests/kselftest/rollback-vm.sh)
# Environment: AE_TRBUF_SCALE multiplies the record counts (default 1);
# AE_KSFT_WATCHDOG: seconds after which a run still going is taken for hung
# (default 600, before vm/run's own timeout): the kernel stacks of the
# test's tasks and of every task in D state are printed, then the tests
# are killed, so the report names the test that hung and shows where.
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
watchdog=${AE_KSFT_WATCHDOG:-600}
case $watchdog in ''|*[!0-9]*) echo "not ok 1 - AE_KSFT_WATCHDOG=$watchdog is no number of seconds"; exit 1 ;; esac
echo "# guest up $(cut -d' ' -f1 /proc/uptime) s: starting $bin"
# line-buffered: the host sees each test start and end as it happens
stdbuf -oL "$bin" &
pid=$!
(
	sleep "$watchdog" &
	trap 'kill $! 2>/dev/null; exit 0' TERM
	wait $!
	kill -0 $pid 2>/dev/null || exit 0
	echo "# watchdog: the tests still run after ${watchdog}s: hung? their tasks, and every task in D state:"
	for st in /proc/[0-9]*/task/[0-9]*/stat; do
		d=${st%/stat}
		line=$(cat "$st" 2>/dev/null) || continue
		comm=${line#*(} comm=${comm%)*} state=${line##*) } state=${state%% *}
		[ "$state" = D ] || grep -qF "$bin" "${d%/task/*}/cmdline" 2>/dev/null || continue
		echo "# task ${d##*/} ($comm) state $state wchan $(cat "$d/wchan" 2>/dev/null)"
		sed 's/^/#   /' "$d/stack" 2>/dev/null
	done
	dmesg | tail -40 | sed 's/^/# dmesg: /'
	pkill -KILL -f "$bin"
) </dev/null &
dog=$!
wait $pid
st=$?
kill $dog 2>/dev/null
wait $dog 2>/dev/null
exit $st
