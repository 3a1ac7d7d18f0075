package monitor_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/monitor"
)

// Chunk per-row MSE estimates, derive thresholds from a reference period,
// and flag the chunks that leave them.
func ExampleEvaluate() {
	// Realised MSE of four reference chunks: mean 1, sd 0.1.
	th := monitor.ReferenceThresholds([]float64{0.9, 1.1, 0.9, 1.1}, monitor.DefaultWidth, true)
	// Per-row estimates 2 (h(x) - f(x))² of six operational rows.
	est := []float64{1.0, 1.2, 0.8, 1.0, 2.2, 1.8}
	chunks, _ := monitor.BySize(len(est), 2)
	res, _ := monitor.Evaluate(chunks, est, nil, monitor.Options{Thresholds: th, NonNegative: true})
	fmt.Printf("thresholds [%.1f, %.1f]\n", th.Lower, th.Upper)
	for _, r := range res {
		fmt.Printf("rows %d-%d: estimate %.1f, band [%.1f, %.1f], alert %v\n", r.Start, r.End-1, r.Estimate, r.Lower, r.Upper, r.Alert)
	}
	// Output:
	// thresholds [0.7, 1.3]
	// rows 0-1: estimate 1.1, band [0.8, 1.4], alert false
	// rows 2-3: estimate 0.9, band [0.6, 1.2], alert false
	// rows 4-5: estimate 2.0, band [1.4, 2.6], alert true
}

// Thresholds for daily chunks from a labelled reference period: its
// per-row squared errors are cut into chunks as large as the operational
// ones, so that the spread of their means is comparable.
func ExampleMatchedThresholds() {
	reference := []float64{0.8, 1.0, 1.2, 1.4, 0.6, 1.0, 0.9, 1.1, 1.3}
	days, _ := monitor.ByCount(7, 2) // 4 + 3 operational rows
	th, size := monitor.MatchedThresholds(reference, days, monitor.DefaultWidth, true)
	fmt.Printf("%d reference chunks of %d rows: [%.2f, %.2f]\n", th.Chunks, size, th.Lower, th.Upper)
	// Output:
	// 2 reference chunks of 4 rows: [0.70, 1.30]
}

// The two-sample Kolmogorov-Smirnov test of a chunk against reference
// values: the statistic and its exact p-value. For 3 and 4 values that
// do not overlap, only 2 of the C(7, 3) = 35 equally likely arrangements
// are as extreme.
func ExampleKSPValue() {
	ref := []float64{1, 2, 3}
	chunk := []float64{4, 5, 6, 7}
	d := monitor.KSStatistic(ref, chunk)
	fmt.Printf("D = %.2f, p = %.4f (2/35 = %.4f)\n", d, monitor.KSPValue(d, len(ref), len(chunk)), 2.0/35)
	// Output:
	// D = 1.00, p = 0.0571 (2/35 = 0.0571)
}

// The pipeline with a drift model: the chunk whose rows left the
// reference range is extrapolating.
func ExampleRun() {
	// 40 reference rows of x spread over [-1.5, 1.5], their losses about 1.
	ref := mat.NewDense(40, 1, nil)
	losses := make([]float64, 40)
	for i := range 40 {
		ref.Set(i, 0, -1.5+3*float64(i)/39)
		losses[i] = 1 + 0.1*float64(i%3-1)
	}
	drift, _ := monitor.FitDrift(ref, []string{"x"})
	features := [][]float64{{0}, {0.5}, {-1}, {1}, {2}, {2.5}, {0}, {3}}
	est := []float64{1, 1, 1, 1, 2, 2, 2, 2}
	chunks, _ := monitor.BySize(len(est), 4)
	rep, _ := monitor.Run(monitor.Input{Chunks: chunks, Estimates: est, Reference: losses,
		NonNegative: true, Drift: drift, Features: features})
	for _, r := range rep.Results {
		fmt.Printf("chunk %d: estimate %.1f, %.0f%% out of reference, extrapolating %v\n", r.Index, r.Estimate, 100*r.Drift.OutOfReference, r.Drift.Extrapolating)
	}
	// Output:
	// chunk 0: estimate 1.0, 0% out of reference, extrapolating false
	// chunk 1: estimate 2.0, 75% out of reference, extrapolating true
}
