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
//   - a chunk alerts when its estimate lies outside the thresholds.
//
// The package is independent of how the per-row estimates were made and
// does no I/O.
package monitor
