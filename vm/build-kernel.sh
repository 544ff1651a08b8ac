#!/usr/bin/env bash
# Build the aetrace guest kernel (Linux 6.1 from Debian's linux-source-6.1
# plus the kernel-patches/series) into the cache.
#
# usage: vm/build-kernel.sh [--baseline] [--key]
#   --key       only print the cache key
#   --baseline  build the UNPATCHED kernel instead: same source, same config
#               fragment, empty series, in a tree of its own (the patched
#               tree is never switched, so trbuf.ko builds and the patched
#               kernel's incremental builds are unaffected).  Used by
#               tests/kselftest/upstream-vm.sh as the reference.
#
# Cache layout ($AE_CACHE, default ~/.cache/aetrace):
#   kernel-tree-<treekey>/       ONE reusable build tree per source version
#                                (config changes are incremental too);
#                                .aetrace/ inside it records the patches
#                                currently applied and the key built.
#   kernel-<key>/                one per (source, series+patches, fragment,
#                                this script): bzImage, config, System.map,
#                                Module.symvers, build.log, kdir (tree path).
#   kernel-tree-<treekey>-base/  the baseline's own tree, and
#   kernel-base-<key>/           its outputs (key: source, fragment, script).
# Switching keys reverses only the applied patches that differ from the new
# series and applies the new ones with patch(1), so only touched files get new
# mtimes and the make is incremental.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${AE_CACHE:-$HOME/.cache/aetrace}
src_tar=/usr/src/linux-source-6.1.tar.xz
src_pkg=linux-source-6.1
patch_dir=$top/kernel-patches
series=$patch_dir/series
fragment=$patch_dir/config.fragment
self=$top/vm/build-kernel.sh

die() { echo "build-kernel.sh: $*" >&2; exit 1; }

baseline= keyonly=
for a in "$@"; do
	case "$a" in
	--baseline) baseline=1 ;;
	--key) keyonly=1 ;;
	*) die "usage: vm/build-kernel.sh [--baseline] [--key] (unknown argument '$a')" ;;
	esac
done

# Patches named by kernel-patches/series, in order (comments and blank
# lines skipped); a missing series or --baseline means no patches.
series_patches() {
	[ -z "$baseline" ] || return 0
	[ -f "$series" ] || return 0
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$series"
}

src_version() {
	dpkg-query -W -f='${Version}' "$src_pkg" 2>/dev/null || echo unknown
}

# Hash of everything the kernel image depends on.
compute_key() {
	{
		echo "src $(src_version)"
		[ -z "$baseline" ] || echo baseline
		echo "fragment"; cat "$fragment"
		echo "script"; cat "$self"
		echo "series"
		series_patches | while read -r p; do
			echo "patch $p"
			cat "$patch_dir/$p"
		done
	} | sha256sum | cut -c1-16
}

tree_key() {
	{ echo "src $(src_version)"; echo tinyconfig; } | sha256sum | cut -c1-16
}

series_patches | while read -r p; do
	[ -f "$patch_dir/$p" ] || die "kernel-patches/series names missing patch '$p'"
done

if [ -n "$keyonly" ]; then
	compute_key
	exit 0
fi

[ -f "$src_tar" ] || die "$src_tar missing: run scripts/deps.sh kernel"
[ -f "$fragment" ] || die "$fragment missing"

key=$(compute_key)
if [ -n "$baseline" ]; then
	out=$cache/kernel-base-$key
	tree=$cache/kernel-tree-$(tree_key)-base
else
	out=$cache/kernel-$key
	tree=$cache/kernel-tree-$(tree_key)
fi
state=$tree/.aetrace
mkdir -p "$cache"

# One builder per tree at a time (several make targets may race).
exec 9>"$tree.lock"
flock 9

if [ -f "$out/bzImage" ] && [ "$(cat "$state/key" 2>/dev/null)" = "$key" ]; then
	exit 0
fi

start=$(date +%s)
log=$state/build.log

if [ ! -f "$state/extracted" ]; then
	echo "  KERNEL  extracting $src_tar"
	rm -rf "$tree"
	mkdir -p "$tree"
	tar -xf "$src_tar" -C "$tree" --strip-components=1
	mkdir -p "$state/applied"
	: >"$state/applied/list"
	touch "$state/extracted"
