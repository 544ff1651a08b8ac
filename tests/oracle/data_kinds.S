/* data_kinds: executes each kind of x86-64 memory access once on static
 * addresses (buf in .bss) so lackey and ae-step --data can be compared on
 * it; see tests/oracle/README.md "lackey data conventions". No libc. */
	.text
	.globl _start
_start:
	lea buf(%rip), %rbx
	mov (%rbx), %rax          # 1 load 8
	mov %rax, 8(%rbx)         # 2 store 8
	addq $1, 16(%rbx)         # 3 rmw -> M?
	addl %eax, 24(%rbx)       # 4 rmw 4
	push %rax                 # 5 push
	pop %rax                  # 6 pop
	pushq (%rbx)              # 7 push mem
	popq 32(%rbx)             # 8 pop mem
	call f1                   # 9 call/ret
	lea ftab(%rip), %rcx
	call *(%rcx)              # 10 call mem
	lea 1f(%rip), %rax
	mov %rax, 40(%rbx)
	jmp *40(%rbx)             # 11 jmp mem
1:	push %rbp
	mov %rsp, %rbp
	leave                     # 12 leave
	lea 64(%rbx), %rdi
	mov $3, %ecx
	cld
	mov $0x11, %eax
	rep stosb                 # 13 rep stosb 3
	lea 64(%rbx), %rsi
	lea 128(%rbx), %rdi
	mov $2, %ecx
	rep movsq                 # 14 rep movsq 2
	xor %ecx, %ecx
	rep movsb                 # 15 zero iterations
	lea 64(%rbx), %rsi
	lea 128(%rbx), %rdi
	mov $2, %ecx
	repe cmpsb                # 16
	lea 64(%rbx), %rdi
	mov $4, %ecx
	mov $0x22, %al
	repne scasb               # 17
	lea 64(%rbx), %rsi
	lodsq                     # 18
	movsb                     # 19 no rep
	movdqu (%rbx), %xmm0      # 20 sse load 16
	movdqu %xmm0, 256(%rbx)   # 21 sse store 16
	vmovdqu (%rbx), %ymm1     # 22 avx load 32
	vmovdqu %ymm1, 288(%rbx)  # 23 avx store 32
	paddd 256(%rbx), %xmm0    # 24 sse op
	fldt 320(%rbx)            # 25 fld tbyte
	fstpt 336(%rbx)           # 26 fstp tbyte
	fldl (%rbx)               # 27 fld qword
	fstps 352(%rbx)           # 28 fstp dword
	fxsave 512(%rbx)          # 29 fxsave 512
	fxrstor 512(%rbx)         # 30
	xchg %rax, 8(%rbx)        # 31 xchg
	lock addq $1, 16(%rbx)    # 32 lock add
	mov $5, %eax
	cmpxchg %rcx, 16(%rbx)    # 33 cmpxchg (fail)
	mov 16(%rbx), %rax
	lock cmpxchg %rcx, 16(%rbx) # 34 cmpxchg success
	lock xadd %rax, 24(%rbx)  # 35 xadd
	prefetcht0 (%rbx)         # 36 prefetch
	lea 8(%rbx,%rcx,4), %rax  # 37 lea
	nopl 8(%rbx)              # 38 nop mem
	incb 1(%rbx)              # 39 inc byte
	movzwl 2(%rbx), %eax      # 40 movzx 2
	cmpq $0, (%rbx)           # 41 cmp mem (load only)
	testb $1, (%rbx)          # 42
	pushfq                    # 43
	popfq                     # 44
	enter $16, $0             # 45
	leave
	cmovz (%rbx), %rax        # 46 cmov
	setz 48(%rbx)             # 47 setcc store 1
	movnti %rax, 56(%rbx)     # 48
	clflush (%rbx)            # 49
	mov $60, %eax
	xor %edi, %edi
	syscall
f1:	ret
f2:	ret
	.data
	.balign 64
ftab:	.quad f2
	.bss
	.balign 64
buf:	.space 2048
