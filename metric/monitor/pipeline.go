package monitor

import (
	"fmt"
	"math"
)

// Input is what Run needs of a monitored model: its operational rows cut
// into chunks, every row's estimate (and realised loss once labelled),
// and the realised losses of a labelled reference period from which the
// thresholds come.
type Input struct {
	// Chunks cut the rows of Estimates; they may be empty (Run then
	// returns the thresholds only, which needs ChunkSize).
	Chunks []Chunk
	// Estimates are the per-row estimates; Realized the per-row realised
	// losses (nil without labels, NaN for a row not labelled yet).
	Estimates, Realized []float64
	// Reference is the per-row realised loss of the reference period,
	// in row order.
	Reference []float64
	// HeldOut, when set, is the per-row estimate of the reference rows
	// by check models that did not train on them (cross-fitting), on the
	// scale of Estimates; the chunks' intervals are calibrated on it.
	// Rows of Drift's reference are Reference's rows.
	HeldOut []float64
	// ChunkSize, when positive, is the nominal chunk size the reference
	// is cut into for the thresholds, so that they do not move while the
	// last chunk fills; 0 uses the median size of Chunks
	// (MatchedThresholds).
	ChunkSize int
	// Width is the half-width of bands and thresholds; 0 means
	// DefaultWidth.
	Width float64
	// NonNegative clips lower limits at 0 (MSE and other losses).
	NonNegative bool

	// Drift, when set, adds extrapolation and drift to every chunk from
	// Features, the rows' features in Drift's column order (one row per
	// estimate).
	Drift    *DriftModel
	Features [][]float64
	// MaxOutOfReference is the fraction of a chunk's rows outside the
	// reference ranges above which the chunk is extrapolating; 0 means
	// DefaultMaxOutOfReference.
	MaxOutOfReference float64
	// DriftFrom, when positive, limits drift to Chunks[DriftFrom:] (the
	// others get none), so that a caller needing it for the latest
	// chunks only need not read the features of the others (their rows
	// in Features may be nil).
	DriftFrom int
}

// Report is the outcome of Run.
type Report struct {
	// Results holds one result per chunk of the input, in order.
	Results []Result
	// Thresholds are those of the estimate; ReferenceRows is the size of
	// the reference chunks behind them.
	Thresholds    Thresholds
	ReferenceRows int
	// DriftThresholds bound the reconstruction error of chunks of
	// ReferenceRows rows drawn like the reference (not Available without
	// a drift model); see resampledThresholds.
	DriftThresholds Thresholds
	// MaxOutOfReference is the extrapolation limit applied.
	MaxOutOfReference float64
}

// Run is the monitoring pipeline: it derives the thresholds of chunks as
// large as the operational ones from the reference's realised losses
// (lossThresholds), evaluates every
// chunk (estimate, band, realised value, alert) and, with a drift model,
// its extrapolation and drift. Every transport (the command line, the
// service and the demo) calls it, so that a chunk means the same
// everywhere.
func Run(in Input) (*Report, error) {
	w := in.Width
	if w == 0 {
		w = DefaultWidth
	}
	size := in.ChunkSize
	switch {
	case size > 0:
	case len(in.Chunks) == 0:
		return nil, fmt.Errorf("monitor: no chunks and no chunk size")
	default:
		_, size = MatchedThresholds(in.Reference, in.Chunks, w, in.NonNegative)
	}
	rep := &Report{ReferenceRows: size, Thresholds: lossThresholds(in.Reference, size, w, in.NonNegative)}
	rep.DriftThresholds = ReferenceThresholds(nil, w, true)
	if in.Drift != nil {
		rep.DriftThresholds = resampledThresholds(in.Drift.cappedReferenceErrors(), size, w, true)
		rep.MaxOutOfReference = in.MaxOutOfReference
		if rep.MaxOutOfReference == 0 {
			rep.MaxOutOfReference = DefaultMaxOutOfReference
		}
	}
	if len(in.Chunks) == 0 {
		return rep, nil
	}
	res, err := Evaluate(in.Chunks, in.Estimates, in.Realized, Options{Width: w, Thresholds: rep.Thresholds, NonNegative: in.NonNegative})
	if err != nil {
		return nil, err
	}
	if in.Drift != nil {
		if len(in.Features) != len(in.Estimates) {
			return nil, fmt.Errorf("monitor: %d rows of features and %d estimates", len(in.Features), len(in.Estimates))
		}
		for i := max(0, in.DriftFrom); i < len(res); i++ {
			c := res[i].Chunk
			d, err := in.Drift.Chunk(in.Features[c.Start:c.End], rep.MaxOutOfReference, rep.DriftThresholds)
			if err != nil {
				return nil, fmt.Errorf("monitor: chunk %d: %w", c.Index, err)
			}
			res[i].Drift = d
		}
	}
	var thin []bool
	if in.Drift != nil {
		thin = in.Drift.ReferenceThin()
	}
	iv := newIntervalModel(in.HeldOut, in.Reference, thin)
	if iv != nil {
		iv.calibrate(size)
	}
	for i := range res {
		r := &res[i]
		r.EstimateLower, r.EstimateUpper = r.Lower, r.Upper
		if iv == nil {
			continue
		}
		t := 0
		if r.Drift != nil {
			t = r.Drift.Thin
		}
		lo, hi := iv.ratios(r.Rows(), t)
		r.EstimateLower, r.EstimateUpper, r.IntervalCalibrated = r.Estimate*lo, r.Estimate*hi, true
		r.Alert = intervalAlert(r, rep.Thresholds)
	}
	rep.Results = res
	return rep, nil
}

