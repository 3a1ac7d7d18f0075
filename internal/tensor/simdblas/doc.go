// Package simdblas holds genlens's SIMD BLAS kernels for the pure-Go
// build: DGEMM, SGEMM, DSYRK and DSYR2K on row-major matrices, each a
// register-blocked micro-kernel in Go assembly (AVX2 and FMA: 6×8 tiles
// of float64, 6×16 of float32, twelve YMM accumulators; where the CPU
// has AVX-512, 12×32 tiles of float32 in 24 ZMM accumulators) inside BLIS-style
// packing and cache blocking, split over goroutines by blocks of the
// output so that the result never depends on the number of workers; and
// DSYMV, one fused pass per row of the triangle in fixed bands.
//
// Beside the products it holds the element-wise steps around them in
// the networks, with AVX-512 where the CPU has it and a Go loop giving
// the same bits elsewhere: ReLU, the Winograd transforms of F(4×4,
// 3×3) and the one-dimensional ones of F(m, r) for 1×r and r×1
// convolutions (Winograd1DInput, Winograd1DOutput), the masked rows of
// im2col panels, Exp32 and the softmax's exponentials and column maxima,
// GELU, Swish (QuickGELU, SiLU gates) and the column layer norm.
//
// Implementation plugs them in under gonum: it embeds gonum's native
// BLAS and overrides the routines accelerated here, so gonum's LAPACK
// (Cholesky, tridiagonalisation) speeds up with them. Package linalg is
// the one place that installs it (blas64.Use, blas32.Use). On CPUs
// without AVX2 and FMA, on other architectures and with the noasm build
// tag, Available is false and nothing here is used. The package lives
// apart from linalg because a package that uses cgo (linalg with -tags
// openblas) cannot hold Go assembly.
package simdblas
