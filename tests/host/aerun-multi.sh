#!/usr/bin/env bash
# aerun-multi: aerun follows threads, forks and execs (issue 9, item 5) on
# the workload at once: tests/workload/runall starts the pipe ping-pong
# pair, forkexec (which forks and execs the traced leaf twice) and the
# 4-thread program, all traced by one aerun. This suite checks the capture
# with a reader of its own (aerun_region) and the single-image `aetrace
# regen`; tests/host/regen-workload.sh regenerates the whole capture (Lua
# included), every thread against the stepper.
#   - the capture keeps the marker contract (build/tests/host/aerun/
#     aerun_region --check: per cpu seq without gaps, markers in order and
#     inside their sub-buffers, each thread between START/SWITCH_IN and
#     EXIT, every FORK's child begins, EXEC then START), one thread for each
#     the stepper saw;
#   - every program image that begins with START (the first program and
#     every exec'd one: runall, pingpong, forkexec, threads' main thread,
#     both leaves) regenerates with `aetrace regen` exactly as the
#     ptrace single-stepper (ae-step --split) runs the same thread of the
#     twins, instruction for instruction (threads' main thread without
#     pthread_join and the futex waits, whose iteration count depends on
#     timing). Threads are mapped by creation order (labels), not tids;
#   - the same, with 4 KiB sub-buffers (boundaries everywhere), and every
#     region except the joining main thread has the same witness bytes in
#     both captures (threads and fork children, which today's aetrace cannot
#     regenerate on its own, are at least deterministic);
#   - signals in threads (tests/workload/sigthreads), forks inside
#     signal handlers (sigfork), an exec from a
#     thread that is not the leader (mtexec), vfork and posix_spawn
#     children (spawn), an exec through int 0x80 (int80exec): every
#     thread image
#     regenerates (`aetrace regen --split`) equal to the stepper's same
#     thread and program;
#   - an exec'd program not built with aecc is reported and left untraced,
#     and traced programs a shell (not traced) starts are traced;
#     too few sub-buffers for the live threads is a clear error.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/oracle/corpus-lib.sh"
bt=$top/build/tests wl=$bt/workload
step=$bt/ae-step cmp=$bt/ae-tracecmp region=$bt/host/aerun/aerun_region
aerun=$top/bin/aerun aetrace=$top/bin/aetrace
i=0 failed=0
ok() { i=$((i + 1)); echo "ok $i - $*"; }
nok() { i=$((i + 1)); echo "not ok $i - $*"; failed=1; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else nok "$name"; fi; }

for t in "$aerun" "$aetrace" "$step" "$cmp" "$region" "$wl/runall" "$wl/threads.orig" \
	 "$wl/sigthreads.orig" "$wl/mtexec.orig" "$wl/spawn.orig" "$wl/barrier"; do
	if [ ! -x "$t" ]; then
		echo "ok 1 - aerun-multi # SKIP $t not built"
		exit 0
	fi
