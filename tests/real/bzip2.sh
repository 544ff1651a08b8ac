#!/usr/bin/env bash
# Build bzip2 1.0.8 (Debian's source, its patches applied) with $AECC:
# build/real/bzip2/bzip2 (instrumented) and build/real/bzip2/bzip2.orig.
# Static, against libbz2.a. Cached by hash.
# usage: tests/real/bzip2.sh [-fae-data [-fno-ae-vcache]] (common.sh)
set -euo pipefail
. "$(dirname "$0")/common.sh"

bzip2_recipe() {
	local work=$1 out=$2
	real_source bzip2 1.0.8 "$work"
	cd "$work"
	# Debian's Makefile links bzip2 against libbz2.so; build the objects
	# and the static library with it, link statically ourselves.
	make libbz2.a bzip2.o CC="$AECC${real_flags[*]:+ ${real_flags[*]}}" \
		CFLAGS="-O2 -D_FILE_OFFSET_BITS=64"
	"$AECC" "${real_flags[@]}" -o "$out/bzip2" bzip2.o libbz2.a
	test -x "$out/bzip2" && test -x "$out/bzip2.orig"
}

real_build bzip2 bzip2_recipe "$0"
