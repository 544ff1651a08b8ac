/* SPDX-License-Identifier: MIT */
/*
 * prod.h - the self-checking witness pattern of the aerun test producers
 * (prod_seq.S writes it, tests/host/aerun_check.c verifies it). Usable from
 * assembly: #defines only.
 *
 * Main stream: blocks i = 0, 1, 2, ...; block i is the 8-byte little-endian
 * value i ^ PROD_ITER_TAG followed by PROD_NBYTES single bytes, byte j being
 * PROD_BYTE(j). A signal handler writes PROD_HANDLER_MAGIC (8 bytes) then
 * the PROD_HANDLER_NTAIL bytes PROD_HANDLER_TAIL0 + k.
 */
#ifndef AE_PROD_H
#define AE_PROD_H

#define PROD_ITER_TAG		0xa55a000000000000
#define PROD_NBYTES		120
#define PROD_BLOCK_LEN		(8 + PROD_NBYTES)
#define PROD_BYTE(j)		(((j) * 37 + 11) & 0xff)
#define PROD_HANDLER_MAGIC	0x215245444e414821	/* "!HANDER!" */
#define PROD_HANDLER_NTAIL	4
#define PROD_HANDLER_TAIL0	0xc1
#define PROD_HANDLER_LEN	(8 + PROD_HANDLER_NTAIL)
#define PROD_SIGNAL		10	/* SIGUSR1 */

#endif /* AE_PROD_H */
