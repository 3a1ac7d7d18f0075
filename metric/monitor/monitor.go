package monitor

import (
	"fmt"
	"math"
	"slices"
)

// DefaultWidth is the half-width of bands and thresholds in standard
// errors or standard deviations: NannyML's ±3.
const DefaultWidth = 3

// Thresholds bound the values of a metric seen in a reference period.
type Thresholds struct {
	// Lower and Upper are Mean ∓ width·Std, Lower clipped at 0 for a
	// non-negative metric; both NaN when fewer than two reference
	// chunks were available.
	Lower, Upper float64
	// Mean and Std (ddof 0, as numpy.std) are those of the reference
	// chunks' values.
	Mean, Std float64
	// Chunks is the number of reference chunks.
	Chunks int
}

// Available reports whether the thresholds could be computed.
func (t Thresholds) Available() bool { return !math.IsNaN(t.Lower) && !math.IsNaN(t.Upper) }

// ReferenceThresholds returns mean ± width·std of the realised metric of
// reference chunks (NaN values are skipped), with the lower threshold
// clipped at 0 when nonNegative is set. With fewer than two values there
// is no spread to measure, and the thresholds are NaN.
func ReferenceThresholds(chunkValues []float64, width float64, nonNegative bool) Thresholds {
	var v []float64
	for _, x := range chunkValues {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	t := Thresholds{Lower: math.NaN(), Upper: math.NaN(), Mean: math.NaN(), Std: math.NaN(), Chunks: len(v)}
	if len(v) == 0 {
		return t
	}
	var s float64
	for _, x := range v {
		s += x
	}
	t.Mean = s / float64(len(v))
	if len(v) < 2 {
		return t
	}
	var ss float64
	for _, x := range v {
		ss += (x - t.Mean) * (x - t.Mean)
	}
	t.Std = math.Sqrt(ss / float64(len(v)))
	t.Lower, t.Upper = t.Mean-width*t.Std, t.Mean+width*t.Std
	if nonNegative {
		t.Lower = math.Max(0, t.Lower)
	}
	return t
}

// ChunkMeans returns the mean of values over every chunk, skipping NaN
// values; a chunk with none left gets NaN.
func ChunkMeans(values []float64, chunks []Chunk) []float64 {
	out := make([]float64, len(chunks))
	for i, c := range chunks {
		var s float64
		var k int
		for _, v := range values[c.Start:c.End] {
			if !math.IsNaN(v) {
				s += v
				k++
			}
		}
		out[i] = math.NaN()
		if k > 0 {
			out[i] = s / float64(k)
		}
	}
	return out
}

// Result is the monitoring outcome for one chunk.
type Result struct {
	Chunk
	// Estimate is the mean of the chunk's per-row estimates.
	Estimate float64
	// SamplingError is the standard deviation (ddof 1) of the per-row
	// estimates over sqrt(rows); NaN for a one-row chunk.
	SamplingError float64
	// Lower and Upper are Estimate ∓ width·SamplingError, Lower clipped
	// at 0 for a non-negative metric.
	Lower, Upper float64
	// Realized is the mean realised per-row loss over the chunk's
	// labelled rows, NaN when none is labelled; Labelled counts them.
	Realized float64
	Labelled int
	// EstimateLower and EstimateUpper bound the chunk's MSE itself, not
	// only the estimate's sampling noise: with held-out estimates of the
	// reference (IntervalCalibrated) they are Estimate times the
	// quantiles of realised over estimated MSE of reference
	// pseudo-chunks (see Input.HeldOut), with the calibration's own
	// error, stretched to hold IntervalLevel of pseudo-chunks of held-out
	// reference rows, and wider where the chunk's rows lie in thin
	// support; without them (and from Evaluate), the band (Lower,
	// Upper). This interval is the chunk's one: the one that decides
	// Alert and that every view shows.
	EstimateLower, EstimateUpper float64
	IntervalCalibrated           bool
	// Alert is set by Evaluate when the estimate lies outside the
	// thresholds. Run, for a chunk with a calibrated interval
	// (IntervalCalibrated), sets it instead when the interval lies wholly
	// beyond the thresholds, or, for an extrapolating chunk, when the
	// interval reaches above the upper threshold: there the estimate
	// cannot be trusted, and the MSE may be out of bounds.
	Alert bool
	// Drift is the chunk's extrapolation and drift when Run had a drift
	// model, nil otherwise.
	Drift *ChunkDrift
}

// Options set up Evaluate.
type Options struct {
	// Width is the band's half-width in sampling errors; 0 means
	// DefaultWidth.
	Width float64
	// Thresholds decide the alerts; when not Available, no chunk alerts.
	Thresholds Thresholds
	// NonNegative clips band lower limits at 0 (MSE and other losses).
	NonNegative bool
}

// Evaluate computes the result of every chunk from per-row estimates and,
// optionally, per-row realised losses (nil when there are no labels; NaN
// for rows whose label has not arrived). Chunks must lie within the rows
// and hold at least one row.
func Evaluate(chunks []Chunk, estimates, realized []float64, opt Options) ([]Result, error) {
	if realized != nil && len(realized) != len(estimates) {
		return nil, fmt.Errorf("monitor: %d estimates and %d realised values", len(estimates), len(realized))
	}
	w := opt.Width
	if w == 0 {
		w = DefaultWidth
	}
	out := make([]Result, len(chunks))
	for i, c := range chunks {
		if c.Start < 0 || c.End > len(estimates) || c.Start > c.End {
			return nil, fmt.Errorf("monitor: chunk %d spans rows [%d, %d) of %d", c.Index, c.Start, c.End, len(estimates))
		}
		if c.Rows() == 0 {
			return nil, fmt.Errorf("monitor: chunk %d (rows %d to %d) is empty", c.Index, c.Start, c.End)
		}
		rows := estimates[c.Start:c.End]
		n := float64(len(rows))
		var s float64
		for _, v := range rows {
			s += v
		}
		r := Result{Chunk: c, Estimate: s / n, SamplingError: math.NaN(), Realized: math.NaN()}
		if len(rows) > 1 {
			var ss float64
			for _, v := range rows {
				ss += (v - r.Estimate) * (v - r.Estimate)
			}
			r.SamplingError = math.Sqrt(ss/(n-1)) / math.Sqrt(n)
		}
		r.Lower, r.Upper = r.Estimate-w*r.SamplingError, r.Estimate+w*r.SamplingError
		if opt.NonNegative && !math.IsNaN(r.Lower) {
			r.Lower = math.Max(0, r.Lower)
		}
		r.EstimateLower, r.EstimateUpper = r.Lower, r.Upper
		if realized != nil {
			var rs float64
			for _, v := range realized[c.Start:c.End] {
				if !math.IsNaN(v) {
					rs += v
					r.Labelled++
				}
			}
			if r.Labelled > 0 {
				r.Realized = rs / float64(r.Labelled)
			}
		}
		if opt.Thresholds.Available() {
			r.Alert = r.Estimate < opt.Thresholds.Lower || r.Estimate > opt.Thresholds.Upper
		}
		out[i] = r
	}
	return out, nil
}

// MatchedThresholds returns the thresholds for operational chunks from a
// reference period's per-row realised metric (in row order): the
// reference rows are cut into consecutive chunks as large as the
// operational ones (the median operational chunk, for period chunks of
// varying size), an incomplete last chunk is dropped, and the thresholds
// are ReferenceThresholds of their means. Chunks of the same size matter:
// the spread of a chunk mean shrinks with the square root of its size,
// so thresholds from chunks of another size would alert too often or
// never. It also returns that size. chunks must not be empty.
func MatchedThresholds(reference []float64, chunks []Chunk, width float64, nonNegative bool) (Thresholds, int) {
	sizes := make([]int, len(chunks))
	for i, c := range chunks {
		sizes[i] = c.Rows()
	}
	slices.Sort(sizes)
	size := sizes[len(sizes)/2]
	n := len(reference) / size * size
	if n == 0 {
		return ReferenceThresholds(nil, width, nonNegative), size
	}
	ref, _ := BySize(n, size)
	return ReferenceThresholds(ChunkMeans(reference, ref), width, nonNegative), size
}
