package monitor

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// DefaultMaxOutOfReference is the fraction of a chunk's rows outside the
// reference ranges above which the chunk is extrapolating. Rows of the
// reference's own distribution fall outside the range of n reference
// rows with probability about 2d/(n+1) for d features, well below 5% for
// any reference worth thresholds.
const DefaultMaxOutOfReference = 0.05

// ReconstructionCap is the quantile of the reference rows' reconstruction
// errors at which every row's error is capped before a chunk's mean is
// taken (a winsorised mean), for the chunk as for the reference its
// thresholds come from. The errors are heavy-tailed: one row of abalone
// reconstructs 27-30 times worse than the others, and a chunk of 250 rows
// holding it moved its mean beyond thresholds fitted on a reference
// without it, on 5.7% of chunks drawn like the reference where 0.3% was
// due. A row that far from the reference is an outlier, which the support
// signals count; drift is a shift of the bulk, which the capped mean
// sees as well.
const ReconstructionCap = 0.99

// RangeFalseAlarm is the rate at which a chunk drawn from the
// reference's distribution may exceed the range limit by chance (see
// DriftModel.RangeLimit).
const RangeFalseAlarm = 0.01

// DriftVariance is the share of the standardised reference's variance
// the principal components of the reconstruction error keep, as
// NannyML's data reconstruction drift calculator does.
const DriftVariance = 0.65

// maxDriftFeatures bounds the features of a drift model: the principal
// components take d × d numbers.
const maxDriftFeatures = 4096

// DriftModel describes the reference rows of a monitored model for
// extrapolation and drift: each feature's range, the standardisation and
// principal axes of the data reconstruction error (NannyML's multivariate
// drift), and the reference values themselves for the Kolmogorov-Smirnov
// test of each feature. It is fitted once on the reference rows and
// stored with the model.
type DriftModel struct {
	Features []string `json:"features"`
	// Min and Max are each feature's range over the reference rows.
	Min []float64 `json:"min"`
	Max []float64 `json:"max"`
	// Mean and Std standardise the features (Std with ddof 0, as
	// scikit-learn's StandardScaler; 1 for a constant feature).
	Mean []float64 `json:"mean"`
	Std  []float64 `json:"std"`
	// Components holds the principal axes kept, k rows of d, of the
	// standardised reference; Explained is the share of its variance
	// they explain (at least DriftVariance).
	Components [][]float64 `json:"components"`
	Explained  float64     `json:"explained_variance"`
	// Reference holds every feature's reference values in row order.
	Reference [][]float64 `json:"reference"`

	once   sync.Once
	sorted [][]float64 // Reference, each feature sorted
	errs   []float64   // per-row reconstruction errors of the reference
	errCap float64     // their ReconstructionCap quantile (see ReconstructionCap)
	// outside counts the reference rows outside the range of the others
	// (a feature's sole minimum or maximum): by exchangeability, the
	// chance that a fresh row falls outside the range of n-1 reference
	// rows is outside/n, and so a little less for n rows.
	outside int
	support *support // nearest-neighbour typicality of the reference rows
}