// intervalAlert is the MSE alert of a chunk with a calibrated interval:
// set when the interval lies wholly beyond the thresholds, or, for an
// extrapolating chunk, when it reaches above the upper threshold (there
// the estimate cannot be trusted and the interval is a lower bound on
// the uncertainty, so the MSE may be out of bounds). The estimate alone
// outside the thresholds does not alert: the thresholds bound the
// realised MSE of chunks drawn like the reference, and the estimate of
// such a chunk strays beyond them far more often than their nominal
// 0.3%, because the check model is off on whole draws and chunk losses
// are heavy-tailed (6-8% of iid chunks on abalone, space_ga and
// cpusmall; see docs/monitoring-support.md). A chunk without a
// calibrated interval keeps the estimate's rule (Evaluate): its band is
// the estimate's sampling noise alone, which the thresholds already
// count.
func intervalAlert(r *Result, th Thresholds) bool {
	if !th.Available() {
		return false
	}
	if r.EstimateLower > th.Upper || r.EstimateUpper < th.Lower {
		return true
	}
	return r.Drift != nil && r.Drift.Extrapolating && r.EstimateUpper > th.Upper
}

// lossThresholds returns the thresholds of the estimate of chunks of
// size rows from the reference rows' realised losses: the
// resampledThresholds of their mean, available when the reference holds
// at least two chunks' worth of labelled rows (Chunks counts them), as
// when the thresholds came from the spread of that many reference chunks.
// That spread, a standard deviation of a handful of chunk means (4 for
// 1,000 rows in chunks of 250), alerted on 10-16% of chunks drawn like
// the reference.
func lossThresholds(reference []float64, size int, width float64, nonNegative bool) Thresholds {
	n := 0
	for _, v := range reference {
		if !math.IsNaN(v) {
			n++
		}
	}
	t := resampledThresholds(reference, size, width, nonNegative)
	t.Chunks = n / max(size, 1)
	if t.Chunks < 2 {
		t.Lower, t.Upper, t.Std = math.NaN(), math.NaN(), math.NaN()
	}
	return t
}

// resampledThresholds returns the thresholds of the mean of size values
// drawn at random from the reference rows' per-row values: Mean is their
// mean and Std the spread of a chunk mean about it, sd·√(1/size + 1/n)
// for n reference rows (sd with ddof 0): the spread of the mean of a
// pseudo-chunk resampled from the reference (sd/√size, exact for draws
// with replacement, what any number of pseudo-chunks would estimate),
// widened by the reference mean's own sampling error (sd/√n), which a
// chunk drawn afresh is compared with. Thresholds from the reference cut
// into consecutive chunks rest on a standard deviation of a handful of
// chunk means (4 for 1,000 rows in chunks of 250), which alerted on 9-14%
// of chunks drawn like the reference. Chunks is 0: no reference chunk is
// cut.
func resampledThresholds(reference []float64, size int, width float64, nonNegative bool) Thresholds {
	t := Thresholds{Lower: math.NaN(), Upper: math.NaN(), Mean: math.NaN(), Std: math.NaN()}
	var s float64
	var n int
	for _, v := range reference {
		if !math.IsNaN(v) {
			s += v
			n++
		}
	}
	if n < 2 || size < 1 {
		return t
	}
	t.Mean = s / float64(n)
	var ss float64
	for _, v := range reference {
		if !math.IsNaN(v) {
			ss += (v - t.Mean) * (v - t.Mean)
		}
	}
	t.Std = math.Sqrt(ss/float64(n)) * math.Sqrt(1/float64(size)+1/float64(n))
	t.Lower, t.Upper = t.Mean-width*t.Std, t.Mean+width*t.Std
	if nonNegative {
		t.Lower = math.Max(0, t.Lower)
	}
	return t
}

// Alerts counts the alerting chunks of results.
func Alerts(results []Result) int {
	n := 0
	for _, r := range results {
		if r.Alert {
			n++
		}
	}
	return n
}
