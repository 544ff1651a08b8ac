#!/usr/bin/env bash
# Build SQLite 3.40.1 (Debian's sqlite3 source, its patches applied) with
# $AECC: build/real/sqlite3/sqlite3 (instrumented) and
# build/real/sqlite3/sqlite3.orig (twin): the shell and the amalgamation
# (about 250,000 lines of C in one file, made with tclsh), static, no
# threads, no extension loading, no readline. Cached by hash.
# usage: tests/real/sqlite3.sh [-fae-data [-fno-ae-vcache]] (common.sh)
set -euo pipefail
. "$(dirname "$0")/common.sh"

sqlite3_cflags=(-O2 -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION)

sqlite3_recipe() {
	local work=$1 out=$2
	real_source sqlite3 3.40.1 "$work"
	cd "$work"
	# the amalgamation's generators (lemon, mkkeywordhash) are built with
	# the host's compiler: only the shell is built with $AECC
	./configure --disable-tcl --disable-readline --disable-threadsafe \
		--disable-load-extension
	make sqlite3.c shell.c
	"$AECC" "${real_flags[@]}" "${sqlite3_cflags[@]}" -o "$out/sqlite3" shell.c sqlite3.c
	test -x "$out/sqlite3" && test -x "$out/sqlite3.orig"
}

real_build sqlite3 sqlite3_recipe "$0"
