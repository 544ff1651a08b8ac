#!/usr/bin/env bash
# Guest half of tests/kselftest/upstream-vm.sh: runs the kernel's selftests
# in DIR, in one of two boots:
#   base    on the unpatched baseline kernel (vm/run --no-module);
#   traced  on the tracing kernel with trbuf.ko loaded, bdump capturing and
#           traced producers running beside the selftests.
# Prints "base|traced TEST STATUS SECONDS" lines, "kernel patched|unpatched" (from
# the trbuf hook symbols in /proc/kallsyms), "traced workload ok" when the
# workload and bdump finished cleanly, and the kernel log between
# # aevm-dmesg-begin/end.
set -u
dir=$1 mode=${2:-}
top=$(pwd)
tests="sigreturn_64 single_step_syscall_64 ptrace_syscall_64 fsgsbase_64 basic_test basic_percpu_ops_test param_test"
run_all() { # label
	local t st t0
	for t in $tests; do
		t0=$(date +%s)
		(cd "$dir" && timeout 300 "./$t") >"$dir/$1.$t.log" 2>&1
		st=$?
		# the time says how near the timeout (300 s, 124) a test ran
		echo "$1 $t $st $(($(date +%s) - t0))s"
		# (the log may end without a newline)
		[ $st -eq 0 ] || [ $st -eq 4 ] ||
			{ tail -5 "$dir/$1.$t.log"; echo; } | sed -e '/^$/d' -e "s/^/# $1 $t: /"
	done
}
dmesg_out() { echo "# aevm-dmesg-begin"; dmesg; echo "# aevm-dmesg-end"; }
echo "# rcu stall timeout: $(cat /sys/module/rcupdate/parameters/rcu_cpu_stall_timeout 2>/dev/null) s"
if grep -qw trbuf_hooks_register /proc/kallsyms; then
	echo "kernel patched"
else
	echo "kernel unpatched"
fi
case "$mode" in
base)
	[ -e /sys/module/trbuf ] && { echo "# trbuf.ko loaded on the baseline"; exit 1; }
	run_all base
	dmesg_out
	exit 0 ;;
traced) ;;
*) echo "usage: upstream-in-vm.sh DIR base|traced" >&2; exit 2 ;;
esac
[ -e /sys/module/trbuf ] || insmod "$top/trbuf-driver/trbuf.ko" ||
	{ echo "# insmod failed"; exit 1; }
w=$(mktemp -d)
bin/bdump -q -f 200 --ready "$w/ready" "$w/trace.zst" "$w/sched.bin" 2>"$w/bdump.log" &
bdump=$!
. tests/host/bdump-ready.sh
bdump_ready "$w/ready" $bdump || { echo "upstream-in-vm: bdump did not start:" >&2; cat "$w/bdump.log" >&2; exit 4; }
# traced producers, again and again until the selftests are done
prods=()
for i in 1 2; do
	(
		k=0
		while [ ! -e "$w/stop" ]; do
			build/tests/host/bdump_vm_prod 2 50000 || exit 1
			k=$((k + 1))
		done
		echo "# producer loop $i: $k runs"
		[ $k -gt 0 ]
	) &
	prods+=($!)
done
run_all traced
touch "$w/stop"
wst=0
for p in "${prods[@]}"; do wait "$p" || wst=1; done
kill -INT $bdump
wait $bdump || wst=1
bin/bdump --check "$w/trace.zst" "$w/sched.bin" >"$w/check.log" 2>&1 || wst=1
sed 's/^/# bdump: /' "$w/bdump.log" "$w/check.log"
[ $wst -eq 0 ] && echo "traced workload ok"
dmesg_out
exit 0