done
work=$(mktemp -d "${TMPDIR:-/tmp}/aerun-multi.XXXXXX")
[ -n "${AE_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
clean_env="env -i PATH=/usr/bin:/bin LC_ALL=C"

# i/: traced programs (with their twins beside them, for aetrace); o/: the
# twins under the same names, so both runs see the same argv bytes.
mkdir -p "$work/i" "$work/o"
for p in runall pingpong forkexec leaf threads; do
	cp "$wl/$p" "$work/i/$p"
	cp "$wl/$p.orig" "$work/i/$p.orig"
	cp "$wl/$p.orig" "$work/o/$p"
done
cmd=(./runall ./pingpong 30 : ./forkexec ./leaf 80 : ./threads 60)
# label image program: what is compared with the stepper
expect="0 0 runall
0.0 1 pingpong
0.1 1 forkexec
0.2 1 threads
0.1.0 1 leaf
0.1.1 1 leaf"

# The stepper on the twins: one file per thread and image, and the forks.
mkdir -p "$work/step"
(cd "$work/o" && $clean_env "$step" --split "$work/step" --forks "$work/step.forks" -- \
	"${cmd[@]}" >"$work/out.step" 2>"$work/err.step")
rc=$?
check "stepper runs the twin workload (exit $rc)" test $rc = 0

# label -> tid for the stepper run (k-th child of a parent in creation order)
python3 "$top/tests/oracle/fork-labels.py" --label-first "$work/step.forks" >"$work/step.labels"

# Skip ranges for the main thread of threads: pthread_join's waits.
join_skips=$(ae_join_skips "$wl/threads.orig")

# run_capture NAME AERUN-OPTS...: capture the workload, check and compare.
run_capture() {
	local name=$1 d=$work/$1
	shift
	mkdir -p "$d"
	(cd "$work/i" && $clean_env "$aerun" -q "$@" -o "$d/t.zst" -- "${cmd[@]}" \
		>"$d/out" 2>"$d/err")
	rc=$?
	check "$name: aerun runs the workload, exit $rc$(head -c 300 "$d/err" | tr '\n' ' ')" test $rc = 0
	check "$name: same output as the twins under the stepper (sorted lines)" \
		cmp -s <(sort "$d/out") <(sort "$work/out.step")
	if ! "$region" --check "$d/t.zst" >"$d/regions" 2>"$d/check.err"; then
		nok "$name: capture keeps the marker contract: $(cat "$d/check.err")"
		return
	fi
	local nreg nstep ncpu
	nreg=$(wc -l <"$d/regions")
	ncpu=$(awk '{ print $4 }' "$d/regions" | sort -u | wc -l)
	nstep=$(ls "$work/step" | cut -d. -f2 | sort -u | wc -l)
	check "$name: capture keeps the marker contract, $nreg threads on $ncpu regions for the stepper's $nstep threads" \
		test "$nreg" = "$nstep"
	while read -r label image prog; do
		local cpu tid f skips=
		cpu=$(awk -v l="$label" '($2 "") == l { print $4 }' "$d/regions")
		tid=$(awk -v l="$label" '($1 "") == l { print $2 }' "$work/step.labels")
		f=$(ls "$work/step/"*".$tid.$prog.lackey" 2>/dev/null | head -1)
		if [ -z "$cpu" ] || [ -z "$f" ]; then
			nok "$name: $prog ($label): no thread in the capture ($cpu) or stepper trace ($tid)"
			continue
		fi
		[ "$prog" = threads ] && skips=$join_skips
		if ! "$region" --extract "$d/t.zst" "$label" "$image" "$d/$label.zst" 2>"$d/x.err" ||
		   ! "$aetrace" regen --format=lackey "$d/$label.zst" "$work/i/$prog" \
			>"$d/$label.regen" 2>"$d/regen.err"; then
			nok "$name: $prog ($label) regenerates: $(cat "$d/x.err" "$d/regen.err" | head -3)"
			continue
		fi
		# shellcheck disable=SC2086
		if "$cmp" $skips "$d/$label.regen" "$f" >"$d/$label.cmp"; then
			ok "$name: $prog ($label, cpu $cpu) = stepper on the twin's thread ($(head -1 "$d/$label.cmp")${skips:+, without pthread_join})"
		else
			nok "$name: $prog ($label, cpu $cpu) differs from the stepper"
			sed 's/^/# /' "$d/$label.cmp" | head -20
		fi
	done <<<"$expect"
}
run_capture default --subbufs 32
run_capture tiny --subbufs 64 --subbuf-size 4K

# Same witness bytes per thread in both geometries (by label).
bad= n=0
while read -r _ label _; do
	[ "$label" = 0.2 ] && continue	# joins: timing-dependent
	"$region" --bytes "$work/default/t.zst" "$label" "$work/b1" 2>/dev/null
	"$region" --bytes "$work/tiny/t.zst" "$label" "$work/b2" 2>/dev/null
	cmp -s "$work/b1" "$work/b2" || bad="$bad $label"
	n=$((n + 1))
done <"$work/default/regions"
check "every thread but the joining one has the same witness bytes with 4M and 4K sub-buffers ($n threads${bad:+; differ:$bad})" \
	test -z "$bad" -a "$n" -gt 5

# whole NAME ARGS...: aerun captures ./NAME ARGS, `aetrace regen --split`
# regenerates every thread image, the stepper runs the twins with --split;
# each regenerated file must equal the stepper's file of the same thread
# (label by creation order) and program; the main thread without
# pthread_join's waits. Leaves $d (the work dir) for further checks.
whole() {
	local name=$1 skips s r f tid label prog img st n=0
	shift
	d=$work/whole-$name
	# (a second run of NAME: a directory of its own)
	while [ -e "$d" ]; do
		d=$d+
	done
	mkdir -p "$d/regen" "$d/step"
	skips=$(ae_join_skips "$wl/$name.orig")
	if ! (cd "$work/i" && $clean_env "$aerun" -q -o "$d/t.zst" -- "./$name" "$@" \
		>/dev/null 2>"$d/err") ||
	   ! (cd "$work/o" && $clean_env "$step" --split "$d/step" --forks "$d/forks" -- \
		"./$name" "$@" >/dev/null 2>>"$d/err") ||
	   ! "$region" --check "$d/t.zst" >"$d/threads" 2>>"$d/err" ||
	   ! "$aetrace" regen --split "$d/regen" "$d/t.zst" "$work/i/$name" "$work/i/leaf" \
		${whole_progs:-} \
		2>>"$d/err"; then
		nok "$name: capture, stepper and regeneration run: $(head -3 "$d/err")"
		return
	fi
	python3 "$top/tests/oracle/fork-labels.py" --label-first "$d/forks" >"$d/labels"
	# the capture's tasks labelled alike, from its FORK markers (a
	# thread the leader's tid creates after another thread's exec is the
	# leader's child here, as in the stepper's run)
	ae_capture_forks "$top/bin/schedlog" "$d/t.zst" >"$d/cforks"
	python3 "$top/tests/oracle/fork-labels.py" --label-first "$d/cforks" >"$d/clabels"
	# no fork: the only thread is 0
	[ -s "$d/labels" ] || echo "0 $(ls "$d/step" | head -1 | cut -d. -f2)" >"$d/labels"
	[ -s "$d/clabels" ] || echo "0 $(ls "$d/regen" | head -1 | cut -d. -f2)" >"$d/clabels"
	for f in "$d/regen/"*.lackey; do
		tid=$(basename "$f" | cut -d. -f2)
		prog=$(basename "$f" | cut -d. -f3)
		img=$(basename "$f" | cut -d. -f3-)	# PROG[.K].lackey
		label=$(awk -v t="$tid" '($2 "") == t { print $1 }' "$d/clabels")
		st=$(awk -v l="$label" '($1 "") == l { print $2 }' "$d/labels")
		r=
		[ "$label" = 0 ] && [ "$prog" = "$name" ] && r=$skips
		n=$((n + 1))
		# shellcheck disable=SC2086
		if [ -n "$st" ] && "$cmp" $r "$f" "$d/step/"*".$st.$img" >"$d/cmp" 2>&1; then
			ok "$name: thread $label, $img = stepper ($(head -1 "$d/cmp")${r:+, without pthread_join})"
		elif [ "$name" = mtexec ] && [ "$label" = 0 ] && grep -q '<end of stream>' "$d/cmp"; then
			# killed by the other thread's exec at a point that depends
			# on timing: one stream must be a prefix of the other
			ok "$name: thread $label (killed by the exec), $prog: one trace is a prefix of the other ($(head -1 "$d/cmp"))"
		else
			nok "$name: thread $label, $img differs from the stepper"
			sed 's/^/# /' "$d/cmp" | head -16
		fi
	done
	check "$name: $n regenerated images, as many as the stepper's" \
		test "$n" = "$(ls "$d/step" | wc -l)"
}

for p in sigthreads mtexec spawn int80exec sigfork; do
	cp "$wl/$p" "$wl/$p.orig" "$work/i/"
	cp "$wl/$p.orig" "$work/o/$p"
done
if "$aetrace" regen --help 2>&1 | grep -q -- "--split"; then
	# Signals in threads: every thread raises SIGUSR1 at itself.
	whole sigthreads 10
	nsig=$(python3 - "$d/t.zst" <<'PY'
import struct, subprocess, sys
raw = subprocess.run(["zstd", "-dc", sys.argv[1]], capture_output=True).stdout
o, tids = 0, set()
while o < len(raw):
	_, typ, _, _, ln, _ = struct.unpack_from("<IHHQII", raw, o)
	if typ == 3:
		for k in range(o + 24, o + 24 + ln, 72):	# struct trbuf_marker
			if struct.unpack_from("<I", raw, k + 8)[0] == 4:
				tids.add(struct.unpack_from("<i", raw, k + 20)[0])
	o += 24 + ln
print(len(tids))
PY
)
	check "sigthreads: SIGNAL markers from all 4 threads ($nsig)" test "$nsig" = 4
	# A thread that is not the leader execs the leaf: it takes the
	# leader's tid; the leader's stream ends where the exec killed it.
	whole mtexec ./leaf 20
	# The same, into its own program first: the leader's tid runs
	# mtexec twice, then the leaf (three files: mtexec, mtexec.2, leaf).
	whole mtexec ./mtexec ./leaf 20
	check "mtexec into itself: the leader's second mtexec image has a file of its own" \
		test "$(ls "$d/regen" | grep -c '\.mtexec\.2\.lackey$')" = 1
	# Through a program named like that file: mtexec, a program called
	# mtexec.2 (another build), mtexec again, the leaf. The second mtexec
	# image's name is mtexec.2's: it gets ".dup", in both runs.
	if "$top/bin/aecc" -O1 -o "$work/i/mtexec.2" "$top/tests/workload/mtexec.c" 2>"$work/m2.err"; then
		cp "$work/i/mtexec.2.orig" "$work/o/mtexec.2"
		whole_progs=$work/i/mtexec.2 whole mtexec ./mtexec.2 ./mtexec ./leaf 20
		check "mtexec through mtexec.2: the second mtexec image's file is mtexec.2.dup" \
			test "$(ls "$d/regen" | grep -c '\.mtexec\.2\.dup\.lackey$')" = 1
	else
		nok "aecc builds mtexec.2: $(head -3 "$work/m2.err")"
	fi
	# vfork children: posix_spawn (own stack, shared memory) and vfork.
	whole spawn ./leaf 20
	# The same from a second thread, whose regeneration can come after
	# its whole trace was read: it waits at its first use of the value
	# cache for its vfork child's trace to end. The children exec the
	# program they run: each image in a file of its own.
	whole spawn -t 2
	check "spawn -t: each child's image after its exec has a file of its own (4 spawn.2 files)" \
		test "$(ls "$d/regen" | grep -c '\.spawn\.2\.lackey$')" = 4
	# Children forked inside signal handlers (tests/workload/sigfork):
	# each replays its parent's trace to the fork, then returns from
	# the handlers (or leaves by siglongjmp) into its own trace.
	whole sigfork 16 300
	# each child replays from its parent's last checkpoint (the two
	# grandchildren a chain: their grandparent's trace, then their
	# parent's own): with checkpoints at their default distance, at
	# nearly every instruction (0 bytes apart) and at others, each
	# replay starts elsewhere, and every image must be the same as above
	for b in '' 0 13 97; do
		rm -rf "$d/ck"
		mkdir "$d/ck"
		AETRACE_CHECKPOINT_BYTES=$b AETRACE_DEBUG=1 "$aetrace" regen --split "$d/ck" \
			"$d/t.zst" "$work/i/sigfork" 2>"$d/err.ck"
		r=$?
		grep -o 'replayed its [a-z]* from offset [0-9]*' "$d/err.ck" >"$d/from.${b:-default}"
		n=$(grep -c 'its parent from' "$d/from.${b:-default}")
		n2=$(grep -c 'grandparent from' "$d/from.${b:-default}")
		check "sigfork: checkpoints ${b:-64 KiB (the default)} bytes apart: 16 replays of a parent ($n), 2 of a grandparent ($n2), the same images" \
			test "$r" = 0 -a "$n" = 16 -a "$n2" = 2 -a -z "$(diff -r "$d/regen" "$d/ck")"
	done
	check "sigfork: the replays started elsewhere with a checkpoint at nearly every instruction" \
		test "$(cat "$d/from.default")" != "$(cat "$d/from.0")"
	# a child's SIGRETURN from the handler its parent entered pairs with
	# the parent's SIGNAL (it used to be "SIGRETURN without a SIGNAL")
	"$top/bin/schedlog" check "$d/t.zst" >/dev/null 2>"$d/err.sc"
	r=$?
	check "sigfork: schedlog check accepts the children's returns from their parents' handlers$(head -c 200 "$d/err.sc" | tr '\n' ' ')" \
		test "$r" = 0
	# An exec through the i386 entry (int 0x80): aerun's seccomp filter
	# must see it like execve, or the leaf's START lands on the old
	# image's bytes.
	if (cd "$work/o" && ./int80exec ./leaf 1 >/dev/null 2>&1); then
		whole int80exec ./leaf 20
	else
		ok "int80exec # SKIP this kernel has no int 0x80 entry"
	fi
else
	ok "sigthreads, mtexec, spawn # SKIP this aetrace has no regen --split"
fi

# An exec'd program not built with aecc: reported, left untraced.
(cd "$work/i" && $clean_env "$aerun" -o "$work/u.zst" -- ./forkexec ./leaf.orig 20 \
	>/dev/null 2>"$work/u.err")
rc=$?
check "exec of an uninstrumented program (the twin): exit $rc, reported, left untraced" \
	eval 'test $rc = 0 && test "$(grep -c "leaf.orig, not built with aecc: left untraced" "$work/u.err")" = 2'
check "... and the capture keeps the contract (its regions end with EXEC)" \
	eval '"$region" --check "$work/u.zst" >"$work/u.regions" && test "$(wc -l <"$work/u.regions")" = 3'

# An uninstrumented first program (sh) starting traced programs: those are
# traced (START), the shell and its other children are not; the leaf's
# image regenerates as the stepper runs it with the shell's environment.
mkdir -p "$work/sh-step"
(cd "$work/i" && $clean_env "$aerun" -o "$work/sh.zst" -- /bin/sh -c './leaf 40; ./pingpong 5' \
	>"$work/sh.out" 2>"$work/sh.err")
rc=$?
check "sh -c 'leaf; pingpong' under aerun: exit $rc, the shell reported as not instrumented" \
	eval 'test $rc = 0 && grep -q "/bin/sh never mapped the trace buffer" "$work/sh.err"'
if "$region" --check "$work/sh.zst" >"$work/sh.threads" 2>"$work/sh.cerr"; then
	ok "... the capture keeps the contract: $(wc -l <"$work/sh.threads") threads (shell, leaf, pingpong pair)"
else
	nok "... the capture keeps the contract: $(cat "$work/sh.cerr")"
fi
# The stepper cannot run dash (capstone stops in glibc's ld.so,
# tests/oracle/README.md): step the leaf alone with the environment dash
# gives its children (its own plus PWD; i/ and o/ have paths of one length).
(cd "$work/o" && env -i PATH=/usr/bin:/bin LC_ALL=C PWD="$work/o" "$step" \
	-o "$work/sh-step/leaf.lackey" -- ./leaf 40 >/dev/null 2>&1)
# the first traced thread after the shell is the leaf (tids grow)
ltid=$(awk '$2 == "?" { print $8 }' "$work/sh.threads" | sort -n | head -1)
f=$work/sh-step/leaf.lackey
if [ -n "$ltid" ] && [ -n "$f" ] &&
   "$region" --extract "$work/sh.zst" "tid=$ltid" 0 "$work/sh-leaf.zst" &&
   "$aetrace" regen --format=lackey "$work/sh-leaf.zst" "$work/i/leaf" >"$work/sh-leaf.regen" &&
   "$cmp" "$work/sh-leaf.regen" "$f" >"$work/sh.cmp"; then
	ok "... the leaf started by sh regenerates equal to the stepper ($(head -1 "$work/sh.cmp"))"
else
	nok "... the leaf started by sh regenerates equal to the stepper"
	sed 's/^/# /' "$work/sh.cmp" 2>/dev/null | head -16
fi

# More live threads than sub-buffers: a clear error, not a hang (barrier:
# 7 threads alive at once); enough sub-buffers: it runs.
cp "$wl/barrier" "$work/i/"
(cd "$work/i" && timeout 60 $clean_env "$aerun" --subbufs 4 -o "$work/n.zst" -- ./barrier 6 \
	>/dev/null 2>"$work/n.err")
rc=$?
check "7 live threads with 4 sub-buffers: exit $rc (125), names --subbufs" \
	eval 'test $rc = 125 && grep -q -- "--subbufs" "$work/n.err"'
(cd "$work/i" && timeout 60 $clean_env "$aerun" --subbufs 8 -o "$work/n.zst" -- ./barrier 6 \
	>/dev/null 2>"$work/n.err")
rc=$?
check "7 live threads with 8 sub-buffers: exit $rc (0), 7 threads in the capture" \
	eval 'test $rc = 0 && "$region" --check "$work/n.zst" >"$work/n.threads" && test "$(wc -l <"$work/n.threads")" = 7'

# Signals to the process group (aerun is in the program's group): a
# program's kill(0, SIGUSR1) reaches the program as without aerun, and
# does not kill aerun; a signal sent to aerun alone is passed to the
# program. setsid: the group must not be this suite's.
if [ -x "$wl/grpsig" ]; then
	cp "$wl/grpsig" "$work/i/"
	(cd "$work/i" && timeout 60 setsid $clean_env "$aerun" -o "$work/g.zst" -- ./grpsig group \
		>"$work/g.out" 2>"$work/g.err")
	rc=$?
	check "kill(0, SIGUSR1) by the traced program: exit $rc (0), its handler ran$([ $rc = 0 ] || head -c 200 "$work/g.err" | tr '\n' ' ')" \
		eval 'test $rc = 0 && grep -q "got SIGUSR1" "$work/g.out" && "$region" --check "$work/g.zst" >/dev/null'
	(cd "$work/i" && timeout 60 setsid $clean_env "$aerun" -o "$work/w.zst" -- ./grpsig wait 20 \
		>"$work/w.out" 2>"$work/w.err") &
	bg=$!
	for _ in $(seq 200); do
		grep -q waiting "$work/w.out" 2>/dev/null && break
		sleep 0.05
	done
	apid=$(pgrep -f -n "aerun -o $work/w.zst")
	[ -n "$apid" ] && kill -USR1 "$apid"
	wait $bg
	rc=$?
	check "SIGUSR1 sent to aerun ($apid) reaches the program: exit $rc (0)" \
		eval 'test $rc = 0 && grep -q "got SIGUSR1" "$work/w.out" && "$region" --check "$work/w.zst" >/dev/null'
else
	ok "grpsig # SKIP not built"
fi

# A traced program that drops root before it execs a traced one: that one
# cannot open root's aerun buffer; it runs (untraced, reported) as it
# would without aerun. Needs root and user nobody (65534).
if [ "$(id -u)" = 0 ] && [ -x "$wl/dropexec" ]; then
	d=$work/drop
	mkdir -p "$d"
	cp "$wl/dropexec" "$wl/leaf" "$d/"
	chmod 755 "$d" "$d/leaf"
	(cd "$d" && timeout 60 $clean_env "$aerun" -o "$d/t.zst" -- ./dropexec 65534 ./leaf 20 \
		>"$d/out" 2>"$d/err")
	rc=$?
	check "exec after setuid(nobody): exit $rc (0), the leaf ran, reported untraced$([ $rc = 0 ] || head -c 200 "$d/err" | tr '\n' ' ')" \
		eval 'test $rc = 0 && grep -q "collatz length sum of 1..20 = 216" "$d/out" &&
		      grep -q "left untraced" "$d/err" && "$region" --check "$d/t.zst" >/dev/null'
else
	ok "dropexec # SKIP needs root"
fi

# A fork child whose parent is killed before aerun sees the fork event
# (aerun held stopped meanwhile): nobody can give the child a region; aerun
# must not wait for it forever. forkloop alternates between fork and wait,
# so an attempt kills it in a fork event aerun has not collected yet only
# sometimes: up to 10 attempts within 60 s (under load an attempt that
# never catches the event takes ~16 s), none may hang, one must name the
# orphan.
if [ -x "$wl/forkloop" ]; then
	cp "$wl/forkloop" "$work/i/"
	hung= named= tries=0 fl_end=$((SECONDS + 60))
	for try in $(seq 10); do
		[ $SECONDS -lt $fl_end ] || break
		tries=$try
		(cd "$work/i" && exec timeout 20 $clean_env "$aerun" --discard -- ./forkloop 10000000 \
			>/dev/null 2>"$work/fl.err") &
		bg=$!
		fp= apid= killed=
		for _ in $(seq 100); do
			fp=$(pgrep -o -x forkloop) && apid=$(pgrep -n -f "^$aerun --discard -- ./forkloop") && break
			sleep 0.05
		done
		# hold aerun while forkloop and its newest child are both
		# stopped ('t'): forkloop in a fork event; kill it there
		for _ in $(seq 50); do
			[ -n "$fp" ] && [ -n "$apid" ] || break
			kill -STOP "$apid"
			sleep 0.3
			kid=$(pgrep -n -P "$fp")
			if [ "$(awk '{ print $3 }' "/proc/$fp/stat" 2>/dev/null)" = t ] && [ -n "$kid" ] &&
			   [ "$(awk '{ print $3 }' "/proc/$kid/stat" 2>/dev/null)" = t ]; then
				kill -9 "$fp" && killed=1
				sleep 0.2
				kill -CONT "$apid"
				break
			fi
			kill -CONT "$apid"
			sleep 0.02
		done
		[ -z "$killed" ] && [ -n "$apid" ] && kill -9 "$apid" 2>/dev/null
		wait $bg 2>/dev/null
		rc=$?
		[ -n "$killed" ] && [ $rc = 124 ] && hung="$hung $try"
		grep -q "parent died before aerun saw its fork" "$work/fl.err" && named=$try && break
	done
	if [ -z "$hung" ] && [ -z "$named" ]; then
		ok "parent killed in its fork: aerun ends # SKIP $tries attempts never lost the fork event"
	else
		check "parent killed in its fork before aerun saw it: aerun ends, names the orphan (attempt $named${hung:+, hung in attempts$hung})" \
			test -z "$hung" -a -n "$named"
	fi
fi

echo "1..$i"
exit $failed
