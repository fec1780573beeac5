#include "textflag.h"

// func fpCallers(pcs *[3]uintptr)
//
// Stores the return addresses of the caller and of the next two frames up,
// following the frame-pointer chain that the Go toolchain keeps on amd64.
// It has no frame of its own, so BP is still the caller's frame pointer:
// 0(BP) holds the caller's caller's BP and 8(BP) the caller's return address.
TEXT ·fpCallers(SB),NOSPLIT,$0-8
	MOVQ	pcs+0(FP), DI
	MOVQ	$0, 0(DI)
	MOVQ	$0, 8(DI)
	MOVQ	$0, 16(DI)
	MOVQ	BP, AX
	TESTQ	AX, AX
	JZ	done
	MOVQ	8(AX), CX
	MOVQ	CX, 0(DI)
	MOVQ	0(AX), AX
	TESTQ	AX, AX
	JZ	done
	MOVQ	8(AX), CX
	MOVQ	CX, 8(DI)
	MOVQ	0(AX), AX
	TESTQ	AX, AX
	JZ	done
	MOVQ	8(AX), CX
	MOVQ	CX, 16(DI)
done:
	RET
