// Package online selects, among G generative models, the one with the best
// FID or Inception Score while drawing as few samples as possible from
// the others: the online evaluation of Hu, Leung and Farnia, "An
// Optimism-based Approach to Online Evaluation of Generative Models"
// (preprint, November 2024), Protocol 1, with its FID-UCB (Algorithm 1) and IS-UCB
// (Algorithm 2), the naive-UCB baselines of its Appendix D (Eq. 33, 34)
// and the greedy baseline, plus a simulation harness that measures their
// regret over pools of pre-computed samples.
//
// # Protocol
//
// At every step an Algorithm picks a generator (Pick), the caller draws a
// batch of b samples from it (feature rows for FID, class-probability rows
// for IS) and hands them back (Update). Only the picked generator's
// estimate changes, and it changes incrementally: each generator keeps a
// running mean and covariance (or per-class means and variances), never a
// recomputation over all its samples. Generators never visited rank first
// (optimistic FID −∞, optimistic IS +∞, as the paper initialises them), so
// each is visited once before any comparison; ties go to the lowest
// index, which makes the first G picks 0, 1, …, G−1.
//
// # FID per step
//
// The empirical FID of Eq. 1 uses the 1/n covariance, as the paper's online
// algorithms do (offline FID in package frechet uses n−1). Everything about
// the reference (μ_r, Σ_r) is prepared once by NewFIDReference: a factor G
// with Σ_r = GᵀG, the spectrum of Σ_r (Tr Σ_r^{1/2}, ‖Σ_r‖₂). A generator's
// rows are kept projected, y = G(x − c) for a fixed shift c, so the trace term
// Tr (Σ̂ Σ_r)^{1/2} is the sum of square roots of the eigenvalues of the
// covariance of the y's. While the generator has n rows and n is below
// the rank of Σ_r, those eigenvalues come from the n×n centred Gram matrix
// of the y's, itself updated by b new rows at a time: a step costs
// O(b d² + n d + n³), never O(d³). From n = rank on, the covariance of the
// y's is accumulated directly and a step costs one rank-b update plus one
// symmetric eigenvalue problem of size rank.
//
// # Constants
//
// The paper states its bonuses up to constants and logarithms (Õ in Eq. 3
// and 7) and gives the explicit forms in the proofs (Eq. 10, 32, 9) and in
// Appendix D (Eq. 33, 34). This package uses the explicit forms, and every
// quantity the paper leaves to the implementer is a named default with its
// source: DefaultDelta, DefaultMeanDistanceBound, DefaultTruncationRatio,
// DefaultNormSlack, DefaultBonusScale and the IS entropy bound
// (ISParams.EntropyBound, log K by default). Where the paper is ambiguous or
// inconsistent the doc comment of the function says which reading is
// implemented and why. The authors' public code
// (yannxiaoyanhu/optimism-based-eval) differs from the paper in several
// places; this package follows the paper.
//
// With those constants the bonuses are worst-case bounds, much larger than
// the gaps between generators after a few thousand samples: at the paper's
// budget (T = 1000, b = 5) the optimistic algorithms explore broadly, and
// which of them does best depends on where their optimism leans (towards
// high-variance generators, for both FID bonuses). The behavioural tests
// record where FID-UCB and IS-UCB beat the baselines and where they do not.
//
// # Simulation
//
// Simulation runs every algorithm over pools of rows, one pool per
// generator, whose whole-pool scores are the truth: regret, average regret
// and the optimal-pick ratio per step, averaged over independent trials
// that run concurrently (internal/par, each trial's draws from streams
// mixed from the seed, the trial and the generator) and give bit-for-bit
// the same result for the same seed whatever the number of workers. A
// simulation takes a context and stops at the next step once it is
// cancelled. Within a trial all algorithms see the same sequence of
// batches from each generator (common random numbers), which makes their
// comparison paired and lets the expensive per-generator estimates be
// computed once.
//
// The package does no I/O and no printing.
package online
