#!/usr/bin/env bash
# Install the Debian packages a target needs, only when missing, and
# download the Debian source packages the build compiles (into
# $AE_CACHE/src). `make deps` runs it; the build itself never does.
# usage: scripts/deps.sh GROUP...
#   groups: build, check, src (deb-src entries), musl-src (musl), lua-src
#   (lua5.4, bzip2, sqlite3, dash), kernel, vm, bpf, bench
set -euo pipefail
cache=${AE_CACHE:-$HOME/.cache/aetrace}

pkgs_build="gcc make binutils pkg-config libcapstone-dev libzstd-dev libisal-dev libelf-dev zlib1g-dev libssl-dev libunicorn-dev"
pkgs_check="valgrind python3 iproute2 dpkg-dev musl-tools zstd clang"
pkgs_kernel="linux-source-6.1 bc bison flex libssl-dev libelf-dev dwarves rsync kmod cpio xz-utils"
pkgs_vm="qemu-system-x86 busybox-static kmod"
pkgs_bpf="libbpf-dev bpftool clang llvm"
pkgs_bench="hyperfine"
# xmllint, rsvg-convert: the timeline SVG test (tests/host/timeline.sh)
pkgs_check="$pkgs_check libxml2-utils librsvg2-bin"

want=()
srcs=()
src_pkgs=()
for g in "$@"; do
	case "$g" in
	build) want+=($pkgs_build) ;;
	check) want+=($pkgs_build $pkgs_check) ;;
	kernel) want+=($pkgs_kernel) ;;
	vm) want+=($pkgs_vm) ;;
	bpf) want+=($pkgs_bpf) ;;
	bench) want+=($pkgs_bench) ;;
	src) srcs+=(1) ;;
	musl-src) want+=(dpkg-dev); srcs+=(1); src_pkgs+=(musl) ;;
	# (tclsh makes sqlite3's amalgamation)
	lua-src) want+=(dpkg-dev tcl); srcs+=(1); src_pkgs+=(lua5.4 bzip2 sqlite3 dash) ;;
	*) echo "deps.sh: unknown group '$g'" >&2; exit 2 ;;
	esac
done

sudo_cmd=""
[ "$(id -u)" = 0 ] || sudo_cmd="sudo"

# deb-src entries are derived from the existing deb entries, never written by hand.
if [ ${#srcs[@]} -gt 0 ] || [ ${#want[@]} -gt 0 ]; then
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		grep -q '^Types: deb$' "$f" || continue
		case "$f" in *nodesource*|*google*) continue ;; esac
		src="/etc/apt/sources.list.d/aetrace-src-$(basename "$f")"
		[ -e "$src" ] && continue
		sed 's/^Types: deb$/Types: deb-src/' "$f" | $sudo_cmd tee "$src" >/dev/null
		need_update=1
	done
fi

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ] || [ -n "${need_update:-}" ]; then
	export DEBIAN_FRONTEND=noninteractive
	$sudo_cmd apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
	echo "  DEPS    ${missing[*]}"
	$sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Source packages, downloaded once (no root needed).
for p in "${src_pkgs[@]}"; do
	ls "$cache/src/${p}_"*.dsc >/dev/null 2>&1 && continue
	mkdir -p "$cache/src"
	echo "  SRC     $p -> $cache/src"
	(cd "$cache/src" && apt-get source --download-only -qq "$p" >/dev/null) || {
		echo "deps.sh: apt-get source $p failed" >&2
		exit 1
	}
done
