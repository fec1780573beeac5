//go:build linux && amd64

#include "textflag.h"
#include "go_asm.h"

// ctxTrampoline(b *ctxBlock) runs on the system stack with the C calling
// convention (runtime.cgocall: the block's address in DI). It does what
// frame.bind and frame.call do in two purego calls:
//
//	b.stage = 1; b.r = cuCtxGetCurrent(&b.cur); if b.r != 0 { return }
//	if b.cur != b.ctx { b.stage = 2; b.r = cuCtxSetCurrent(b.ctx); if b.r != 0 { return } }
//	b.stage = 3; b.r = b.fn(b.args[0], ..., b.args[11])
//
// Twelve arguments are always passed (six in registers, six on the stack);
// a function that takes fewer ignores the rest, as the System V ABI allows.
// AL is zeroed before each call for variadic callees. The results are
// CUresults (C int): only their low 32 bits are meaningful.
GLOBL ·ctxTrampolineABI0(SB), NOPTR|RODATA, $8
DATA ·ctxTrampolineABI0(SB)/8, $ctxTrampoline<>(SB)

// The frame is 64 bytes: 48 for the stack arguments, the block's address
// at 56(SP); with the saved frame pointer SP stays 16-byte aligned at the
// calls (cgocall enters with a 16-byte aligned stack before its CALL).
TEXT ctxTrampoline<>(SB), NOSPLIT, $64
	MOVQ DI, 56(SP)
	MOVQ DI, R11

	MOVQ $1, ctxBlock_stage(R11)
	LEAQ ctxBlock_cur(R11), DI
	MOVQ ctxBlock_getCurrent(R11), R10
	XORL AX, AX
	CALL R10
	MOVQ 56(SP), R11
	MOVQ AX, ctxBlock_r(R11)
	TESTL AX, AX
	JNE done

	MOVQ ctxBlock_cur(R11), AX
	CMPQ AX, ctxBlock_ctx(R11)
	JEQ call

	MOVQ $2, ctxBlock_stage(R11)
	MOVQ ctxBlock_ctx(R11), DI
	MOVQ ctxBlock_setCurrent(R11), R10
	XORL AX, AX
	CALL R10
	MOVQ 56(SP), R11
	MOVQ AX, ctxBlock_r(R11)
	TESTL AX, AX
	JNE done

call:
	MOVQ $3, ctxBlock_stage(R11)
	MOVQ ctxBlock_args(R11), R10
	MOVQ 48(R10), AX
	MOVQ AX, 0(SP)
	MOVQ 56(R10), AX
	MOVQ AX, 8(SP)
	MOVQ 64(R10), AX
	MOVQ AX, 16(SP)
	MOVQ 72(R10), AX
	MOVQ AX, 24(SP)
	MOVQ 80(R10), AX
	MOVQ AX, 32(SP)
	MOVQ 88(R10), AX
	MOVQ AX, 40(SP)
	MOVQ 0(R10), DI
	MOVQ 8(R10), SI
	MOVQ 16(R10), DX
	MOVQ 24(R10), CX
	MOVQ 32(R10), R8
	MOVQ 40(R10), R9
	MOVQ ctxBlock_fn(R11), R10
	XORL AX, AX
	CALL R10
	MOVQ 56(SP), R11
	MOVQ AX, ctxBlock_r(R11)

done:
	RET
