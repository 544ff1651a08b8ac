# aecc-lib.sh - sourced by tests/unit/aecc-*.sh (TAP output): ok and
# not_ok count the checks, $aecc is the driver under test (the whole test
# skips while it is not built yet), and the test runs in a fresh work
# directory, $work, removed on exit.
# usage: . aecc-lib.sh "WHAT THE TEST CHECKS" NAME
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
aecc=${AE_BIN:-$top/bin}/aecc
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }

if [ ! -x "$aecc" ]; then
	echo "ok 1 - $1 # SKIP $aecc not built yet"
	exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/$2.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
