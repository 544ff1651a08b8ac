#!/usr/bin/env bash
# sigreturn-bits.sh FILE MASK: the SIGRETURN markers of FILE (a capture's
# .zst or sched.bin), in order, as the string tests/data/ctx_values.c
# prints: 1 for a return that says exactly MASK changed (0x40000: the
# vector state; 0x1000: %r12), 0 for one that says nothing did, x for an
# unchecked one, ? for anything else.
top=$(cd "$(dirname "$0")/../.." && pwd)
"$top/bin/schedlog" print "$1" | awk '$5 == "SIGRETURN"' | sort -n |
	awk -v want="changed=$2" '{
		if ($NF == "changed=0") c = "0"
		else if ($NF == want) c = "1"
		else if ($NF ~ /^changed=/) c = "?"
		else c = "x"
		printf "%s", c
	}'
