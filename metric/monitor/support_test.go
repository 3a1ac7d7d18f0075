package monitor

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestSupportKthMatchesBruteForce checks the blocked Gram-matrix
// distances against a direct computation, leave-one-out included.
func TestSupportKthMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	x := normalRows(r, 300, func(z []float64) []float64 { return z })
	m, err := FitDrift(x, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	m.prepare()
	s := m.support
	n, d := s.rows.Dims()
	for _, i := range []int{0, 17, 299} {
		var ds []float64
		for j := range n {
			if j == i {
				continue
			}
			var ss float64
			for c := range d {
				v := s.rows.At(i, c) - s.rows.At(j, c)
				ss += v * v
			}
			ds = append(ds, math.Sqrt(ss))
		}
		sortFloats(ds)
		got := s.kth(mat.NewDense(1, d, mat.Row(nil, i, s.rows)), []int{i})[0]
		if math.Abs(got-ds[SupportNeighbours-1]) > 1e-9 {
			t.Errorf("row %d: k-th distance %v, brute force %v", i, got, ds[SupportNeighbours-1])
		}
	}
	if math.Abs(s.share-ThinQuantile) > 0.01 {
		t.Errorf("reference thin share %v, want about %v", s.share, ThinQuantile)
	}
}

func sortFloats(v []float64) {
	for i := 1; i < len(v); i++ {
		for k := i; k > 0 && v[k] < v[k-1]; k-- {
			v[k], v[k-1] = v[k-1], v[k]
		}
	}
}