// FitDrift fits the drift model on the reference rows x (n × d), whose
// columns are named by features.
func FitDrift(x *mat.Dense, features []string) (*DriftModel, error) {
	n, d := x.Dims()
	switch {
	case len(features) != d:
		return nil, fmt.Errorf("monitor: %d feature names for %d columns", len(features), d)
	case n < 2:
		return nil, fmt.Errorf("monitor: %d reference rows; drift needs at least 2", n)
	case d > maxDriftFeatures:
		return nil, fmt.Errorf("monitor: %d features; drift is computed for at most %d", d, maxDriftFeatures)
	}
	m := &DriftModel{Features: slices.Clone(features), Min: make([]float64, d), Max: make([]float64, d),
		Mean: make([]float64, d), Std: make([]float64, d), Reference: make([][]float64, d)}
	for j := range d {
		col := mat.Col(nil, j, x)
		m.Reference[j] = col
		m.Min[j], m.Max[j] = slices.Min(col), slices.Max(col)
		var s float64
		for _, v := range col {
			s += v
		}
		mean := s / float64(n)
		var ss float64
		for _, v := range col {
			ss += (v - mean) * (v - mean)
		}
		m.Mean[j], m.Std[j] = mean, math.Sqrt(ss/float64(n))
		if m.Std[j] == 0 || math.IsNaN(m.Std[j]) {
			m.Std[j] = 1
		}
	}
	z := mat.NewDense(n, d, nil)
	for i := range n {
		for j := range d {
			z.Set(i, j, (x.At(i, j)-m.Mean[j])/m.Std[j])
		}
	}
	vals, vecs, err := principalAxes(z)
	if err != nil {
		return nil, err
	}
	var total float64
	for _, v := range vals {
		total += math.Max(v, 0)
	}
	var cum float64
	for i, v := range vals {
		cum += math.Max(v, 0)
		m.Components = append(m.Components, vecs[i])
		if total == 0 || cum/total >= DriftVariance {
			break
		}
	}
	m.Explained = 1
	if total > 0 {
		m.Explained = cum / total
	}
	return m, nil
}

// principalAxes returns the eigenvalues of the covariance (ddof 1) of the
// rows of z, largest first, and their unit eigenvectors.
//
// With fewer rows than columns (n < d) only the n largest are returned,
// from the n × n Gram matrix: the others are 0, and the d × d
// decomposition (minutes for 4,000 features) is not needed for them.
func principalAxes(z *mat.Dense) ([]float64, [][]float64, error) {
	n, d := z.Dims()
	if n < d {
		if vals, vecs, ok := gramAxes(z); ok {
			return vals, vecs, nil
		}
	}
	var cov mat.SymDense
	cov.SymOuterK(1/float64(n-1), z.T())
	var eig mat.EigenSym
	if !eig.Factorize(&cov, true) {
		return nil, nil, fmt.Errorf("monitor: the eigendecomposition of the reference covariance did not converge")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	order := make([]int, len(vals))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return vals[order[a]] > vals[order[b]] })
	sv, sx := make([]float64, len(vals)), make([][]float64, len(vals))
	for k, i := range order {
		sv[k], sx[k] = vals[i], mat.Col(nil, i, &vecs)
	}
	return sv, sx, nil
}

// gramAxes is principalAxes from the Gram matrix z zᵀ/(n-1), whose
// nonzero eigenvalues are the covariance's: an eigenvector u of it gives
// the covariance's zᵀu, normalised. It returns the n eigenvalues and
// vectors, false when the largest is not positive (a constant reference,
// whose axes the Gram matrix cannot give).
func gramAxes(z *mat.Dense) ([]float64, [][]float64, bool) {
	n, _ := z.Dims()
	var gram mat.SymDense
	gram.SymOuterK(1/float64(n-1), z)
	var eig mat.EigenSym
	if !eig.Factorize(&gram, true) {
		return nil, nil, false
	}
	vals := eig.Values(nil)
	var u mat.Dense
	eig.VectorsTo(&u)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return vals[order[a]] > vals[order[b]] })
	if vals[order[0]] <= 0 {
		return nil, nil, false
	}
	sv, sx := make([]float64, n), make([][]float64, n)
	var v mat.VecDense
	for k, i := range order {
		sv[k] = vals[i]
		v.MulVec(z.T(), u.ColView(i))
		if norm := mat.Norm(&v, 2); norm > 0 {
			v.ScaleVec(1/norm, &v)
		}
		sx[k] = slices.Clone(v.RawVector().Data)
	}
	return sv, sx, true
}

// driftFolds is the number of folds the reference rows' reconstruction
// errors are cross-fitted in.
const driftFolds = 5

