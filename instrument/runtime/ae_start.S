/* SPDX-License-Identifier: MIT */
/*
 * ae_start.S - ELF entry of every instrumented program (aecc links with
 * -e _ae_start). Sets up the trace buffer and r15 (ae_runtime_setup), then
 * enters musl's _start with the process-entry stack and registers exactly
 * as the kernel left them (rdx holds the rtld fini pointer per the ABI), so
 * the program starts as prog.orig would.
 */
	.text
	.globl	_ae_start
	.type	_ae_start, @function
_ae_start:
	/* Save every register C code may clobber, below the entry stack. */
	push	%rax
	push	%rbx
	push	%rcx
	push	%rdx
	push	%rsi
	push	%rdi
	push	%rbp
	push	%r8
	push	%r9
	push	%r10
	push	%r11
	push	%r12
	push	%r13
	push	%r14
	mov	%rsp, %rbx		/* callee-saved: survives the call */
	lea	112(%rsp), %rdi		/* the process-entry stack: argc, argv, envp */
	and	$-16, %rsp		/* ABI alignment for the C call */
	call	ae_runtime_setup
	test	%rax, %rax		/* 0: kernel mode, the kernel set r15 */
	jz	1f
	mov	%rax, %r15		/* the write cursor (invariant 1) */
1:
	lea	112(%rbx), %rdi		/* first bytes: which program this is */
	call	ae_write_regrec
	mov	%rbx, %rsp
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%r11
	pop	%r10
	pop	%r9
	pop	%r8
	pop	%rbp
	pop	%rdi
	pop	%rsi
	pop	%rdx
	pop	%rcx
	pop	%rbx
	pop	%rax
	jmp	_start
	.size	_ae_start, . - _ae_start

/*
 * Called by the instrumented C library at the entry of _Exit (aecc inserts
 * the call): the program is about to end, r15 is final. Preserves every
 * register; flags are dead at a function entry.
 */
	.globl	__ae_exit_hook
	.type	__ae_exit_hook, @function
__ae_exit_hook:
	push	%rax
	push	%rcx
	push	%rdx
	push	%rsi
	push	%rdi
	push	%r8
	push	%r9
	push	%r10
	push	%r11
	push	%rbx
	mov	%rsp, %rbx
	mov	%r15, %rdi
	mov	80(%rsp), %rsi		/* our return address: _Exit's body */
	and	$-16, %rsp
	call	ae_capture_exit
	mov	%rbx, %rsp
	pop	%rbx
	pop	%r11
	pop	%r10
	pop	%r9
	pop	%r8
	pop	%rdi
	pop	%rsi
	pop	%rdx
	pop	%rcx
	pop	%rax
	ret
	.size	__ae_exit_hook, . - __ae_exit_hook

/*
 * ae_write_words(words, n): n 8-byte words through r15, each a restartable
 * sequence (store, commit) listed in __ae_seqtab: an interrupt between the
 * store and the commit rewinds to the store (kernel, aerun).
 */
	.globl	ae_write_words
	.type	ae_write_words, @function
ae_write_words:
	test	%rsi, %rsi
	jz	2f
1:	mov	(%rdi), %rax
3:	mov	%rax, (%r15)
	lea	8(%r15), %r15
4:	add	$8, %rdi
	dec	%rsi
	jnz	1b
2:	ret
	.size	ae_write_words, . - ae_write_words
	.pushsection __ae_seqtab, "a", @progbits
	.balign	4
	.long	3b, 4b
	.popsection

/* Signal restorer for the runtime's own handler (discard mode). */
	.globl	ae_rt_restorer
	.type	ae_rt_restorer, @function
ae_rt_restorer:
	mov	$15, %eax		/* __NR_rt_sigreturn */
	syscall
	.size	ae_rt_restorer, . - ae_rt_restorer

	.section .note.GNU-stack, "", @progbits
