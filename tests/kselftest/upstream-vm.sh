#!/usr/bin/env bash
# The kernel's own selftests for what kernel-patches/ touch (x86 sigreturn,
# single_step_syscall, ptrace_syscall, fsgsbase; rseq basic_test,
# basic_percpu_ops_test, param_test), built on the host from the guest
# kernel's source tree and run in two boots of the VM (--smp 2):
#   base    the UNPATCHED kernel: same source and config, empty series
#           (vm/build-kernel.sh --baseline, cached like the patched one);
#   traced  the tracing kernel with trbuf.ko loaded, bdump capturing and
#           traced producers (bdump_vm_prod, threads hopping CPUs) running
#           beside the selftests.
# Each selftest must give the same result (pass 0 / skip 4 / fail) on both,
# and pass or skip on the baseline (a test failing there proves nothing);
# the tracing kernel's log must have no WARNING/BUG/Oops/lockdep report and
# no RCU stall or lockup.
# Each boot proves which kernel it ran (the trbuf hooks in kallsyms).  TAP.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$PWD
cd "$top"
x86=(sigreturn single_step_syscall ptrace_syscall fsgsbase)
rseq=(basic_test basic_percpu_ops_test param_test)
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); echo "not ok $n - $*"; }

# compare BASE_LOG TRACED_LOG: the TAP lines judging the two boots' logs.
compare() {
	local t a b bad
	grep -qx 'kernel unpatched' "$1" && ok "the base boot ran the unpatched kernel" ||
		nok "the base boot ran the unpatched kernel"
	grep -qx 'kernel patched' "$2" && ok "the traced boot ran the tracing kernel" ||
		nok "the traced boot ran the tracing kernel"
	name() { case "$1" in 0) echo pass ;; 4) echo skip ;; '') echo missing ;; *) echo "fail($1)" ;; esac; }
	for t in "${x86[@]/%/_64}" "${rseq[@]}"; do
		a=$(grep "^base $t " "$1" | awk '{print $3}')
		b=$(grep "^traced $t " "$2" | awk '{print $3}')
		if [ "$a" = 0 ] || [ "$a" = 4 ]; then
			ok "$t: $(name "$a") on the unpatched kernel"
		else
			nok "$t: $(name "$a") on the unpatched kernel (must pass or skip)"
		fi
		if [ -n "$a" ] && [ "$a" = "$b" ]; then
			ok "$t: $(name "$b") on the tracing kernel beside a traced workload, as on the unpatched one"
		else
			nok "$t: $(name "$a") on the unpatched kernel, $(name "$b") on the tracing kernel beside a traced workload"
		fi
	done
	grep -q '^traced workload ok$' "$2" && ok "the traced workload ran beside them and bdump captured it" ||
		nok "the traced workload ran beside them and bdump captured it"
	# Kernel reports in a boot's log (user-space faults, "traps: ...", are not).
	kernel_bad() {
		sed -n '/^# aevm-dmesg-begin$/,/^# aevm-dmesg-end$/p' "$1" | grep -v 'traps: ' |
			grep -E 'WARNING:|BUG:|BUG |Oops|general protection fault|RIP:|lockdep|possible (circular|recursive) locking|INFO: task .* blocked|rcu: INFO|detected stalls? on|self-detected stall|soft lockup|hard LOCKUP'
	}
	bad=$(kernel_bad "$1")
	[ -z "$bad" ] || echo "$bad" | sed 's/^/# unpatched kernel (not counted): /'
	bad=$(kernel_bad "$2")
	if ! grep -q '^# aevm-dmesg-end$' "$2"; then
		nok "tracing kernel log collected"
	elif [ -n "$bad" ]; then
		echo "$bad" | sed 's/^/# dmesg: /'
		nok "tracing kernel log has no WARNING/BUG/Oops/lockdep/stall report"
	else
		ok "tracing kernel log has no WARNING/BUG/Oops/lockdep/stall report"
	fi
}

