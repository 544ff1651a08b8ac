#!/usr/bin/env bash
# oracle-data: ae-step --data (data records from native registers) agrees
# with valgrind lackey (--vex-iropt-level=0, tests/oracle/README.md "lackey
# data conventions") on the same static binaries: the hand-written
# all-kinds program tests/oracle/data_kinds.S and lackey-exact corpus
# programs from main (before it, valgrind's initial stack strings differ).
# Instruction records, kinds and sizes exactly; non-stack addresses exactly,
# stack addresses modulo one constant (datacmp.py --stack-delta). Also: the
# default ae-step output is the --data output without data records, and
# datacmp detects a changed record.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
bt=$top/build/tests
step=$bt/ae-step cmpd=$top/tests/oracle/datacmp.py
. "$top/tests/host/step-cache.sh"
n=0
tap() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }

if [ ! -x "$step" ] || ! command -v valgrind >/dev/null; then
	echo "ok 1 - oracle-data # SKIP ae-step not built or valgrind missing"
	exit 0
fi
work=$(mktemp -d "$top/build/oracle-data.XXXXXX")
trap 'rm -rf "$work"' EXIT

lk() { # OUT PROG: lackey data trace of PROG (stdout discarded)
	timeout 300 valgrind --tool=lackey --trace-mem=yes --vex-guest-chase=no \
		--vex-iropt-level=0 --log-file="$1" "$2" >/dev/null 2>&1
}

dk=$work/data_kinds
gcc -nostdlib -static -no-pie -o "$dk" "$top/tests/oracle/data_kinds.S"
timeout 60 "$step" --data -o "$work/dk.step" -- "$dk"
tap $? "ae-step --data runs data_kinds"
lk "$work/dk.lk" "$dk"
tap $? "lackey runs data_kinds"
python3 "$cmpd" --stack-delta "$work/dk.lk" "$work/dk.step" >"$work/dk.cmp"
tap $? "data_kinds: ae-step --data equals lackey ($(tail -1 "$work/dk.cmp"))"
# Each access kind the conventions name is really in the compared trace.
kinds=$(grep -v '^I' "$work/dk.step" | awk '{print $1}' | sort -u | tr -d '\n')
[ "$kinds" = LMS ]
tap $? "data_kinds trace has L, S and M records"

timeout 60 "$step" -o "$work/dk.plain" -- "$dk"
grep '^I' "$work/dk.step" | cmp -s - "$work/dk.plain"
tap $? "default ae-step output is the --data output without data records"

# The comparison must see a one-byte address change and a kind change.
sed '0,/^ S 00/s/^ S 00\(.*\)8$/ S 00\19/' "$work/dk.step" >"$work/dk.bad"
python3 "$cmpd" --stack-delta "$work/dk.lk" "$work/dk.bad" >/dev/null
[ $? = 1 ]
tap $? "datacmp detects a changed size"
sed '0,/^ M /s/^ M / L /' "$work/dk.step" >"$work/dk.bad2"
python3 "$cmpd" --stack-delta "$work/dk.lk" "$work/dk.bad2" >/dev/null
[ $? = 1 ]
tap $? "datacmp detects a changed kind"

# corpus programs, two at a time; the stepper's answers come from the
# step cache (tests/host/step-cache.sh) when it has them
corpus_one() { # NAME: writes $work/NAME.rc (0: equal)
	local p=$1 prog=$bt/corpus/musl/$1 from
	from=$(nm --defined-only "$prog" | awk '$3 == "main" { print $1; exit }')
	(cd "$bt/corpus/musl" && ae_step_cached "$work/$p.step" "$work/$p.out" --clean-env --data -- "./$p") &&
		(cd "$bt/corpus/musl" && env -i $ae_step_clean_env timeout 300 valgrind --tool=lackey \
			--trace-mem=yes --vex-guest-chase=no --vex-iropt-level=0 \
			--log-file="$work/$p.lk" "./$p" >/dev/null 2>&1) &&
		python3 "$cmpd" --stack-delta --from "$from" "$work/$p.lk" \
			"$work/$p.step" >"$work/$p.cmp"
	echo $? >"$work/$p.rc"
}
progs="recursion strings qsort_cmp fnptr_table"
if [ -d "$bt/corpus/musl" ]; then
	set -- $progs
	while [ $# -gt 0 ]; do
		corpus_one "$1" &
		[ $# -gt 1 ] && corpus_one "$2" &
		wait
		shift $(($# > 1 ? 2 : 1))
	done
fi
for p in $progs; do
	if [ ! -x "$bt/corpus/musl/$p" ]; then
		echo "ok $((n += 1)) - $p # SKIP corpus not built (make tests-corpus)"
		continue
	fi
	[ "$(cat "$work/$p.rc" 2>/dev/null)" = 0 ]
	tap $? "$p: ae-step --data equals lackey from main ($(tail -1 "$work/$p.cmp" 2>/dev/null))"
done
echo "1..$n"
