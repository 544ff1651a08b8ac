#!/usr/bin/env bash
# Build the tracing musl libc (1.2.3, Debian's source package) and cache it.
#
# Everything in a traced task must leave r15 alone (docs/ARCHITECTURE.md,
# invariant 1), so on top of Debian's patches we
#   - stop setjmp/longjmp from saving/restoring r15 (patches/0001),
#   - turn off the vDSO, so clock_gettime/time/sched_getcpu make real
#     system calls (patches/0002),
#   - copy the TLS image without memcpy (a program's own memcpy would run
#     before TLS exists) and keep room in .bss for the value cache's TLS
#     (patches/0003); with -fae-data, what runs before TLS exists gets no
#     value cache (musl's own list of it, NOSSP_OBJS),
#   - delete the x86_64 assembly that has a generic C fallback (string and
#     math), so those functions are compiled (and instrumented) by $MUSL_CC,
#   - check with objdump that no instruction in the result writes r15 except
#     the instrumentation commit `lea N(%r15),%r15` (check-r15.sh).
#
# The result goes to $AE_CACHE/musl-<hash>, where the hash covers this
# recipe, the patches, the compiler command and the content of the compiler
# binary (plus $MUSL_CC_DEPS, e.g. the instrumenter), so a changed aecc
# rebuilds musl. $MUSL_LINK (build/musl) is made a symlink to it.
#
# environment: MUSL_CC (compiler command, default "gcc -ffixed-r15"),
#   MUSL_CC_DEPS (extra files whose content is hashed), AE_CACHE,
#   MUSL_LINK (symlink to create), MUSL_LOG (build log file), V=1 (verbose).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cc=${MUSL_CC:-gcc -ffixed-r15}
cc_deps=${MUSL_CC_DEPS:-}
cache=${AE_CACHE:-$HOME/.cache/aetrace}
link=${MUSL_LINK:-$top/build/musl}
log=${MUSL_LOG:-$top/build/musl-build.log}
cflags="-O2 -ffixed-r15"
version=1.2.3
# Files and directories with a generic C implementation; the C version is
# compiled with -ffixed-r15 and instrumented, the assembly would be neither.
remove_asm="src/string/x86_64 src/math/x86_64/*.s"

# The content hash of every input of the build.
cc_bin=$(command -v "${cc%% *}") || { echo "build-musl: compiler '${cc%% *}' not found" >&2; exit 1; }
# The compiler by content and arguments, not by path: every clone of the
# tree (its own bin/aecc, same bytes) shares the entry.
cc_args=
case $cc in *" "*) cc_args=${cc#* } ;; esac
hash=$( {
	echo "version=$version cc=${cc_bin##*/} $cc_args cflags=$cflags remove=$remove_asm"
	cat "$here/build-musl.sh" "$here/check-r15.sh"
	cat "$here"/patches/*.patch
	sha256sum "$(readlink -f "$cc_bin")" | cut -d' ' -f1
	for f in $cc_deps; do sha256sum < "$f"; done
} | sha256sum | cut -c1-16)
dest=$cache/musl-$hash

relink() {
	mkdir -p "$(dirname "$link")"
	if [ "$(readlink "$link" 2>/dev/null)" != "$dest" ]; then
		ln -sfn "$dest" "$link"
		# Dependents compare against the stamp: a switch to another cached
		# build must look new to make.
		touch "$dest/.stamp"
	fi
}

mkdir -p "$cache/src" "$(dirname "$log")"
exec 9>"$cache/musl.lock"
flock 9
if [ -e "$dest/.stamp" ]; then
	relink
	exit 0
fi

printf '  %-7s %s\n' MUSL "musl $version with '$cc' -> $dest (log: $log)"
: > "$log"
fail() {
	echo "build-musl: $1 failed; last lines of $log:" >&2
	tail -n 30 "$log" >&2
	exit 1
}
run() {
	if [ "${V:-}" = 1 ]; then
		echo "$*"
		"$@" 2>&1 | tee -a "$log"
		return "${PIPESTATUS[0]}"
	fi
	"$@" >> "$log" 2>&1
}

# Source: Debian's package, downloaded into the cache by `make deps`.
dsc=$(ls "$cache"/src/musl_$version-*.dsc 2>/dev/null | tail -n 1 || true)
if [ -z "$dsc" ]; then
	echo "build-musl: no musl_$version-*.dsc in $cache/src: run \`make deps\`" >&2
	exit 1
fi

work=$dest.tmp
rm -rf "$work" "$dest"
mkdir -p "$work"
# dpkg-source applies Debian's quilt series exactly as a package build does.
run dpkg-source --no-check -x "$dsc" "$work/src" || fail "dpkg-source -x $dsc"
cd "$work/src"
for p in "$here"/patches/*.patch; do
	echo "applying $p" >> "$log"
	run patch -p1 --no-backup-if-mismatch -i "$p" || fail "patch $(basename "$p")"
done
# shellcheck disable=SC2086 # the globs are meant to expand here
run rm -rf $remove_asm || fail "removing assembly"

start=$(date +%s)
# --target and AR/RANLIB: configure asks the compiler for -dumpmachine,
# which a driver like aecc need not answer.
run ./configure --prefix="$dest" --disable-shared --disable-wrapper \
	--target=x86_64-linux-musl AR=ar RANLIB=ranlib \
	CC="$cc" CFLAGS="$cflags" || fail "configure"
# The value cache (-fae-data) lives in TLS, like the stack protector's
# canary: the objects musl builds without the protector because they run
# before the thread pointer exists (its NOSSP_OBJS: crt1, the start-up,
# __init_tls, memset, memcpy) get no value cache either.
case " $cc " in
*" -fae-data "*) echo 'CFLAGS_NOSSP += -fno-ae-vcache' >> config.mak ;;
esac
run make -j"$(nproc)" || fail "make"
run make install || fail "make install"
lib=$dest/lib
run "$here/check-r15.sh" "$lib/libc.a" "$lib/crt1.o" "$lib/crti.o" "$lib/crtn.o" ||
	fail "the r15 check (objdump)"
cd /
rm -rf "$work"
echo "musl built in $(( $(date +%s) - start )) s" >> "$log"
touch "$dest/.stamp"
relink
