#!/usr/bin/env bash
# Style suite: the kernel patches and trbuf-driver sources pass the kernel's
# scripts/checkpatch.pl (from the cached guest kernel tree, else from an
# extraction of /usr/src/linux-source-6.1.tar.xz), and the series applies.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cp=
if kdir=$("$top/vm/kernel-path" --kdir 2>/dev/null) && [ -x "$kdir/scripts/checkpatch.pl" ]; then
	cp=$kdir/scripts/checkpatch.pl
elif [ -f /usr/src/linux-source-6.1.tar.xz ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	tar -xf /usr/src/linux-source-6.1.tar.xz -C "$tmp" --strip-components=1 \
		--wildcards '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch' 2>/dev/null
	[ -x "$tmp/scripts/checkpatch.pl" ] && cp=$tmp/scripts/checkpatch.pl
fi
if [ -z "$cp" ]; then
	echo "ok 1 - checkpatch # SKIP no kernel source (scripts/deps.sh kernel)"
	exit 0
fi
n=0
check() { # name, checkpatch args...
	local name=$1 out
	shift
	n=$((n + 1))
	out=$("$cp" --no-tree -q "$@" 2>&1)
	if echo "$out" | grep -qE '^(ERROR|WARNING)'; then
		echo "$out" | sed 's/^/# /'
		echo "not ok $n - checkpatch $name"
	else
		echo "ok $n - checkpatch $name"
	fi
}
while read -r p; do
	p=${p%%#*}
	[ -n "$p" ] && check "kernel-patches/$p" "$top/kernel-patches/$p"
done <"$top/kernel-patches/series"
for f in "$top"/trbuf-driver/trbuf_*.[ch]; do
	check "trbuf-driver/${f##*/}" -f "$f"
done
check include/uapi/linux/trbuf.h -f "$top/include/uapi/linux/trbuf.h"
