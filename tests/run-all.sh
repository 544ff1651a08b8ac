#!/usr/bin/env bash
# Runs test suites and prints the project summary line.
# Each suite is an executable that prints TAP-style result lines:
#   ok N - name | not ok N - name | ok N - name # SKIP why
# A suite that exits non-zero without any "not ok" line counts one failure.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
pass=0 fail=0 skip=0
failed_names=()
for suite in "$@"; do
	[ -x "$suite" ] || suite="$top/$suite"
	name=$(basename "$suite")
	echo "# suite $name"
	log=$(mktemp)
	"$suite" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	p=$(grep -cE '^ *ok [0-9]+.*' "$log" | head -1)
	s=$(grep -cE '^ *ok [0-9]+.*# *(SKIP|skip)' "$log" | head -1)
	f=$(grep -cE '^ *not ok [0-9]+' "$log" | head -1)
	p=$((p - s))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - suite $name exited with status $rc"
		f=1
	fi
	[ "$f" -gt 0 ] && failed_names+=("$name")
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	rm -f "$log"
done
[ ${#failed_names[@]} -gt 0 ] && echo "# failed suites: ${failed_names[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
