// Package kscore estimates the kernel-score quantities of Gruber &
// Buettner, "A Bias-Variance-Covariance Decomposition of Kernel Scores for
// Generative Models" (ICML 2024) from samples alone: predictive kernel
// entropy, kernel score, unbiased MMD², noise, distributional variance
// (Eq. 9), covariance (Eq. 10), correlation (Eq. 11), the unbiased bias,
// and the predicted gain of an ensemble (Example 3.4).
//
// Every estimator is a function of kernel sums between sample sets: the sum
// over a set's distinct pairs (its "within" mean) and the sum over all
// pairs of two sets (their "between" mean). The sums are computed once per
// call, a panel of sets at a time through the kernel's cross-Gram (one GEMM
// per panel), so a decomposition of n models with m samples each costs one
// pass over the (nm)² kernel values and O(n²) memory besides one panel.
//
// A sample set is a *mat.Dense whose rows are samples. Unconditional data is
// one set per model; conditional data (one prediction per input instance)
// is one set per model and instance, and the terms are estimated per
// instance and then averaged, as in the paper's experiments.
//
// With these estimators the identity of Theorem 3.2, kernel score = noise +
// bias + variance, holds exactly for every sample, not only in expectation;
// Decomposition.IdentityGap reports the rounding residue as a check.
package kscore
