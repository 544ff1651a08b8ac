#!/usr/bin/env bash
# oracle-data: ae-step --data (data records from native registers) agrees
# with valgrind lackey (--vex-iropt-level=0, tests/oracle/README.md "lackey
# data conventions") on the same static binaries: the hand-written
# all-kinds program tests/oracle/data_kinds.S and lackey-exact corpus
# programs from main (before it, valgrind's initial stack strings differ).
# Instruction records, kinds and sizes exactly; non-stack addresses exactly,
# stack addresses modulo one constant (datacmp.py --stack-delta). Also: the
# default ae-step output is the --data output without data records, and
# datacmp detects a changed record. Vector gathers are checked against the
# addresses tests/oracle/gather_kinds.c computes itself (lackey prints
# extra loads for masked-off elements, and has no AVX-512).
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

# Vector gathers (VSIB): gather_kinds prints, for each gather it runs,
# "G <mnemonic>" and one " L addr,size" per loaded element, its addresses
# computed in scalar C and its masks checked against the hardware's
# result; ae-step --data's records at each gather instruction (addresses
# from objdump) must be the same lines: masked-off elements absent.
gk_flags="-O2 -static -no-pie -nostdlib -ffreestanding -fno-tree-vectorize -fno-stack-protector"
gather_recs() { # PROG TRACE: "G <mnemonic>" at each gather of TRACE, then its records
	objdump -d --no-show-raw-insn "$1" | awk -F'\t' '$2 ~ /^vp?gather/ {
		a = $1; sub(/^ +/, "", a); sub(/:$/, "", a); split($2, m, " "); print a, m[1] }' >"$2.gaddr"
	awk 'NR == FNR { g[$1] = $2; next }
		/^I/ { split($2, f, ","); a = f[1]; sub(/^0+/, "", a); in_g = a in g
			if (in_g) print "G " g[a]; next }
		in_g' "$2.gaddr" "$2"
}
gather_check() { # NAME GCC-FLAGS...: 0 when the stepper's gather records are the program's
	local name=$1
	shift
	gcc $gk_flags "$@" -o "$work/$name" "$top/tests/oracle/gather_kinds.c" || return 1
	timeout 60 "$step" --data -o "$work/$name.step" -- "$work/$name" >"$work/$name.want" || return 1
	gather_recs "$work/$name" "$work/$name.step" >"$work/$name.got"
	grep -q '^ L' "$work/$name.want" && cmp -s "$work/$name.want" "$work/$name.got"
}
gather_sum() { # NAME: what was compared, or the first differences
	if cmp -s "$work/$1.want" "$work/$1.got" 2>/dev/null; then
		echo "$(grep -c '^G' "$work/$1.want") gathers, $(grep -c '^ L' "$work/$1.want") loads"
	else
		echo "differs"
		diff "$work/$1.want" "$work/$1.got" 2>&1 | head -6 | sed 's/^/# /' >&2
	fi
}
if grep -qw avx2 /proc/cpuinfo; then
	gather_check gather_avx2 -mavx2
	tap $? "gathers (AVX2): ae-step --data loads = gather_kinds' elements ($(gather_sum gather_avx2))"
else
	echo "ok $((n += 1)) - gathers (AVX2) # SKIP no avx2 in /proc/cpuinfo"
fi
if grep -qw avx512f /proc/cpuinfo; then
	gather_check gather_avx512 -mavx2 -mavx512f
	tap $? "gathers (AVX2, AVX-512): ae-step --data loads = gather_kinds' elements ($(gather_sum gather_avx512))"
	# capstone 4 decodes an EVEX scatter's vector index as a general
	# register: the stepper must stop (status 125) naming it, and write
	# no I line for it
	gcc $gk_flags -mavx2 -mavx512f -DSCATTER -o "$work/scatter" "$top/tests/oracle/gather_kinds.c"
	timeout 60 "$step" --data -o "$work/scatter.step" -- "$work/scatter" >/dev/null 2>"$work/scatter.err"
	rc=$?
	sa=$(objdump -d --no-show-raw-insn "$work/scatter" | awk -F'\t' '$2 ~ /^vpscatterdd/ {
		a = $1; sub(/^ +/, "", a); sub(/:$/, "", a); print a }')
	[ "$rc" = 125 ] && [ -n "$sa" ] && grep -q "vpscatterdd" "$work/scatter.err" &&
		grep -q '^I' "$work/scatter.step" && ! grep -q "^I  0*$sa," "$work/scatter.step"
	tap $? "ae-step --data refuses an EVEX scatter (status $rc: $(head -1 "$work/scatter.err" | cut -c1-60)...)"
else
	echo "ok $((n += 1)) - gathers (AVX-512) # SKIP no avx512f in /proc/cpuinfo"
	echo "ok $((n += 1)) - ae-step --data refuses an EVEX scatter # SKIP no avx512f in /proc/cpuinfo"
fi

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
