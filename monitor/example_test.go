package monitor_test

import (
	"fmt"

	"genlens/monitor"
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
