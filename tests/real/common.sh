# Shared by the real-program recipes (lua.sh, bzip2.sh, sqlite3.sh): the compiler, the
# Debian source download and the hash-keyed cache. Source this file.
# shellcheck shell=bash
real_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$real_dir/../.." && pwd)
cache=${AE_CACHE:-$HOME/.cache/aetrace}
# AECC: the compiler driver, bin/aecc unless set (AECC=tests/real/cc-standin.sh
# builds with plain musl-gcc); one that is missing is an error, never a
# silent switch to another compiler.
AECC=${AECC:-$top/bin/aecc}
if [ ! -x "$AECC" ]; then
	echo "tests/real: compiler $AECC is not built (make all), or set AECC" >&2
	exit 1
fi
export AECC

# The recipe script's arguments: aecc flags for every compile and link.
# -fae-data (data addresses too, linked with build/musl-data) builds
# build/real/NAME-data, and with -fno-ae-vcache (its own code's register
# records written whole) build/real/NAME-data-novc, with
# -fae-vc-profile=FILE (the value cache's tests ordered by a run's
# profile) build/real/NAME-data-prof, keyed by the profile's content.
real_flags=()
real_suffix=
real_prof=
for f in "$@"; do
	case $f in
	-fae-data|-fno-ae-vcache) real_flags+=("$f") ;;
	-fae-vc-profile=?*)
		real_prof=$(readlink -f "${f#*=}")
		[ -r "$real_prof" ] || { echo "tests/real: cannot read the profile ${f#*=}" >&2; exit 2; }
		real_flags+=("-fae-vc-profile=$real_prof") ;;
	*) echo "tests/real: unknown flag $f (-fae-data, -fno-ae-vcache, -fae-vc-profile=FILE)" >&2; exit 2 ;;
	esac
done
case " ${real_flags[*]} " in
*" -fae-data "*) real_suffix=-data ;;
*" -fno-ae-vcache "*) echo "tests/real: -fno-ae-vcache needs -fae-data" >&2; exit 2 ;;
esac
case " ${real_flags[*]} " in *" -fno-ae-vcache "*) real_suffix+=-novc ;; esac
[ -z "$real_prof" ] || real_suffix+=-prof
if [ -n "$real_suffix" ] && [ ! -e "$top/build/musl-data/lib/libc.a" ]; then
	make -C "$top" --no-print-directory musl-data >&2
fi

# real_hash FILE...: hash of the recipe files given, the compiler (its
# content and that of $AECC_DEPS, default the runtime libae.a and
# libaert.a), the flags and the musl build in use.
real_hash() {
	{
		cat "$@" "$real_dir/common.sh"
		# the profile by its content, not by its path
		echo "flags=${real_flags[*]/#-fae-vc-profile=*/-fae-vc-profile}"
		if [ -n "$real_prof" ]; then sha256sum < "$real_prof"; fi
		echo "aecc=${AECC##*/}"	# by content below, not by the clone's path
		sha256sum < "$(readlink -f "$AECC")"
		# aecc links the tracing runtime into every program.
		for f in ${AECC_DEPS-$top/build/instrument/libae.a \
			$top/build/instrument/libaert.a}; do
			if [ -e "$f" ]; then sha256sum < "$f"; fi
		done
		readlink -f "$top/build/musl${real_suffix:+-data}"
	} | sha256sum | cut -c1-16
}

# real_source PKG VERSION DEST: unpack Debian's source package PKG (version
# prefix VERSION, downloaded once into $cache/src) with its patches applied
# into DEST.
real_source() {
	local pkg=$1 ver=$2 dest=$3 dsc
	mkdir -p "$cache/src"
	dsc=$(ls "$cache"/src/"${pkg}_$ver"*.dsc 2>/dev/null | tail -n 1 || true)
	if [ -z "$dsc" ]; then
		(cd "$cache/src" && apt-get source --download-only "$pkg") || return 1
		dsc=$(ls "$cache"/src/"${pkg}_$ver"*.dsc 2>/dev/null | tail -n 1 || true)
		[ -n "$dsc" ] || { echo "no ${pkg}_$ver*.dsc in $cache/src" >&2; return 1; }
	fi
	# --no-copy: leave no copy of the upstream tarball next to DEST.
	dpkg-source --no-check --no-copy -x "$dsc" "$dest"
}

# real_build NAME RECIPE-FUNCTION FILE...: run the recipe function (in the
# unpacked source tree, with $out the result directory) unless the result
# for this hash is cached; point build/real/NAME (with the flags' suffix)
# at it. Quiet, logged.
real_build() {
	local name=$1$real_suffix fn=$2 hash out log work
	shift 2
	hash=$(real_hash "$@")
	out=$cache/$name-$hash
	mkdir -p "$top/build/real"
	log=$top/build/real/$name-build.log
	exec 8>"$cache/$name.lock"
	flock 8
	if [ ! -e "$out/.stamp" ]; then
		printf '  %-7s %s\n' REAL "$name with $AECC${real_flags[*]:+ ${real_flags[*]}} -> $out (log: $log)"
		work=$out.tmp
		rm -rf "$work" "$out"
		mkdir -p "$out"
		# Not in an if/|| context, where bash would ignore set -e.
		set +e
		( set -e; "$fn" "$work" "$out" ) > "$log" 2>&1
		local rc=$?
		set -e
		if [ $rc -ne 0 ]; then
			echo "$name: build failed; last lines of $log:" >&2
			tail -n 30 "$log" >&2
			return 1
		fi
		rm -rf "$work"
		touch "$out/.stamp"
	fi
	ln -sfn "$out" "$top/build/real/$name"
	exec 8>&-
}
