package monitor

import (
	"math"
	"math/rand/v2"
	"slices"
)

// IntervalLevel is the coverage a chunk's estimate interval claims: the
// share of chunks drawn like the reference whose realised MSE it holds.
// The width is calibrated to it on reference rows held out from the
// pseudo-chunks that draw it (see intervalModel.calibrate).
const IntervalLevel = 0.90

// intervalDraws is the number of pseudo-chunks drawn from the reference
// for one interval.
const intervalDraws = 400

// calibrationSplits is the number of random halvings of the reference
// the interval's width is calibrated on, and calibrationChunks the
// pseudo-chunks drawn from each held-out half.
const (
	calibrationSplits = 20
	calibrationChunks = 50
)

// intervalModel draws the interval of a chunk's estimate from the
// reference rows' held-out estimates and realised losses.
type intervalModel struct {
	typical, thin []int // reference rows in and out of thin support
	held, real    []float64
	// ratio is the reference's realised over held-out estimated MSE (1
	// as the check model stores them) and ratioSD its standard error:
	// the calibration that puts production estimates on the realised
	// scale was measured on these rows, and is off by about that much.
	ratio, ratioSD float64
	// scale stretches the interval about its median (in log ratio) so
	// that it holds IntervalLevel of held-out pseudo-chunks; 1 until
	// calibrate.
	scale float64
}

// newIntervalModel returns nil unless every reference row has a finite
// held-out estimate (a check model fitted before they were recorded has
// none).
func newIntervalModel(held, real []float64, thin []bool) *intervalModel {
	if len(held) == 0 || len(held) != len(real) {
		return nil
	}
	m := &intervalModel{held: held, real: real, scale: 1}
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
	all := make([]int, len(held))
	for i := range all {
		all[i] = i
	}
	m.ratio, m.ratioSD = m.ratioOf(all)
	if !(m.ratio > 0) || !finite(m.ratioSD) {
		return nil
	}
	return m
}

// ratioOf returns Σ real / Σ held over rows and its standard error by the
// delta method.
func (m *intervalModel) ratioOf(rows []int) (ratio, sd float64) {
	var e, y float64
	for _, i := range rows {
		e += m.held[i]
		y += m.real[i]
	}
	n := float64(len(rows))
	if e <= 0 || n < 2 {
		return math.NaN(), math.NaN()
	}
	ratio = y / e
	var ss float64
	for _, i := range rows {
		d := m.real[i] - ratio*m.held[i]
		ss += d * d
	}
	return ratio, math.Sqrt(ss/(n-1)/n) / (e / n)
}

// draw returns, sorted, the ratio of realised to estimated MSE of
// intervalDraws pseudo-chunks of rows rows, thin of them drawn (with
// replacement) from thinPool and the others from pool, each estimate
// calibrated by a ratio drawn about ratio with standard error sd: a
// chunk's estimate is off both by the check model's error on its rows
// and by the calibration's own.
func (m *intervalModel) draw(r *rand.Rand, pool, thinPool []int, rows, thin int, ratio, sd float64) []float64 {
	v := make([]float64, intervalDraws)
	for b := range v {
		var e, y float64
		for k := range rows {
			p := pool
			if k < thin {
				p = thinPool
			}
			i := p[r.IntN(len(p))]
			e += m.held[i]
			y += m.real[i]
		}
		c := math.Max(ratio+sd*r.NormFloat64(), ratio/10)
		v[b] = y / e / c
		if e == 0 {
			v[b] = math.Inf(1)
		}
	}
	slices.Sort(v)
	return v
}

// band returns the (1∓IntervalLevel)/2 quantiles of sorted ratios,
// stretched about their median by scale in log ratio.
func band(v []float64, scale float64) (lo, hi float64) {
	lo, mid, hi := quantileSorted(v, (1-IntervalLevel)/2), quantileSorted(v, 0.5), quantileSorted(v, (1+IntervalLevel)/2)
	if scale == 1 || !(lo > 0) || !(mid > 0) || math.IsInf(hi, 0) {
		return lo, hi
	}
	return mid * math.Pow(lo/mid, scale), mid * math.Pow(hi/mid, scale)
}

// ratios returns the interval of the ratio of realised MSE to estimate for
// a chunk of rows rows, thin of them in thin support: the band of
// pseudo-chunks drawing thin rows from the reference rows in thin support
// and the others from the rest. A held-out estimate is what the check
// model says of a row it was not trained on, so the spread holds both the
// check model's error and the chunk's sampling noise; chunks with more
// rows in thin support draw more of the rows where the check model was
// least right, and get a wider interval.
func (m *intervalModel) ratios(rows, thin int) (lo, hi float64) {
	if len(m.thin) == 0 {
		thin = 0
	}
	thin = min(thin, rows)
	r := rand.New(rand.NewPCG(uint64(rows), uint64(thin)))
	return band(m.draw(r, m.typical, m.thin, rows, thin, m.ratio, m.ratioSD), m.scale)
}

// calibrate sets the scale that makes the interval of chunks of size rows
// hold IntervalLevel of held-out pseudo-chunks. The pseudo-chunks that
// draw an interval come from the very rows they describe, and miss what
// a fresh chunk has beyond them: losses with heavier tails than the
// reference shows, a calibration measured on other rows. So the reference
// is halved at random calibrationSplits times; each half A draws the
// interval of its pseudo-chunks (at the half's own calibration and
// standard error), and pseudo-chunks of the other half B, estimated with
// A's calibration, are scored by how far the interval must stretch about
// its median (in log ratio) to hold their ratio. scale is the
// IntervalLevel quantile of the scores (the split-conformal one, at least
// 1). A half is smaller than the reference, so the scale is if anything
// conservative.
func (m *intervalModel) calibrate(size int) {
	n := len(m.held)
	if n < 20 || size < 1 {
		return
	}
	r := rand.New(rand.NewPCG(uint64(n), uint64(size)))
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	var scores []float64
	for range calibrationSplits {
		r.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		a, b := perm[:n/2], perm[n/2:]
		ratio, sd := m.ratioOf(a)
		if !(ratio > 0) || !finite(sd) {
			return
		}
		v := m.draw(r, a, nil, size, 0, ratio, sd)
		lo, hi := band(v, 1)
		mid := quantileSorted(v, 0.5)
		if !(lo > 0) || !(mid > lo) || !(hi > mid) || math.IsInf(hi, 0) {
			return
		}
		for range calibrationChunks {
			var e, y float64
			for range size {
				i := b[r.IntN(len(b))]
				e += m.held[i]
				y += m.real[i]
			}
			q := y / e / ratio
			switch {
			case !(q > 0):
				scores = append(scores, math.Inf(1))
			case q >= mid:
				scores = append(scores, math.Log(q/mid)/math.Log(hi/mid))
			default:
				scores = append(scores, math.Log(mid/q)/math.Log(mid/lo))
			}
		}
	}
	slices.Sort(scores)
	k := min(len(scores)-1, int(math.Ceil(IntervalLevel*float64(len(scores)+1)))-1)
	if s := scores[k]; s > 1 && !math.IsInf(s, 0) {
		m.scale = s
	}
}
