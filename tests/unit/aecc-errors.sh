#!/usr/bin/env bash
# aecc-errors: aecc's error contract on bad input. Every failure exits
# non-zero with exactly one line on stderr that names the cause (the file,
# the line, the option), never a crash or a silent success. TAP output.
set -u
# shellcheck source=tests/unit/aecc-lib.sh
. "$(dirname "$0")/aecc-lib.sh" "aecc errors" aecc-errors

# expect NAME PATTERN CMD...: CMD fails (status 1..125: not a crash) with
# one stderr line matching PATTERN (extended regex).
expect() {
	local name=$1 pat=$2 rc lines
	shift 2
	"$@" >out 2>err
	rc=$?
	lines=$(wc -l <err)
	if [ "$rc" -ge 1 ] && [ "$rc" -le 125 ] && [ "$lines" -eq 1 ] && grep -Eq -e "$pat" err; then
		ok "$name: $(head -c 120 err)"
	else
		not_ok "$name (status $rc, $lines stderr lines)"
		sed 's/^/# /' err | head -5
	fi
}

printf 'f:\n\tmovq\t%%r15, %%rax\n\tret\n' >r15.s
printf 'f:\n\tret\n' >good.s
printf '\t.text\n\t.globl\tmain\nmain:\n\txorl\t%%eax, %%eax\n\tret\n' >main.s

expect "missing source" 'nosuch\.s: cannot read: No such file' "$aecc" -c nosuch.s
expect "r15 in the source" 'r15\.s:2: .*%r15.*reserved' "$aecc" -c r15.s
expect "TMPDIR too long" 'TMPDIR too long' env TMPDIR="$(printf 'x%.0s' {1..5000})" "$aecc" -c good.s
expect "TMPDIR missing" 'temporary directory' env TMPDIR=/nonexistent/dir "$aecc" -c good.s
expect "-o with -c and two sources" '-o with -c needs exactly one source' "$aecc" -c -o x.o good.s r15.s
expect "-shared" '-shared is not supported' "$aecc" -shared -o x good.s
expect "-o without argument" '-o needs an argument' "$aecc" good.s -o
expect "no input" 'no input files' "$aecc" -O2
# what build systems ask a compiler with no input file is answered by
# gcc's own driver, not refused; -pthread defines _REENTRANT as gcc does
# (xz's configure gave up threads without it)
if "$aecc" -dumpversion >out 2>err && [ "$(cat out)" = "$(gcc -dumpversion)" ] &&
   "$aecc" --version >out 2>err && grep -q '^gcc' out &&
   "$aecc" -print-prog-name=ld >out 2>err && [ -s out ]; then
	ok "query options (-dumpversion, --version, -print-prog-name=ld) answered"
else
	not_ok "query options (-dumpversion, --version, -print-prog-name=ld) answered"
	sed 's/^/# /' err | head -3
fi
echo 'int x;' >q.c
if "$aecc" -pthread -dM -E q.c 2>err | grep -q '^#define _REENTRANT 1'; then
	ok "-pthread defines _REENTRANT"
else
	not_ok "-pthread defines _REENTRANT"
fi
# instructions whose accesses data tracing does not follow, named with
# their line: state saves (capstone sizes fxsave's area 8 bytes; it used
# to be traced so, silently), a 16-bit pushf, a masked store, xlatb
# through %fs. Each must still build without -fae-data.
# unfollowed NAME FILE INSN PATTERN: FILE.s holds INSN; refused with PATTERN
unfollowed() {
	printf 'f:\n\t%b\n\tret\n' "$3" >"$2.s"
	expect "$1 with -fae-data" "$2\\.s:2: data tracing cannot follow $4" "$aecc" -fae-data -c "$2.s"
	if "$aecc" -c -o "$2.o" "$2.s" 2>err && [ -s "$2.o" ] && [ ! -s err ]; then
		ok "$1 builds without -fae-data"
	else
		not_ok "$1 builds without -fae-data"
	fi
}
unfollowed fxsave fxsave 'fxsave\t(%rdi)' '.*fxsave.*state save'
unfollowed "16-bit pushf" pushfw 'pushfw\n\tpopfw' '.*16-bit pushf'
unfollowed maskmovdqu maskmov 'maskmovdqu\t%xmm1, %xmm0' '.*maskmovdqu.*masked store'
unfollowed xsave xsave 'xsave\t(%rdi)' '.*xsave.*state save'
unfollowed fnsave fnsave 'fnsave\t(%rdi)' '.*fnsave.*state save'
unfollowed "xlatb through %fs" fsxlat 'xlat\t%fs:(%rbx)' '.*xlat'

