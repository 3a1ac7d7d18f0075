// Package diversity measures how varied a set of samples is, from their
// feature rows alone: the Vendi score of Friedman and Dieng ("The Vendi
// Score: A Diversity Evaluation Metric for Machine Learning", TMLR 2023),
// as their vendi_score package computes it (vertaix/Vendi-Score).
//
// The Vendi score of n samples with a similarity matrix K (symmetric,
// positive semidefinite, K_ii = 1) is the exponential of the Shannon
// entropy of the eigenvalues λ of K/n, exp(−Σ λ log λ) over λ > 0: the
// effective number of distinct samples, from 1 (all alike) to n (all
// orthogonal). VendiK takes K itself (vendi.score_K). Vendi takes feature
// rows with the linear kernel on L2-normalised rows (order q = 1), as
// vendi.score_dual: when the dimension d is below n the eigenvalues come
// from the d×d matrix X̂ᵀX̂/n, which has the same non-zero eigenvalues as
// X̂X̂ᵀ/n, so the cost is O(n d² + d³) rather than O(n² d + n³).
package diversity
