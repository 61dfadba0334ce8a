# unwrelA.S - plug(cb) for tests/unwind/unwreload.c: a frame-pointer frame
# that calls cb; its return address is plug+6, as in unwrelB.S, whose frame
# there is not one.
	.text
	.p2align 12
	.globl plug
	.type plug,@function
plug:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset rbp,-16
	mov %rsp,%rbp
	.cfi_def_cfa_register rbp
	call *%rdi
	pop %rbp
	.cfi_def_cfa rsp,8
	ret
	.cfi_endproc
	.size plug,.-plug
	.section .note.GNU-stack,"",@progbits
