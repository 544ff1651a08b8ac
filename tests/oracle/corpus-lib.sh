# Shared by tests/host/oracle-agree.sh, trace-exact.sh, data-exact.sh,
# aetrace-errors.sh and bench/data-bench.sh: corpus arguments, the lackey
# comparison window, the skip ranges of the asynchronous-signal program and
# a capture's register-record counts. Source it; needs $top (the repo root).

# The lackey comparison starts at the first instruction of this function
# (tests/oracle/README.md explains why: before it, musl walks an auxv that
# valgrind builds differently).
ae_lackey_from_sym=__init_tls

# Programs lackey cannot run exactly (README: valgrind emulates x87 long
# double with 64-bit doubles, which musl's printf uses for %f/%e; valgrind's
# heap layout differs and musl's free() branches on addresses). They are
# compared with the stepper only.
ae_lackey_inexact="float varargs_printf malloc_churn hash_table"

# ae_lackey_ok NAME: true when lackey runs NAME exactly.
ae_lackey_ok() {
	case " $ae_lackey_inexact " in *" $1 "*) return 1 ;; esac
	return 0
}

# Programs whose timing-dependent instructions are removed before comparing,
# and those functions (see the program's header comment).
ae_async_progs="signal_async"
# Programs with synchronous signal handlers: a raw (in-process) capture
# has no signal markers, so no same-run comparison under lackey.
ae_signal_progs="signal_sync sigsetjmp_handler handler_same_section sig_frames"
ae_async_syms="on_alarm wait_for_alarm __restore_rt"

# ae_corpus_args NAME: the argv (after argv[0]) listed in tests/corpus/ARGS.
ae_corpus_args() {
	awk -v p="$1" '$1 == p { $1 = ""; sub(/^ /, ""); print }' \
		"$top/tests/corpus/ARGS"
}

# ae_sym_addr PROG SYM: the symbol's address in hex, or nothing.
ae_sym_addr() {
	nm --defined-only "$1" | awk -v s="$2" '$3 == s { print $1; exit }'
}

# ae_sym_range PROG SYM: "lo-hi" (hex, hi exclusive) from nm -S.
ae_sym_range() {
	local a n
	read -r a n < <(nm -S --defined-only "$1" |
		awk -v s="$2" '$4 == s { print $1, $2; exit }')
	[ -n "$a" ] && printf '%x-%x\n' $((0x$a)) $((0x$a + 0x$n))
}

# ae_join_skips PROG: --skip-range options (ae-tracecmp, datacmp.py) for
# pthread_join and the waits under it in PROG: a main thread joining its
# workers waits a schedule-dependent number of times.
ae_join_skips() {
	local s r out=
	for s in __pthread_timedjoin_np __pthread_join __timedwait_cp __timedwait __wait \
		 __syscall_cp __syscall_cp_c __pthread_setcancelstate __pthread_testcancel \
		 __testcancel __tl_sync __wake; do
		r=$(ae_sym_range "$1" "$s")
		[ -n "$r" ] && out="$out --skip-range $r"
	done
	echo "$out"
}

# ae_capture_forks SCHEDLOG CAPTURE: the capture's task creations as
# "parent-tid child-tid" lines in fork order (tests/oracle/fork-labels.py).
ae_capture_forks() {
	"$1" print "$2" | awk '$5 == "FORK" { print $2, $4, $9 }' | sort -n |
		awk '{ split($2, a, "/"); sub("child=", "", $3); print a[2], $3 }'
}

# ae_skip_opts PROG NAME: ae-tracecmp --skip-range options for NAME (empty
# for synchronous programs); fails when a symbol is missing.
ae_skip_opts() {
	local s r
	case " $ae_async_progs " in *" $2 "*) ;; *) return 0 ;; esac
	for s in $ae_async_syms; do
		r=$(ae_sym_range "$1" "$s")
		[ -n "$r" ] || { echo "no symbol $s in $1" >&2; return 1; }
		printf -- '--skip-range %s ' "$r"
	done
}

# ae_count_in_range TRACE LO-HI: how many instructions of TRACE lie in it.
ae_count_in_range() {
	python3 - "$1" "$2" <<'PY'
import sys
lo, hi = (int(x, 16) for x in sys.argv[2].split("-"))
n = 0
with open(sys.argv[1]) as f:
	for line in f:
		if line.startswith("I"):
			a = int(line[1:].split(",")[0], 16)
			n += lo <= a < hi
print(n)
PY
}

# ae_value_recs TRACE PROG: "PLAIN CODED", the capture's plain register
# records and those the value cache coded (`aetrace stats`: its "value
# records" and "value cache" lines; 0 0 when it fails).
ae_value_recs() {
	"$top/bin/aetrace" stats "$1" "$2" 2>/dev/null |
		awk '/^value records/ { p = $3 + $7 + $10 + $13 }
		     /^value cache/ { c = $3 + $8 + $11 + $14 + $17 } END { print p + 0, c + 0 }'
}