// heldOutErrors returns every reference row's reconstruction error by
// principal axes (as many as the model keeps) fitted on the other folds
// of the standardised reference (row i in fold i mod driftFolds). The
// axes fitted on all rows are those that reconstruct these very rows
// best: their in-sample errors are smaller than those of fresh rows, and
// thresholds from them alerted on 4-6% of chunks drawn like the reference
// (abalone, cpusmall) where 0.3% was due. nil when a fold's
// decomposition fails or the folds are too small.
func (m *DriftModel) heldOutErrors() []float64 {
	d := len(m.Reference)
	n := len(m.Reference[0])
	k := len(m.Components)
	if k == d {
		return make([]float64, n)
	}
	if n < 2*driftFolds || n/driftFolds*(driftFolds-1) <= d {
		return nil
	}
	z := func(i, j int) float64 { return (m.Reference[j][i] - m.Mean[j]) / m.Std[j] }
	errs := make([]float64, n)
	r := make([]float64, d)
	for f := range driftFolds {
		var train []int
		for i := range n {
			if i%driftFolds != f {
				train = append(train, i)
			}
		}
		zt := mat.NewDense(len(train), d, nil)
		// Centred on the training rows, as the axes of a fresh fit.
		mean := make([]float64, d)
		for r, i := range train {
			for j := range d {
				v := z(i, j)
				zt.Set(r, j, v)
				mean[j] += v / float64(len(train))
			}
		}
		for r := range train {
			for j := range d {
				zt.Set(r, j, zt.At(r, j)-mean[j])
			}
		}
		_, vecs, err := principalAxes(zt)
		if err != nil {
			return nil
		}
		for i := f; i < n; i += driftFolds {
			for j := range d {
				r[j] = z(i, j) - mean[j]
			}
			for _, v := range vecs[:k] {
				var p float64
				for j := range d {
					p += v[j] * r[j]
				}
				for j := range d {
					r[j] -= p * v[j]
				}
			}
			var ss float64
			for _, v := range r {
				ss += v * v
			}
			errs[i] = math.Sqrt(ss)
		}
	}
	return errs
}

