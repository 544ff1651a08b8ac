#!/usr/bin/env bash
# Write SIZE bytes (default 4 MiB) of deterministic text-like data to stdout:
# words drawn from a fixed vocabulary by a Park-Miller generator with a
# fixed seed, so every run and every machine gets the same bytes (input for
# the bzip2 tests and benchmark). usage: gen-input.sh [SIZE]
set -euo pipefail
size=${1:-4194304}
awk -v size="$size" 'BEGIN {
	nv = split("the of and to in is that for it as was with be by on not he " \
		"trace buffer witness kernel cursor register sequence rollback " \
		"schedule marker process thread context switch signal interrupt " \
		"compress regenerate address instruction data cache page fault " \
		"abstract execution multi tasking environment 0 1 2 3 4 5 6 7 8 9", v, " ")
	x = 12345; n = 0; line = ""
	while (n < size) {
		x = (x * 16807) % 2147483647
		w = v[1 + int(x % nv)]
		x = (x * 16807) % 2147483647
		sep = (x % 13 == 0) ? "\n" : " "
		out = w sep
		if (n + length(out) > size) out = substr(out, 1, size - n)
		printf "%s", out
		n += length(out)
	}
}'
