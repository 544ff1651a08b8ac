#!/usr/bin/env bash
# Install the Debian packages a target needs, only when missing.
# usage: scripts/deps.sh GROUP...
#   groups: build, check, src (deb-src entries), musl-src, lua-src, kernel, vm,
#   bpf, bench
set -euo pipefail

pkgs_build="gcc make binutils pkg-config libcapstone-dev libzstd-dev libelf-dev zlib1g-dev libssl-dev"
pkgs_check="valgrind python3 iproute2 dpkg-dev musl-tools zstd clang"
pkgs_kernel="linux-source-6.1 bc bison flex libssl-dev libelf-dev dwarves rsync kmod cpio xz-utils"
pkgs_vm="qemu-system-x86 busybox-static kmod"
pkgs_bpf="libbpf-dev bpftool clang llvm"
pkgs_bench="hyperfine"

want=()
srcs=()
for g in "$@"; do
	case "$g" in
	build) want+=($pkgs_build) ;;
	check) want+=($pkgs_build $pkgs_check) ;;
	kernel) want+=($pkgs_kernel) ;;
	vm) want+=($pkgs_vm) ;;
	bpf) want+=($pkgs_bpf) ;;
	bench) want+=($pkgs_bench) ;;
	src) srcs+=(1) ;;
	musl-src|lua-src) want+=(dpkg-dev); srcs+=(1) ;;
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
