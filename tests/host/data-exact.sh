#!/usr/bin/env bash
# data-exact: exact data address traces (issue 12) on the test corpus.
# For every corpus program:
#   bin/aecc -fae-data -O2 -o D/i/p prog.c   (links build/musl-data)
#   cd D/i && bin/aerun -o D/t.zst -- ./p args;  bin/aetrace regen --format=lackey
# and the regenerated I/L/S/M records must equal the native oracle's,
# ae-step --data single-stepping the twin as ./p in D/o (same argv, clean
# environment, ASLR off), record for record from the entry point, every
# address (stepper(); also Lua, bzip2, SQLite's shell (a query of
# tests/real/query.sql) and access_kinds; not big_witness,
# too long to step, nor signal_async, timing-dependent). Every program
# without signal handlers (Lua, bzip2 and SQLite too) also runs under lackey with
# AE_CAPTURE: the regeneration (--lackey-compat) of that very run must
# equal lackey's trace, every address (same_run). The synchronous signal
# programs (no same-run check: a raw capture has no signal markers) are
# compared with lackey on the twin from __init_tls on, stack addresses at
# one offset per handler (valgrind builds its own stack and signal
# frames); signal_async (timing) is checked for a complete regeneration
# and the twin's output only.
# tests/data/gather.c: AVX2 and AVX-512 gathers; gather_fault.c: a handler
# that gathers between a gather's record and the gather (gather).
# tests/data/signal_memfn.c: asynchronous signals inside expanded library
# routines regenerate completely; tests/data/memfn_fault.c: faults and a
# kill amid expanded memcpy and memset, placed at their iteration
# (memfnfault, against the stepper). tests/data/vc_signal.c: signals between
# a value-cache record and its slots' stores (vcsig);
# tests/data/vc_group.c: groups of records, each outcome, signals inside
# their sequences (vcgroup);
# tests/data/vc_vfork_kill.c: a vfork child killed between them (vcvfork);
# tests/data/sig_stub.c: signals in a back edge's witness stub (sigstub);
# tests/data/sig_recur.c: signals in a recursion's silent returns, placed
# by the marker's %rsp (sigrecur);
# aetrace stats' record counts with and without the value cache (vcstats); a -g build
# regenerates the same trace from as many value bytes (debuginfo);
# tests/data/vc_low.c: low halves coded in every form (vclow);
# tests/data/vc_kill.c: tasks stopped between a branch and the value-cache
# record its side begins with, by a kill or a handler that never returns
# (vckill); tests/data/vc_join.c: the same where both sides join before
# the record and one is long (vcjoin, against the stepper);
# tests/data/rep_signal.c: faults amid rep instructions, with a handler
# and without (repsig, against the stepper); tests/data/sig_restart.c:
# handlers that restart a system call (sigrestart); tests/data/ctx_change.c:
# a handler that changes a register nothing follows (ctxchange).
# Forking and threaded workloads (signals in threads too): every task's
# records equal the stepper's on the same task of the twin (ae-step
# --split --data).
# Also: the twin's output equals the traced run's; --format=din and bin
# carry the same records; a changed %rsp record makes the stepper
# comparison fail.
# Prints bytes per memory reference. Env: AE_TEST_JOBS (2),
# AE_DATA_EXACT_ONLY="a b".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/oracle/corpus-lib.sh"
. "$top/tests/host/step-cache.sh"
bin=$top/bin
aecc=$bin/aecc aerun=$bin/aerun aetrace=$bin/aetrace
mutate=$top/build/tests/trace_mutate
cmp=$top/tests/host/data_cmp.py dcmp=$top/tests/oracle/datacmp.py
jobs=${AE_TEST_JOBS:-2}

for t in "$aecc" "$aerun" "$aetrace" "$mutate"; do
	if [ ! -x "$t" ]; then
		echo "ok 1 - data-exact # SKIP $(basename "$t") not built yet"
		exit 0
	fi
done
if ! command -v valgrind >/dev/null; then
	echo "ok 1 - data-exact # SKIP valgrind missing"
	exit 0
fi
if [ ! -e "$top/build/musl-data/lib/libc.a" ]; then
	echo "not ok 1 - data-exact: build/musl-data missing (make musl-data)"
	exit 1
fi
clean_env="env -i PATH=/usr/bin:/bin LC_ALL=C"
# the signal handlers of the synchronous signal programs: valgrind builds
# its own signal frames, so their stacks are compared at their own offset
handlers="on_usr1 on_usr2 on_usr"
# a raw capture has no signal markers; big_witness is too long for lackey
skip_same="big_witness $ae_async_progs $ae_signal_progs"
# too long for the single-stepper (~30k instructions/s); timing-dependent
skip_step="big_witness signal_async"
# lackey on the twin: only the synchronous signal programs (no same-run
# check: a raw capture has no signal markers)
lackey_twin="signal_sync sigsetjmp_handler"

work=$(mktemp -d "$top/build/data-exact.XXXXXX")
trap '[ -n "${AE_KEEP_WORK:-}" ] || rm -rf "$work"' EXIT

one() {
	local name=$1 src=$top/tests/corpus/$1.c args d from r rebase
	d=$work/$name
	mkdir -p "$d/i" "$d/o"
	: >"$d/res"
	args=$(ae_corpus_args "$name")
	[ "$name" = big_witness ] && args=20
	if ! "$aecc" -fae-data -O2 -o "$d/i/p" "$src" -lm >"$d/aecc.log" 2>&1; then
		{ echo "not ok - $name: aecc -fae-data failed"; sed 's/^/# /' "$d/aecc.log" | head -20; } >>"$d/res"
		return
	fi
	cp "$d/i/p.orig" "$d/o/p"
	# shellcheck disable=SC2086
	(cd "$d/i" && timeout 120 $clean_env "$aerun" -o "$d/t.zst" -- ./p $args \
		>"$d/out.aerun" 2>"$d/err.aerun")
	echo "status $?" >>"$d/out.aerun"
	if ! timeout 120 "$aetrace" regen --format=lackey "$d/t.zst" "$d/i/p" >"$d/regen" 2>"$d/err.regen" ||
	   ! timeout 120 "$aetrace" regen --lackey-compat --format=lackey "$d/t.zst" "$d/i/p" >"$d/regen.lk" 2>>"$d/err.regen"; then
		{ echo "not ok - $name: aetrace regen failed"; sed 's/^/# /' "$d/err.regen" | head -10; } >>"$d/res"
		return
	fi
	r=$(awk '/^I/ { i++ } /^ [LSM]/ { m++ } END { printf "%d %d", i, m }' "$d/regen")
	echo "ok - $name: regenerated (${r% *} instructions, ${r#* } data records; $("$mutate" --data-len "$d/t.zst") trace bytes)" >>"$d/res"
	echo "bpr $name ${r#* } $("$mutate" --data-len "$d/t.zst")" >>"$d/bpr"
	# shellcheck disable=SC2086
	$clean_env "$d/o/p" $args >"$d/out.twin" 2>/dev/null
	echo "status $?" >>"$d/out.twin"
	if cmp -s "$d/out.aerun" "$d/out.twin"; then
		echo "ok - $name: traced run and twin agree ($(tail -1 "$d/out.twin"))" >>"$d/res"
	else
		{ echo "not ok - $name: traced run and twin differ"
		  diff "$d/out.aerun" "$d/out.twin" | head -5 | sed 's/^/# /'; } >>"$d/res"
	fi
	case " $skip_step " in *" $name "*) ;; *) stepper "$name" "$d" $args ;; esac
	if [ "$name" = crc_table ]; then
		negative "$d"
		formats "$d"
	fi
	rm -f "$d/step"
	case " $skip_same " in *" $name "*) ;; *) same_run "$name" "$d" $args ;; esac
	# lackey on the twin only where no same-run check exists (the stepper
	# and the same-run lackey already cover the others exactly)
	case " $lackey_twin " in *" $name "*) ;; *) rm -f "$d/t.zst" "$d/regen.lk"; return ;; esac
	from=$(ae_sym_addr "$d/o/p" "$ae_lackey_from_sym")
	rebase=$(for s in $handlers; do ae_sym_addr "$d/o/p" "$s"; done | tr '\n' ',')
	# shellcheck disable=SC2086
	timeout 300 $clean_env setarch "$(uname -m)" -R valgrind --tool=lackey --trace-mem=yes \
		--vex-guest-chase=no --log-file="$d/lackey" "$d/o/p" $args >/dev/null 2>&1
	if python3 "$cmp" "$d/regen.lk" "$d/lackey" "$from" --stack-offset --rebase-at="$rebase" >"$d/cmp" 2>&1; then
		echo "ok - $name: regen = lackey, $(sed 's/^identical: //' "$d/cmp")" >>"$d/res"
	else
		{ echo "not ok - $name: regen differs from lackey"; sed 's/^/# /' "$d/cmp" | head -5; } >>"$d/res"
	fi
	rm -f "$d/lackey.m" "$d/t.zst" "$d/regen.lk"
}

# stepper NAME DIR ARGS...: the native oracle (step_keys: files the
# program reads, for the stepper cache's key). ae-step --data single-steps
# the twin as ./p (same argv, clean environment, ASLR off, as aerun ran the
# traced program) and computes every access from the real registers; the
# regeneration must equal it record for record from the entry point on,
# every address (the stack included) equal: no offsets, no rebasing.
stepper() {
	local name=$1 d=$2
	shift 2
	local keys=() f
	for f in ${step_keys:-}; do
		[ -e "$f" ] && keys+=(--key-file "$f")
	done
	if ! (cd "$d/o" && ae_step_cached "$d/step" "$d/out.step" --clean-env --data \
		${keys[@]+"${keys[@]}"} -- ./p "$@"); then
		{ echo "not ok - $name: ae-step --data wrote no trace"; head -3 "$d/out.step.err" 2>/dev/null | sed 's/^/# /'; } >>"$d/res"
		return
	fi
	if python3 "$dcmp" "$d/regen" "$d/step" >"$d/cmp.step" 2>&1; then
		echo "ok - $name: regen = ae-step --data on the twin, every address ($(tail -1 "$d/cmp.step"))" >>"$d/res"
	else
		{ echo "not ok - $name: regen differs from ae-step --data"; sed 's/^/# /' "$d/cmp.step" | tail -6; } >>"$d/res"
	fi
}