# --compare BASE_LOG TRACED_LOG: only judge two boots' logs (tests/host/vm-boot.sh
# feeds it doctored logs to prove each check can fail).
if [ "${1:-}" = --compare ]; then
	[ $# -eq 3 ] || { echo "usage: upstream-vm.sh [--compare BASE_LOG TRACED_LOG]" >&2; exit 2; }
	cd "$here" || exit 2
	for f in "$2" "$3"; do
		[ -r "$f" ] || { echo "upstream-vm.sh: cannot read '$f'" >&2; exit 2; }
	done
	compare "$2" "$3"
	echo "1..$n"
	exit 0
fi

if ! command -v qemu-system-x86_64 >/dev/null; then
	echo "ok 1 - upstream selftests # SKIP qemu-system-x86_64 missing"
	exit 0
fi
for f in bin/bdump build/tests/host/bdump_vm_prod; do
	[ -x "$f" ] || { echo "not ok 1 - $f built (run make all)"; exit 1; }
done
if ! "$top/vm/build-module.sh" >/dev/null; then
	echo "not ok 1 - trbuf.ko builds against the guest kernel"
	exit 1
fi
kdir=$("$top/vm/kernel-path" --kdir) || { echo "not ok 1 - guest kernel tree"; exit 1; }
st=$kdir/tools/testing/selftests
out=build/tests/kselftest/upstream
mkdir -p "$out"
log=$out/build.log
: >"$log"
built=1
for t in "${x86[@]}"; do
	gcc -m64 -O2 -g -std=gnu99 -pthread -Wall -DCAN_BUILD_64 -no-pie \
		-o "$out/${t}_64" "$st/x86/$t.c" -lrt -ldl >>"$log" 2>&1 || built=0
done
gcc -O2 -g -Wall -I"$st/rseq" -I"$kdir/tools/include" -shared -fPIC \
	-o "$out/librseq.so" "$st/rseq/rseq.c" -lpthread -ldl >>"$log" 2>&1 || built=0
for t in "${rseq[@]}"; do
	gcc -O2 -g -Wall -I"$st/rseq" -I"$kdir/tools/include" -L"$out" \
		-Wl,-rpath,'$ORIGIN' -o "$out/$t" "$st/rseq/$t.c" \
		-lpthread -ldl -lrseq >>"$log" 2>&1 || built=0
done
if [ $built -ne 1 ]; then
	sed 's/^/# /' "$log" | tail -20
	nok "the kernel's selftests build from $st"
	exit 1
fi
ok "the kernel's selftests build from $st"

# The baseline kernel: a cold build is a whole kernel build (see vm/README.md).
t0=$(date +%s)
"$top/vm/kernel-path" --baseline >/dev/null 2>&1 ||
	echo "# building the unpatched baseline kernel once (cached in \$AE_CACHE; cold: a whole kernel build)"
if ! base=$("$top/vm/kernel-path" --baseline --build 2>"$out/base-build.log"); then
	sed 's/^/# /' "$out/base-build.log" | tail -10
	nok "the unpatched baseline kernel builds (vm/build-kernel.sh --baseline)"
	echo "1..$n"
	exit 1
fi
ok "the unpatched baseline kernel is built ($(($(date +%s) - t0)) s): $base"

boot() { # mode, vm/run options...
	local mode=$1
	shift
	# RCU's stall detector (21 s by default) fires under TCG when the host
	# starves the vCPU threads (seen at load 13 on 2 cores: "hrtimer:
	# interrupt took 67 ms", the GP kthread runnable but not run); the same
	# longer limit for both kernels, and a stall past it still fails.
	AE_VM_APPEND="rcupdate.rcu_cpu_stall_timeout=120 ${AE_VM_APPEND:-}" \
		vm/run --smp 2 --timeout 1200 "$@" -- tests/kselftest/upstream-in-vm.sh "$out" "$mode" \
		>"$out/vm-$mode.log" 2>&1
	local rc=$?
	echo "# $mode boot: host load $(cut -d' ' -f1-3 /proc/loadavg)"
	sed '/^# aevm-dmesg-begin$/,/^# aevm-dmesg-end$/d' "$out/vm-$mode.log" |
		sed 's/^/# vm: /' | tail -25
	[ $rc -eq 0 ] && ok "$mode boot completed" || nok "$mode boot completed (status $rc)"
}
t0=$(date +%s)
boot base --kernel "$base/bzImage" --no-module
boot traced
echo "# both boots: $(($(date +%s) - t0)) s"
compare "$out/vm-base.log" "$out/vm-traced.log"
echo "1..$n"
