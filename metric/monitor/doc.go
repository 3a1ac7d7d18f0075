// Package monitor turns per-row performance estimates of a deployed model
// into the chunked view MLOps teams watch: the operational data is cut
// into chunks (by size, by count, or by calendar period of a timestamp),
// and every chunk gets its estimate with a confidence band, the realised
// value once labels have arrived, and an alert when the estimate leaves
// the range seen in a reference period.
//
// The conventions follow NannyML's performance estimation, which the
// users of `genlens mse estimate` know:
//
//   - a chunk's estimate is the mean of its rows' estimates (for the MSE
//     check model, 2 (h(x) - f(x))² per row);
//   - its band is the estimate ± 3 sampling errors, the sampling error
//     being the standard deviation of the rows' estimates over the square
//     root of the chunk size;
//   - the thresholds are the mean ± 3 standard deviations of the realised
//     metric over the chunks of a labelled reference period, the lower
//     one clipped at 0 for a metric that cannot be negative;
//   - a chunk alerts when its estimate lies outside the thresholds
//     (Evaluate); Run, for a chunk with an interval calibrated on the
//     check model's held-out reference estimates, alerts when that
//     interval lies wholly beyond the thresholds, or, for an
//     extrapolating chunk, when it reaches above the upper one.
//
// Run is the one pipeline every transport calls (`genlens mse estimate`,
// the service's monitors, the demo): chunks → thresholds for chunks of
// that size from the reference's losses → estimates, bands, realised
// values → alerts.
//
// With a DriftModel (fitted on the reference rows' features and stored
// with the check model), Run also says when an estimate is a guess and
// how far the inputs drifted, on the same chunk:
//
//   - out of reference: the fraction of a chunk's rows with a feature
//     outside its reference range; above a limit (5% by default, or
//     what chunks drawn like a small reference exceed 1% of the time,
//     whichever is larger) the chunk is extrapolating, its estimate coming from where the check
//     model has seen no data (NannyML assumes "no covariate shift to
//     previously unseen regions" and checks nothing);
//   - the data reconstruction error of NannyML's multivariate drift:
//     features standardised with the reference mean and standard
//     deviation (ddof 0), PCA on the reference keeping the fewest
//     components that explain at least 65% of the variance, per chunk the
//     mean Euclidean distance between each standardised row and its
//     reconstruction (each row's capped at the reference's
//     ReconstructionCap quantile), with thresholds mean ± 3 standard
//     errors of a chunk mean over cross-fitted reference errors;
//   - per feature, the two-sample Kolmogorov-Smirnov statistic of the
//     chunk against the reference and its p-value as SciPy's ks_2samp
//     computes it with method "auto" (exact distribution up to 10,000
//     values a side, asymptotic beyond).
//   - thin support: per row, the distance to its 10th nearest reference
//     row in the standardised features against the same distance among
//     the reference rows; per chunk the share of rows beyond the
//     reference's 95th percentile, extrapolating above a limit that chunks
//     drawn like the reference exceed about 1% of the time (ThinLimit);
//   - a drift test that sees a shift of independent features: the
//     per-feature KS p-values with the Bonferroni correction at
//     DriftAlpha; DriftAlert when it or the reconstruction error fires.
//
// With held-out estimates of the reference rows (Input.HeldOut), every
// chunk gets an interval of its MSE from reference pseudo-chunks with as
// many rows in thin support as it has.
//
// The package is independent of how the per-row estimates were made and
// does no I/O.
package monitor