# regen_step NAME DIR PROG PATTERN FILE [ARGS...]: when FILE (the traced
# run's output, or aerun's messages) matches PATTERN, DIR/t.zst of PROG
# regenerates (DIR/regen) and equals the stepper's run with ARGS (in
# DIR/o); else "not ok" in DIR/res.
regen_step() {
	local name=$1 dir=$2 prog=$3 pat=$4 file=$5
	shift 5
	if ! grep -q "$pat" "$file" ||
	   ! timeout 120 "$aetrace" regen --format=lackey "$dir/t.zst" "$prog" >"$dir/regen" 2>"$dir/err"; then
		{ echo "not ok - $name: traced run or regen failed"; head -3 "$file" "$dir/err" | sed 's/^/# /'; } >>"$dir/res"
	else
		stepper "$name" "$dir" "$@"
	fi
}

# same_run NAME DIR ARGS...: the -fae-data program runs under lackey with
# AE_CAPTURE (the capture of that very run); its regeneration
# (--original-only: no assembler padding) must equal lackey's trace mapped
# to the twin (aetrace map-lackey: instrumentation dropped with its data
# records) from _start on, every address equal, the stack included.
same_run() {
	local name=$1 d=$2
	shift 2
	# shellcheck disable=SC2086
	(cd "$d/i" && timeout 300 $clean_env AE_CAPTURE="$d/cap" setarch "$(uname -m)" -R valgrind --tool=lackey \
		--trace-mem=yes --vex-guest-chase=no --log-file="$d/lk.same" "$d/i/p" "$@" \
		<"${same_in:-/dev/null}" >/dev/null 2>&1)
	if [ ! -s "$d/cap" ] ||
	   ! "$aetrace" regen --lackey-compat --original-only --format=lackey "$d/cap" "$d/i/p" >"$d/regen.same" 2>"$d/err.same"; then
		{ echo "not ok - $name: same-run capture under lackey regenerates"; head -3 "$d/err.same" 2>/dev/null | sed 's/^/# /'; } >>"$d/res"
		return
	fi
	"$aetrace" map-lackey "$d/i/p" <"$d/lk.same" >"$d/lk.orig"
	python3 "$top/tests/host/dead_pops.py" "$d/o/p" >"$d/pops"
	if python3 "$cmp" --dead-pops="$d/pops" "$d/regen.same" "$d/lk.orig" "$(ae_sym_addr "$d/o/p" _start)" >"$d/cmp.same" 2>&1; then
		echo "ok - $name: regen = lackey on the same run, $(sed 's/^identical: //' "$d/cmp.same")" >>"$d/res"
	else
		{ echo "not ok - $name: regen differs from lackey on the same run"; sed 's/^/# /' "$d/cmp.same" | head -5; } >>"$d/res"
	fi
	rm -f "$d/lk.same" "$d/lk.orig" "$d/regen.same" "$d/cap" "$d/pops"
}

# A changed %rsp record (the process entry's) must not go unnoticed by
# the native oracle's comparison.
negative() {
	local d=$1 off
	off=$(AETRACE_DEBUG=1 "$aetrace" regen "$d/t.zst" "$d/i/p" 2>&1 >/dev/null |
		sed -n 's/.*reg rsp = .* at offset \([0-9]*\) before .*/\1/p' | head -1)
	if [ -z "$off" ]; then
		echo "not ok - crc_table: no %rsp record found" >>"$d/res"
		return
	fi
	"$mutate" "$d/t.zst" "$d/m.zst" $((off + 1)) 0x01
	if [ ! -s "$d/step" ]; then
		echo "not ok - crc_table: no stepper trace to compare a changed record with" >>"$d/res"
	elif "$aetrace" regen --format=lackey "$d/m.zst" "$d/i/p" >"$d/regen.m" 2>/dev/null &&
	   python3 "$dcmp" "$d/regen.m" "$d/step" >/dev/null 2>&1; then
		echo "not ok - crc_table: a changed %rsp record at offset $off went unnoticed" >>"$d/res"
	else
		echo "ok - crc_table: a changed %rsp record (offset $off) is caught" >>"$d/res"
	fi
	rm -f "$d/regen.m" "$d/m.zst"
}

# din and bin carry the lackey records, converted independently here.
formats() {
	local d=$1
	"$aetrace" regen --format=din "$d/t.zst" "$d/i/p" >"$d/din"
	"$aetrace" regen --format=bin "$d/t.zst" "$d/i/p" >"$d/bin"
	if python3 "$top/tests/host/data_formats.py" "$d/regen" "$d/din" "$d/bin"
	then
		echo "ok - crc_table: --format=din and bin carry the same records" >>"$d/res"
	else
		echo "not ok - crc_table: --format=din or bin differs from lackey" >>"$d/res"
	fi
	rm -f "$d/din" "$d/bin"
}

# real NAME [prof]: Lua (queens) or bzip2 (8 KiB) built with -fae-data
# from the cached Debian sources: regenerates completely (every address
# computable, every record consumed), behaves like its twin, and equals
# lackey on the same run (bzip2 on 2 KiB). Lackey on the twin alone runs
# them differently (strlen on differently aligned argv strings,
# AT_RANDOM). prof: built again with the value-cache profile of a first
# run (aecc -fae-vc-profile), its bytes per record made 1 so that it
# orders the cache's tests only: the run then codes more records as
# address-cache hits and, where the twin (the data layout) did not move
# with the code, profiles the same (the counts do not depend on the
# order) and, for this run, writes as many trace bytes: each value takes
# as many bytes either way, and Lua no longer records a register where it
# holds garbage, which differs between builds (what a callee left in one
# nothing reads, a caller's callee-saved one on entry;
# docs/ARCHITECTURE.md item 23). plain: the profile as it is, which also
# makes plain the records of places where the cache saved little (bzip2's
# sort indices): more plain records and fewer coded ones, the same
# instructions and data records regenerated as the first run's.
real() {
	local name=$1 base=$1 variant=${2:-} d=$work/$1${2:+-$2} cache=${AE_CACHE:-$HOME/.cache/aetrace}
	local dsc p r b0 h0 b1 h1 moved="" r0 pf p0 c0 i0 m0 p1 c1 i1 m1
	mkdir -p "$d/i" "$d/o"
	: >"$d/res"
	case $name in
	lua) dsc=$(ls "$cache"/src/lua5.4_5.4.4*.dsc 2>/dev/null | tail -n 1) ;;
	bzip2) dsc=$(ls "$cache"/src/bzip2_1.0.8*.dsc 2>/dev/null | tail -n 1) ;;
	sqlite3) dsc=$(ls "$cache"/src/sqlite3_3.40.1*.dsc 2>/dev/null | tail -n 1) ;;
	esac
	if [ -z "$dsc" ]; then
		echo "ok - $name with -fae-data # SKIP no Debian source in $cache/src (make deps)" >>"$d/res"
		return
	fi
	if ! p=$("$top/tests/real/data-build.sh" "$name" 2>"$d/build.log"); then
		{ echo "not ok - $name: build with -fae-data failed"; tail -5 "$d/build.log" | sed 's/^/# /'; } >>"$d/res"
		return
	fi
	cp "$p" "$d/i/p" && cp "$p.orig" "$d/i/p.orig"
	cp "$d/i/p.orig" "$d/o/p"
	# input files by relative name, copied beside both programs: argv (on
	# the stack) must not hold the clone's path, so that the stepper's
	# cache entry serves every clone
	if [ "$base" = lua ]; then
		cp "$top/tests/real/queens.lua" "$d/i/" && cp "$top/tests/real/queens.lua" "$d/o/"
		set -- queens.lua 6 1
	elif [ "$base" = sqlite3 ]; then
		cp "$top/tests/real/query.sql" "$d/i/" && cp "$top/tests/real/query.sql" "$d/o/"
		# (-init: no ~/.sqliterc, nor the passwd lookup that finds it)
		set -- -init /dev/null :memory: ".read query.sql"
	else
		"$top/tests/real/gen-input.sh" 4096 >"$d/i/in.file"
		cp "$d/i/in.file" "$d/o/in.file"
		set -- -c in.file
	fi
	: >"$d/in"
	if [ -n "$variant" ]; then
		(cd "$d/i" && timeout 120 $clean_env "$aerun" -o "$d/t.zst" -- ./p "$@" <"$d/in" \
			>/dev/null 2>&1)
		b0=$("$mutate" --data-len "$d/t.zst")
		h0=$(real_lc_hits "$d/t.zst" "$d/i/p" "$d/prof")
		pf=$d/prof
		if [ "$variant" != plain ]; then
			pf=$d/prof.order
			awk 'NR > 1 && !/^#/ { $8 = $5 } { print }' "$d/prof" >"$pf"
		fi
		r0=$(real_counts "$d/t.zst" "$d/i/p")
		if [ -z "$h0" ] || ! p=$("$top/tests/real/data-build.sh" "$name" "-fae-vc-profile=$pf" 2>"$d/build.log"); then
			{ echo "not ok - $name-prof: profiling run or build with its profile failed"; tail -5 "$d/build.log" | sed 's/^/# /'; } >>"$d/res"
			return
		fi
		if cmp -s "$p" "$d/i/p"; then
			echo "not ok - $name-prof: the profile left the program as it was" >>"$d/res"
			return
		fi
		cmp -s "$p.orig" "$d/i/p.orig" || moved=1
		cp "$p" "$d/i/p" && cp "$p.orig" "$d/i/p.orig" && cp "$p.orig" "$d/o/p"
		name=$name-$variant
	fi
	if [ "$base" = bzip2 ]; then
		"$top/tests/real/gen-input.sh" 2048 >"$d/in.same"
		same_in=$d/in.same same_run "$name" "$d" -c
	else
		same_run "$name" "$d" "$@"
	fi
	(cd "$d/i" && timeout 120 $clean_env "$aerun" -o "$d/t.zst" -- ./p "$@" <"$d/in" \
		>"$d/out.aerun" 2>"$d/err.aerun")
	echo "status $?" >>"$d/out.aerun"
	(cd "$d/o" && $clean_env ./p "$@" <"$d/in" >"$d/out.twin" 2>/dev/null)
	echo "status $?" >>"$d/out.twin"
	if cmp -s "$d/out.aerun" "$d/out.twin"; then
		echo "ok - $name: traced run (-fae-data) and twin agree" >>"$d/res"
	else
		echo "not ok - $name: traced run (-fae-data) and twin differ" >>"$d/res"
	fi
	if timeout 300 "$aetrace" regen --format=lackey "$d/t.zst" "$d/i/p" >"$d/regen" 2>"$d/err.regen" &&
	   [ ! -s "$d/err.regen" ]; then
		r=$(awk '/^I/ { i++ } /^ [LSM]/ { m++ } END { printf "%d %d", i, m }' "$d/regen")
		echo "ok - $name: regenerated with every data address (${r% *} instructions, ${r#* } data records, $("$mutate" --data-len "$d/t.zst") trace bytes)" >>"$d/res"
		[ -n "$b0" ] || echo "bpr $name ${r#* } $("$mutate" --data-len "$d/t.zst")" >>"$d/bpr"
		step_keys="$d/o/queens.lua $d/o/in.file $d/o/query.sql" stepper "$name" "$d" "$@"
	else
		{ echo "not ok - $name: aetrace regen failed"; head -5 "$d/err.regen" | sed 's/^/# /'; } >>"$d/res"
	fi
	if [ "$variant" = plain ]; then
		r=$(real_counts "$d/t.zst" "$d/i/p")
		# (plain records, coded records, regenerated I and L/S/M lines)
		read -r p0 c0 i0 m0 <<<"$r0"
		read -r p1 c1 i1 m1 <<<"$r"
		if [ -n "$p1" ] && [ "$p1" -gt "$p0" ] && [ "$c1" -lt "$c0" ] && [ "$i1 $m1" = "$i0 $m0" ]; then
			echo "ok - $name: $p1 plain register records against $p0, $c1 coded against $c0, the same $i1 instructions and $m1 data records, $("$mutate" --data-len "$d/t.zst") trace bytes against $b0" >>"$d/res"
		else
			echo "not ok - $name: plain/coded records and regenerated instructions and data records, first run: $r0; with the profile: $r (more plain, fewer coded, the same instructions and data records)" >>"$d/res"
		fi
	elif [ -n "$b0" ]; then
		b1=$("$mutate" --data-len "$d/t.zst")
		h1=$(real_lc_hits "$d/t.zst" "$d/i/p" "$d/prof1")
		if [ "${h1:-0}" -gt "$h0" ] &&
		   { [ -n "$moved" ] || { cmp -s "$d/prof" "$d/prof1" && [ "$b1" = "$b0" ]; }; }; then
			echo "ok - $name: $h1 address-cache hits against $h0, $b1 trace bytes against $b0, ${moved:+the twin moved with the code}${moved:-the same profile}" >>"$d/res"
		else
			echo "not ok - $name: $h1 address-cache hits against $h0 (must be more), profiles $(cmp -s "$d/prof" "$d/prof1" && echo equal || echo different), $b1 trace bytes against $b0 (both must be equal where the twin did not move${moved:+: it did})" >>"$d/res"
		fi
	fi
	rm -rf "$d/t.zst" "$d/regen"
}

