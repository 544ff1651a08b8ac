// SPDX-License-Identifier: MIT
/*
 * Unit test of the regenerator's known stack bytes (analysis/shadow.c):
 * a known store reads back whole and in parts, across a word boundary
 * too; a store of an unknown value, or one that may not enter, forgets
 * exactly the bytes it covers (a wide SSE or fxsave store included);
 * a byte never stored is not known; a copy is independent of its
 * original; thousands of words grow the table without losing any.
 */
#include <stdio.h>

#include "../../analysis/shadow.h"

static int ntest, nfail;

static void check(int ok, const char *what)
{
	ntest++;
	if (!ok)
		nfail++;
	printf("%s %d - %s\n", ok ? "ok" : "not ok", ntest, what);
}

static int load_is(const struct ae_shadow *sh, uint64_t a, unsigned int n, uint64_t want)
{
	uint64_t v = 0;

	return ae_shadow_load(sh, a, n, &v) && v == want;
}

int main(void)
{
	struct ae_shadow sh = { 0 }, cp;
	const uint64_t sp = 0x7ffffffde000ull;
	uint64_t v;
	int all = 1;

	check(!ae_shadow_load(&sh, sp, 8, &v), "an empty shadow knows nothing");
	ae_shadow_store(&sh, sp + 8, 8, 1, 1, 0x1122334455667788ull);
	check(load_is(&sh, sp + 8, 8, 0x1122334455667788ull), "an 8-byte store reads back");
	check(load_is(&sh, sp + 8, 4, 0x55667788u) && load_is(&sh, sp + 12, 4, 0x11223344u) &&
	      load_is(&sh, sp + 9, 1, 0x77), "its parts read back");
	check(!ae_shadow_load(&sh, sp + 4, 8, &v) && !ae_shadow_load(&sh, sp + 12, 8, &v),
	      "bytes around it are not known");
	ae_shadow_store(&sh, sp + 20, 8, 1, 1, 0xa1a2a3a4a5a6a7a8ull);
	check(load_is(&sh, sp + 20, 8, 0xa1a2a3a4a5a6a7a8ull) && load_is(&sh, sp + 22, 4, 0xa3a4a5a6u),
	      "a store across a word boundary reads back");
	ae_shadow_store(&sh, sp + 10, 2, 0, 0, 0);
	check(!ae_shadow_load(&sh, sp + 8, 8, &v) && load_is(&sh, sp + 8, 2, 0x7788) &&
	      load_is(&sh, sp + 12, 4, 0x11223344u), "an unknown store forgets its bytes only");
	ae_shadow_store(&sh, sp + 8, 2, 1, 0, 0xbeef);
	check(load_is(&sh, sp + 8, 2, 0xbeef), "a known store that may not enter updates a word it finds");
	ae_shadow_store(&sh, sp + 0x100, 8, 1, 0, 5);
	check(!ae_shadow_load(&sh, sp + 0x100, 8, &v), "and enters no new word");
	ae_shadow_store(&sh, sp + 16, 16, 1, 1, 0);
	check(!ae_shadow_load(&sh, sp + 20, 8, &v) && !ae_shadow_load(&sh, sp + 16, 1, &v),
	      "a 16-byte store is never known, and forgets what it covers");
	ae_shadow_store(&sh, sp + 40, 8, 1, 1, 42);
	check(ae_shadow_copy(&cp, &sh) == 0 && load_is(&cp, sp + 40, 8, 42), "a copy knows the same");
	ae_shadow_store(&cp, sp + 40, 8, 0, 0, 0);
	check(load_is(&sh, sp + 40, 8, 42) && !ae_shadow_load(&cp, sp + 40, 8, &v),
	      "and is independent of its original");
	ae_shadow_store(&sh, sp - 512, 512, 0, 0, 0);
	check(load_is(&sh, sp + 40, 8, 42), "a 512-byte store below leaves what is above");
	for (uint64_t i = 0; i < 20000; i++)
		ae_shadow_store(&sh, sp - 8 * i - 0x1000, 8, 1, 1, i * 3);
	for (uint64_t i = 0; i < 20000; i++)
		all &= load_is(&sh, sp - 8 * i - 0x1000, 8, i * 3);
	check(all && load_is(&sh, sp + 40, 8, 42), "20000 words after the table grew");
	check(!ae_shadow_load(&sh, sp + 40, 9, &v), "a load wider than 8 bytes is not known");
	ae_shadow_free(&sh);
	ae_shadow_free(&cp);
	check(!ae_shadow_load(&sh, sp + 40, 8, &v), "a freed shadow knows nothing");
	printf("1..%d\n# %d passed, %d failed\n", ntest, ntest - nfail, nfail);
	return nfail != 0;
}