# Linking: needs the tracing musl (make musl).
if [ -e "$top/build/musl/lib/libc.a" ]; then
	as --64 -o plain.o main.s
	expect "object not built by aecc" 'plain\.o was not built by aecc' "$aecc" -o p plain.o
	"$aecc" -c -o main.o main.s
	head -c 200 main.o >cut.o
	expect "truncated object" 'cannot read cut\.o' "$aecc" -o p cut.o
	printf 'not an object\n' >text.o
	expect "not an object" 'cannot read text\.o' "$aecc" -o p text.o
	expect "missing library" 'cannot find libnosuch\.a' "$aecc" -o p main.o -lnosuch
	expect "missing runtime" 'tracing runtime not found at /nonexistent' \
		env AECC_LIBAE=/nonexistent/libae.a "$aecc" -o p main.o
else
	n=$((n + 1)); echo "ok $n - linking errors # SKIP build/musl not built (make musl)"
fi
# A program's own memcpy links from an object (tests/corpus/own_memcpy.c)
# but not from an archive, where the program and its twin could take
# different memcpys (link.c).
if [ -e "$top/build/musl-data/lib/libc.a" ]; then
	printf '\t.text\n\t.globl\tmemcpy\nmemcpy:\n\tmovq\t%%rdi, %%rax\n\tret\n' >mymemcpy.s
	printf '\t.text\n\t.globl\tmain\nmain:\n\tsubq\t$8, %%rsp\n\tmovq\t%%rsp, %%rdi\n\tmovq\t%%rsp, %%rsi\n\tmovl\t$4, %%edx\n\tcall\tmemcpy\n\txorl\t%%eax, %%eax\n\taddq\t$8, %%rsp\n\tret\n' >callcpy.s
	"$aecc" -fae-data -c -o mymemcpy.o mymemcpy.s && "$aecc" -fae-data -c -o callcpy.o callcpy.s &&
		"$aecc" -fae-data -c -o main.o main.s && ar rc libmine.a mymemcpy.o
	expect "own memcpy in an archive the twin takes" 'libmine\.a\(mymemcpy\.o\) defines memcpy.*twin takes it.*link that object itself' \
		"$aecc" -fae-data -o p callcpy.o libmine.a
	expect "own memcpy in an archive (-l)" 'libmine\.a\(mymemcpy\.o\) defines memcpy' \
		"$aecc" -fae-data -o p callcpy.o -L. -lmine
	expect "--defsym of an expanded routine" 'defsym=memcpy=main: data tracing expands memcpy' \
		"$aecc" -fae-data -o p callcpy.o -Wl,--defsym=memcpy=main
	# a member nothing takes is no one's business
	if "$aecc" -fae-data -o p main.o libmine.a 2>err; then
		ok "own memcpy in an archive member nothing takes: linked"
	else
		not_ok "own memcpy in an archive member nothing takes: linked"
		sed 's/^/# /' err | head -3
	fi
	# the library's memmove calls memcpy, which its expansion cannot run
	expect "own memcpy beside the library's memmove" 'own memcpy but the C library.s memmove.*define memmove too' \
		"$aecc" -fae-data -O2 -o mm "$top/tests/data/own_link/memmove.c" "$top/tests/data/own_link/own.c"
	if [ -e mm ]; then
		not_ok "the refused program is not left behind"
	else
		ok "the refused program is not left behind"
	fi
else
	n=$((n + 1)); echo "ok $n - own routine in an archive # SKIP build/musl-data not built (make musl-data)"
fi
expect "missing tracing libc" 'tracing libc not found' env AECC_MUSL=/nonexistent "$aecc" -o p good.s
echo "1..$n"