# real_counts TRACE PROG: the capture's plain and coded register records
# (aetrace stats), and the instructions and data records it regenerates
real_counts() {
	local a b
	a=$(ae_value_recs "$1" "$2")
	b=$("$aetrace" regen --format=lackey "$1" "$2" 2>/dev/null |
		awk '/^I/ { i++ } /^ [LSM]/ { m++ } END { print i, m }')
	echo "$a $b"
}

# real_lc_hits TRACE PROG PROFILE: the address-cache hits of the capture
# (aetrace stats), its value-cache profile written to PROFILE.
real_lc_hits() {
	"$aetrace" stats --vc-profile "$3" "$1" "$2" 2>/dev/null |
		sed -n 's/^address cache *\([0-9]*\) hits.*/\1/p'
}

# kinds: tests/data/access_kinds.c (x87, SSE/AVX, atomics, strings, bt,
# push/pop of memory, call through memory, TLS, longjmp) regenerates, acts
# like its twin, equals lackey on the same run, and its trace does hold
# 10-byte x87 and 16-byte SSE loads and stores and modifies.
# data_prog NAME: build tests/data/NAME.c with -fae-data into
# $work/NAME/i/p, its twin into o/p, trace it (t.zst) and compare the
# two runs' output. Returns non-zero when it could not build.
data_prog() {
	local d=$work/$1
	mkdir -p "$d/i" "$d/o"
	: >"$d/res"
	if ! "$aecc" -fae-data -O2 -o "$d/i/p" "$top/tests/data/$1.c" >"$d/aecc.log" 2>&1; then
		{ echo "not ok - $1: aecc -fae-data failed"; head -5 "$d/aecc.log" | sed 's/^/# /'; } >>"$d/res"
		return 1
	fi
	cp "$d/i/p.orig" "$d/o/p"
	(cd "$d/i" && timeout 60 $clean_env "$aerun" -o "$d/t.zst" -- ./p >"$d/out.aerun" 2>/dev/null)
	$clean_env "$d/o/p" >"$d/out.twin" 2>/dev/null
	if cmp -s "$d/out.aerun" "$d/out.twin" && [ -s "$d/out.twin" ]; then
		echo "ok - $1: traced run and twin agree ($(cat "$d/out.twin"))" >>"$d/res"
	else
		echo "not ok - $1: traced run and twin differ" >>"$d/res"
	fi
}

