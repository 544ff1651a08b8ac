#!/usr/bin/env bash
# The kernel's own selftests for what kernel-patches/ touch (x86 sigreturn,
# single_step_syscall, ptrace_syscall, fsgsbase; rseq basic_test,
# basic_percpu_ops_test, param_test), built on the host from the guest
# kernel's source tree and run in the VM (--smp 2) twice in one boot:
#   A: trbuf.ko unloaded: every hook of the patches is inert (each tests
#      task->trbuf, NULL for every task), i.e. the kernel behaves as the
#      unpatched one;
#   B: trbuf.ko loaded, bdump capturing, traced producers (bdump_vm_prod,
#      threads hopping CPUs) running beside the selftests.
# Each selftest must give the same result (pass 0 / skip 4 / fail) in B as
# in A, and the guest kernel log must have no WARNING/BUG/Oops.  TAP.
# ptrace_syscall_64 and fsgsbase_64 die of SIGSEGV in both runs: they use
# int $0x80, and the guest config has no CONFIG_IA32_EMULATION.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); echo "not ok $n - $*"; }

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
x86=(sigreturn single_step_syscall ptrace_syscall fsgsbase)
rseq=(basic_test basic_percpu_ops_test param_test)
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

res=$out/results
rm -f "$res"
vm/run --smp 2 --timeout 1500 -- tests/kselftest/upstream-in-vm.sh "$out" >"$out/vm.log" 2>&1
rc=$?
sed 's/^/# vm: /' "$out/vm.log" | grep -v '^# vm: # aevm-dmesg' | tail -40
[ $rc -eq 0 ] && ok "guest run completed" || nok "guest run completed (status $rc)"
for t in "${x86[@]/%/_64}" "${rseq[@]}"; do
	a=$(grep "^A $t " "$out/vm.log" | awk '{print $3}')
	b=$(grep "^B $t " "$out/vm.log" | awk '{print $3}')
	name() { case "$1" in 0) echo pass ;; 4) echo skip ;; '') echo missing ;; *) echo "fail($1)" ;; esac; }
	if [ -n "$a" ] && [ "$a" = "$b" ]; then
		ok "$t: $(name "$a") with and without tracing"
	else
		nok "$t: $(name "$a") without trbuf.ko, $(name "$b") with a traced workload beside it"
	fi
done
grep -q '^B workload ok$' "$out/vm.log" && ok "the traced workload ran beside them and bdump captured it" ||
	nok "the traced workload ran beside them and bdump captured it"
# (user-space faults are logged as "traps: ..." and are not kernel bugs)
bad=$(sed -n '/^# aevm-dmesg-begin$/,/^# aevm-dmesg-end$/p' "$out/vm.log" |
	grep -v 'traps: ' | grep -E 'WARNING:|BUG:|BUG |Oops|general protection fault|RIP:')
if ! grep -q '^# aevm-dmesg-end$' "$out/vm.log"; then
	nok "guest kernel log collected"
elif [ -n "$bad" ]; then
	echo "$bad" | sed 's/^/# dmesg: /'
	nok "guest kernel log has no WARNING/BUG/Oops"
else
	ok "guest kernel log has no WARNING/BUG/Oops"
fi
echo "1..$n"
