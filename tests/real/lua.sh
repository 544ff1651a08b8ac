#!/usr/bin/env bash
# Build Lua 5.4.4 (Debian's lua5.4 source, its patches applied) with $AECC:
# build/real/lua/lua (instrumented) and build/real/lua/lua.orig (twin).
# Static, POSIX target (no readline, no dlopen). Cached by hash.
# usage: tests/real/lua.sh [-fae-data [-fno-ae-vcache]] (common.sh)
set -euo pipefail
. "$(dirname "$0")/common.sh"

# Lua seeds its string hash with time(NULL), the address of a heap object,
# a stack address and the address of lua_newstate (lstate.c,
# luai_makeseed). The seed decides the order of string keys in tables, so
# traversals (pairs, next, the GC) would take different paths in repeated
# runs and in lua vs lua.orig, whose code addresses differ. A constant seed
# makes both binaries and all runs execute the same instructions.
# (math.random's default seed also uses time(NULL), but only as a value: it
# does not change control flow.)
lua_cflags=(-O2 -std=gnu99 -DLUA_COMPAT_5_3 -DLUA_USE_POSIX "-Dluai_makeseed(L)=0u")

lua_recipe() {
	local work=$1 out=$2 f objs=()
	real_source lua5.4 5.4.4 "$work"
	cd "$work/src"
	# Debian's luaconf.h includes this header, written by debian/rules.
	echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' > lua5.4-deb-multiarch.h
	# Debian's Makefile builds a libtool shared library; compile the
	# library directly instead, into the static liblua.a.
	for f in l*.c; do
		case $f in lua.c|luac.c) continue ;; esac
		echo "CC $f"
		"$AECC" "${real_flags[@]}" "${lua_cflags[@]}" -c "$f" -o "${f%.c}.o"
		objs+=("${f%.c}.o")
	done
	rm -f liblua.a
	ar rcs liblua.a "${objs[@]}"
	"$AECC" "${real_flags[@]}" "${lua_cflags[@]}" -c lua.c -o lua.o
	"$AECC" "${real_flags[@]}" -o "$out/lua" lua.o liblua.a -lm
	test -x "$out/lua" && test -x "$out/lua.orig"
}

real_build lua lua_recipe "$0"
