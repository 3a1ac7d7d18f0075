// Package linalg chooses the BLAS/LAPACK backend genlens runs on and holds
// the few dense building blocks the estimators share.
//
// By default every matrix product goes through gonum's pure-Go BLAS, so
// genlens builds anywhere Go does; on amd64 CPUs with AVX2 and FMA the
// default build installs internal/simdblas's assembly kernels (DGEMM,
// SGEMM, DSYRK, DSYR2K) under it, unless GENLENS_SIMD=off. Backend names
// what is in use. Building with -tags openblas swaps in
// OpenBLAS and LAPACKE through cgo (Debian: libopenblas-dev liblapacke-dev);
// the swap happens in an init function, so any package that imports linalg
// (directly or through kernel) gets the fast backend without code changes.
//
// The Gram products here exist because pairwise similarities are the hot
// path of every kernel estimator: X Xᵀ is computed by a recursive SYRK made
// of large GEMMs (about half the flops of one GEMM, exploiting symmetry;
// gonum's own Dsyrk is single-threaded) and X Yᵀ with one GEMM, never with
// per-pair loops.
package linalg
