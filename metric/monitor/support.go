package monitor

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// SupportNeighbours is k of the k-nearest-neighbour typicality score: a
// row's distance to its k-th nearest reference row. One neighbour is
// noisy (a lone reference row makes a region look supported); ten need
// ten reference rows nearby, which is what an estimate there rests on.
const SupportNeighbours = 10

// ThinQuantile is the share of reference rows that are themselves in thin
// support: a row is in thin support when its k-th neighbour distance
// exceeds the ThinQuantile upper quantile of the reference rows' own
// (leave-one-out) distances.
const ThinQuantile = 0.05

// ThinFalseAlarm is the one-sided rate at which a chunk drawn from the
// reference's distribution exceeds its thin-support limit; see ThinLimit.
const ThinFalseAlarm = 0.01

// DriftAlpha is the family-wise level of the per-feature
// Kolmogorov-Smirnov drift test (Bonferroni over features): a chunk drawn
// from the reference's distribution fires it at most this often.
const DriftAlpha = 0.01

// supportPairs bounds the distances computed when the support is fitted,
// every reference row against the reference rows the typicality score
// compares with (every chunk row is compared with each of them too): up
// to √supportPairs (10,000) reference rows, all of them; past it fewer,
// supportPairs / n, so that the first page of a monitor, which
// fits it, costs about a second of CPU per feature whatever the size of
// the reference. 200,000 rows against 20,000 took 55 s of CPU.
const supportPairs = 100_000_000

// minSupportRows is the fewest reference rows compared with (past
// supportPairs / minSupportRows = 500,000 reference rows the work grows
// with the rows again, at minSupportRows distances a row).
const minSupportRows = 200

// supportRows returns how many of n reference rows the support compares
// with.
func supportRows(n int) int {
	return min(n, max(minSupportRows, supportPairs/max(n, 1)))
}

// support is the k-nearest-neighbour description of the reference rows
// in the standardised feature space (the check model's: the same
// reference means and ddof-0 scales).
type support struct {
	k      int
	rows   *mat.Dense // standardised reference rows compared with (see supportRows)
	norms  []float64  // their squared norms
	radius float64    // the (1-ThinQuantile) quantile of the reference's leave-one-out distances
	// thin marks every reference row (all of them, in row order) whose
	// k-th neighbour distance exceeds radius; share is their fraction.
	thin  []bool
	share float64
}

// fitSupport computes the support of the reference columns ref
// (feature-major, as DriftModel.Reference) standardised by mean and std.
func fitSupport(ref [][]float64, mean, std []float64) *support {
	d := len(ref)
	if d == 0 || len(ref[0]) < 2 {
		return nil
	}
	n := len(ref[0])
	// A deterministic stride subsample beyond supportRows keeps the
	// cost bounded and the result the same at every load.
	keep := supportRows(n)
	step := (n + keep - 1) / keep
	var idx []int
	for i := 0; i < n; i += step {
		idx = append(idx, i)
	}
	s := &support{k: min(SupportNeighbours, len(idx)-1)}
	if s.k < 1 {
		return nil
	}
	s.rows = mat.NewDense(len(idx), d, nil)
	for r, i := range idx {
		for j := range d {
			s.rows.Set(r, j, (ref[j][i]-mean[j])/std[j])
		}
	}
	s.norms = rowNorms(s.rows)
	all := mat.NewDense(n, d, nil)
	for i := range n {
		for j := range d {
			all.Set(i, j, (ref[j][i]-mean[j])/std[j])
		}
	}
	// A reference row in the subsample must not count itself: exclude
	// maps a row of all to its own row of s.rows.
	exclude := make([]int, n)
	for i := range exclude {
		exclude[i] = -1
	}
	for r, i := range idx {
		exclude[i] = r
	}
	dist := s.kth(all, exclude)
	loo := make([]float64, len(idx))
	for r, i := range idx {
		loo[r] = dist[i]
	}
	slices.Sort(loo)
	s.radius = quantileSorted(loo, 1-ThinQuantile)
	s.thin = make([]bool, n)
	t := 0
	for i, v := range dist {
		if v > s.radius {
			s.thin[i] = true
			t++
		}
	}
	s.share = float64(t) / float64(n)
	return s
}

// rowNorms returns the squared Euclidean norm of every row of x.
func rowNorms(x *mat.Dense) []float64 {
	n, _ := x.Dims()
	out := make([]float64, n)
	for i := range n {
		for _, v := range x.RawRowView(i) {
			out[i] += v * v
		}
	}
	return out
}

