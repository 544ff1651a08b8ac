#!/usr/bin/env bash
# aecc-cc: the code generation aecc asks of gcc for traced code beyond
# the user's flags. Traced functions start on a 64-byte line (where an
# instrumented function starts moved Lua's traced time by 6-20% between
# builds), in the traced program and in its twin; a user's own
# -falign-functions wins. With -fae-data the value and address caches
# start on pages of their own in every thread (tests/data/vc_signal.c
# makes one read-only while the other is written), and the main
# thread's TLS, with 4 KiB of the program's own, stays in musl's static
# builtin_tls (the same address natively and under valgrind). TAP output.
set -u
# shellcheck source=tests/unit/aecc-lib.sh
. "$(dirname "$0")/aecc-lib.sh" "aecc code generation" aecc-cc

cat >p.c <<'C'
int f(int x) { return x + 1; }
int g(int x) { return x * 3; }
int h(int x) { return x - 2; }
int main(void) { return f(g(h(3))) - 4; }
C
# offsets PROG: the offsets of f, g, h and main in their 64-byte lines
offsets() {
	nm "$1" | awk '$2 == "T" && ($3 == "f" || $3 == "g" || $3 == "h" || $3 == "main") { print $1 }' |
		while read -r a; do echo $((0x$a % 64)); done | sort -u | tr '\n' ' '
}
for mode in "" -fae-data; do
	tag=${mode:-instructions}
	if ! "$aecc" $mode -O2 -o p p.c 2>err; then
		not_ok "$tag: aecc builds the program"
		sed 's/^/# /' err | head -3
		continue
	fi
	for prog in p p.orig; do
		s=$(offsets "$prog")
		if [ "$s" = "0 " ]; then
			ok "$tag: $prog's functions start on 64-byte lines"
		else
			not_ok "$tag: $prog's functions start at offsets $s of their 64-byte lines"
		fi
	done
done
if "$aecc" -O2 -falign-functions=16 -o q p.c 2>err; then
	s=$(offsets q)
	if [ "$s" != "0 " ]; then
		ok "the user's -falign-functions=16 wins (offsets $s)"
	else
		not_ok "the user's -falign-functions=16 is overridden"
	fi
else
	not_ok "aecc builds with -falign-functions=16"
	sed 's/^/# /' err | head -3
fi
cat >tls.c <<'C'
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

extern __thread uint64_t __ae_vc[], __ae_lc[];
extern char end[];	/* the linker's: the end of the static image */
static __thread volatile long own[512];

/* the caches' page offsets; is the thread's TLS in the static image? */
static void *show(void *a)
{
	own[511] = 1;
	printf("%lu %lu %d\n", (unsigned long)((uintptr_t)__ae_vc % 4096),
	       (unsigned long)((uintptr_t)__ae_lc % 4096),
	       (uintptr_t)&own[511] < (uintptr_t)end);
	return a;
}

int main(void)
{
	pthread_t t;

	show(NULL);
	return pthread_create(&t, NULL, show, NULL) || pthread_join(t, NULL);
}
C
if "$aecc" -fae-data -O2 -o tls tls.c 2>err; then
	for prog in tls tls.orig; do
		s=$(./$prog 2>/dev/null | tr '\n' ' ')
		if [ "$s" = "0 0 1 0 0 0 " ]; then
			ok "-fae-data: $prog's value and address caches start on pages, in main and in a thread; main's TLS, with 4 KiB of its own, is in the static image"
		else
			not_ok "-fae-data: $prog: caches at page offsets, TLS in the static image: '$s' (main's, then a thread's; want 0 0 1 0 0 0)"
		fi
	done
else
	not_ok "aecc -fae-data builds a threaded program"
	sed 's/^/# /' err | head -3
fi
echo "1..$n"
