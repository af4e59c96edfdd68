/* Two functions without call frame information (no .cfi directives;
 * check-weave.py builds this with -fno-asynchronous-unwind-tables), each
 * calling the function it is given, for nocfi.py:
 *   nocfi_fp(fn)    sets up a frame pointer (push %rbp; mov %rsp,%rbp),
 *                   so that its caller is found by its frame record;
 *   nocfi_nofp(fn)  saves rbp and then uses it for something else, as
 *                   OpenBLAS's kernels do, with unused stack below its
 *                   saved registers: its caller is found only by a scan.
 * Each writes the return address it will return to (its caller's) into
 * nocfi_ra, the truth the process reports.  x86-64 and aarch64. */
	.text
#if defined(__x86_64__)
	.globl	nocfi_fp
	.type	nocfi_fp, @function
nocfi_fp:
	push	%rbp
	mov	%rsp, %rbp
	push	%rbx
	sub	$24, %rsp
	mov	8(%rbp), %rax
	mov	nocfi_ra@GOTPCREL(%rip), %rcx
	mov	%rax, (%rcx)
	mov	%rdi, %rbx
	call	*%rbx
	add	$24, %rsp
	pop	%rbx
	pop	%rbp
	ret
	.size	nocfi_fp, .-nocfi_fp

	.globl	nocfi_nofp
	.type	nocfi_nofp, @function
nocfi_nofp:
	push	%rbp
	push	%rbx
	sub	$40, %rsp
	mov	56(%rsp), %rax
	mov	nocfi_ra@GOTPCREL(%rip), %rcx
	mov	%rax, (%rcx)
	mov	%rdi, %rbx
	mov	$0x5a5a5a5a, %ebp
	call	*%rbx
	add	$40, %rsp
	pop	%rbx
	pop	%rbp
	ret
	.size	nocfi_nofp, .-nocfi_nofp
#elif defined(__aarch64__)
	.globl	nocfi_fp
	.type	nocfi_fp, %function
nocfi_fp:
	stp	x29, x30, [sp, #-32]!
	mov	x29, sp
	str	x19, [sp, #16]
	adrp	x9, :got:nocfi_ra
	ldr	x9, [x9, :got_lo12:nocfi_ra]
	str	x30, [x9]
	blr	x0
	ldr	x19, [sp, #16]
	ldp	x29, x30, [sp], #32
	ret
	.size	nocfi_fp, .-nocfi_fp

	.globl	nocfi_nofp
	.type	nocfi_nofp, %function
nocfi_nofp:
	sub	sp, sp, #64
	stp	x29, x30, [sp, #48]
	adrp	x9, :got:nocfi_ra
	ldr	x9, [x9, :got_lo12:nocfi_ra]
	str	x30, [x9]
	mov	x29, #0x5a5a
	blr	x0
	ldp	x29, x30, [sp, #48]
	add	sp, sp, #64
	ret
	.size	nocfi_nofp, .-nocfi_nofp
#endif

	.bss
	.globl	nocfi_ra
	.p2align 3
nocfi_ra:
	.zero	8
	.section	.note.GNU-stack,"",%progbits
