#!/usr/bin/env bash
# Stand-in for bin/aecc while it does not exist: the same command line
# (gcc flags; -c compiles, otherwise links), the same libc (build/musl) and
# the same outputs (`-o prog` also writes the twin `prog.orig`), but no
# instrumentation: prog.orig is a copy of prog. Lets the real-program
# recipes be built and cached before the instrumenter is ready. Only with
# an uninstrumented musl (make musl AE_MUSL_CC='gcc -ffixed-r15'): the
# instrumented libc.a needs aecc's runtime to set r15 up.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
musl=${AE_MUSL:-$top/build/musl}
[ -e "$musl/lib/libc.a" ] || { echo "cc-standin: no musl in '$musl' (make musl)" >&2; exit 1; }
base=(-ffixed-r15 -fno-asynchronous-unwind-tables -fno-unwind-tables)
link=1 out=a.out prev=
for a in "$@"; do
	case "$a" in -c|-S|-E) link=0 ;; esac
	[ "$prev" = -o ] && out=$a
	prev=$a
done
inc=(-nostdinc -isystem "$musl/include" -isystem "$(gcc -print-file-name=include)")
if [ $link = 0 ]; then
	exec gcc "${base[@]}" "${inc[@]}" "$@"
fi
# Sources given on a link line are compiled as well, like gcc does.
gcc "${base[@]}" "${inc[@]}" -static -no-pie -nostdlib -L"$musl/lib" \
	"$musl/lib/crt1.o" "$musl/lib/crti.o" "$@" \
	-Wl,--start-group -lc "$(gcc -print-libgcc-file-name)" -Wl,--end-group \
	"$musl/lib/crtn.o"
cp "$out" "$out.orig"
