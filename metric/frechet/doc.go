// Package frechet computes the standard two-sample scores of generative
// modelling from feature rows the user already has: Gaussian feature
// statistics, the Fréchet distance (FID on Inception features; FD-DINOv2,
// FAD and FVD on other embeddings), the Inception Score and the Kernel
// Inception Distance (as Section 3 of Hu, Leung and Farnia, "An
// Optimism-based Approach to Online Evaluation of Generative Models",
// 2024, states them).
//
// # Statistics
//
// An Accumulator streams rows, float32 or float64, into a float64 mean and
// covariance with centred (Welford / Chan et al.) updates, so features with
// large common offsets lose no accuracy; batches go through one BLAS
// product. Stats are written and read as .npz files with arrays mu and
// sigma, the format of pytorch-fid's --save-stats.
//
// Normalisation: offline FID uses the unbiased covariance, divided by n-1
// (ddof = 1), as pytorch-fid, clean-fid and np.cov; the online
// algorithms of package online use 1/n (ddof = 0). Every function that builds a covariance
// takes ddof explicitly.
//
// # Partial statistics
//
// A Part holds what one shard of a sharded computation contributes: its
// row count, float64 mean and centred scatter matrix
// M = Σ (x − x̄)(x − x̄)ᵀ, with the listing of the whole input and the
// provenance of the features, written as a pickle-free .npz (WritePart,
// ReadPart). MergeParts and TreeMerger combine parts by Chan, Golub and
// LeVeque's pairwise formula ("Algorithms for Computing the Sample
// Variance: Analysis and Recommendations", The American Statistician,
// 1983) in a fixed binary tree over the shard indices, so the order in
// which parts arrive changes no bit; raw sums of x and xxᵀ, which lose
// every digit under a large common offset, are never formed.
//
// # Provenance
//
// Provenance records how features were made (embedder, preprocessing,
// output, weights' SHA-256, input fingerprint); statistics and part files
// keep it as NumPy text scalars, and Mismatch refuses to compare features
// made differently, naming both files.
//
// # Fréchet distance
//
// Distance never takes a general matrix square root (scipy's sqrtm is slow
// and, in scipy 1.11, returns huge imaginary parts on some inputs): the
// trace term Tr (Σ₁Σ₂)^{1/2} is the sum of the singular values of
// G₂G₁ᵀ for pivoted Cholesky factors Σ = GᵀG, see TraceSqrtProduct.
// Singular covariances are fine, identical inputs give exactly 0, and the
// result is never NaN. A covariance that is clearly not positive
// semidefinite (beyond PSDTolerance: an entry larger than its variances
// allow, negative pivots, a distance negative beyond rounding) is an error
// wrapping ErrNotPSD, not a distance clamped to 0: a *PairError for an
// entry no covariance can have, a *PSDError naming the statistics at fault
// otherwise, so that callers can blame the right file. A Reference caches
// the factor of a fixed reference covariance, so that distances from many
// sample sets (model comparison, online selection) pay the O(d³) work
// once; with fewer rows than dimensions they do no O(d³) work at all.
//
// # Inception Score and KID
//
// InceptionScore takes class-probability rows (softmax outputs) and
// follows the original code's consecutive splits; KID is the unbiased MMD²
// with the cubic polynomial kernel over random subsets, seeded; it takes
// a context, checked between subsets, since at torch-fidelity's defaults it
// runs for seconds.
//
// # CMMD
//
// CMMD (Jayasumana et al., CVPR 2024) is the biased MMD² with a Gaussian
// RBF kernel of bandwidth 10, times 1000, as the authors' code computes
// it; blocks of rows go through one GEMM each, so no kernel matrix is
// held.
//
// The package does no I/O besides reading and writing statistics and part
// files (ReadStats, ReadStatsFS, IsStatsFile, WriteStats, WriteStatsMeta,
// ReadPart, ReadPartInfo, WritePart, ReadProvenance), and no
// printing. Building with -tags openblas (see genlens/linalg) moves every
// matrix product and factorisation to OpenBLAS and LAPACKE.
package frechet
