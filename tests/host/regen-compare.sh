#!/usr/bin/env bash
# regen-compare.sh DIR STEPDIR THREADS_ORIG ["NOSTEP..."]: compare
# DIR/sp/*.lackey (aetrace regen --split of DIR/trace.zst with
# DIR/sched.bin) with the single-stepper's STEPDIR/step/*.lackey (ae-step
# --split, forks in STEPDIR/step.forks; NOSTEP: programs or thread labels
# the stepper did not run the same way, listed but not compared), threads
# matched by creation order (labels 0, 0.0, 0.1, ...: k-th child of its
# parent); the joining main thread of the workload's `threads` program
# (THREADS_ORIG: its twin, for the symbols) without pthread_join's waits.
# Prints one TAP-style line per thread image ("ok - ..." / "not ok - ...")
# and exits 0 when every image equals the stepper's and there are as many
# as the stepper's. Used by tests/host/regen-vm.sh and vm/capture-demo.sh.
set -u
d=$1 sd=$2 torig=$3 nostep=${4:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/oracle/corpus-lib.sh"
cmp=$top/build/tests/ae-tracecmp
labels() { python3 "$top/tests/oracle/fork-labels.py" "$1"; }
join_skips=$(ae_join_skips "$torig")
ae_capture_forks "$top/bin/schedlog" "$d/sched.bin" >"$d/forks"
labels "$d/forks" >"$d/labels"
[ -s "$sd/step.forks" ] && labels "$sd/step.forks" >"$d/step.labels" || : >"$d/step.labels"
n=0 good=0 insns=0 nskip=0
for f in "$d"/sp/*.lackey; do
	[ -e "$f" ] || continue
	tid=$(basename "$f" | cut -d. -f2)
	prog=$(basename "$f" | cut -d. -f3)
	label=$(awk -v t="$tid" '($1 "") == t { print $2 }' "$d/labels")
	other=$(awk -v l="$label" '($2 "") == l { print $1 }' "$d/step.labels")
	other=$(ls "$sd/step/"*".$other.$prog.lackey" 2>/dev/null | head -1)
	case " $nostep " in
	*" $prog "*|*" $label "*)
		echo "# $prog thread $label (tid $tid): $(wc -l <"$f") instructions, not compared (the stepper ran no such thread)"
		nskip=$((nskip + 1))
		continue ;;
	esac
	n=$((n + 1))
	if [ -z "$label" ] || [ -z "$other" ]; then
		echo "not ok - $prog thread $tid: no stepper thread for label '$label'"
		continue
	fi
	skips=
	# the main thread of `threads` joins its workers
	[ "$prog" = threads ] && [ -n "$(awk -v t="$tid" '($1 "") == t' "$d/forks")" ] && skips=$join_skips
	# shellcheck disable=SC2086
	if "$cmp" $skips "$f" "$other" >"$d/cmp.out" 2>&1; then
		good=$((good + 1))
		insns=$((insns + $(wc -l <"$f")))
		echo "ok - $prog thread $label (tid $tid) = stepper ($(head -1 "$d/cmp.out")${skips:+, without pthread_join})"
	else
		echo "not ok - $prog thread $label (tid $tid) differs from the stepper"
		sed 's/^/# /' "$d/cmp.out" | head -8
	fi
done
nstep=$(ls "$sd/step" 2>/dev/null | wc -l)
echo "# $good of $n thread images equal the stepper's ($nstep), $insns instructions${nskip:+; $nskip not compared}"
[ "$good" = "$n" ] && [ "$n" -gt 0 ] && { [ "$n" = "$nstep" ] || [ "$nskip" -gt 0 ]; }
