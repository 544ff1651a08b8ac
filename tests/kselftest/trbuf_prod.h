/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trbuf_prod.h - the hand-written producers of trbuf_prod.S and the
 * registration they use (instrument/runtime/trbuf_mode.c), shared by the
 * kselftests and the bdump VM test's producer.
 */
#ifndef TRBUF_PROD_H
#define TRBUF_PROD_H

#include <stdint.h>
#include <linux/trbuf.h>

void trbuf_prod_loop(uint64_t base, uint64_t n);
void trbuf_prod_loop_bad(uint64_t base, uint64_t n);
long trbuf_clone_thread(void (*fn)(long), long arg, void *stack_top,
			int *tidp);
int ae_trbuf_register_table(const struct trbuf_seq_range *tab,
			    unsigned long count);
extern const struct trbuf_seq_range __start___ae_seqtab[];
extern const struct trbuf_seq_range __stop___ae_seqtab[];

#endif
