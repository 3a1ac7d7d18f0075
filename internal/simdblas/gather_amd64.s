//go:build !noasm

#include "textflag.h"

// func gatherRows32AVX512(dst *float32, rows int, src *float32, base, step, ntap, tap0 int, tapOff *int, tapMask *uint32)
TEXT ·gatherRows32AVX512(SB), NOSPLIT, $0-72
	MOVQ dst+0(FP), DI
	MOVQ rows+8(FP), CX
	MOVQ src+16(FP), SI
	MOVQ base+24(FP), R8
	MOVQ step+32(FP), R9
	MOVQ ntap+40(FP), R11
	MOVQ tap0+48(FP), R10
	MOVQ tapOff+56(FP), R12
	MOVQ tapMask+64(FP), R13
gatherLoop:
	MOVQ (R12)(R10*8), AX
	ADDQ R8, AX
	MOVL (R13)(R10*4), BX
	KMOVW BX, K1
	SHRL $16, BX
	KMOVW BX, K2
	VMOVUPS.Z (SI)(AX*4), K1, Z0
	VMOVUPS.Z 64(SI)(AX*4), K2, Z1
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ $128, DI
	INCQ R10
	CMPQ R10, R11
	JLT  gatherNext
	XORQ R10, R10
	ADDQ R9, R8
gatherNext:
	DECQ CX
	JNZ  gatherLoop
	VZEROUPPER
	RET
