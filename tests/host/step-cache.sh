# Shared by the host suites that single-step programs (sourced, not a
# suite): ae_step_cached runs build/tests/ae-step once per (stepper, program
# bytes without symbols, program path, argv, environment, input files,
# signals inherited ignored or blocked) and keeps its trace and
# stdout+status under $AE_CACHE/step-cache/KEY/ (outside the clone, like
# the other expensive builds: content-keyed, so clones share it), so the next `make check` reuses them (the stepper runs ~30k instructions/s here): run
# it as ./PROG from a directory of its own to keep the path stable. The
# key hashes the stepper binary too: a changed oracle never reuses an old
# answer. AE_STEP_CACHE=0 turns the cache off. Needs $top.

ae_step_cache_dir=${AE_STEP_CACHE_DIR:-${AE_CACHE:-$HOME/.cache/aetrace}/step-cache}
ae_step_clean_env="PATH=/usr/bin:/bin LC_ALL=C"
# Entries kept (the newest used): about two full sets of the host suites'.
ae_step_cache_max=120
# A command prefix: its command as pid 1 of a pid namespace of its own,
# with a /proc of that namespace (aerun and ae-step read /proc/PID). Pids
# then repeat from run to run: a program that prints one (dash formats its
# PPID at start-up) runs the same instructions in both. Needs root (or
# unprivileged user namespaces): ae_pidns_works says.
ae_pidns=(unshare --pid --fork --mount-proc)
ae_pidns_works() { "${ae_pidns[@]}" true 2>/dev/null; }

# ae_step_prog_hash PROG: the hash of PROG without its symbol table and
# debug info, which name the clone's source paths and change nothing that
# runs: clones at different paths then share cache entries.
ae_step_prog_hash() {
	local t
	t=$(mktemp) || return 1
	if strip -s -o "$t" "$1" 2>/dev/null; then
		sha256sum <"$t"
	else
		sha256sum <"$1"
	fi | cut -d' ' -f1
	rm -f "$t"
}

# ae_step_cached TRACE OUT [--clean-env] [--pidns] [--data] [--split] [--key-file F]... -- PROG ARGS...:
# like `ae-step -o TRACE -- PROG ARGS... >OUT 2>OUT.err </dev/null` then
# "status N" appended to OUT. --clean-env runs it under
# `env -i $ae_step_clean_env`, else in the current environment, which is
# in the key (the stack the program sees depends on it). --pidns runs it
# as pid 1 of a new pid namespace with its own /proc (`unshare --pid
# --fork --mount-proc`; in the key), so the program's pids are the same in
# every run: run the traced side the same way (ae_pidns). --data asks the
# stepper for data records too (in the key). --split: TRACE is a directory
# that gets one trace per task (ae-step --split), and TRACE.forks the
# task creations (--forks); every program the run execs must be a
# --key-file. The directory is
# not: --key-file names each file PROG reads, hashed into the key.
# Returns 0, or 1 when the stepper wrote no trace.
ae_step_cached() {
	local trace=$1 out=$2 keyfiles=() envcmd=() nscmd=() sflags=() split=0 key c tmpd rc ok
	shift 2
	while [ "$1" != -- ]; do
		case "$1" in
		--clean-env) envcmd=(env -i $ae_step_clean_env); shift ;;
		--pidns) nscmd=("${ae_pidns[@]}"); shift ;;
		--data) sflags+=(--data); shift ;;
		--split) split=1; shift ;;
		--key-file) keyfiles+=("$2"); shift 2 ;;
		*) echo "ae_step_cached: bad option $1" >&2; return 1 ;;
		esac
	done
	shift
	key=$({ sha256sum "$top/build/tests/ae-step" ${keyfiles[@]+"${keyfiles[@]}"} 2>/dev/null |
		cut -d' ' -f1
		ae_step_prog_hash "$1"
		printf '%s\0' ${sflags[@]+"${sflags[@]}"} "split=$split" ${nscmd[@]+"${nscmd[@]}"} "$@"
		if [ ${#envcmd[@]} -gt 0 ]; then echo "$ae_step_clean_env"; else env -0 | sort -z; fi
		# (the signals it inherits ignored or blocked: dash's setsignal
		# keeps an ignored SIGINT ignored, another path)
		grep -E '^Sig(Ign|Blk):' /proc/self/status
	      } | sha256sum | cut -c1-32)
	c=$ae_step_cache_dir/$key
	if [ "${AE_STEP_CACHE:-1}" != 0 ] && [ -s "$c/trace" ] && [ -f "$c/out" ]; then
		touch "$c"
		if [ $split = 1 ]; then
			mkdir -p "$trace" && tar -xf "$c/trace" -C "$trace" && cp "$c/forks" "$trace.forks"
		else
			cp "$c/trace" "$trace"
		fi && cp "$c/out" "$out" && : >"$out.err" && return 0
	fi
	if [ $split = 1 ]; then
		mkdir -p "$trace"
		sflags+=(--split "$trace" --forks "$trace.forks")
	else
		sflags+=(-o "$trace")
	fi
	${nscmd[@]+"${nscmd[@]}"} ${envcmd[@]+"${envcmd[@]}"} "$top/build/tests/ae-step" "${sflags[@]}" -- "$@" \
		>"$out" 2>"$out.err" </dev/null
	rc=$?
	echo "status $rc" >>"$out"
	if [ $split = 1 ]; then
		[ -n "$(ls -A "$trace")" ] || return 1
	else
		[ -s "$trace" ] || return 1
	fi
	# Not kept: the stepper's own failures (125) and kills.
	[ "${AE_STEP_CACHE:-1}" = 0 ] || [ $rc -eq 125 ] || [ $rc -ge 128 ] && return 0
	mkdir -p "$ae_step_cache_dir" || return 0
	# Whole entries only: build aside, then rename.
	tmpd=$(mktemp -d "$ae_step_cache_dir/.new.XXXXXX") || return 0
	if [ $split = 1 ]; then
		tar -cf "$tmpd/trace" -C "$trace" . && cp "$trace.forks" "$tmpd/forks"
	else
		cp "$trace" "$tmpd/trace"
	fi
	ok=$?
	if [ $ok = 0 ] && cp "$out" "$tmpd/out"; then
		mv -T "$tmpd" "$c" 2>/dev/null || rm -rf "$tmpd"
	else
		rm -rf "$tmpd"
	fi
	# Bounded: the least recently used entries go.
	(cd "$ae_step_cache_dir" && ls -1t | grep -E '^[0-9a-f]{32}$' |
		tail -n +$((${ae_step_cache_max:-120} + 1)) | xargs -r rm -rf --)
	return 0
}
