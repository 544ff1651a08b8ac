#!/usr/bin/env bash
# vm/run: boots the guest kernel with 2 CPUs, the repository writable at
# /aetrace, exit statuses propagate, timeouts are reported.
# Skips only when QEMU is missing.  Builds the kernel if it is not cached.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { # name, condition status
	if [ "$2" -eq 0 ]; then ok "$1"; else notok "$1"; fi
}

if ! command -v qemu-system-x86_64 >/dev/null; then
	echo "ok 1 - vm boot # SKIP qemu-system-x86_64 missing (scripts/deps.sh vm)"
	exit 0
fi
if ! kdir=$("$top/vm/kernel-path" --build); then
	notok "guest kernel builds (vm/kernel-path --build)"
	exit 1
fi
ok "guest kernel built: $kdir"

# One boot: report nproc, write a random token into the repository.
mkdir -p "$top/build/vm-test"
probe=$(mktemp "$top/build/vm-test/probe.XXXXXX")
rm -f "$probe"
token=$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
out=$(mktemp)
t0=$(date +%s.%N)
"$top/vm/run" --smp 2 -- sh -c \
	'echo "boot-done $(date +%s.%N)"; echo "nproc=$(nproc)"; echo "cwd=$(pwd)"; echo "$1" >"$2"' \
	sh "$token" "/aetrace/${probe#$top/}" >"$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
check "vm/run of a succeeding command exits 0 (got $rc)" $((rc != 0))
t1=$(sed -n 's/^boot-done //p' "$out")
[ -n "$t1" ] && echo "# boot to command: $(echo "$t1 - $t0" | bc) s"
grep -qx 'nproc=2' "$out"
check "guest sees 2 CPUs with --smp 2" $?
grep -qx 'cwd=/aetrace' "$out"
check "command runs in /aetrace" $?
[ "$(cat "$probe" 2>/dev/null)" = "$token" ]
check "/aetrace is the repository, writable from the guest" $?
rm -f "$probe" "$out"

"$top/vm/run" -- sh -c 'exit 7' >/dev/null 2>&1
rc=$?
check "non-zero exit status propagates (want 7, got $rc)" $((rc != 7))

"$top/vm/run" --timeout 2 -- sleep 100 >/dev/null 2>&1
rc=$?
check "a timeout gives status 124 (got $rc)" $((rc != 124))
