#!/usr/bin/env bash
# Fail if any instruction in the given objects/archives/executables writes
# r15 (docs/ARCHITECTURE.md invariant 1: r15 is the trace cursor; nothing but the
# instrumentation may write it). The only write allowed is the commit of an
# instrumentation sequence, `lea N(%r15),%r15`. Reading r15 (as a base
# register of a witness store, or setjmp saving it) is fine.
#
# usage: check-r15.sh [--allow-func ERE] FILE...
#   prints every offending instruction with its file and function; exit 1
#   if any. --allow-func exempts functions whose name (as "<name>") matches
#   the extended regular expression, e.g. '^<_?ae_' for the tracing runtime,
#   which sets r15 up.
set -euo pipefail
allow=''
if [ "${1:-}" = --allow-func ]; then
	[ $# -ge 2 ] || { echo "usage: $0 [--allow-func ERE] FILE..." >&2; exit 2; }
	allow=$2
	shift 2
fi
[ $# -gt 0 ] || { echo "usage: $0 [--allow-func ERE] FILE..." >&2; exit 2; }
status=0
for f in "$@"; do
	[ -r "$f" ] || { echo "check-r15: cannot read '$f'" >&2; exit 2; }
	out=$(objdump -d --no-show-raw-insn "$f") ||
		{ echo "check-r15: objdump failed on '$f'" >&2; exit 2; }
	printf '%s\n' "$out" | awk -v file="$f" -v allow="$allow" '
	# Split an AT&T operand list on the commas outside parentheses.
	function split_ops(s, ops,    n, depth, i, c, cur) {
		n = 0; depth = 0; cur = ""
		for (i = 1; i <= length(s); i++) {
			c = substr(s, i, 1)
			if (c == "(") depth++
			if (c == ")") depth--
			if (c == "," && depth == 0) { ops[++n] = cur; cur = ""; continue }
			cur = cur c
		}
		if (cur != "") ops[++n] = cur
		return n
	}
	function is_r15(op) { return op ~ /^%r15[dwb]?$/ }
	/file format/ { obj = $1; next }           # "member.o:     file format ..."
	/^[0-9a-f]+ <.*>:$/ { fn = $2; next }       # function label
	/^ *[0-9a-f]+:\t/ {
		line = $0
		sub(/^ *[0-9a-f]+:\t/, "", line)
		sub(/[ \t]*#.*$/, "", line)              # objdump comments (# 0x...)
		sub(/[ \t]*<[^>]*>$/, "", line)          # symbolic branch target
		# Drop prefixes (lock, rep, data16, notrack, bnd, ds, ...).
		while (line ~ /^(lock|rep[a-z]*|data16|addr32|notrack|bnd|[cdefgs]s)[ \t]+/)
			sub(/^[a-z0-9]+[ \t]+/, "", line)
		mnem = line; sub(/[ \t].*$/, "", mnem)
		rest = line; sub(/^[^ \t]+[ \t]*/, "", rest); gsub(/[ \t]/, "", rest)
		if (rest == "" || rest !~ /%r15/) next
		n = split_ops(rest, ops)
		bad = 0
		if (mnem ~ /^(xchg|xadd|cmpxchg)/) {
			for (i = 1; i <= n; i++) if (is_r15(ops[i])) bad = 1
		} else if (is_r15(ops[n])) {
			bad = 1
			# Instructions whose last operand is only read.
			if (mnem ~ /^(cmp|test|push|bt[wlq]?$|call|jmp|mul|div|idiv)/) bad = 0
			if (mnem ~ /^imul/ && n == 1) bad = 0
			# The commit of an instrumentation sequence.
			if (mnem ~ /^lea/ && n == 2 && ops[1] ~ /^-?(0x)?[0-9a-f]*\(%r15\)$/ && ops[n] == "%r15")
				bad = 0
		}
		if (bad && allow != "" && fn ~ allow)
			bad = 0
		if (bad) {
			printf "%s: %s %s %s\n", file, obj, fn, line
			found = 1
		}
	}
	END { exit found ? 1 : 0 }' || status=1
done
if [ $status -ne 0 ]; then
	echo "check-r15: the instructions above write r15 (invariant 1)" >&2
fi
exit $status
