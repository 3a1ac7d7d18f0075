//go:build !noasm

#include "textflag.h"

// The AVX-512 kernels of winograd1d.go: 16 tiles a group, one per lane,
// their a inputs (outputs) gathered (scattered) through a vector of
// offsets. The number of points is a run-time value: each chain of
// products stops at it (the compare and jump after every product),
// registers Z0..Z11 holding the a values.

// 0, 1, …, 15: the offsets of a group of tiles that lie side by side.
DATA wino1Iota<>+0(SB)/4, $0
DATA wino1Iota<>+4(SB)/4, $1
DATA wino1Iota<>+8(SB)/4, $2
DATA wino1Iota<>+12(SB)/4, $3
DATA wino1Iota<>+16(SB)/4, $4
DATA wino1Iota<>+20(SB)/4, $5
DATA wino1Iota<>+24(SB)/4, $6
DATA wino1Iota<>+28(SB)/4, $7
DATA wino1Iota<>+32(SB)/4, $8
DATA wino1Iota<>+36(SB)/4, $9
DATA wino1Iota<>+40(SB)/4, $10
DATA wino1Iota<>+44(SB)/4, $11
DATA wino1Iota<>+48(SB)/4, $12
DATA wino1Iota<>+52(SB)/4, $13
DATA wino1Iota<>+56(SB)/4, $14
DATA wino1Iota<>+60(SB)/4, $15
GLOBL wino1Iota<>(SB), RODATA|NOPTR, $64

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
	// R13: the byte offset of row a−1 of bt.
	LEAQ -1(BX), R13
	IMULQ BX, R13
	SHLQ $2, R13
ingroup:
	VMOVDQU32 (DX), Z30
	// A group of tiles at consecutive offsets (down the columns of a
	// map) is loaded, not gathered.
	VPBROADCASTD (DX), Z27
	VPADDD wino1Iota<>(SB), Z27, Z27
	VPCMPEQD Z27, Z30, K3
	KORTESTW K3, K3
	JCC ingather
	MOVLQSX (DX), R14
	LEAQ (SI)(R14*4), R14
	MOVQ R8, R15
	SHLQ $2, R15
	VMOVUPS (R14), Z0
	CMPQ BX, $1
	JEQ ingathered
	ADDQ R15, R14
	VMOVUPS (R14), Z1
	CMPQ BX, $2
	JEQ ingathered
	ADDQ R15, R14
	VMOVUPS (R14), Z2
	CMPQ BX, $3
	JEQ ingathered
	ADDQ R15, R14
	VMOVUPS (R14), Z3
	CMPQ BX, $4
	JEQ ingathered
	ADDQ R15, R14
	VMOVUPS (R14), Z4
	CMPQ BX, $5
	JEQ ingathered
	ADDQ R15, R14
	VMOVUPS (R14), Z5
	CMPQ BX, $6
	JEQ ingathered
	ADDQ R15, R14
	VMOVUPS (R14), Z6
	CMPQ BX, $7
	JEQ ingathered
	ADDQ R15, R14
	VMOVUPS (R14), Z7
	CMPQ BX, $8
	JEQ ingathered
	ADDQ R15, R14
	VMOVUPS (R14), Z8
	CMPQ BX, $9
	JEQ ingathered
	ADDQ R15, R14
	VMOVUPS (R14), Z9
	CMPQ BX, $10
	JEQ ingathered
	ADDQ R15, R14
	VMOVUPS (R14), Z10
	CMPQ BX, $11
	JEQ ingathered
	ADDQ R15, R14
	VMOVUPS (R14), Z11
	JMP ingathered
ingather:
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
	// Row 0 (the point 0): the even columns.
	VMULPS.BCST 0(AX), Z0, Z12
	CMPQ BX, $4
	JLT inrow0
	VMULPS.BCST 8(AX), Z2, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $6
	JLT inrow0
	VMULPS.BCST 16(AX), Z4, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $8
	JLT inrow0
	VMULPS.BCST 24(AX), Z6, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $10
	JLT inrow0
	VMULPS.BCST 32(AX), Z8, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $12
	JLT inrow0
	VMULPS.BCST 40(AX), Z10, Z13
	VADDPS Z13, Z12, Z12
