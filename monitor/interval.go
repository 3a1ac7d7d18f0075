package monitor

import (
	"math"
	"math/rand/v2"
	"slices"
)

// IntervalLevel is the nominal coverage of a chunk's estimate interval
// over reference pseudo-chunks. It is above the 90% the interval is meant
// to hold in production because the pseudo-chunks miss one source of
// error: production estimates come from the final network, not the fold
// networks the held-out estimates come from (at 0.9 the interval held the
// realised MSE of 83% of iid chunks in BenchmarkMSEMonitorSupport).
const IntervalLevel = 0.95

// intervalDraws is the number of pseudo-chunks drawn from the reference
// for one interval.
const intervalDraws = 400

// intervalModel draws the interval of a chunk's estimate from the
// reference rows' held-out estimates and realised losses.
type intervalModel struct {
	typical, thin []int // reference rows in and out of thin support
	held, real    []float64
}

// newIntervalModel returns nil unless every reference row has a finite
// held-out estimate (a check model fitted before they were recorded has
// none).
func newIntervalModel(held, real []float64, thin []bool) *intervalModel {
	if len(held) == 0 || len(held) != len(real) {
		return nil
	}
	m := &intervalModel{held: held, real: real}
	for i := range held {
		if !finite(held[i]) || !finite(real[i]) {
			return nil
		}
		if thin != nil && len(thin) == len(held) && thin[i] {
			m.thin = append(m.thin, i)
		} else {
			m.typical = append(m.typical, i)
		}
	}
	if len(m.typical) == 0 {
		m.typical, m.thin = m.thin, nil
	}
	return m
}

// ratios returns the quantiles (1∓IntervalLevel)/2 of the ratio of
// realised MSE to held-out estimate over pseudo-chunks of rows reference
// rows, thin of them drawn (with replacement) from the reference rows in
// thin support and the others from the rest. A held-out estimate is what
// the check model says of a row it was not trained on, so the ratio's
// spread holds both the check model's error and the chunk's sampling
// noise; chunks with more rows in thin support draw more of the rows
// where the check model was least right, and get a wider interval.
func (m *intervalModel) ratios(rows, thin int) (lo, hi float64) {
	if len(m.thin) == 0 {
		thin = 0
	}
	thin = min(thin, rows)
	r := rand.New(rand.NewPCG(uint64(rows), uint64(thin)))
	v := make([]float64, intervalDraws)
	for b := range v {
		var e, y float64
		for k := range rows {
			pool := m.typical
			if k < thin {
				pool = m.thin
			}
			i := pool[r.IntN(len(pool))]
			e += m.held[i]
			y += m.real[i]
		}
		v[b] = y / e
		if e == 0 {
			v[b] = math.Inf(1)
		}
	}
	slices.Sort(v)
	return quantileSorted(v, (1-IntervalLevel)/2), quantileSorted(v, (1+IntervalLevel)/2)
}