// Validate reports whether a drift model read from a file is consistent
// with features, the model's feature names.
func (m *DriftModel) Validate(features []string) error {
	d := len(features)
	if !slices.Equal(m.Features, features) {
		return fmt.Errorf("drift model features %v, the model's %v", m.Features, features)
	}
	if len(m.Min) != d || len(m.Max) != d || len(m.Mean) != d || len(m.Std) != d || len(m.Reference) != d {
		return fmt.Errorf("drift model has %d features but %d minima, %d maxima, %d means, %d scales and %d reference columns",
			d, len(m.Min), len(m.Max), len(m.Mean), len(m.Std), len(m.Reference))
	}
	if len(m.Components) == 0 || len(m.Components) > d {
		return fmt.Errorf("drift model has %d principal components for %d features", len(m.Components), d)
	}
	for j := range d {
		if !finite(m.Min[j]) || !finite(m.Max[j]) || m.Min[j] > m.Max[j] || !finite(m.Mean[j]) || !finite(m.Std[j]) || m.Std[j] <= 0 {
			return fmt.Errorf("drift model: feature %q has range [%v, %v], mean %v and scale %v", features[j], m.Min[j], m.Max[j], m.Mean[j], m.Std[j])
		}
		if len(m.Reference[j]) != len(m.Reference[0]) || len(m.Reference[j]) < 2 {
			return fmt.Errorf("drift model: feature %q has %d reference values, feature %q %d", features[j], len(m.Reference[j]), features[0], len(m.Reference[0]))
		}
		for _, v := range m.Reference[j] {
			if !finite(v) {
				return fmt.Errorf("drift model: feature %q has reference value %v", features[j], v)
			}
		}
	}
	for k, c := range m.Components {
		if len(c) != d {
			return fmt.Errorf("drift model: principal component %d has %d entries for %d features", k, len(c), d)
		}
		for _, v := range c {
			if !finite(v) {
				return fmt.Errorf("drift model: principal component %d has entry %v", k, v)
			}
		}
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// prepare sorts the reference values and computes their reconstruction
// errors once.
func (m *DriftModel) prepare() {
	m.once.Do(func() {
		m.sorted = make([][]float64, len(m.Reference))
		for j, col := range m.Reference {
			m.sorted[j] = slices.Clone(col)
			slices.Sort(m.sorted[j])
		}
		n := 0
		if len(m.Reference) > 0 {
			n = len(m.Reference[0])
		}
		row := make([]float64, len(m.Reference))
		m.errs = m.heldOutErrors()
		if m.errs == nil {
			m.errs = make([]float64, n)
			for i := range n {
				for j := range row {
					row[j] = m.Reference[j][i]
				}
				m.errs[i] = m.RowError(row)
			}
		}
		sorted := slices.Clone(m.errs)
		slices.Sort(sorted)
		m.errCap = math.Inf(1)
		if len(sorted) > 0 {
			m.errCap = quantileSorted(sorted, ReconstructionCap)
		}
		m.support = fitSupport(m.Reference, m.Mean, m.Std)
		m.outside = soleExtremes(m.Reference)
	})
}

// soleExtremes counts the rows of the columns ref that hold the sole
// minimum or the sole maximum of some column.
func soleExtremes(ref [][]float64) int {
	if len(ref) == 0 {
		return 0
	}
	marked := make([]bool, len(ref[0]))
	for _, col := range ref {
		lo, hi := slices.Min(col), slices.Max(col)
		var nlo, nhi, ilo, ihi int
		for i, v := range col {
			if v == lo {
				nlo, ilo = nlo+1, i
			}
			if v == hi {
				nhi, ihi = nhi+1, i
			}
		}
		if nlo == 1 {
			marked[ilo] = true
		}
		if nhi == 1 {
			marked[ihi] = true
		}
	}
	n := 0
	for _, b := range marked {
		if b {
			n++
		}
	}
	return n
}

// RangeLimit returns the fraction of a chunk's rows outside the
// reference ranges above which the chunk of rows rows is extrapolating:
// maxOut, or, when larger, the fraction that chunks drawn like the
// reference exceed at most RangeFalseAlarm of the time. With few
// reference rows and many features, rows of the reference's own
// distribution fall outside some range often (mg: 469 rows, 6
// features, 2.6% of rows), and a fixed 5% flagged 4.2% of chunks of 250
// drawn like it. The count of such rows is beta-binomial as the count of
// thin rows is (see ThinLimit), with the reference's own rows outside
// the range of the others in place of its thin rows.
func (m *DriftModel) RangeLimit(rows int, maxOut float64) float64 {
	m.prepare()
	n := 0
	if len(m.Reference) > 0 {
		n = len(m.Reference[0])
	}
	if rows < 1 || n < 2 {
		return maxOut
	}
	u := float64(m.outside)
	q := float64(betaBinomialQuantile(rows, u+1, float64(n)-u, 1-RangeFalseAlarm)) / float64(rows)
	return math.Max(maxOut, q)
}

// cappedReferenceErrors returns referenceErrors, each capped at their
// ReconstructionCap quantile, as a chunk's rows are.
func (m *DriftModel) cappedReferenceErrors() []float64 {
	m.prepare()
	out := make([]float64, len(m.errs))
	for i, e := range m.errs {
		out[i] = math.Min(e, m.errCap)
	}
	return out
}

// referenceErrors returns the per-row reconstruction errors of the
// reference rows, in row order: cross-fitted (heldOutErrors), or in
// sample when the reference is too small for folds.
func (m *DriftModel) referenceErrors() []float64 {
	m.prepare()
	return m.errs
}

// ReferenceThin returns, for every reference row in row order, whether it
// lies in thin support of the others (its k-th nearest neighbour among
// them farther than the ThinQuantile upper quantile of such distances);
// nil when the reference is too small to tell.
func (m *DriftModel) ReferenceThin() []bool {
	m.prepare()
	if m.support == nil {
		return nil
	}
	return m.support.thin
}

// RowError returns the data reconstruction error of one row: the
// Euclidean distance between the standardised row z and its projection
// onto the principal axes, z - V Vᵀz.
func (m *DriftModel) RowError(x []float64) float64 {
	d := len(m.Mean)
	if len(m.Components) == d {
		// Every axis kept: the reconstruction is exact, and what a
		// projection would leave is rounding noise (which thresholds
		// from reference chunks would then alert on).
		return 0
	}
	z := make([]float64, d)
	for j := range d {
		z[j] = (x[j] - m.Mean[j]) / m.Std[j]
	}
	r := slices.Clone(z)
	for _, v := range m.Components {
		var p float64
		for j := range d {
			p += v[j] * z[j]
		}
		for j := range d {
			r[j] -= p * v[j]
		}
	}
	var ss float64
	for _, v := range r {
		ss += v * v
	}
	return math.Sqrt(ss)
}

// Outside reports whether some feature of the row lies outside its
// reference range.
func (m *DriftModel) Outside(x []float64) bool {
	for j, v := range x {
		if v < m.Min[j] || v > m.Max[j] {
			return true
		}
	}
	return false
}

// ChunkDrift is the extrapolation and drift of one chunk.
type ChunkDrift struct {
	// OutOfReference is the fraction of the chunk's rows with at least
	// one feature outside its reference range; Extrapolating is set when
	// it exceeds the limit, and the chunk's estimate then comes from
	// where the check model has seen no data.
	OutOfReference float64
	Extrapolating  bool
	// RangeLimit is the fraction of rows outside the ranges above which
	// the chunk is extrapolating (DriftModel.RangeLimit): the caller's
	// limit, raised where chunks drawn like a small reference exceed it
	// by chance.
	RangeLimit float64
	// Outside counts, per feature, the rows below or above its range.
	Below, Above []int
	// ThinSupport is the fraction of the chunk's rows in thin support
	// (their k-th nearest reference row farther than all but
	// ThinQuantile of the reference rows' own), ThinLimit the fraction
	// above which the chunk is extrapolating (ThinLimit); Thin counts
	// those rows. Extrapolating is set when either the range or the
	// density signal fires.
	ThinSupport, ThinLimit float64
	Thin                   int
	// ReconstructionError is the mean data reconstruction error of the
	// chunk's rows, each capped at the reference's ReconstructionCap
	// quantile; ReconstructionAlert is set when it lies outside the
	// drift thresholds.
	ReconstructionError float64
	ReconstructionAlert bool
	// KSAdjustedP is the smallest per-feature Kolmogorov-Smirnov
	// p-value times the number of features (Bonferroni, capped at 1);
	// KSAlert is set when it is below DriftAlpha. It sees what the
	// reconstruction error cannot: a shift of independent features.
	KSAdjustedP float64
	KSAlert     bool
	// DriftAlert is set when either drift signal fires.
	DriftAlert bool
	// Features holds, per feature, the two-sample Kolmogorov-Smirnov
	// statistic of the chunk against the reference and its p-value.
	Features []FeatureDrift
}

// FeatureDrift is the univariate drift of one feature over a chunk.
type FeatureDrift struct {
	Name string
	KS   float64
	P    float64
}

// Why says in words why a chunk is extrapolating: the share of its rows
// in thin support against its limit, and the features whose values left
// the reference range, with how many rows and the range.
func (c *ChunkDrift) Why(m *DriftModel, rows int) string {
	s := fmt.Sprintf("%.0f%% of rows outside the reference range (limit %.0f%%)", 100*c.OutOfReference, 100*c.RangeLimit)
	if !math.IsNaN(c.ThinSupport) {
		s = fmt.Sprintf("%.0f%% of rows in thin support (limit %.0f%%), ", 100*c.ThinSupport, 100*c.ThinLimit) + s
	}
	sep := ": "
	for j, name := range m.Features {
		if c.Below[j]+c.Above[j] == 0 {
			continue
		}
		s += fmt.Sprintf("%s%s %d of %d rows outside [%.4g, %.4g]", sep, name, c.Below[j]+c.Above[j], rows, m.Min[j], m.Max[j])
		sep = ", "
	}
	return s
}

// Chunk computes the extrapolation and drift of a chunk's rows against
// the reference: rows beyond maxOut of them outside the ranges make it
// extrapolating, and a reconstruction error outside th a drift alert.
func (m *DriftModel) Chunk(rows [][]float64, maxOut float64, th Thresholds) (*ChunkDrift, error) {
	m.prepare()
	d := len(m.Features)
	if len(rows) == 0 {
		return nil, fmt.Errorf("no rows")
	}
	c := &ChunkDrift{Below: make([]int, d), Above: make([]int, d)}
	out := 0
	var es float64
	for i, x := range rows {
		if len(x) != d {
			return nil, fmt.Errorf("row %d has %d features, the drift model %d", i, len(x), d)
		}
		if m.Outside(x) {
			out++
		}
		for j, v := range x {
			if v < m.Min[j] {
				c.Below[j]++
			} else if v > m.Max[j] {
				c.Above[j]++
			}
		}
		es += math.Min(m.RowError(x), m.errCap)
	}
	c.OutOfReference = float64(out) / float64(len(rows))
	c.RangeLimit = m.RangeLimit(len(rows), maxOut)
	c.Extrapolating = c.OutOfReference > c.RangeLimit
	c.ThinSupport, c.ThinLimit = math.NaN(), math.NaN()
	if s := m.support; s != nil {
		z := mat.NewDense(len(rows), d, nil)
		for i, x := range rows {
			for j, v := range x {
				z.Set(i, j, (v-m.Mean[j])/m.Std[j])
			}
		}
		for _, t := range s.thinRows(z) {
			if t {
				c.Thin++
			}
		}
		c.ThinSupport = float64(c.Thin) / float64(len(rows))
		c.ThinLimit = ThinLimit(s.share, len(rows), len(s.thin))
		c.Extrapolating = c.Extrapolating || c.ThinSupport > c.ThinLimit
	}
	c.ReconstructionError = es / float64(len(rows))
	if th.Available() {
		c.ReconstructionAlert = c.ReconstructionError < th.Lower || c.ReconstructionError > th.Upper
	}
	col := make([]float64, len(rows))
	for j, name := range m.Features {
		for i, x := range rows {
			col[i] = x[j]
		}
		slices.Sort(col)
		ks := KSStatistic(m.sorted[j], col)
		c.Features = append(c.Features, FeatureDrift{Name: name, KS: ks, P: KSPValue(ks, len(m.sorted[j]), len(col))})
	}
	c.KSAdjustedP = 1
	for _, f := range c.Features {
		c.KSAdjustedP = math.Min(c.KSAdjustedP, f.P*float64(d))
	}
	c.KSAlert = c.KSAdjustedP < DriftAlpha
	c.DriftAlert = c.ReconstructionAlert || c.KSAlert
	return c, nil
}

// DriftSignals names the drift signals that raised DriftAlert, in the
// order "KS" (the per-feature Kolmogorov-Smirnov test, KSAlert) and
// "reconstruction" (the reconstruction error, ReconstructionAlert);
// none without a drift alert.
func (c *ChunkDrift) DriftSignals() []string {
	var s []string
	if c.KSAlert {
		s = append(s, "KS")
	}
	if c.ReconstructionAlert {
		s = append(s, "reconstruction")
	}
	return s
}