inrow0:
	VMOVUPS Z12, (DI)
	// Rows 2h−1 and 2h (the points ±p): even and odd sums E and O of
	// row 2h−1, then E + O and E − O.
	LEAQ (AX)(BX*4), R10
	LEAQ (DI)(R9*1), R11
	MOVQ BX, R12
	SUBQ $2, R12
	SHRQ $1, R12
inpair:
	VMULPS.BCST 0(R10), Z0, Z12
	CMPQ BX, $4
	JLT inpaireven
	VMULPS.BCST 8(R10), Z2, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $6
	JLT inpaireven
	VMULPS.BCST 16(R10), Z4, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $8
	JLT inpaireven
	VMULPS.BCST 24(R10), Z6, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $10
	JLT inpaireven
	VMULPS.BCST 32(R10), Z8, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $12
	JLT inpaireven
	VMULPS.BCST 40(R10), Z10, Z13
	VADDPS Z13, Z12, Z12
inpaireven:
	VMULPS.BCST 4(R10), Z1, Z14
	CMPQ BX, $6
	JLT inpairodd
	VMULPS.BCST 12(R10), Z3, Z13
	VADDPS Z13, Z14, Z14
	CMPQ BX, $8
	JLT inpairodd
	VMULPS.BCST 20(R10), Z5, Z13
	VADDPS Z13, Z14, Z14
	CMPQ BX, $10
	JLT inpairodd
	VMULPS.BCST 28(R10), Z7, Z13
	VADDPS Z13, Z14, Z14
	CMPQ BX, $12
	JLT inpairodd
	VMULPS.BCST 36(R10), Z9, Z13
	VADDPS Z13, Z14, Z14
inpairodd:
	VADDPS Z14, Z12, Z15
	VSUBPS Z14, Z12, Z12
	VMOVUPS Z15, (R11)
	ADDQ R9, R11
	VMOVUPS Z12, (R11)
	ADDQ R9, R11
	LEAQ (R10)(BX*8), R10
	DECQ R12
	JNZ inpair
	// Row a−1 (∞): the odd columns.
	LEAQ (AX)(R13*1), R10
	VMULPS.BCST 4(R10), Z1, Z12
	CMPQ BX, $4
	JLT inrowinf
	VMULPS.BCST 12(R10), Z3, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $6
	JLT inrowinf
	VMULPS.BCST 20(R10), Z5, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $8
	JLT inrowinf
	VMULPS.BCST 28(R10), Z7, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $10
	JLT inrowinf
	VMULPS.BCST 36(R10), Z9, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $12
	JLT inrowinf
	VMULPS.BCST 44(R10), Z11, Z13
	VADDPS Z13, Z12, Z12
inrowinf:
	VMOVUPS Z12, (R11)
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
	SHLQ $2, R8
	VPXORD Z28, Z28, Z28
	// R14: the byte offset of element a−1 (∞) of a tile's products.
	LEAQ -1(BX), R14
	IMULQ R9, R14
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
	// s0 in Z0, s∞ in Z14, and for the points ±p the sum u = s₊ + s₋
	// in Z(2h−1) and the difference v = s₊ − s₋ in Z(2h).
	VMOVUPS (SI), Z0
	VMOVUPS (SI)(R14*1), Z14
	MOVQ SI, R11
	ADDQ R9, R11
	VMOVUPS (R11), Z1
	ADDQ R9, R11
	VMOVUPS (R11), Z2
	VADDPS Z2, Z1, Z13
	VSUBPS Z2, Z1, Z2
	VMOVAPS Z13, Z1
	CMPQ BX, $6
	JLT outloaded
	ADDQ R9, R11
	VMOVUPS (R11), Z3
	ADDQ R9, R11
	VMOVUPS (R11), Z4
	VADDPS Z4, Z3, Z13
	VSUBPS Z4, Z3, Z4
	VMOVAPS Z13, Z3
	CMPQ BX, $8
	JLT outloaded
	ADDQ R9, R11
	VMOVUPS (R11), Z5
	ADDQ R9, R11
	VMOVUPS (R11), Z6
	VADDPS Z6, Z5, Z13
	VSUBPS Z6, Z5, Z6
	VMOVAPS Z13, Z5
	CMPQ BX, $10
	JLT outloaded
	ADDQ R9, R11
	VMOVUPS (R11), Z7
	ADDQ R9, R11
	VMOVUPS (R11), Z8
	VADDPS Z8, Z7, Z13
	VSUBPS Z8, Z7, Z8
	VMOVAPS Z13, Z7
	CMPQ BX, $12
	JLT outloaded
	ADDQ R9, R11
	VMOVUPS (R11), Z9
	ADDQ R9, R11
	VMOVUPS (R11), Z10
	VADDPS Z10, Z9, Z13
	VSUBPS Z10, Z9, Z10
	VMOVAPS Z13, Z9
