//go:build !noasm

#include "textflag.h"

// The AVX-512 kernels of winograd1d.go: 16 tiles a group, one per lane,
// their a inputs (outputs) gathered (scattered) through a vector of
// offsets. The number of points is a run-time value: the chains of
// products stop at it, registers Z0..Z11 holding the a values.

// func winograd1dInputAVX512(bt *float32, a int, src *float32, off *int32, step, groups int, dst *float32, ldd int)
TEXT ·winograd1dInputAVX512(SB), NOSPLIT, $0-64
	MOVQ bt+0(FP), AX
	MOVQ a+8(FP), BX
	MOVQ src+16(FP), SI
	MOVQ off+24(FP), DX
	MOVQ step+32(FP), R8
	MOVQ groups+40(FP), CX
	MOVQ dst+48(FP), DI
	MOVQ ldd+56(FP), R9
	SHLQ $2, R9
	VPBROADCASTD R8, Z31
ingroup:
	VMOVDQU32 (DX), Z30
	KXNORW K1, K1, K1
	VGATHERDPS (SI)(Z30*4), K1, Z0
	CMPQ BX, $1
	JEQ ingathered
	VPADDD Z31, Z30, Z30
	KXNORW K1, K1, K1
	VGATHERDPS (SI)(Z30*4), K1, Z1
	CMPQ BX, $2
	JEQ ingathered
	VPADDD Z31, Z30, Z30
	KXNORW K1, K1, K1
	VGATHERDPS (SI)(Z30*4), K1, Z2
	CMPQ BX, $3
	JEQ ingathered
	VPADDD Z31, Z30, Z30
	KXNORW K1, K1, K1
	VGATHERDPS (SI)(Z30*4), K1, Z3
	CMPQ BX, $4
	JEQ ingathered
	VPADDD Z31, Z30, Z30
	KXNORW K1, K1, K1
	VGATHERDPS (SI)(Z30*4), K1, Z4
	CMPQ BX, $5
	JEQ ingathered
	VPADDD Z31, Z30, Z30
	KXNORW K1, K1, K1
	VGATHERDPS (SI)(Z30*4), K1, Z5
	CMPQ BX, $6
	JEQ ingathered
	VPADDD Z31, Z30, Z30
	KXNORW K1, K1, K1
	VGATHERDPS (SI)(Z30*4), K1, Z6
	CMPQ BX, $7
	JEQ ingathered
	VPADDD Z31, Z30, Z30
	KXNORW K1, K1, K1
	VGATHERDPS (SI)(Z30*4), K1, Z7
	CMPQ BX, $8
	JEQ ingathered
	VPADDD Z31, Z30, Z30
	KXNORW K1, K1, K1
	VGATHERDPS (SI)(Z30*4), K1, Z8
	CMPQ BX, $9
	JEQ ingathered
	VPADDD Z31, Z30, Z30
	KXNORW K1, K1, K1
	VGATHERDPS (SI)(Z30*4), K1, Z9
	CMPQ BX, $10
	JEQ ingathered
	VPADDD Z31, Z30, Z30
	KXNORW K1, K1, K1
	VGATHERDPS (SI)(Z30*4), K1, Z10
	CMPQ BX, $11
	JEQ ingathered
	VPADDD Z31, Z30, Z30
	KXNORW K1, K1, K1
	VGATHERDPS (SI)(Z30*4), K1, Z11
ingathered:
	MOVQ AX, R10
	MOVQ DI, R11
	MOVQ BX, R12
inrow:
	VMULPS.BCST 0(R10), Z0, Z12
	VMULPS.BCST 4(R10), Z1, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $2
	JEQ inrowdone
	VMULPS.BCST 8(R10), Z2, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $3
	JEQ inrowdone
	VMULPS.BCST 12(R10), Z3, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $4
	JEQ inrowdone
	VMULPS.BCST 16(R10), Z4, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $5
	JEQ inrowdone
	VMULPS.BCST 20(R10), Z5, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $6
	JEQ inrowdone
	VMULPS.BCST 24(R10), Z6, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $7
	JEQ inrowdone
	VMULPS.BCST 28(R10), Z7, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $8
	JEQ inrowdone
	VMULPS.BCST 32(R10), Z8, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $9
	JEQ inrowdone
	VMULPS.BCST 36(R10), Z9, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $10
	JEQ inrowdone
	VMULPS.BCST 40(R10), Z10, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $11
	JEQ inrowdone
	VMULPS.BCST 44(R10), Z11, Z13
	VADDPS Z13, Z12, Z12