fi
: >"$log"

# --- bring the applied patch stack to the new series.
# $state/applied/list names the applied patches in order; $state/applied/N
# holds a copy of the N-th one, so it can be reversed after the repo changed.
mapfile -t want < <(series_patches)
mapfile -t have < "$state/applied/list"

same_patch() { # index: is applied patch N identical to the wanted one?
	[ "${have[$1]}" = "${want[$1]}" ] &&
		cmp -s "$state/applied/$1" "$patch_dir/${want[$1]}"
}

keep=0
while [ $keep -lt ${#have[@]} ] && [ $keep -lt ${#want[@]} ] && same_patch $keep; do
	keep=$((keep + 1))
done

write_list() { # N: the first N entries of $have are applied
	printf '%s\n' "${have[@]:0:$1}" | sed '/^$/d' >"$state/applied/list.tmp"
	mv "$state/applied/list.tmp" "$state/applied/list"
}

echo none >"$state/key"	# the tree is between keys until make succeeds
for ((i = ${#have[@]} - 1; i >= keep; i--)); do
	echo "reversing ${have[$i]}" >>"$log"
	patch -R -p1 -s -d "$tree" <"$state/applied/$i" >>"$log" 2>&1 ||
		die "cannot reverse ${have[$i]} in $tree (see $log); delete $tree to start over"
	rm -f "$state/applied/$i"
	write_list "$i"
done
have=("${have[@]:0:$keep}")
for ((i = keep; i < ${#want[@]}; i++)); do
	p=${want[$i]}
	echo "applying $p" >>"$log"
	# Dry run first: a failing patch must not leave half its hunks behind.
	if ! patch -p1 -s -N --dry-run -d "$tree" <"$patch_dir/$p" >>"$log" 2>&1 ||
		! patch -p1 -s -N -d "$tree" <"$patch_dir/$p" >>"$log" 2>&1; then
		cat "$log" >&2
		die "kernel-patches/$p does not apply on linux $(src_version) (tree left at the previous patches; re-run after fixing)"
	fi
	cp "$patch_dir/$p" "$state/applied/$i"
	have+=("$p")
	write_list $((i + 1))
done

# --- config: tinyconfig + fragment + olddefconfig, regenerated every time
# (patches may add Kconfig symbols); kbuild only rebuilds what changed.
mk() { make -C "$tree" -s "$@" >>"$log" 2>&1; }
mk tinyconfig
(cd "$tree" && scripts/kconfig/merge_config.sh -m .config "$fragment") >>"$log" 2>&1 ||
	die "merge_config failed (see $log)"
mk olddefconfig
# Report fragment lines the final config did not honour.
while read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qxF "$line" "$tree/.config" ||
			echo "  KERNEL  warning: $line not honoured: $(grep -E "^(# )?${line%%=*}[= ]" "$tree/.config" || echo unavailable)" ;;
	"# CONFIG_"*" is not set")
		sym=${line#\# }; sym=${sym%% *}
		! grep -q "^$sym=" "$tree/.config" ||
			echo "  KERNEL  warning: $sym still set: $(grep "^$sym=" "$tree/.config")" ;;
	esac
done <"$fragment" | tee -a "$log"

echo "  KERNEL  linux $(src_version) + ${#want[@]} patch(es)${baseline:+ (unpatched baseline)}, key $key, log $log"
if ! make -C "$tree" -j"$(nproc)" >>"$log" 2>&1; then
	grep -E 'error|Error' "$log" | head -20 >&2
	die "kernel build failed (see $log)"
fi

# --- publish
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
cp "$tree/arch/x86/boot/bzImage" "$tree/.config" "$tree/System.map" \
	"$tree/Module.symvers" "$out.tmp/"
mv "$out.tmp/.config" "$out.tmp/config"
cp "$log" "$out.tmp/build.log"
echo "$tree" >"$out.tmp/kdir"
ln -s "$tree" "$out.tmp/build"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "$key" >"$state/key"
echo "  KERNEL  done in $(($(date +%s) - start)) s: $out"
