// SPDX-License-Identifier: MIT
/*
 * seqtab.c - rollback of a cut instrumentation sequence (invariant 3),
 * using the program's own sorted __ae_seqtab section.
 */
#include <linux/trbuf.h>
#include "sys.h"

extern const struct trbuf_seq_range __start___ae_seqtab[] __attribute__((weak));
extern const struct trbuf_seq_range __stop___ae_seqtab[] __attribute__((weak));

/* Returns the sequence start if ip is strictly inside a sequence, else ip. */
unsigned long ae_seq_rollback(unsigned long ip)
{
	const struct trbuf_seq_range *lo = __start___ae_seqtab;
	const struct trbuf_seq_range *hi = __stop___ae_seqtab;

	if (!lo || !hi)
		return ip;
	while (lo < hi) {
		const struct trbuf_seq_range *mid = lo + (hi - lo) / 2;

		if (ip < mid->start)
			hi = mid;
		else if (ip >= mid->end)
			lo = mid + 1;
		else
			return ip > mid->start ? mid->start : ip;
	}
	return ip;
}