kinds() {
	local d=$work/access_kinds k
	data_prog access_kinds || return
	if "$aetrace" regen "$d/t.zst" "$d/i/p" >"$d/regen" 2>"$d/err.regen"; then
		k=$(awk -F, '/^ [LSM]/ { split($1, a, " "); s[a[1] $2] = 1 }
			END { printf "%s", (s["L10"] && s["S10"] && s["L16"] && s["S16"] && s["M8"]) ? "yes" : "no" }' "$d/regen")
		if [ "$k" = yes ]; then
			echo "ok - access_kinds: regenerated, with 10-byte x87, 16-byte SSE and M records" >>"$d/res"
		else
			echo "not ok - access_kinds: regenerated trace lacks an access kind" >>"$d/res"
		fi
	else
		{ echo "not ok - access_kinds: regen failed"; head -3 "$d/err.regen" | sed 's/^/# /'; } >>"$d/res"
	fi
	stepper access_kinds "$d"
	same_run access_kinds "$d"
}

# gather: tests/data/gather.c, AVX2 gathers with full and partial masks,
# dword and qword indices, and AVX-512 ones with an opmask where the CPU
# has it: every gather the twin holds is regenerated with its loads, equal
# to the stepper's (which reads the vector registers) and to lackey's on
# the same run (valgrind has no AVX-512: that run takes the AVX2 path).
gather() {
	local d=$work/gather g n
	data_prog gather || return
	if grep -q '^no avx2$' "$d/out.twin"; then
		echo "ok - gather # SKIP the CPU has no AVX2" >"$d/res"
		return
	fi
	if ! "$aetrace" regen --format=lackey "$d/t.zst" "$d/i/p" >"$d/regen" 2>"$d/err.regen"; then
		{ echo "not ok - gather: regen failed"; head -3 "$d/err.regen" | sed 's/^/# /'; } >>"$d/res"
		return
	fi
	# each gather of the twin, executed with at least one load
	g=$(objdump -d --no-show-raw-insn "$d/o/p" | awk '$2 ~ /gather/ { sub(":", "", $1); print $1 }')
	n=$(awk -v want="$g" 'BEGIN { split(want, w, "\n"); for (i in w) g[w[i]] = 1 }
		/^I/ { split($2, f, ","); a = f[1]; sub(/^0+/, "", a); cur = a in g ? a : ""; next }
		/^ L/ && cur != "" { seen[cur] = 1 }
		END { for (k in seen) c++; print c + 0 }' "$d/regen")
	if [ -n "$g" ] && [ "$n" = "$(echo "$g" | wc -l)" ]; then
		echo "ok - gather: all $n gathers of the twin regenerated with their loads" >>"$d/res"
	else
		echo "not ok - gather: $n of $(echo "$g" | wc -l) gathers regenerated with loads" >>"$d/res"
	fi
	stepper gather "$d"
	same_run gather "$d"
	# a handler's own gather between the record and the gather it
	# interrupted (a fault on its first element)
	data_prog gather_fault || { cat "$work/gather_fault/res" >>"$d/res"; return; }
	if "$aetrace" regen --format=lackey "$work/gather_fault/t.zst" "$work/gather_fault/i/p" \
		>"$work/gather_fault/regen" 2>"$work/gather_fault/err"; then
		stepper gather_fault "$work/gather_fault"
	else
		{ echo "not ok - gather_fault: regen failed"; head -3 "$work/gather_fault/err" | sed 's/^/# /'; } >>"$work/gather_fault/res"
	fi
	cat "$work/gather_fault/res" >>"$d/res"
}

# ownlink: tests/data/own_link/main.c with a memcpy of its own, linked
# after its callers (own.c), weak (own_weak.c) and by -Wl,--wrap=memcpy
# (wrap.c; also spelled as two -Wl options): each links, acts like its twin and regenerates equal to the
# stepper (the C library's callers run the program's routine).
ownlink() {
	local v d src=$top/tests/data/own_link
	for v in own own_weak wrap wrap_split; do
		d=$work/own_link/$v
		mkdir -p "$d/i" "$d/o"
		: >"$d/res"
		local ld=() obj=$v
		case $v in
		wrap) ld=(-Wl,--wrap=memcpy) ;;
		wrap_split) ld=(-Wl,--wrap -Wl,memcpy) obj=wrap ;;	# ld joins them
		esac
		if ! "$aecc" -fae-data -O2 -o "$d/i/p" "$src/main.c" "$src/$obj.c" "${ld[@]}" >"$d/aecc.log" 2>&1; then
			{ echo "not ok - own_link/$v: aecc -fae-data failed"; head -5 "$d/aecc.log" | sed 's/^/# /'; } >>"$d/res"
			continue
		fi
		cp "$d/i/p.orig" "$d/o/p"
		(cd "$d/i" && timeout 60 $clean_env "$aerun" -q -o "$d/t.zst" -- ./p >"$d/out.aerun" 2>/dev/null)
		(cd "$d/o" && $clean_env ./p >"$d/out.twin" 2>/dev/null)
		if ! cmp -s "$d/out.aerun" "$d/out.twin" || [ ! -s "$d/out.twin" ]; then
			echo "not ok - own_link/$v: traced run and twin differ" >>"$d/res"
		elif ! "$aetrace" regen --format=lackey "$d/t.zst" "$d/i/p" >"$d/regen" 2>"$d/err.regen"; then
			{ echo "not ok - own_link/$v: regen failed"; head -3 "$d/err.regen" | sed 's/^/# /'; } >>"$d/res"
		else
			stepper "own_link/$v" "$d"
		fi
	done
	cat "$work"/own_link/*/res >"$work/own_link/res"
}

# sigmemfn: tests/data/signal_memfn.c, a fast SIGALRM amid expanded
# library routines (memcpy, memset, strlen; the handler calls two): the
# traced run acts like its twin, the capture regenerates completely (each
# handler entered after the routine it interrupted, every byte consumed),
# and some signal did interrupt an expanded routine.
sigmemfn() {
	local d=$work/signal_memfn n late note stat
	mkdir -p "$d/i" "$d/o"
	: >"$d/res"
	if ! "$aecc" -fae-data -O2 -o "$d/i/p" "$top/tests/data/signal_memfn.c" >"$d/aecc.log" 2>&1; then
		{ echo "not ok - signal_memfn: aecc -fae-data failed"; head -5 "$d/aecc.log" | sed 's/^/# /'; } >>"$d/res"
		return
	fi
	cp "$d/i/p.orig" "$d/o/p"
	(cd "$d/i" && timeout 120 $clean_env "$aerun" -o "$d/t.zst" -- ./p >"$d/out.aerun" 2>/dev/null)
	(cd "$d/o" && $clean_env ./p >"$d/out.twin" 2>/dev/null)
	if cmp -s "$d/out.aerun" "$d/out.twin" && grep -q 'ticked=1' "$d/out.twin"; then
		echo "ok - signal_memfn: traced run and twin agree ($(cat "$d/out.twin"))" >>"$d/res"
	else
		echo "not ok - signal_memfn: traced run and twin differ, or no signal" >>"$d/res"
	fi
	if AETRACE_DEBUG=1 timeout 300 "$aetrace" regen --format=lackey "$d/t.zst" "$d/i/p" 2>"$d/err" >/dev/null; then
		n=$(grep -c 'signal interrupted the expanded routine\|signal at step .* of the expanded routine' "$d/err")
		if [ "$n" -gt 0 ]; then
			echo "ok - signal_memfn: regenerated completely, $n signals inside expanded routines ($(grep -c 'signal at step' "$d/err") at their instruction)" >>"$d/res"
		else
			echo "not ok - signal_memfn: regenerated, but no signal landed inside an expanded routine" >>"$d/res"
		fi
		# those not at their instruction are said, with aetrace stats' count
		# (AETRACE_DEBUG lets go of each marker as soon as it is taken:
		# those of signals at a call's entry are read after their
		# handlers ran, and a regenerator that let them go counts fewer)
		late=$(grep -c 'signal interrupted the expanded routine' "$d/err")
		note=$(sed -n 's/^aetrace: note: task .*: \([0-9]*\) signals inside expanded library routines are delivered at the call.s entry or end.*/\1/p' "$d/err")
		stat=$("$aetrace" stats "$d/t.zst" "$d/i/p" 2>/dev/null | sed -n 's/^expanded signals .*, \([0-9]*\) at the call.s entry or end$/\1/p')
		if [ -n "$note" ] && [ "$note" = "$stat" ] && [ "$note" -ge "$late" ] && [ "$late" -gt 0 ]; then
			echo "ok - signal_memfn: regen notes the $note signals it delivered at a call's entry or end, as aetrace stats counts them" >>"$d/res"
		else
			echo "not ok - signal_memfn: regen's note says ${note:-nothing} signals at a call's entry or end, aetrace stats ${stat:-?}, the debug log $late" >>"$d/res"
		fi
	else
		{ echo "not ok - signal_memfn: regen failed"; grep -v '^aetrace: .*\(reg \|signal \|setjmp\|longjmp\)' "$d/err" | head -3 | sed 's/^/# /'; } >>"$d/res"
	fi
	rm -f "$d/t.zst" "$d/err"
}

# vclow: tests/data/vc_low.c, 32-bit values coded as low halves
# (AE_VAL_REG_VC_LOW): an argument before an instruction and a loaded
# value after one each take all four codings (1, 2, 3 and 5 bytes), and
# the regeneration equals the stepper and lackey on the same run.
vclow() {
	local d=$work/vc_low w where ok=1
	data_prog vc_low || return
	AETRACE_DEBUG=1 "$aetrace" stats "$d/t.zst" "$d/i/p" 2>&1 >/dev/null |
		sed -n 's/.* \(before\|after\) 0x[0-9a-f]*, \([0-9]\) bytes (value cache, low half)$/\1 \2/p' |
		sort | uniq -c >"$d/low"
	for where in before after; do
		for w in 1 2 3 5; do
			grep -q " $where $w\$" "$d/low" || ok=
		done
	done
	if [ -n "$ok" ]; then
		echo "ok - vc_low: low halves coded in 1, 2, 3 and 5 bytes, before and after ($(awk '{ n += $1 } END { print n }' "$d/low") records)" >>"$d/res"
	else
		{ echo "not ok - vc_low: some low-half coding is missing"; sed 's/^/# /' "$d/low"; } >>"$d/res"
	fi
	if ! "$aetrace" regen "$d/t.zst" "$d/i/p" >"$d/regen" 2>"$d/err.regen"; then
		{ echo "not ok - vc_low: regen failed"; head -3 "$d/err.regen" | sed 's/^/# /'; } >>"$d/res"
		return
	fi
	stepper vc_low "$d"
	same_run vc_low "$d"
}

# segv_prog NAME PROG SEGV: $work/NAME/i/p from tests/data/PROG.c and
# SEGV.c, a SIGSEGV handler built with -fno-ae-vcache (its own records
# must not store into the cache it is about to make accessible); else
# "not ok" in $work/NAME/res and status 1.
segv_prog() {
	local d=$work/$1
	mkdir -p "$d/i"
	: >"$d/res"
	if ! "$aecc" -fae-data -fno-ae-vcache -O2 -c -o "$d/segv.o" "$top/tests/data/$3.c" >"$d/aecc.log" 2>&1 ||
	   ! "$aecc" -fae-data ${4:+"$4"} -O2 -o "$d/i/p" "$top/tests/data/$2.c" "$d/segv.o" >>"$d/aecc.log" 2>&1; then
		{ echo "not ok - $1: aecc -fae-data failed"; head -5 "$d/aecc.log" | sed 's/^/# /'; } >>"$d/res"
		return 1
	fi
}

# pool_loads NAME DIR [LABEL]: the regenerated byte loads (din) from the
# pool of tests/data/NAME.c, traced in DIR/t.zst, checked by
# tests/host/NAME_check.py against what the program wrote to DIR/out.
pool_loads() {
	local name=$1 d=$2 label=${3:-$1} pool
	pool=$(nm -S "$d/i/p" | awk '$4 == "pool" { print $1, $2 }')
	# shellcheck disable=SC2086
	if "$aetrace" regen --format=din "$d/t.zst" "$d/i/p" 2>"$d/err" | grep '^0 .* 1$' |
	   python3 "$top/tests/host/${name}_check.py" "$d/out" $pool >"$d/chk" 2>&1; then
		echo "ok - $label: $(cat "$d/chk")" >>"$d/res"
	else
		{ echo "not ok - $label: regenerated loads differ from what the program read"; cat "$d/chk" "$d/err" | head -3 | sed 's/^/# /'; } >>"$d/res"
	fi
}