// TestThinSupportInsideRanges: a reference of two clusters, a chunk from
// the gap between them lies inside every feature's range (the range check
// is silent) and is extrapolating by density; chunks drawn like the
// reference rarely are.
func TestThinSupportInsideRanges(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cluster := func(z []float64) []float64 {
		c := 3.0
		if r.IntN(2) == 0 {
			c = -3
		}
		return []float64{z[0] + c, z[1] + c}
	}
	m, err := FitDrift(normalRows(r, 800, cluster), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	gap := make([][]float64, 200)
	for i := range gap {
		gap[i] = []float64{0.5 * r.NormFloat64(), 0.5 * r.NormFloat64()}
	}
	c, err := m.Chunk(gap, DefaultMaxOutOfReference, Thresholds{})
	if err != nil {
		t.Fatal(err)
	}
	if c.OutOfReference != 0 || !c.Extrapolating || c.ThinSupport < 0.5 {
		t.Errorf("gap chunk: out of reference %v, thin support %v (limit %v), extrapolating %v", c.OutOfReference, c.ThinSupport, c.ThinLimit, c.Extrapolating)
	}
	flagged := 0
	const draws = 200
	for range draws {
		x := normalRows(r, 200, cluster)
		rows := make([][]float64, 200)
		for i := range rows {
			rows[i] = x.RawRowView(i)
		}
		c, _ := m.Chunk(rows, DefaultMaxOutOfReference, Thresholds{})
		if c.ThinSupport > c.ThinLimit {
			flagged++
		}
	}
	if flagged > draws*5/100 {
		t.Errorf("%d of %d chunks drawn like the reference in thin support", flagged, draws)
	}
}

// TestKSDriftSeesMeanShift: a 0.8 sd shift of independent features leaves
// the reconstruction error blind (every principal axis is kept) and fires
// the Bonferroni KS alert; unshifted chunks do not fire it.
func TestKSDriftSeesMeanShift(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	m, err := FitDrift(normalRows(r, 800, func(z []float64) []float64 { return z[:2] }), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	th := ReferenceThresholds(ChunkMeans(m.referenceErrors(), []Chunk{{End: 400}, {Start: 400, End: 800}}), DefaultWidth, true)
	fired := [2]int{}
	const draws = 100
	for range draws {
		for s, shift := range []float64{0, 0.8} {
			rows := make([][]float64, 500)
			for i := range rows {
				rows[i] = []float64{r.NormFloat64() + shift, r.NormFloat64() + shift}
			}
			c, _ := m.Chunk(rows, DefaultMaxOutOfReference, th)
			if c.ReconstructionAlert {
				t.Fatalf("reconstruction alert on independent features (error %v)", c.ReconstructionError)
			}
			if c.DriftAlert {
				fired[s]++
			}
		}
	}
	if fired[0] > draws*5/100 || fired[1] != draws {
		t.Errorf("drift alert on %d of %d unshifted and %d of %d shifted chunks", fired[0], draws, fired[1], draws)
	}
}

// TestIntervalCoversAndWidens: with held-out estimates whose error grows
// away from the centre, the interval holds the realised MSE of chunks
// drawn like the reference about IntervalLevel of the time, and is wider
// for a chunk with thin-support rows.
func TestIntervalCoversAndWidens(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const n = 1000
	x := normalRows(r, n, func(z []float64) []float64 { return z[:2] })
	m, err := FitDrift(x, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	// A row's loss is σ²(x) χ²₁ with σ growing with |x₀|; the estimate
	// knows σ² only up to a factor that is worse away from the centre.
	row := func(x0 float64) (est, real float64) {
		s2 := 0.5 + x0*x0
		e := r.NormFloat64()
		return s2 * (1 + 0.2*math.Abs(x0)*r.NormFloat64()), s2 * e * e
	}
	held, real := make([]float64, n), make([]float64, n)
	for i := range n {
		held[i], real[i] = row(x.At(i, 0))
	}
	chunks, _ := BySize(100*50, 100)
	est, rl := make([]float64, 100*50), make([]float64, 100*50)
	feats := make([][]float64, 100*50)
	for i := range est {
		feats[i] = []float64{r.NormFloat64(), r.NormFloat64()}
		est[i], rl[i] = row(feats[i][0])
	}
	rep, err := Run(Input{Chunks: chunks, Estimates: est, Realized: rl, Reference: real, HeldOut: held, Drift: m, Features: feats, NonNegative: true})
	if err != nil {
		t.Fatal(err)
	}
	in := 0
	for _, c := range rep.Results {
		if !c.IntervalCalibrated {
			t.Fatal("interval not calibrated with held-out estimates")
		}
		if c.EstimateLower <= c.Realized && c.Realized <= c.EstimateUpper {
			in++
		}
	}
	if in < 40 {
		t.Errorf("interval holds the realised MSE of %d of 50 chunks, want about 45", in)
	}
	iv := newIntervalModel(held, real, m.ReferenceThin())
	lo0, hi0 := iv.ratios(100, 0)
	lo1, hi1 := iv.ratios(100, 50)
	if !(hi1/lo1 > hi0/lo0) {
		t.Errorf("interval ratios [%v, %v] with no thin rows, [%v, %v] with half: not wider", lo0, hi0, lo1, hi1)
	}
	// Without held-out estimates (a model file from before), the
	// interval is the band.
	rep, _ = Run(Input{Chunks: chunks, Estimates: est, Reference: real, NonNegative: true})
	if c := rep.Results[0]; c.IntervalCalibrated || c.EstimateLower != c.Lower || c.EstimateUpper != c.Upper {
		t.Errorf("uncalibrated interval [%v, %v], band [%v, %v]", c.EstimateLower, c.EstimateUpper, c.Lower, c.Upper)
	}
}

// TestThinLimitFalseAlarms: chunks whose thin rows are counted as the
// support model counts them (each row thin with the probability that a
// fresh row's distance exceeds the (1-ThinQuantile) quantile of 1,000
// reference distances) exceed the limit at most about ThinFalseAlarm of
// the time, chunks of 250 rows as of 500; a normal approximation of the
// count exceeded it about twice as often.
func TestThinLimitFalseAlarms(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 3))
	const nref, draws = 1000, 4000
	for _, rows := range []int{250, 500} {
		over := 0
		ref := make([]float64, nref)
		for range draws {
			for i := range ref {
				ref[i] = r.Float64()
			}
			slices.Sort(ref)
			radius := quantileSorted(ref, 1-ThinQuantile)
			thin := 0
			for _, v := range ref {
				thin += b2i(v > radius)
			}
			limit := ThinLimit(float64(thin)/nref, rows, nref)
			k := 0
			for range rows {
				k += b2i(r.Float64() > radius)
			}
			over += b2i(float64(k)/float64(rows) > limit)
		}
		if rate := float64(over) / draws; rate > 1.3*ThinFalseAlarm {
			t.Errorf("chunks of %d rows: %.2f%% over the thin-support limit, want at most about %.0f%%", rows, 100*rate, 100*ThinFalseAlarm)
		}
	}
}

func TestBetaBinomialQuantile(t *testing.T) {
	// With a = b = 1 the count is uniform on 0..m.
	for _, tc := range []struct {
		m    int
		q    float64
		want int
	}{{9, 0.5, 4}, {9, 0.95, 9}, {99, 0.99, 98}} {
		if got := betaBinomialQuantile(tc.m, 1, 1, tc.q); got != tc.want {
			t.Errorf("uniform on 0..%d: %v quantile %d, want %d", tc.m, tc.q, got, tc.want)
		}
	}
}

// TestSupportWorkBounded counts the distances fitting the support
// computes (every reference row against the rows compared with): at most
// supportPairs whatever the size of the reference, and every row up to
// 10,000. A 200,000-row reference was compared with 20,000 rows (4·10⁹
// distances, 55 s of CPU on the first chunks page of its monitor).
func TestSupportWorkBounded(t *testing.T) {
	for _, n := range []int{2, 300, 10000, 10001, 20000, 200000} {
		k := supportRows(n)
		if n <= 10000 && k != n {
			t.Errorf("%d reference rows: compared with %d, want all", n, k)
		}
		if k < 1 || k > n || (n > 10000 && n*k > supportPairs) {
			t.Errorf("%d reference rows: compared with %d, %d distances (bound %d)", n, k, n*k, supportPairs)
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	x := normalRows(r, 200000, func(z []float64) []float64 { return z[:1] })
	m, err := FitDrift(x, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	m.prepare()
	rows, _ := m.support.rows.Dims()
	if work := 200000 * rows; work > supportPairs {
		t.Fatalf("support of 200,000 rows compares with %d rows: %d distances, bound %d", rows, work, supportPairs)
	}
	if len(m.support.thin) != 200000 {
		t.Fatalf("%d thin flags for 200,000 reference rows", len(m.support.thin))
	}
}
