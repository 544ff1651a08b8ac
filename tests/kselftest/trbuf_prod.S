/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hand-written producers for the trbuf kselftests: each record is one
 * 8-byte value (tag << 32 | counter) written through r15 by a restartable
 * sequence "movq %rax,(%r15) (x3); lea 8(%r15),%r15" whose range is published
 * in the __ae_seqtab section, exactly like instrumented code.
 *
 * trbuf_prod_loop(base, n): write records base + 0 .. base + n - 1.
 * trbuf_prod_loop_bad(base, n): the same, but the commit "add $8,%r15"
 *	is left out of the table (the stores are in it, so overflow still
 *	restarts them): the kernel cannot recognise a cut just before the
 *	commit, which then moves another task's cursor past a slot nobody
 *	wrote, and the record written before the cut is overwritten (the
 *	rollback test shows the checker detects that).  A cut anywhere else
 *	is rolled back; the producer only crashes (SIGBUS) when the skipped
 *	slot was the last of its sub-buffer (another producer was waiting
 *	for the consumer there), and more often corrupts without crashing.
 * trbuf_clone_thread(fn, arg, stack_top, tidp): raw clone of a thread that
 *	runs fn(arg) then exits (no libc: traced code must not call it).
 */
	.text
	.globl	trbuf_prod_loop
	.type	trbuf_prod_loop, @function
trbuf_prod_loop:
	xorl	%ecx, %ecx
1:	cmpq	%rsi, %rcx
	jae	3f
	leaq	(%rdi,%rcx), %rax
.Lseq_start:
	/* the store is repeated (restartable) so that more of the loop is
	 * strictly inside the sequence: cuts there are what rollback fixes */
	movq	%rax, (%r15)
	movq	%rax, (%r15)
	movq	%rax, (%r15)
	leaq	8(%r15), %r15
.Lseq_end:
	incq	%rcx
	jmp	1b
3:	ret
	.size	trbuf_prod_loop, .-trbuf_prod_loop

	.globl	trbuf_prod_loop_bad
	.type	trbuf_prod_loop_bad, @function
trbuf_prod_loop_bad:
	xorl	%ecx, %ecx
1:	cmpq	%rsi, %rcx
	jae	3f
	leaq	(%rdi,%rcx), %rax
.Lbad_store:
	movq	%rax, (%r15)
	movq	%rax, (%r15)
	movq	%rax, (%r15)
.Lbad_store_end:
	addq	$8, %r15
	incq	%rcx
	jmp	1b
3:	ret
	.size	trbuf_prod_loop_bad, .-trbuf_prod_loop_bad

	/* long trbuf_clone_thread(void (*fn)(long), long arg, void *stack_top, int *tidp) */
	.globl	trbuf_clone_thread
	.type	trbuf_clone_thread, @function
trbuf_clone_thread:
	andq	$-16, %rdx
	subq	$16, %rdx
	movq	%rdi, 0(%rdx)		/* fn */
	movq	%rsi, 8(%rdx)		/* arg */
	movq	%rdx, %rsi		/* child stack */
	movq	%rcx, %rdx		/* parent_tid */
	movq	%rcx, %r10		/* child_tid: cleared + futex-woken at exit */
	xorl	%r8d, %r8d		/* tls */
	/* CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|PARENT_SETTID|CHILD_CLEARTID */
	movl	$0x350f00, %edi
	movl	$56, %eax		/* __NR_clone */
	syscall
	testq	%rax, %rax
	jnz	1f
	popq	%rax
	popq	%rdi
	call	*%rax
	movl	$60, %eax		/* __NR_exit: this thread only */
	xorl	%edi, %edi
	syscall
	hlt
1:	ret
	.size	trbuf_clone_thread, .-trbuf_clone_thread

	.section __ae_seqtab, "a"
	.balign	8
	.long	.Lseq_start, .Lseq_end
	/* only the stores: a cut before the add is not recognised */
	.long	.Lbad_store, .Lbad_store_end
	.section .note.GNU-stack, "", @progbits
