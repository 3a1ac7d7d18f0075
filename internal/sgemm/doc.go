// Package sgemm is a small float32 matrix product for the pure-Go build:
// C += A·B on row-major matrices with an AVX2/FMA micro-kernel written in
// Go assembly and Goto-style packing. linalg.Sgemm uses it when OpenBLAS
// is not linked in and the CPU has AVX2 and FMA (Available); it lives
// apart from linalg because a package that uses cgo (linalg with -tags
// openblas) cannot hold Go assembly.
package sgemm
