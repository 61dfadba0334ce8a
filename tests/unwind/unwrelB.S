# unwrelB.S - plug(cb) for tests/unwind/unwreload.c: no frame pointer (rbp
# left alone), and the same return address, plug+6, as unwrelA.S.
	.text
	.p2align 12
	.globl plug
	.type plug,@function
plug:
	.cfi_startproc
	sub $8,%rsp
	.cfi_def_cfa_offset 16
	call *%rdi
	add $8,%rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size plug,.-plug
	.section .note.GNU-stack,"",@progbits