# vcsig [lfirst]: tests/data/vc_signal.c, signals between a value-cache
# record and its slots' stores (a SIGSEGV on the store into the read-only
# value or address cache, and a SIGALRM storm): the regenerated byte
# loads of touch() equal the pointers the program says it read, main's
# and the handlers', and some signals did come in that window. lfirst:
# built again with a profile (aecc -fae-vc-profile) that has every
# address-cache place of a first run try the address cache first, whose
# hit and stores are then inline.
vcsig() {
	local name=vc_signal${1:+_$1} d n l w
	d=$work/$name
	segv_prog "$name" vc_signal vc_signal_segv || return
	if [ "${1:-}" = lfirst ]; then
		if ! (cd "$d/i" && timeout 300 $clean_env "$aerun" -o "$d/t.zst" -- ./p >/dev/null 2>"$d/err.aerun") ||
		   ! "$aetrace" stats --vc-profile "$d/prof0" "$d/t.zst" "$d/i/p" >/dev/null 2>"$d/err"; then
			{ echo "not ok - $name: the profiling run failed"; tail -2 "$d/err.aerun" "$d/err" | sed 's/^/# /'; } >>"$d/res"
			return
		fi
		awk 'NR == 1 || /^#/ { print; next } { $6 = $5; $7 = 0; $8 = $5; print }' "$d/prof0" >"$d/prof"
		mv "$d/i/p" "$d/p.plain"
		segv_prog "$name" vc_signal vc_signal_segv "-fae-vc-profile=$d/prof" || return
		if [ "$(grep -c . "$d/prof")" -gt 1 ] && ! cmp -s "$d/p.plain" "$d/i/p"; then
			echo "ok - $name: built again with a profile of $(($(grep -c . "$d/prof") - 1)) places, each trying the address cache first where it may" >>"$d/res"
		else
			echo "not ok - $name: the profile named no place, or changed nothing in the program" >>"$d/res"
		fi
	fi
	if ! (cd "$d/i" && timeout 300 $clean_env "$aerun" -o "$d/t.zst" -- ./p >"$d/out" 2>"$d/err.aerun"); then
		{ echo "not ok - $name: traced run failed"; tail -2 "$d/err.aerun" | sed 's/^/# /'; } >>"$d/res"
		return
	fi
	read -r n l w < <("$aetrace" stats "$d/t.zst" "$d/i/p" 2>"$d/err" |
		sed -n 's/^signals .*(\([0-9]*\) at a value-cache store: \([0-9]*\) with the address cache.s to follow, \([0-9]*\) at that one)/\1 \2 \3/p')
	if [ "${n:-0}" -gt 0 ] && [ "${l:-0}" -gt 0 ] && [ "${w:-0}" -gt 0 ]; then
		echo "ok - $name: $n signals came between a value-cache record and its stores: $l with the address cache's store to follow, $w between the two" >>"$d/res"
	else
		{ echo "not ok - $name: signals between a record and its stores: ${n:-0}, with the address cache's store to follow: ${l:-0}, between the two: ${w:-0} (each must be > 0)"; head -3 "$d/err" | sed 's/^/# /'; } >>"$d/res"
	fi
	pool_loads vc_signal "$d" "$name"
	rm -f "$d/t.zst"
}

# vcgroup: tests/data/vc_group.c, value-cache groups (AE_VC_GROUP): the
# five argument loads before a call form one group, and each outcome
# comes (all equal, the last different, one in the middle, the first);
# SIGSEGVs on a page of the value cache made inaccessible come inside the
# group's sequences (rolled back to their first compare), whose handler
# changes the slots before they re-run; the regenerated byte loads of
# take() equal the pointers the program says each call read, in order.
vcgroup() {
	local d=$work/vc_group out inside
	segv_prog vc_group vc_group vc_group_segv || return
	if ! (cd "$d/i" && timeout 300 $clean_env "$aerun" -o "$d/t.zst" -- ./p >"$d/out" 2>"$d/err.aerun"); then
		{ echo "not ok - vc_group: traced run failed"; tail -2 "$d/err.aerun" | sed 's/^/# /'; } >>"$d/res"
		return
	fi
	AETRACE_DEBUG=1 "$aetrace" stats "$d/t.zst" "$d/i/p" 2>"$d/dbg" >/dev/null
	out=$(sed -n 's/^aetrace: .*group before 0x[0-9a-f]*: \([0-9]*\) of \([0-9]*\) hit$/\1 \2/p' "$d/dbg" |
		awk '{ k = $1 == $2 ? "all" : $1 == $2 - 1 ? "last" : $1 ? "middle" : "first"; n[k]++ }
		     END { printf "%d %d %d %d", n["all"], n["last"], n["middle"], n["first"] }')
	inside=$(od -A n -t u8 -j 16 -N 8 "$d/out" | tr -d ' ')
	# shellcheck disable=SC2086
	set -- $out
	if [ "$#" = 4 ] && [ "$1" -gt 0 ] && [ "$2" -gt 0 ] && [ "$3" -gt 0 ] && [ "$4" -gt 0 ] &&
	   [ "${inside:-0}" -gt 0 ]; then
		echo "ok - vc_group: groups all equal $1, the last different $2, one in the middle $3, the first $4; $inside faults inside a group's sequence" >>"$d/res"
	else
		{ echo "not ok - vc_group: outcomes all/last/middle/first: ${out:-none} (each must be > 0), faults inside a group's sequence: ${inside:-0} (must be > 0)"; grep -v '^aetrace: .*\(reg \|group \|signal \|witness\)' "$d/dbg" | head -3 | sed 's/^/# /'; } >>"$d/res"
	fi
	pool_loads vc_group "$d"
	rm -f "$d/t.zst" "$d/dbg"
}

# vcvfork: tests/data/vc_vfork_kill.c, a vfork child killed by the fault
# of the store after its record's commit: the parent, sharing the cache,
# goes on with the slot's old value. Its regenerated byte loads from the
# pool must be exactly the 128 it made (8 bytes apart), the child's none.
vcvfork() {
	local d=$work/vc_vfork f n=0 pool
	segv_prog vc_vfork vc_vfork_kill vc_signal_segv || return
	if ! (cd "$d/i" && timeout 120 $clean_env "$aerun" -o "$d/t.zst" -- ./p >"$d/out" 2>"$d/err.aerun") ||
	   ! timeout 120 "$aetrace" regen --format=lackey --split "$d/split" "$d/t.zst" "$d/i/p" 2>"$d/err"; then
		{ echo "not ok - vc_vfork: traced run or regen failed"; tail -2 "$d/err.aerun" "$d/err" | sed 's/^/# /'; } >>"$d/res"
		return
	fi
	pool=$(nm -S "$d/i/p" | awk '$4 == "pool" { print $1, $2 }')
	for f in "$d"/split/*.lackey; do
		n=$((n + 1))
		# shellcheck disable=SC2086
		python3 - "$f" $pool >>"$d/loads" <<'PY'
import sys
lo = int(sys.argv[2], 16)
hi = lo + int(sys.argv[3], 16)
got = []
for line in open(sys.argv[1]):
    if line.startswith(" L ") and line.rstrip().endswith(",1"):
        a = int(line[3:].split(",")[0], 16)
        if lo <= a < hi:
            got.append(a - lo)
print(" ".join(map(str, got)))
PY
	done
	if [ "$n" = 2 ] && grep -qx "$(seq -s ' ' 0 8 1016)" "$d/loads" && grep -qx '' "$d/loads"; then
		echo "ok - vc_vfork: the parent's 128 loads after its vfork child died at a value-cache store are where it read" >>"$d/res"
	else
		{ echo "not ok - vc_vfork: regenerated pool loads differ from what the program read ($n tasks)"; cut -c1-200 "$d/loads" | sed 's/^/# /'; } >>"$d/res"
	fi
	rm -rf "$d/t.zst" "$d/split"
}

# ae_first_load TWIN FUNC: the address of FUNC's first load through %rdi
ae_first_load() {
	objdump -d --no-show-raw-insn "$1" |
		awk -v f="<$2>:" '$2 == f { in_f = 1; next } in_f && /^$/ { exit }
			in_f && /mov +\(%rdi\),%r/ { sub(/:.*/, "", $1); print $1; exit }'
}

# vckill: tests/data/vc_kill.c, whose pick() begins one side of a branch
# with a value-cache record (no witness): four children die of a fault in
# the load the record follows, four in the record's own code (the cache
# made inaccessible), the parent's handler leaves by siglongjmp. No byte
# past the branch tells its side: the marker's ip must
# (tests/host/vc_kill_check.py: where each child's trace ends, handler
# entries after the branch, the parent's loads are the program's).
vckill() {
	local d=$work/vc_kill load load2 segv cells r
	mkdir -p "$d"
	: >"$d/res"
	if ! "$aecc" -fae-data -O2 -o "$d/p" "$top/tests/data/vc_kill.c" >"$d/aecc.log" 2>&1 ||
	   ! (cd "$d" && timeout 120 $clean_env "$aerun" -o "$d/t.zst" -- ./p >"$d/out" 2>"$d/err.aerun") ||
	   ! timeout 120 "$aetrace" regen --format=lackey --split "$d/split" "$d/t.zst" "$d/p" 2>"$d/err"; then
		{ echo "not ok - vc_kill: build, traced run or regen failed"; head -3 "$d/aecc.log" "$d/err.aerun" "$d/err" | sed 's/^/# /'; } >>"$d/res"
		return
	fi
	load=$(ae_first_load "$d/p.orig" pick)
	load2=$(ae_first_load "$d/p.orig" pick_blocked)
	segv=$(nm "$d/p.orig" | awk '$3 == "on_segv" { print $1 }')
	cells=$(nm "$d/p.orig" | awk '$3 == "cells" { print $1 }')
	if r=$(python3 "$top/tests/host/vc_kill_check.py" "$d/split" "${load:-0}" "${load2:-0}" "${segv:-0}" "${cells:-0}" 40 4 2>&1) &&
	   grep -q '^8 children died of SIGSEGV, 20 faults caught' "$d/out"; then
		echo "ok - vc_kill: $r" >>"$d/res"
	else
		echo "not ok - vc_kill: ${r:-no result} ($(head -c 100 "$d/out"))" >>"$d/res"
	fi
	rm -rf "$d/t.zst" "$d/split"
}

