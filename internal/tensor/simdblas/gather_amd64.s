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

// func gatherIdx32AVX512(dst *float32, rows int, src *float32, base, step, ntap, tap0 int, tapOff *int, idx *[32]int32, cnt int)
//
// Row r of dst (32 values) gathers src at the row's offset plus idx[q]
// for q < cnt (VGATHERDPS, which clears its mask: K3 and K4 keep the
// lanes), zero past cnt. rows >= 1, 1 <= cnt <= 32.
TEXT ·gatherIdx32AVX512(SB), NOSPLIT, $0-80
	MOVQ cnt+72(FP), CX
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K3
	SHRQ $16, AX
	KMOVW AX, K4
	MOVQ dst+0(FP), DI
	MOVQ rows+8(FP), CX
	MOVQ src+16(FP), SI
	MOVQ base+24(FP), R8
	MOVQ step+32(FP), R9
	MOVQ ntap+40(FP), R11
	MOVQ tap0+48(FP), R10
	MOVQ tapOff+56(FP), R12
	MOVQ idx+64(FP), R13
	VMOVDQU32 (R13), Z2
	VMOVDQU32 64(R13), Z3
gatherIdxLoop:
	MOVQ (R12)(R10*8), AX
	ADDQ R8, AX
	LEAQ (SI)(AX*4), R14
	KMOVW K3, K1
	KMOVW K4, K2
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VGATHERDPS (R14)(Z2*4), K1, Z0
	VGATHERDPS (R14)(Z3*4), K2, Z1
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ $128, DI
	INCQ R10
	CMPQ R10, R11
	JLT  gatherIdxNext
	XORQ R10, R10
	ADDQ R9, R8
gatherIdxNext:
	DECQ CX
	JNZ  gatherIdxLoop
	VZEROUPPER
	RET
