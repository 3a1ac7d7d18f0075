//go:build !noasm

#include "textflag.h"

// func max3AVX512(dst, a, b, c *float32, groups int)
//
// dst[i] = max(a[i], b[i], c[i]) for i < 16·groups, NaN in any giving
// NaN as Go's max does (VMAXPS alone returns its second source when
// either is NaN, so a NaN first source is put back by mask).
TEXT ·max3AVX512(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), R8
	MOVQ groups+32(FP), CX

max3Loop:
	VMOVUPS (SI), Z0
	VMOVUPS (R8), Z2
	VMAXPS  (DX), Z0, Z1      // max(a, b), b where either is NaN
	VCMPPS  $0x03, Z0, Z0, K1 // a is NaN
	VMOVAPS Z0, K1, Z1
	VMAXPS  Z1, Z2, Z3        // max(c, ab), ab where either is NaN
	VCMPPS  $0x03, Z2, Z2, K2 // c is NaN
	VMOVAPS Z2, K2, Z3
	VMOVUPS Z3, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, R8
	DECQ CX
	JNZ  max3Loop
	VZEROUPPER
	RET

// func sum3AVX512(dst, a, b, c *float32, groups int)
//
// dst[i] = (a[i] + b[i]) + c[i] for i < 16·groups.
TEXT ·sum3AVX512(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), R8
	MOVQ groups+32(FP), CX

sum3Loop:
	VMOVUPS (SI), Z0
	VADDPS  (DX), Z0, Z0
	VADDPS  (R8), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, R8
	DECQ CX
	JNZ  sum3Loop
	VZEROUPPER
	RET

// func sum3DivAVX512(dst, a, b, c, d *float32, groups int)
//
// dst[i] = ((a[i] + b[i]) + c[i]) / d[i] for i < 16·groups.
TEXT ·sum3DivAVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), R8
	MOVQ d+32(FP), R9
	MOVQ groups+40(FP), CX

sum3DivLoop:
	VMOVUPS (SI), Z0
	VADDPS  (DX), Z0, Z0
	VADDPS  (R8), Z0, Z0
	VDIVPS  (R9), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, R8
	ADDQ $64, R9
	DECQ CX
	JNZ  sum3DivLoop
	VZEROUPPER
	RET

// Lane indices of VPERMT2PS that pick the even (poolEven) and odd
// (poolOdd) values of a pair of ZMM registers, 32 consecutive floats.
DATA poolEven<>+0(SB)/4, $0
DATA poolEven<>+4(SB)/4, $2
DATA poolEven<>+8(SB)/4, $4
DATA poolEven<>+12(SB)/4, $6
DATA poolEven<>+16(SB)/4, $8
DATA poolEven<>+20(SB)/4, $10
DATA poolEven<>+24(SB)/4, $12
DATA poolEven<>+28(SB)/4, $14
DATA poolEven<>+32(SB)/4, $16
DATA poolEven<>+36(SB)/4, $18
DATA poolEven<>+40(SB)/4, $20
DATA poolEven<>+44(SB)/4, $22
DATA poolEven<>+48(SB)/4, $24
DATA poolEven<>+52(SB)/4, $26
DATA poolEven<>+56(SB)/4, $28
DATA poolEven<>+60(SB)/4, $30
GLOBL poolEven<>(SB), RODATA|NOPTR, $64

DATA poolOdd<>+0(SB)/4, $1
DATA poolOdd<>+4(SB)/4, $3
DATA poolOdd<>+8(SB)/4, $5
DATA poolOdd<>+12(SB)/4, $7
DATA poolOdd<>+16(SB)/4, $9
DATA poolOdd<>+20(SB)/4, $11
DATA poolOdd<>+24(SB)/4, $13
DATA poolOdd<>+28(SB)/4, $15
DATA poolOdd<>+32(SB)/4, $17
DATA poolOdd<>+36(SB)/4, $19
DATA poolOdd<>+40(SB)/4, $21
DATA poolOdd<>+44(SB)/4, $23
DATA poolOdd<>+48(SB)/4, $25
DATA poolOdd<>+52(SB)/4, $27
DATA poolOdd<>+56(SB)/4, $29
DATA poolOdd<>+60(SB)/4, $31
GLOBL poolOdd<>(SB), RODATA|NOPTR, $64

// func maxStride2AVX512(dst, src *float32, groups int)
//
// dst[i] = max(src[2i], src[2i+1], src[2i+2]) for i < 16·groups, NaN
// in any giving NaN; it reads src[0 : 32·groups+2].
TEXT ·maxStride2AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ groups+16(FP), CX
	VMOVDQU32 poolEven<>(SB), Z14
	VMOVDQU32 poolOdd<>(SB), Z15

maxS2Loop:
	VMOVUPS   (SI), Z16
	VMOVUPS   64(SI), Z17
	VMOVUPS   8(SI), Z18
	VMOVUPS   72(SI), Z19
	VMOVAPS   Z14, Z0
	VPERMI2PS Z17, Z16, Z0 // src[2i]
	VMOVAPS   Z15, Z1
	VPERMI2PS Z17, Z16, Z1 // src[2i+1]
	VMOVAPS   Z14, Z2
	VPERMI2PS Z19, Z18, Z2 // src[2i+2]
	VMAXPS    Z1, Z0, Z3
	VCMPPS    $0x03, Z0, Z0, K1
	VMOVAPS   Z0, K1, Z3
	VMAXPS    Z3, Z2, Z4
	VCMPPS    $0x03, Z2, Z2, K2
	VMOVAPS   Z2, K2, Z4
	VMOVUPS   Z4, (DI)
	ADDQ $64, DI
	ADDQ $128, SI
	DECQ CX
	JNZ  maxS2Loop
	VZEROUPPER
	RET