# vcjoin: tests/data/vc_join.c, a branch whose sides join before the
# value-cache record both begin with, one of them 72 instructions long;
# the store at the join faults, with a handler that returns, one that
# leaves by siglongjmp, then none (the task dies on the long side). Its
# regeneration must equal the stepper's on the twin, every address.
vcjoin() {
	local d=$work/vc_join
	mkdir -p "$d/i" "$d/o"
	: >"$d/res"
	if ! "$aecc" -fae-data -O2 -o "$d/i/p" "$top/tests/data/vc_join.c" >"$d/aecc.log" 2>&1; then
		{ echo "not ok - vc_join: aecc -fae-data failed"; head -3 "$d/aecc.log" | sed 's/^/# /'; } >>"$d/res"
		return
	fi
	cp "$d/i/p.orig" "$d/o/p"
	(cd "$d/i" && timeout 120 $clean_env "$aerun" -o "$d/t.zst" -- ./p >"$d/out" 2>"$d/err.aerun")
	if ! grep -q '^6 handlers returned, 6 left by siglongjmp' "$d/out" ||
	   ! timeout 120 "$aetrace" regen --format=lackey "$d/t.zst" "$d/i/p" >"$d/regen" 2>"$d/err"; then
		{ echo "not ok - vc_join: traced run or regen failed"; head -3 "$d/out" "$d/err" | sed 's/^/# /'; } >>"$d/res"
		return
	fi
	stepper vc_join "$d"
	rm -f "$d/t.zst" "$d/step"
}

