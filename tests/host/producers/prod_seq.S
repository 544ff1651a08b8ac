/* SPDX-License-Identifier: MIT */
/*
 * prod_seq.S - witness-writing code of the aerun test producers, written
 * with the real instrumentation sequences (docs/ARCHITECTURE.md invariant 2), and the
 * producers' own _start and signal restorer. Every sequence is listed in
 * __ae_seqtab, unless AE_PROD_NO_SEQTAB: that variant cannot be rolled
 * back and must be caught corrupt under a signal storm.
 */
#include "prod.h"

.macro SEQTAB a, b
#ifndef AE_PROD_NO_SEQTAB
	.pushsection __ae_seqtab, "a"
	.balign 4
	.long	\a, \b
	.popsection
#endif
.endm

/* One single-byte witness. */
.macro SEQB val
1:	movb	$\val, (%r15)
	lea	1(%r15), %r15
2:	SEQTAB	1b, 2b
.endm

/* One 8-byte value witness from %rax. */
.macro SEQQ
1:	mov	%rax, (%r15)
	lea	8(%r15), %r15
2:	SEQTAB	1b, 2b
.endm

	.text
	.globl	_start
	.type	_start, @function
_start:				/* what musl's _start would be */
	mov	%rsp, %rdi
	mov	%rdx, %rsi		/* rtld fini pointer: _ae_start keeps it */
	and	$-16, %rsp
	call	prod_main
	hlt

/* void prod_emit_block(unsigned long i): block i of the main stream. */
	.globl	prod_emit_block
	.type	prod_emit_block, @function
prod_emit_block:
	movabs	$PROD_ITER_TAG, %rax
	xor	%rdi, %rax
	SEQQ
	.set	j, 0
	.rept	PROD_NBYTES
	SEQB	PROD_BYTE(j)
	.set	j, j + 1
	.endr
	ret
	.size	prod_emit_block, . - prod_emit_block

/* void prod_handler_emit(void): what the signal handler writes. */
	.globl	prod_handler_emit
	.type	prod_handler_emit, @function
prod_handler_emit:
	movabs	$PROD_HANDLER_MAGIC, %rax
	SEQQ
	.set	j, 0
	.rept	PROD_HANDLER_NTAIL
	SEQB	PROD_HANDLER_TAIL0 + j
	.set	j, j + 1
	.endr
	ret
	.size	prod_handler_emit, . - prod_handler_emit

	.globl	prod_restorer
	.type	prod_restorer, @function
prod_restorer:
	mov	$15, %eax	/* __NR_rt_sigreturn, like musl's __restore_rt */
	syscall
	.size	prod_restorer, . - prod_restorer

	.section .note.GNU-stack, "", @progbits
