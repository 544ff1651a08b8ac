# Shared helpers of the aerun-*.sh suites (sourced, not a suite).
top=$(cd "$(dirname "$0")/../.." && pwd)
AERUN=$top/bin/aerun
T=$top/build/tests/host/aerun
PROD=$T/prod
CHECK=$T/aerun_check
STORM=$T/aerun_storm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

ok() {	# ok NAME: pass
	n=$((n + 1)); echo "ok $n - $1"
}
not_ok() {	# not_ok NAME WHY...
	local name=$1; shift
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $name"
	printf '#   %s\n' "$@"
}
check() {	# check NAME CMD...: ok if CMD succeeds, its output shown on failure
	local name=$1; shift
	if "$@" >"$tmp/out" 2>&1; then ok "$name"; else not_ok "$name" "$(cat "$tmp/out")"; fi
}
need_tools() {
	local f
	for f in "$AERUN" "$PROD" "$T/prod-noseq" "$CHECK" "$STORM"; do
		[ -x "$f" ] || { echo "Bail out! $f missing: run make"; exit 1; }
	done
}
# storm_run OUT PROG ITERS MINSIG [aerun options]: aerun under a SIGUSR1
# storm sent by another process every 200 us; leaves aerun's stderr in
# $tmp/storm.err and its exit status in $storm_rc.
storm_run() {
	local out=$1 prog=$2 iters=$3 minsig=$4; shift 4
	"$AERUN" -v -o "$out" "$@" -- "$prog" "$iters" 0 "$minsig" 2>"$tmp/storm.err" &
	local apid=$!
	"$STORM" child-of:$apid 10 200 10000000 >/dev/null
	wait $apid
	storm_rc=$?
}
finish() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
}