# fault_modes NAME [MODE:PATTERN...]: tests/data/NAME.c built with
# -fae-data and traced by aerun once per MODE (the program's argument;
# empty: none), in DIR/MODE (DIR/run); when the traced run's output or
# aerun's messages match PATTERN, its regeneration must equal the
# stepper's run of the twin with that argument.
fault_modes() {
	local name=$1 d=$work/$1 arg m pat r
	shift
	mkdir -p "$d/i"
	: >"$d/res"
	if ! "$aecc" -fae-data -O2 -o "$d/i/p" "$top/tests/data/$name.c" >"$d/aecc.log" 2>&1; then
		{ echo "not ok - $name: aecc -fae-data failed"; head -3 "$d/aecc.log" | sed 's/^/# /'; } >>"$d/res"
		return
	fi
	for arg in "$@"; do
		m=${arg%%:*} pat=${arg#*:} r=$d/${arg%%:*}
		[ -n "$m" ] || r=$d/run
		mkdir -p "$r/o"
		: >"$r/res"
		cp "$d/i/p.orig" "$r/o/p"
		# shellcheck disable=SC2086
		(cd "$d/i" && timeout 60 $clean_env "$aerun" -o "$r/t.zst" -- ./p $m >"$r/out" 2>&1)
		# shellcheck disable=SC2086
		regen_step "$name${m:+_$m}" "$r" "$d/i/p" "$pat" "$r/out" $m
		cat "$r/res" >>"$d/res"
		rm -f "$r/t.zst" "$r/step"
	done
}

# repsig: tests/data/rep_signal.c, faults in the middle of rep stosb,
# rep movsq, repe cmpsb and repne scasb whose handler returns, and (kill)
# one with no handler: the regeneration must equal the stepper's, the
# handler (or the end) after exactly the iterations that ran before it
# (the SIGNAL and EXIT markers' %rcx).
repsig() {
	fault_modes rep_signal ':^4 faults, cmp left 139, scan left 49, cmp3 left 7$' \
		'kill:killed by signal 11'
}

# memfnfault: tests/data/memfn_fault.c, faults amid expanded memcpy and
# memset (musl's C loops) whose handler makes the page writable and
# returns, or leaves memcpy by siglongjmp, and a kill by such a fault
# without a handler: the handler and the end are placed at the faulting
# iteration, equal to the stepper; "head": a fault before memcpy writes
# %rcx, which the regeneration does not know (it used to be refused).
memfnfault() {
	fault_modes memfn_fault ':^memfn_fault 2 faults, ' 'kill:killed by signal 11' \
		'jump:^memfn_fault 2 faults, ' 'head:^memfn_fault 3 faults, '
}

# xlat: tests/data/xlat.c, xlatb's load (no operand in capstone; valgrind
# cannot run it): equal to the stepper.
xlat() {
	fault_modes xlat ':^xlat [0-9]*$'
}

# ctxchange: tests/data/ctx_change.c, a SIGSEGV handler that changes
# nothing in its frame, or only %r10, which no address or branch follows:
# both regenerate, equal to the stepper (the handlers that change what
# the regeneration follows are refused: aetrace-errors).
ctxchange() {
	fault_modes ctx_change ':^ctx_change none: loaded 1, r10 7, zero side 0$' \
		'dead:^ctx_change dead: loaded 1, r10 42, zero side 0$'
}

# sigrestart: tests/data/sig_restart.c, a blocking read that SA_RESTART
# handlers interrupt three times (the kernel moves %rip back onto the
# system call after aerun's stop): its data and its instruction trace
# regenerate, with the three handlers.
sigrestart() {
	local name d h n
	for name in sig_restart sig_restart_inst; do
		d=$work/$name
		if [ $name = sig_restart ]; then
			sig_run sig_restart || continue
		else
			sig_run sig_restart $name -O2 || continue
		fi
		h=$(printf '%08x' "0x$(ae_sym_addr "$d/p.orig" on_alrm)")
		n=$(grep -c "^I  $h" "$d/regen")
		if grep -q '^read x after 3 handlers$' "$d/out" && [ "$n" = 3 ]; then
			echo "ok - $name: regenerated, its 3 handlers ($(cat "$d/out"))" >>"$d/res"
		else
			echo "not ok - $name: $n handler entries regenerated, the program says: $(cat "$d/out")" >>"$d/res"
		fi
	done
	cat "$work/sig_restart_inst/res" >>"$work/sig_restart/res"
}

# sig_run NAME [DIR [AECC-FLAGS]]: build tests/data/NAME.c (with
# -fae-data unless other flags are given), trace it and regenerate it (lackey
# format) in $work/DIR (NAME), the program's output in out; on failure,
# says so in its res and returns 1.
sig_run() {
	local d=$work/${2:-$1}
	mkdir -p "$d"
	: >"$d/res"
	if ! "$aecc" ${3:--fae-data} -O2 -o "$d/p" "$top/tests/data/$1.c" >"$d/aecc.log" 2>&1 ||
	   ! (cd "$d" && timeout 120 $clean_env "$aerun" -o "$d/t.zst" -- ./p >"$d/out" 2>"$d/err.aerun") ||
	   ! timeout 300 "$aetrace" regen --format=lackey "$d/t.zst" "$d/p" >"$d/regen" 2>"$d/err"; then
		{ echo "not ok - ${2:-$1}: build, traced run or regen failed"; head -3 "$d/aecc.log" "$d/err.aerun" "$d/err" | sed 's/^/# /'; } >>"$d/res"
		return 1
	fi
}

# sigstub: tests/data/sig_stub.c, SIGALRM every 100 us in a loop whose
# back edge writes a witness: each handler's load of probe[cnt % 4096]
# must follow the store into arr of the iteration it interrupted (cnt - 1
# or cnt); a signal in the back edge's stub placed at the loop's head, one
# iteration early, fails it.
sigstub() {
	local d=$work/sig_stub arr probe h r
	sig_run sig_stub || return
	arr=$(nm -S "$d/p" | awk '$4 == "arr" { print $1, $2 }')
	probe=$(nm -S "$d/p" | awk '$4 == "probe" { print $1, $2 }')
	h=$(nm "$d/p.orig" | awk '$3 == "on_alarm" { print $1 }')
	# shellcheck disable=SC2086
	r=$(python3 - "$d/regen" $arr $probe "$h" <<'PY'
import sys
arr, asz, probe, psz, handler = (int(x, 16) for x in sys.argv[2:7])
last = None
n = bad = 0
inh = False
for line in open(sys.argv[1]):
    if line.startswith("I  "):
        inh = inh or int(line[3:].split(",")[0], 16) == handler
        continue
    if not line.startswith(" "):
        continue
    a = int(line[3:].split(",")[0], 16)
    if line[1] == "S" and arr <= a < arr + asz and not inh:
        last = a - arr
    elif line[1] == "L" and inh and probe <= a < probe + psz:
        c = a - probe
        n += 1
        bad += last is None or last not in (c % 4096, (c - 1) % 4096)
        inh = False
print(n, bad)
PY
)
	if [ "${r% *}" -gt 20 ] 2>/dev/null && [ "${r#* }" = 0 ]; then
		echo "ok - sig_stub: ${r% *} signals each placed after the iteration it interrupted" >>"$d/res"
	else
		echo "not ok - sig_stub: signals, misplaced: ${r:-none}" >>"$d/res"
	fi
	# in a data trace too, a marker delivered in a stub must agree with
	# the %rsp the records left
	sig_sp_refused sig_stub "in a sequence" "is not the .* the instructions before it left"
	rm -f "$d/t.zst" "$d/regen"
}

# sig_sp_refused NAME WHERE RE: the trace in $work/NAME with every SIGNAL
# marker's %rsp moved by 8 (WHERE empty), or only that of the tenth signal
# AETRACE_DEBUG reports WHERE (the last, where fewer came), must be
# refused with an error matching RE.
sig_sp_refused() {
	local d=$work/$1 what="every SIGNAL marker's %rsp moved by 8" mi=""

	if [ -n "$2" ]; then
		mi=$(AETRACE_DEBUG=1 "$aetrace" regen "$d/t.zst" "$d/p" 2>&1 >/dev/null |
		     grep "^aetrace: .*signal .* $2" | sed -n 's/.*(marker \([0-9]*\)).*/\1/p' |
		     head -10 | tail -1)
		what="the %rsp of a SIGNAL marker $2 (marker ${mi:-none found}) moved by 8"
		if [ -z "$mi" ]; then
			echo "not ok - $1: no signal $2 to move" >>"$d/res"
			return
		fi
	fi
	if "$mutate" --signal-sp "$d/t.zst" "$d/m.zst" 8 $mi &&
	   ! "$aetrace" regen --format=lackey "$d/m.zst" "$d/p" >/dev/null 2>"$d/err.m" &&
	   grep -q "$3" "$d/err.m"; then
		echo "ok - $1: $what is refused: $(cut -c1-120 "$d/err.m" | head -1)" >>"$d/res"
	else
		{ echo "not ok - $1: $what was not refused"; head -2 "$d/err.m" | sed 's/^/# /'; } >>"$d/res"
	fi
}

# sigrecur: tests/data/sig_recur.c, SIGALRMs one at a time (each 10 us
# after main arms it) in a recursion whose returns write nothing, in a
# data trace and an instruction trace
# (sig_recur_inst): following %rsp through the regenerated rec and main,
# each handler's entry must be where the %rsp its ucontext had says
# (tests/host/sig_recur_check.py). A signal placed at the first level that
# reaches its ip at that offset, not the one its marker's %rsp names,
# fails it (546 of 996 and 1074 of 1083 did), and so does one in the
# %fs-base sequence's tail delivered after the access it precedes (92 of
# 989). Markers whose %rsp is moved by 8 must be refused, those delivered
# in a witness stub too.
sigrecur() {
	local name r
	for name in sig_recur sig_recur_inst; do
		local d=$work/$name
		if [ $name = sig_recur ]; then
			sig_run sig_recur || continue
		else
			sig_run sig_recur $name -O2 || continue
		fi
		if r=$(python3 "$top/tests/host/sig_recur_check.py" "$d/regen" "$d/p" "$d/out" 2>&1); then
			echo "ok - $name: placed by %rsp: $r" >>"$d/res"
		else
			echo "not ok - $name: placed by %rsp: ${r:-no result}" >>"$d/res"
		fi
		# a marker's %rsp that no visit of its ip has is an error, not
		# a signal delivered somewhere near: every marker's moved, the
		# first is refused; one delivered in a witness stub's sequence
		# (past the check at its ip) moved alone, it is refused too
		sig_sp_refused "$name" "" "never with its %rsp\|is not the .* the instructions before it left"
		[ $name = sig_recur ] ||
			sig_sp_refused "$name" "in a sequence" "is not the .* the instructions before it left"
		rm -f "$d/t.zst" "$d/m.zst" "$d/regen"
	done
	cat "$work/sig_recur_inst/res" >>"$work/sig_recur/res"
}

# build_regen DIR TEST SRC [AECC_FLAGS...]: DIR/p built from SRC with
# -fae-data, run under aerun, DIR/stats and DIR/regen (lackey) written;
# else a not-ok line for TEST in DIR/../res and status 1.
build_regen() {
	local dir=$1 test=$2 src=$3
	shift 3
	mkdir -p "$dir"
	if ! "$aecc" -fae-data "$@" -O2 -o "$dir/p" "$src" >"$dir/aecc.log" 2>&1 ||
	   ! (cd "$dir" && $clean_env "$aerun" -o "$dir/t.zst" -- ./p >/dev/null 2>&1) ||
	   ! "$aetrace" stats "$dir/t.zst" "$dir/p" >"$dir/stats" 2>"$dir/err" ||
	   ! "$aetrace" regen --format=lackey "$dir/t.zst" "$dir/p" >"$dir/regen" 2>>"$dir/err"; then
		{ echo "not ok - $test build, run and regen"; head -3 "$dir/aecc.log" "$dir/err" | sed 's/^/# /'; } >>"$dir/../res"
		return 1
	fi
}

# debuginfo: corpus/recursion.c (static functions, calls by the million)
# built with and without -g: the same code, so the same regenerated
# trace and the same value bytes (debugging information names every
# function; it must not count as taking its address, which would record
# %rsp at every entry).
debuginfo() {
	local d=$work/debug_info v
	mkdir -p "$d"
	: >"$d/res"
	for v in plain g; do
		build_regen "$d/$v" "debug_info: $v" "$top/tests/corpus/recursion.c" \
			$([ $v = g ] && echo -g) || return
		grep '^value bytes' "$d/$v/stats" >"$d/$v/vb"
	done
	if cmp -s "$d/plain/regen" "$d/g/regen" && cmp -s "$d/plain/vb" "$d/g/vb" &&
	   [ -s "$d/plain/regen" ]; then
		echo "ok - debug_info: a -g build regenerates the same trace from as many value bytes ($(cat "$d/g/vb"))" >>"$d/res"
	else
		{ echo "not ok - debug_info: a -g build's trace differs"; cat "$d/plain/vb" "$d/g/vb" | sed 's/^/# /'; } >>"$d/res"
	fi
	rm -f "$d"/*/t.zst "$d"/*/regen
}

# vcstats: corpus/hash_table.c built with and without the value cache
# (-fno-ae-vcache): aetrace stats' record counts add up to its value
# bytes in both, the build without it has value-cache records too (the
# C library's), the cached build more and fewer value bytes, and both
# run as many instructions and data references of each kind (musl's TLS
# set-up left out). The C library's start-up, which runs before the
# thread pointer exists, must not touch the cache: its objects do not
# name it.
vcstats() {
	local d=$work/vc_stats v got r skip
	mkdir -p "$d"
	: >"$d/res"
	for v in vc novc; do
		build_regen "$d/$v" "vc_stats: $v" "$top/tests/corpus/hash_table.c" \
			$([ $v = novc ] && echo -fno-ae-vcache) || return
		skip=
		for r in static_init_tls __copy_tls; do
			skip="$skip $(ae_sym_range "$d/$v/p.orig" $r)"
		done
		# (lackey's addresses: 8 hex digits, compared as strings)
		awk -v skip="$skip" 'BEGIN { n = split(skip, r, "[ -]")
				for (i = 2; i <= n; i++) r[i] = substr("00000000" r[i], length(r[i]) + 1) }
			/^I/ { a = substr($2, 1, 8); out = 0
			       for (i = 2; i <= n; i += 2)
				       if (a >= r[i] && a < r[i + 1])
					       out = 1 }
			!out { print substr($0, 1, 2) }' "$d/$v/regen" | sort | uniq -c >"$d/$v/kinds"
		# value bytes, the sum of the records' bytes (pairs of a count
		# and a size), the value-cache records
		awk '/^value bytes/ { vb = $3 }
		     /^value (records|cache)/ { gsub(/[^0-9 ]/, ""); c = 0
			for (i = 1; i < NF; i += 2) { s += $i * $(i + 1); c += $i }
			if ($0 ~ / 9 *$/) vc = c }
		     END { print vb, s, vc }' "$d/$v/stats" >"$d/$v/sum"
	done
	read -r vb s vc <"$d/vc/sum"
	read -r nvb ns nvc <"$d/novc/sum"
	got="value bytes $vb with the cache ($vc cached records), $nvb without ($nvc, the C library's)"
	if [ -n "$vb" ] && [ "$vb" = "$s" ] && [ "$nvb" = "$ns" ] && [ "$nvc" -gt 0 ] &&
	   [ "$vc" -gt "$nvc" ] && [ "$vb" -lt "$nvb" ]; then
		echo "ok - vc_stats: $got; the record counts add up" >>"$d/res"
	else
		{ echo "not ok - vc_stats: $got; record bytes $s and $ns"; sed 's/^/# /' "$d/vc/stats"; } >>"$d/res"
	fi
	if cmp -s "$d/vc/kinds" "$d/novc/kinds"; then
		echo "ok - vc_stats: both builds regenerate as many I, L, S, M records (" $(cat "$d/vc/kinds") ")" >>"$d/res"
	else
		{ echo "not ok - vc_stats: the builds regenerate other record counts"; paste "$d/vc/kinds" "$d/novc/kinds" | sed 's/^/# /'; } >>"$d/res"
	fi
	# (nm -A: "libc.a:member.o: ... symbol")
	nm -A "$top/build/musl-data/lib/libc.a" "$top/build/musl-data/lib/crt1.o" >"$d/libc.syms" 2>/dev/null
	got=$(grep -E '(crt1\.o|:__libc_start_main\.o|:__init_tls\.o|:memset\.o|:memcpy\.o):.* __ae_(vc|lc)$' "$d/libc.syms")
	if [ -z "$got" ] && grep -q ':malloc\.o:.* __ae_vc$' "$d/libc.syms"; then
		echo "ok - vc_stats: the C library's start-up (crt1, __libc_start_main, __init_tls, memset, memcpy) has no value cache, malloc has" >>"$d/res"
	else
		{ echo "not ok - vc_stats: the C library's start-up names the value cache, or malloc does not"; echo "$got" | head -3 | sed 's/^/# /'; } >>"$d/res"
	fi
	rm -f "$d"/*/t.zst "$d"/*/regen
}

