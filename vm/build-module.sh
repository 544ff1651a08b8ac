#!/usr/bin/env bash
# Build trbuf.ko against the cached guest kernel tree (vm/kernel-path --kdir),
# when trbuf-driver/ has a Kbuild file.  Prints the module path, or nothing
# (status 0) when there is no driver source yet.
#
# usage: vm/build-module.sh
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
src=$top/trbuf-driver
[ -f "$src/Kbuild" ] || exit 0

kdir=$("$top/vm/kernel-path" --build --kdir)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! make -C "$kdir" M="$src" -j"$(nproc)" modules >"$log" 2>&1; then
	cat "$log" >&2
	echo "vm/build-module.sh: building $src against $kdir failed" >&2
	exit 1
fi
echo "$src/trbuf.ko"
