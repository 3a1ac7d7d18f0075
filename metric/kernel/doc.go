// Package kernel provides the positive semi-definite kernels genlens scores
// samples with, their bandwidth heuristics, and Gram matrices.
//
// Vector kernels (RBF, Laplacian, Polynomial, Cosine, Linear) act on the rows
// of a *mat.Dense. Their Gram and cross-Gram matrices are built from one
// SYRK or GEMM call on the whole block of rows followed by an element-wise
// map, so the cost is that of a matrix product rather than of n² small dot
// products. The Laplacian kernel needs L1 distances, which have no
// matrix-product form; it is the one kernel computed pair by pair.
//
// Rows that share a large offset make the matrix products lose their
// digits: RBF centres such rows (its values do not change), and Offset
// and Shifted let two-sample statistics of the linear and polynomial
// kernels, which do change, be computed around the offset exactly.
//
// CS is the contiguous-subsequence kernel on token sequences of Baum et al.
// (2023), used by Gruber & Buettner (ICML 2024; Appendix D, Eq. 18-19) to compute kernel entropy
// of LLM answers without an embedding model.
package kernel
