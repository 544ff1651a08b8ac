#!/usr/bin/env bash
# Lua and bzip2 built with aecc -fae-data (issue 12), for data-exact and
# the benches: the Debian sources tests/real/ fetches, compiled with
# aecc -fae-data (and FLAG, if given, e.g. -fno-ae-vcache) and linked
# with the data-traced musl. Cached in build/real-data/NAME[-novc]-HASH
# (hash of the compiler, its runtimes, musl-data and this script). Prints
# the program's path (its twin is beside it, PATH.orig); the build's log
# is PATH's directory.log.
# usage: tests/real/data-build.sh lua|bzip2 [-fno-ae-vcache]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
name=${1:?usage: tests/real/data-build.sh lua|bzip2 [-fno-ae-vcache]}
vc=${2:-}
case $name in
lua|bzip2) ;;
*) echo "data-build: no such workload: $name" >&2; exit 2 ;;
esac
aecc=$top/bin/aecc
[ -x "$aecc" ] || { echo "data-build: $aecc not built (make all)" >&2; exit 1; }
[ -e build/musl-data/lib/libc.a ] || make --no-print-directory musl-data >&2
tests/real/"$name".sh >&2

key=$(cat "$aecc" build/instrument/libae.a build/instrument/libaert.a \
	build/musl-data/lib/libc.a tests/real/data-build.sh 2>/dev/null | sha256sum | cut -c1-16)
out=$top/build/real-data/$name${vc:+-novc}-$key
mkdir -p "${out%/*}"
# (one build at a time: data-exact and a bench may ask at once)
exec 9>"$out.lock"
flock 9
cache=${AE_CACHE:-$HOME/.cache/aetrace}
F=(-O2 -std=gnu99 -DLUA_COMPAT_5_3 -DLUA_USE_POSIX "-Dluai_makeseed(L)=0u")
if [ -x "$out/p" ]; then echo "$out/p"; exit 0; fi
case $name in
lua) dsc=$(ls "$cache"/src/lua5.4_5.4.4*.dsc | tail -n 1) ;;
bzip2) dsc=$(ls "$cache"/src/bzip2_1.0.8*.dsc | tail -n 1) ;;
esac
rm -rf "$out" && mkdir -p "$out"
objs=()
if ! (dpkg-source --no-check --no-copy -x "$dsc" "$out/src" &&
      if [ "$name" = lua ]; then
	cd "$out/src/src" &&
	echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' > lua5.4-deb-multiarch.h &&
	for f in l*.c; do
		case $f in lua.c|luac.c) continue ;; esac
		"$aecc" -fae-data $vc "${F[@]}" -c "$f" -o "${f%.c}.o" || exit 1
		objs+=("${f%.c}.o")
	done &&
	"$aecc" -fae-data $vc "${F[@]}" -c lua.c -o lua.o &&
	"$aecc" -fae-data -o "$out/p" lua.o "${objs[@]}" -lm
      else
	cd "$out/src" && printf '#!/bin/sh\nexec %s -fae-data %s "$@"\n' "$aecc" "$vc" >cc-data &&
	chmod +x cc-data &&
	make libbz2.a bzip2.o CC="$out/src/cc-data" CFLAGS="-O2 -D_FILE_OFFSET_BITS=64" &&
	"$aecc" -fae-data -o "$out/p" bzip2.o libbz2.a
      fi) >"$out.log" 2>&1; then
	echo "data-build: $name -fae-data $vc build failed (log: $out.log)" >&2
	rm -f "$out/p"
	exit 1
fi
rm -rf "$out/src"
echo "$out/p"
