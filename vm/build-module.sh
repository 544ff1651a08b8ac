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

key=$("$top/vm/build-kernel.sh" --key)
log=$(mktemp)
bdir=$(mktemp -d)
trap 'rm -rf "$log" "$bdir"' EXIT
mkdir -p "$bdir/trbuf-driver" "$bdir/include"
cp "$src"/Kbuild "$src"/*.[ch] "$bdir/trbuf-driver/"
cp -r "$top/include/uapi" "$bdir/include/"
# The tree is shared: hold its lock (shared) while building, and make sure
# it still holds this key's patches (another build may have switched it).
for attempt in 1 2 3; do
	kdir=$("$top/vm/kernel-path" --build --kdir)
	exec 9<"$kdir.lock"
	flock -s 9
	if [ "$(cat "$kdir/.aetrace/key")" = "$key" ]; then
		# kbuild cannot take M= with blanks: build a copy, keep the .ko
		if ! make -C "$kdir" M="$bdir/trbuf-driver" -j"$(nproc)" modules >"$log" 2>&1; then
			cat "$log" >&2
			echo "vm/build-module.sh: building $src against $kdir failed" >&2
			exit 1
		fi
		cp "$bdir/trbuf-driver/trbuf.ko" "$src/trbuf.ko.tmp"
		mv "$src/trbuf.ko.tmp" "$src/trbuf.ko"
		echo "$src/trbuf.ko"
		exit 0
	fi
	exec 9<&-
done
echo "vm/build-module.sh: the kernel tree $kdir keeps being switched to other keys" >&2
exit 1