# workload NAME ARGS...: a forking or threaded program (tests/workload/)
# built with -fae-data: every task regenerates with every data address (a
# child's %rsp comes from the record after its fork/clone system call), and
# each task's records equal the native stepper's on the same task of the
# twin (ae-step --split --data; tasks matched by creation order, the
# thread stacks' addresses included). pthread_join (and the wait functions
# under it) waits a schedule-dependent number of times: it is left out of
# both sides of the main thread's comparison, as in regen-workload.
workload() {
	local name=$1 d=$work/wl-$1 f tid label other img skips s n=0
	shift
	mkdir -p "$d/i" "$d/o" "$d/split" "$d/step"
	: >"$d/res"
	if ! "$aecc" -fae-data -O2 -o "$d/i/p" "$top/tests/workload/$name.c" -lpthread >"$d/aecc.log" 2>&1; then
		echo "not ok - $name: aecc -fae-data failed" >>"$d/res"
		return
	fi
	cp "$d/i/p.orig" "$d/o/p"
	(cd "$d/i" && timeout 120 $clean_env "$aerun" -o "$d/t.zst" -- ./p "$@" >/dev/null 2>"$d/err.aerun")
	if timeout 120 "$aetrace" regen --format=lackey --split "$d/split" "$d/t.zst" "$d/i/p" 2>"$d/err.regen" &&
	   [ ! -s "$d/err.regen" ]; then
		echo "ok - $name: $(ls "$d/split" | wc -l) task images regenerate with every data address ($(cat "$d"/split/* | grep -c '^ [LSM]') data records)" >>"$d/res"
	else
		{ echo "not ok - $name: regen failed"; head -5 "$d/err.regen" | sed 's/^/# /'; } >>"$d/res"
		return
	fi
	if ! (cd "$d/o" && timeout 300 $clean_env "$top/build/tests/ae-step" --split "$d/step" --data \
		--forks "$d/step.forks" -- ./p "$@" >/dev/null 2>"$d/err.step"); then
		{ echo "not ok - $name: ae-step --split --data failed"; head -3 "$d/err.step" | sed 's/^/# /'; } >>"$d/res"
		return
	fi
	ae_capture_forks "$top/bin/schedlog" "$d/t.zst" >"$d/forks"
	python3 "$top/tests/oracle/fork-labels.py" "$d/forks" >"$d/labels"
	python3 "$top/tests/oracle/fork-labels.py" "$d/step.forks" >"$d/step.labels"
	skips=$(ae_join_skips "$d/o/p")
	for f in "$d"/split/*.lackey; do
		tid=$(basename "$f" | cut -d. -f2)
		label=$(awk -v t="$tid" '($1 "") == t { print $2 }' "$d/labels")
		other=$(awk -v l="$label" '($2 "") == l { print $1 }' "$d/step.labels")
		# (p.K.lackey: the task's K-th image of p, after an exec of itself)
		img=$(basename "$f" | cut -d. -f3-)
		other=$(ls "$d/step/"*".$other.$img" 2>/dev/null | head -1)
		n=$((n + 1))
		if [ -z "$label" ] || [ -z "$other" ]; then
			echo "not ok - $name: task $tid: no stepper task for label '$label'" >>"$d/res"
			continue
		fi
		s=
		[ "$label" = 0 ] && s=${skips:-}
		# shellcheck disable=SC2086
		if python3 "$dcmp" $s "$f" "$other" >"$d/cmp.$label" 2>&1; then
			echo "ok - $name: task $label, $img = ae-step --split --data, every address ($(sed -n 1p "$d/cmp.$label" | cut -d: -f2 | sed 's/^ //'))" >>"$d/res"
		else
			{ echo "not ok - $name: task $label, $img differs from ae-step --split --data"; sed 's/^/# /' "$d/cmp.$label" | tail -4; } >>"$d/res"
		fi
	done
	if [ "$n" = "$(ls "$d/step" | wc -l)" ] && [ "$n" -gt 1 ]; then
		echo "ok - $name: $n task images compared, as many as the stepper's" >>"$d/res"
	else
		echo "not ok - $name: $n task images regenerated, the stepper has $(ls "$d/step" | wc -l)" >>"$d/res"
	fi
	# forks inside handlers (sigfork): the children replay from other
	# checkpoints (one at nearly every instruction): the same records
	if [ "$name" = sigfork ]; then
		mkdir -p "$d/ck"
		if AETRACE_CHECKPOINT_BYTES=0 timeout 120 "$aetrace" regen --format=lackey --split "$d/ck" \
			"$d/t.zst" "$d/i/p" 2>"$d/err.ck" && diff -r "$d/split" "$d/ck" >/dev/null; then
			echo "ok - $name: with a checkpoint at nearly every instruction, the same records" >>"$d/res"
		else
			{ echo "not ok - $name: with a checkpoint at nearly every instruction, other records"; head -3 "$d/err.ck" | sed 's/^/# /'; } >>"$d/res"
		fi
	fi
	# spawn -t: with the trace of the second thread's first vfork child
	# (its second child, 0.0.1) gone, that thread cannot know the value
	# cache its child left: it fails by name once no task is left to
	# run, and the others regenerate
	if [ "$name" = spawn ]; then
		tid=$(awk '$2 == "0.0.1" { print $1 }' "$d/labels")
		mkdir -p "$d/gone"
		"$mutate" --retid "$d/t.zst" "$d/gone.zst" "$tid" 2147483000 &&
			timeout 60 "$aetrace" regen --format=lackey --split "$d/gone" "$d/gone.zst" \
			"$d/i/p" 2>"$d/err.gone"
		s=$?
		if [ -n "$tid" ] && [ "$s" = 1 ] &&
		   grep -q "/$(awk '$2 == "0.0" { print $1 }' "$d/labels") (p): used the value cache it shares with its vfork child before that child's trace ended" "$d/err.gone" &&
		   cmp -s "$d/gone/"*".$(awk '$2 == "0" { print $1 }' "$d/labels").p.lackey" \
			"$d/split/"*".$(awk '$2 == "0" { print $1 }' "$d/labels").p.lackey"; then
			echo "ok - $name: a vfork child's trace gone: its parent thread fails by name, the main thread regenerates" >>"$d/res"
		else
			{ echo "not ok - $name: a vfork child's trace gone: exit $s, not the failure expected"; head -3 "$d/err.gone" | sed 's/^/# /'; } >>"$d/res"
		fi
	fi
	rm -rf "$d/split" "$d/step" "$d/t.zst" "$d/ck" "$d/gone" "$d/gone.zst"
}

names=${AE_DATA_EXACT_ONLY:-$(cd "$top/tests/corpus" && ls *.c | sed 's/\.c$//') lua luaprof bzip2 bzplain sqlite3 kinds gather vclow sigmemfn sigstub sigrecur vcsig vcsiglf vcgroup vcvfork vckill vcjoin repsig memfnfault xlat sigrestart ctxchange vcstats debuginfo ownlink wl:forkloop:3 wl:threads:60 wl:pingpong:20 wl:sigthreads:10 wl:sigfork:16 wl:spawn:-t}
export -f one real real_counts real_lc_hits workload data_prog segv_prog pool_loads regen_step kinds gather vclow sigmemfn sig_run sigstub sig_sp_refused sigrecur vcsig vcgroup vcvfork vckill ae_first_load vcjoin fault_modes repsig memfnfault xlat sigrestart ctxchange vcstats debuginfo build_regen ownlink stepper same_run negative formats ae_step_cached ae_step_prog_hash ae_lackey_ok ae_value_recs ae_corpus_args ae_sym_addr ae_sym_range ae_join_skips ae_capture_forks
export clean_env top aecc aerun aetrace mutate cmp dcmp work skip_same skip_step lackey_twin handlers ae_step_cache_dir ae_step_clean_env ae_step_cache_max ae_lackey_from_sym ae_lackey_inexact
printf '%s\n' $names | xargs -P "$jobs" -I{} bash -c 'case {} in kinds) kinds ;; gather) gather ;; vclow) vclow ;; sigmemfn) sigmemfn ;; sigstub) sigstub ;; sigrecur) sigrecur ;; vcsig) vcsig ;; vcsiglf) vcsig lfirst ;; vcgroup) vcgroup ;; vcvfork) vcvfork ;; vckill) vckill ;; vcjoin) vcjoin ;; repsig) repsig ;; memfnfault) memfnfault ;; xlat) xlat ;; sigrestart) sigrestart ;; ctxchange) ctxchange ;; vcstats) vcstats ;; debuginfo) debuginfo ;; ownlink) ownlink ;; lua|bzip2|sqlite3) real {} ;; luaprof) real lua prof ;; bzplain) real bzip2 plain ;; wl:*) IFS=: read -r _ n a <<< {}; workload $n $a ;; *) one {} ;; esac'

i=0 failed=0
for name in $names; do
	case $name in wl:*) name=${name#wl:}; name=wl-${name%%:*} ;; kinds) name=access_kinds ;; vclow) name=vc_low ;; sigmemfn) name=signal_memfn ;; sigstub) name=sig_stub ;; sigrecur) name=sig_recur ;; vcsig) name=vc_signal ;; vcsiglf) name=vc_signal_lfirst ;; luaprof) name=lua-prof ;; bzplain) name=bzip2-plain ;; vcgroup) name=vc_group ;; vcvfork) name=vc_vfork ;; vckill) name=vc_kill ;; vcjoin) name=vc_join ;; repsig) name=rep_signal ;; memfnfault) name=memfn_fault ;; sigrestart) name=sig_restart ;; ctxchange) name=ctx_change ;; vcstats) name=vc_stats ;; debuginfo) name=debug_info ;; ownlink) name=own_link ;; esac
	[ -s "$work/$name/res" ] || echo "not ok - $name: no result" >"$work/$name/res"
	while IFS= read -r line; do
		case "$line" in
		"not ok - "*) i=$((i + 1)); failed=1; echo "not ok $i - ${line#not ok - }" ;;
		"ok - "*) i=$((i + 1)); echo "ok $i - ${line#ok - }" ;;
		*) echo "$line" ;;
		esac
	done <"$work/$name/res"
done
cat "$work"/*/bpr 2>/dev/null | awk '$2 == "lua" || $2 == "bzip2" || $2 == "sqlite3" {
		printf "# %s: %d trace bytes / %d data references = %.3f bytes per reference\n", $2, $4, $3, $4 / $3
		next }
	{ m += $3; b += $4 }
	END { if (m) printf "# corpus: %d trace bytes / %d data references = %.3f bytes per reference\n", b, m, b / m }'
exit $failed
