#!/usr/bin/env bash
# regen-compare.sh DIR STEPDIR THREADS_ORIG ["NOSTEP..."] [data]: compare
# DIR/sp/*.lackey (aetrace regen --split of DIR/trace.zst with
# DIR/sched.bin) with the single-stepper's STEPDIR/step/*.lackey (ae-step
# --split, forks in STEPDIR/step.forks; NOSTEP: programs or thread labels
# the stepper did not run the same way, listed but not compared), threads
# matched by creation order (labels 0, 0.0, 0.1, ...: k-th child of its
# parent); the joining main thread of the workload's `threads` program
# (THREADS_ORIG: its twin, for the symbols) without pthread_join's waits.
# data: the images carry data records (aecc -fae-data, ae-step --data),
# every address compared (tests/oracle/datacmp.py).
# Prints one TAP-style line per thread image ("ok - ..." / "not ok - ...")
# and exits 0 when every image equals the stepper's and each of the
# stepper's but NOSTEP's has its equal here. Used by tests/host/regen-vm.sh and vm/capture-demo.sh.
set -u
d=$1 sd=$2 torig=$3 nostep=${4:-}
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/oracle/corpus-lib.sh"
cmp=("$top/build/tests/ae-tracecmp")
[ "${5:-}" = data ] && cmp=(python3 "$top/tests/oracle/datacmp.py")
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
	# (PROG[.K].lackey: a task's K-th image of a program it ran before)
	other=$(ls "$sd/step/"*".$other.$(basename "$f" | cut -d. -f3-)" 2>/dev/null | head -1)
	case " $nostep " in
	*" $prog "*|*" ${label:-?} "*)
		echo "# $prog thread $label (tid $tid): $(grep -c '^I' "$f") instructions, not compared (the stepper ran no such thread)"
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
	if "${cmp[@]}" $skips "$f" "$other" >"$d/cmp.out" 2>&1; then
		good=$((good + 1))
		insns=$((insns + $(grep -c '^I' "$f")))
		echo "ok - $prog thread $label (tid $tid) = stepper ($(head -1 "$d/cmp.out")${skips:+, without pthread_join})"
	else
		echo "not ok - $prog thread $label (tid $tid) differs from the stepper"
		sed 's/^/# /' "$d/cmp.out" | head -8
	fi
done
# the stepper's images: each compared once, or NOSTEP's (its program or
# thread label); one that nothing here equals is missing
nstep=0 sskip=0
for f in "$sd"/step/*.lackey; do
	[ -e "$f" ] || continue
	nstep=$((nstep + 1))
	label=$(awk -v t="$(basename "$f" | cut -d. -f2)" '($1 "") == t { print $2 }' "$d/step.labels")
	case " $nostep " in
	*" $(basename "$f" | cut -d. -f3) "*|*" ${label:-?} "*) sskip=$((sskip + 1)) ;;
	esac
done
echo "# $good of $n thread images equal the stepper's ($nstep, $sskip of them not compared), $insns instructions${nskip:+; $nskip not compared}"
[ "$good" = "$n" ] && [ "$n" -gt 0 ] && [ $((n + sskip)) = "$nstep" ]
