#!/usr/bin/env bash
# capture-demo.sh - a whole-system capture in the VM: bdump on /dev/trbuf
# writes build/demo/trace.zst (+ sched.bin) while 3 instances of the
# aecc-built tests/corpus/interp.c and 2 self-checking producer processes
# (2 threads each) run; then bdump is stopped with SIGINT.  Prints bdump's
# summary line and `bin/bdump --check` of the capture.  About 15 s under TCG
# (limit 110 s).  Called by `make demo`; needs `make all` and trbuf.ko
# (vm/build-module.sh) first.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
d=build/demo
for f in bin/bdump bin/aecc build/tests/host/bdump_vm_prod; do
	[ -x "$f" ] || { echo "capture-demo: $f missing (run make all)" >&2; exit 1; }
done
vm/build-module.sh >/dev/null || { echo "capture-demo: trbuf.ko does not build (vm/build-module.sh)" >&2; exit 1; }
mkdir -p "$d/bin"
bin/aecc -O2 -o "$d/bin/interp" tests/corpus/interp.c || exit 1
rm -f "$d/trace.zst"

start=$(date +%s)
vm/run --smp 2 --timeout 110 -- tests/host/bdump-vm-guest.sh \
	"$d" "$d/trace.zst" 2 2 20000 "$d/bin/interp" 3
rc=$?
echo "capture-demo: VM run $(($(date +%s) - start)) s, exit $rc; statuses (producers, programs, bdump): $(cat $d/status 2>/dev/null)"
cat "$d/bdump.log"
bin/bdump --check "$d/trace.zst" "$d/sched.bin" || rc=1
# the producers' records, split per task with the schedule markers
if [ -x build/tests/host/bdump_vm_check ]; then
	build/tests/host/bdump_vm_check "$d/trace.zst" 20000 4 $(cat "$d/pids") || rc=1
fi
exit $rc