outloaded:
	VMOVDQU32 (DX), Z30
	// K3 all set: the tiles lie side by side, and their rows are stored
	// from R15 rather than scattered.
	VPBROADCASTD (DX), Z27
	VPADDD wino1Iota<>(SB), Z27, Z27
	VPCMPEQD Z27, Z30, K3
	MOVLQSX (DX), R15
	LEAQ (DI)(R15*4), R15
	MOVQ AX, R10
	MOVQ R13, R12
outrow:
	// Even rows: s0 and the sums u; odd rows: the differences v.
	VMULPS.BCST 0(R10), Z0, Z12
	VMULPS.BCST 4(R10), Z1, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $6
	JLT outsums
	VMULPS.BCST 12(R10), Z3, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $8
	JLT outsums
	VMULPS.BCST 20(R10), Z5, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $10
	JLT outsums
	VMULPS.BCST 28(R10), Z7, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $12
	JLT outsums
	VMULPS.BCST 36(R10), Z9, Z13
	VADDPS Z13, Z12, Z12
outsums:
	// The last row adds s∞; then the bias, the clamp, the scatter.
	CMPQ R12, $1
	JNE outevennotlast
	VMULPS.BCST -4(R10)(BX*4), Z14, Z13
	VADDPS Z13, Z12, Z12
outevennotlast:
	VADDPS Z29, Z12, Z12
	VMAXPS Z12, Z28, Z12
	KORTESTW K3, K3
	JCC outevenscatter
	VMOVUPS Z12, K2, (R15)
	JMP outevenstored
outevenscatter:
	KMOVW K2, K1
	VSCATTERDPS Z12, K1, (DI)(Z30*4)
outevenstored:
	ADDQ R8, R15
	VPADDD Z31, Z30, Z30
	LEAQ (R10)(BX*4), R10
	DECQ R12
	JZ outgroupdone
	VMULPS.BCST 4(R10), Z2, Z12
	CMPQ BX, $6
	JLT outdiffs
	VMULPS.BCST 12(R10), Z4, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $8
	JLT outdiffs
	VMULPS.BCST 20(R10), Z6, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $10
	JLT outdiffs
	VMULPS.BCST 28(R10), Z8, Z13
	VADDPS Z13, Z12, Z12
	CMPQ BX, $12
	JLT outdiffs
	VMULPS.BCST 36(R10), Z10, Z13
	VADDPS Z13, Z12, Z12
outdiffs:
	// The last row adds s∞; then the bias, the clamp, the scatter.
	CMPQ R12, $1
	JNE outoddnotlast
	VMULPS.BCST -4(R10)(BX*4), Z14, Z13
	VADDPS Z13, Z12, Z12
outoddnotlast:
	VADDPS Z29, Z12, Z12
	VMAXPS Z12, Z28, Z12
	KORTESTW K3, K3
	JCC outoddscatter
	VMOVUPS Z12, K2, (R15)
	JMP outoddstored
outoddscatter:
	KMOVW K2, K1
	VSCATTERDPS Z12, K1, (DI)(Z30*4)
outoddstored:
	ADDQ R8, R15
	VPADDD Z31, Z30, Z30
	LEAQ (R10)(BX*4), R10
	DECQ R12
	JNZ outrow
outgroupdone:
	ADDQ $64, SI
	ADDQ $64, DX
	SUBQ $16, CX
	JG outgroup
	VZEROUPPER
	RET