// kth returns, for every row of q (standardised), the distance to its
// k-th nearest row of s.rows, leaving out row exclude[i] of s.rows for
// row i (exclude nil or -1: none). Distances come from blocks of
// ‖q‖² + ‖r‖² - 2 q·r, one matrix product per block of query rows.
func (s *support) kth(q *mat.Dense, exclude []int) []float64 {
	const block = 256
	nq, _ := q.Dims()
	nr, _ := s.rows.Dims()
	qn := rowNorms(q)
	out := make([]float64, nq)
	var g mat.Dense
	best := make([]float64, s.k)
	for lo := 0; lo < nq; lo += block {
		hi := min(lo+block, nq)
		qb := q.Slice(lo, hi, 0, q.RawMatrix().Cols)
		g.Reset()
		g.Mul(qb, s.rows.T())
		for i := lo; i < hi; i++ {
			row := g.RawRowView(i - lo)
			ex := -1
			if exclude != nil {
				ex = exclude[i]
			}
			for b := range best {
				best[b] = math.Inf(1)
			}
			worst := math.Inf(1)
			for r := range nr {
				if r == ex {
					continue
				}
				d2 := qn[i] + s.norms[r] - 2*row[r]
				if d2 >= worst {
					continue
				}
				// Insert into the sorted k best.
				p := s.k - 1
				for p > 0 && best[p-1] > d2 {
					best[p] = best[p-1]
					p--
				}
				best[p] = d2
				worst = best[s.k-1]
			}
			out[i] = math.Sqrt(math.Max(0, best[s.k-1]))
		}
	}
	return out
}

// quantileSorted returns the p quantile of sorted values by linear
// interpolation (numpy's default).
func quantileSorted(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	h := p * float64(len(v)-1)
	lo := int(math.Floor(h))
	if lo >= len(v)-1 {
		return v[len(v)-1]
	}
	return v[lo] + (h-float64(lo))*(v[lo+1]-v[lo])
}

// ThinLimit returns the share of thin-support rows above which a chunk of
// rows rows is extrapolating, from p, the share of the nref reference
// rows that are themselves in thin support. A fresh row of the
// reference's distribution is thin with a probability that is not p but
// itself uncertain: the radius is an empirical quantile of the
// reference's own distances, and a fresh row's rank among them is
// uniform, so that with t = p·nref reference rows beyond the radius the
// probability is Beta(t+1, nref-t). A chunk's count of thin rows is then
// beta-binomial, and the limit is its 1-ThinFalseAlarm quantile (over
// rows): chunks drawn like the reference exceed it at most
// ThinFalseAlarm of the time. A normal approximation to the same count
// (p plus 2.33 standard errors) ignored its right skew and exceeded it
// on 1.7-2.5% of such chunks.
func ThinLimit(p float64, rows, nref int) float64 {
	if rows < 1 || nref < 1 || !(p >= 0 && p <= 1) {
		return math.NaN()
	}
	t := math.Round(p * float64(nref))
	return float64(betaBinomialQuantile(rows, t+1, float64(nref)-t, 1-ThinFalseAlarm)) / float64(rows)
}

// betaBinomialQuantile returns the smallest count c for which a
// beta-binomial count of m trials with parameters a, b is at most c with
// probability at least q.
func betaBinomialQuantile(m int, a, b, q float64) int {
	lbeta := func(x, y float64) float64 {
		gx, _ := math.Lgamma(x)
		gy, _ := math.Lgamma(y)
		gxy, _ := math.Lgamma(x + y)
		return gx + gy - gxy
	}
	// P(X = x) = C(m, x) B(x+a, m-x+b) / B(a, b), accumulated in x.
	base := lbeta(a, b)
	var cum float64
	lc, _ := math.Lgamma(float64(m + 1))
	for x := range m {
		l1, _ := math.Lgamma(float64(x + 1))
		l2, _ := math.Lgamma(float64(m - x + 1))
		cum += math.Exp(lc - l1 - l2 + lbeta(float64(x)+a, float64(m-x)+b) - base)
		if cum >= q-1e-12 {
			return x
		}
	}
	return m
}

// thinRows returns, for the standardised rows of a chunk, which are in
// thin support.
func (s *support) thinRows(z *mat.Dense) []bool {
	dist := s.kth(z, nil)
	out := make([]bool, len(dist))
	for i, v := range dist {
		out[i] = v > s.radius
	}
	return out
}
