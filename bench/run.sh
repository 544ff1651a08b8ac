#!/usr/bin/env bash
# make bench: run every benchmark script (BENCH_TARGETS); each appends its
# section, with the date and the command that produced it, to
# bench/RESULTS.md. Benchmarks measure; they never fail on a number.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
rc=0
for b in "$@"; do
	echo "== $b"
	"$top/$b" || { echo "bench: $b failed" >&2; rc=1; }
done
exit $rc