inrowdone:
	VMOVUPS Z12, (R11)
	LEAQ (R10)(BX*4), R10
	ADDQ R9, R11
	DECQ R12
	JNZ inrow
	ADDQ $64, DX
	ADDQ $64, DI
	DECQ CX
	JNZ ingroup
	VZEROUPPER
	RET

// func winograd1dOutputAVX512(at *float32, a, mo int, m *float32, ldm int, off *int32, step, n int, bias float32, dst *float32)
TEXT ·winograd1dOutputAVX512(SB), NOSPLIT, $0-80
	MOVQ at+0(FP), AX
	MOVQ a+8(FP), BX
	MOVQ mo+16(FP), R13
	MOVQ m+24(FP), SI
	MOVQ ldm+32(FP), R9
	MOVQ off+40(FP), DX
	MOVQ step+48(FP), R8
	MOVQ n+56(FP), CX
	VBROADCASTSS bias+64(FP), Z29
	MOVQ dst+72(FP), DI
	SHLQ $2, R9
	VPBROADCASTD R8, Z31
	VPXORD Z28, Z28, Z28
outgroup:
	// K2: the lanes of tiles below n.
	MOVQ $0xffff, R10
	CMPQ CX, $16
	JGE outfull
	MOVQ $1, R10
	SHLQ CX, R10
	DECQ R10
outfull:
	KMOVW R10, K2
	MOVQ SI, R11
	VMOVUPS (R11), Z0
	CMPQ BX, $1
	JEQ outloaded
	ADDQ R9, R11
	VMOVUPS (R11), Z1
	CMPQ BX, $2
	JEQ outloaded
	ADDQ R9, R11
	VMOVUPS (R11), Z2
	CMPQ BX, $3
	JEQ outloaded
	ADDQ R9, R11
	VMOVUPS (R11), Z3
	CMPQ BX, $4
	JEQ outloaded
	ADDQ R9, R11
	VMOVUPS (R11), Z4
	CMPQ BX, $5
	JEQ outloaded
	ADDQ R9, R11
	VMOVUPS (R11), Z5
	CMPQ BX, $6
	JEQ outloaded
	ADDQ R9, R11
	VMOVUPS (R11), Z6
	CMPQ BX, $7
	JEQ outloaded
	ADDQ R9, R11
	VMOVUPS (R11), Z7
	CMPQ BX, $8
	JEQ outloaded
	ADDQ R9, R11
	VMOVUPS (R11), Z8
	CMPQ BX, $9
	JEQ outloaded
	ADDQ R9, R11
	VMOVUPS (R11), Z9
	CMPQ BX, $10
	JEQ outloaded
	ADDQ R9, R11
	VMOVUPS (R11), Z10
	CMPQ BX, $11
	JEQ outloaded
	ADDQ R9, R11
	VMOVUPS (R11), Z11
outloaded:
	VMOVDQU32 (DX), Z30
	MOVQ AX, R10
	MOVQ R13, R12
outrow:
	VMULPS.BCST 0(R10), Z0, Z12
	VMULPS.BCST 4(R10), Z1, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $2
	JEQ outrowdone
	VMULPS.BCST 8(R10), Z2, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $3
	JEQ outrowdone
	VMULPS.BCST 12(R10), Z3, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $4
	JEQ outrowdone
	VMULPS.BCST 16(R10), Z4, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $5
	JEQ outrowdone
	VMULPS.BCST 20(R10), Z5, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $6
	JEQ outrowdone
	VMULPS.BCST 24(R10), Z6, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $7
	JEQ outrowdone
	VMULPS.BCST 28(R10), Z7, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $8
	JEQ outrowdone
	VMULPS.BCST 32(R10), Z8, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $9
	JEQ outrowdone
	VMULPS.BCST 36(R10), Z9, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $10
	JEQ outrowdone
	VMULPS.BCST 40(R10), Z10, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $11
	JEQ outrowdone
	VMULPS.BCST 44(R10), Z11, Z13
	VADDPS Z13, Z12, Z12
outrowdone:
	VADDPS Z29, Z12, Z12
	VMAXPS Z12, Z28, Z12
	KMOVW K2, K1
	VSCATTERDPS Z12, K1, (DI)(Z30*4)
	VPADDD Z31, Z30, Z30
	LEAQ (R10)(BX*4), R10
	DECQ R12
	JNZ outrow
	ADDQ $64, SI
	ADDQ $64, DX
	SUBQ $16, CX
	JG outgroup
	VZEROUPPER
	RET
