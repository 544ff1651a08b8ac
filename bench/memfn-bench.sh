#!/usr/bin/env bash
# What expanding library routines saves (issue 12 item 3): the same
# workloads as bench/data-bench.sh (Lua queens.lua 7 1, bzip2 -c of 64 KiB)
# and two corpus programs, built with -fae-data twice: as usual (memcpy,
# memmove, memset, strlen, stpcpy, memchr and the compares traced by
# their arguments and expanded by aetrace) and with -fno-ae-memfn against a musl built the same
# way (build/musl-data-plain), where those routines are instrumented like
# any code. Raw trace bytes (DATA payload) per regenerated L+S+M record,
# the expanded calls (`aetrace stats`), and a check that both builds
# regenerate the same number of references and instructions, with and
# without data records (`aetrace stats` has no data sink). Byte counts
# only: deterministic, one run each.
# Writes the section "Expanded library routines" of bench/RESULTS.md.
# usage: bench/memfn-bench.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
results=$top/bench/RESULTS.md
aecc=$top/bin/aecc aerun=$top/bin/aerun aetrace=$top/bin/aetrace
mutate=$top/build/tests/trace_mutate
cache=${AE_CACHE:-$HOME/.cache/aetrace}
for t in "$aecc" "$aerun" "$aetrace" "$mutate"; do
	[ -x "$t" ] || { echo "memfn-bench: $t not built (make all)" >&2; exit 1; }
done
[ -e build/musl-data/lib/libc.a ] || make --no-print-directory musl-data
# the data-traced musl without expanded routines (its own cache entry: the
# compiler command is part of the key)
AE_CACHE=$cache MUSL_CC="$aecc -fae-data -fno-ae-memfn" MUSL_LINK=$top/build/musl-data-plain \
	MUSL_LOG=$top/build/musl-data-plain-build.log "$top/instrument/musl/build-musl.sh"
tmp=$(mktemp -d "$top/build/memfn-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
clean_env="env -i PATH=/usr/bin:/bin LC_ALL=C"
tests/real/gen-input.sh 65536 > "$tmp/in"

# build NAME VARIANT: the program (expanded: the default; plain:
# -fno-ae-memfn with build/musl-data-plain) into $tmp/VARIANT/NAME/p
build() {
	local name=$1 v=$2 out=$tmp/$2/$1 f objs=() dsc flags=(-fae-data)
	local F=(-O2 -std=gnu99 -DLUA_COMPAT_5_3 -DLUA_USE_POSIX "-Dluai_makeseed(L)=0u")
	[ "$v" = plain ] && flags+=(-fno-ae-memfn)
	mkdir -p "$out"
	export AECC_MUSL_DATA=$top/build/musl-data
	[ "$v" = plain ] && export AECC_MUSL_DATA=$top/build/musl-data-plain
	case $name in
	lua|bzip2)
		dsc=$(ls "$cache"/src/"$( [ "$name" = lua ] && echo lua5.4_5.4.4 || echo bzip2_1.0.8 )"*.dsc | tail -n 1)
		dpkg-source --no-check --no-copy -x "$dsc" "$out/src" >/dev/null ;;
	esac
	case $name in
	lua)
		(cd "$out/src/src" &&
		 echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' > lua5.4-deb-multiarch.h &&
		 for f in l*.c; do
			case $f in luac.c) continue ;; esac
			"$aecc" "${flags[@]}" "${F[@]}" -c "$f" -o "${f%.c}.o" || exit 1
		 done &&
		 "$aecc" "${flags[@]}" -o "$out/p" l*.o -lm) ;;
	bzip2)
		(cd "$out/src" && printf '#!/bin/sh\nexec %s %s "$@"\n' "$aecc" "${flags[*]}" >cc-data &&
		 chmod +x cc-data &&
		 make libbz2.a bzip2.o CC="$out/src/cc-data" CFLAGS="-O2 -D_FILE_OFFSET_BITS=64" &&
		 "$aecc" "${flags[@]}" -o "$out/p" bzip2.o libbz2.a) ;;
	*)
		"$aecc" "${flags[@]}" -O2 -o "$out/p" "$top/tests/corpus/$name.c" -lm ;;
	esac >"$out.log" 2>&1 || { echo "memfn-bench: building $name ($v) failed (log: $out.log)" >&2; exit 1; }
	unset AECC_MUSL_DATA
	rm -rf "$out/src"
}

# measure NAME VARIANT STDIN ARGS...: "raw refs insns expanded"
measure() {
	local name=$1 v=$2 in=$3 d=$tmp/$2/$1 r x
	shift 3
	cp "$top/tests/real/queens.lua" "$d/"
	# shellcheck disable=SC2086
	(cd "$d" && $clean_env "$aerun" -o "$d/t.zst" -- ./p "$@" <"$in" >/dev/null 2>&1)
	r=$("$aetrace" regen --format=lackey "$d/t.zst" "$d/p" |
		awk '/^I/ { i++ } /^ [LSM]/ { m++ } END { printf "%d %d", m, i }')
	# stats regenerates without data records (no data sink): the same
	# instructions, the expanded routines' included
	x=$("$aetrace" stats "$d/t.zst" "$d/p" |
		awk '/^expanded calls/ { x = $3 } /^instructions/ { i = $2 } END { print x + 0, i + 0 }')
	echo "$("$mutate" --data-len "$d/t.zst") $r $x"
}

rows=$tmp/rows
: >"$rows"
one() {
	local label=$1 name=$2 in=$3 e p
	shift 3
	echo "  RUN     $label"
	build "$name" expanded
	build "$name" plain
	e=$(measure "$name" expanded "$in" "$@")
	p=$(measure "$name" plain "$in" "$@")
	python3 - "$label" $e $p >>"$rows" <<'EOF'
import sys
label = sys.argv[1]
er, em, ei, ex, esi, pr, pm, pi, px, psi = map(int, sys.argv[2:12])
same = "yes" if (em, ei) == (pm, pi) and ei == esi == psi else \
    f"NO (refs/insns {em}/{ei} vs {pm}/{pi}; stats insns {esi}, {psi})"
print(f"| {label} | {em} | {pr / pm:.3f} | {er / em:.3f} | {pr - er} ({100 * (pr - er) / pr:.1f}%) | {ex} | {same} |")
EOF
}

one lua-queens7 lua /dev/null queens.lua 7 1
one bzip2-64KiB bzip2 "$tmp/in" -c
one corpus/strings strings /dev/null
one corpus/memfns memfns /dev/null

{
	echo "## Expanded library routines"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), Linux $(uname -r); command: \`bench/memfn-bench.sh\`"
	echo "(byte counts of one run each, deterministic). Raw trace bytes (DATA payload of the"
	echo "aerun capture) per regenerated L+S+M record, with the routines of issue 12 item 3"
	echo "(memcpy, memmove, memset, strlen, stpcpy, memchr, memcmp, strcmp, strncmp) traced by their arguments and"
	echo "expanded by aetrace, and without (\`aecc -fae-data -fno-ae-memfn\`, musl built the"
	echo "same way). \"same\": both builds regenerate as many references and instructions,"
	echo "and \`aetrace stats\` (no data records) as many instructions as \`aetrace regen\`."
	echo
	echo "| workload | references | raw B/ref, routines instrumented | raw B/ref, expanded | bytes saved | expanded calls | same |"
	echo "|---|---|---|---|---|---|---|"
	cat "$rows"
	echo
} > "$tmp/section"
cat "$tmp/section"
"$top/bench/replace-section.sh" "$results" "$tmp/section"
