#!/usr/bin/env bash
# Lua, bzip2, sqlite3 and dash built with aecc -fae-data (issue 12), for
# data-exact and the benches: the recipes of lua.sh, bzip2.sh, sqlite3.sh and dash.sh with -fae-data (and
# -fno-ae-vcache or -fae-vc-profile=FILE, if given), cached like them.
# Prints the program's path (its twin is beside it, PATH.orig).
# usage: tests/real/data-build.sh lua|bzip2|sqlite3|dash [-fno-ae-vcache|-fae-vc-profile=FILE]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
name=${1:?usage: tests/real/data-build.sh lua|bzip2|sqlite3|dash [-fno-ae-vcache|-fae-vc-profile=FILE]}
vc=${2:-}
case $name in
lua|bzip2|sqlite3|dash) ;;
*) echo "data-build: no such workload: $name" >&2; exit 2 ;;
esac
case $vc in
'') sfx= ;;
-fno-ae-vcache) sfx=-novc ;;
-fae-vc-profile=?*) sfx=-prof ;;
*) echo "data-build: unknown flag $vc (-fno-ae-vcache, -fae-vc-profile=FILE)" >&2; exit 2 ;;
esac
"$top/tests/real/$name.sh" -fae-data ${vc:+"$vc"} >&2
echo "$top/build/real/$name-data$sfx/$name"
