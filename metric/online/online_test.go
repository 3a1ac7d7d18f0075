package online

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/frechet"
)

func TestClipValue(t *testing.T) {
	const a = 1 / math.E // 0.36787944117144233
	for _, c := range []struct {
		name      string
		p, eps    float64
		want      float64
		exactWant bool
	}{
		{"below, moves up by eps", 0.1, 0.05, 0.15, false},
		{"above, moves down by eps", 0.9, 0.2, 0.7, false},
		{"below, within eps: stops at 1/e", 0.3, 0.1, a, true},
		{"above, within eps: stops at 1/e", 0.4, 0.05, a, true},
		{"zero moves up", 0, 0.01, 0.01, false},
		{"eps zero leaves p", 0.25, 0, 0.25, true},
		{"at 1/e with eps zero", a, 0, a, true},
		{"at 1/e with eps", a, 0.1, a, true},
		{"distance exactly eps takes the first branch", 0.5, 0.5 - a, a, false},
		{"huge eps clips everything to 1/e", 1, 10, a, true},
	} {
		got := ClipValue(c.p, c.eps)
		if c.exactWant && got != c.want || !c.exactWant && math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s: ClipValue(%v, %v) = %v, want %v", c.name, c.p, c.eps, got, c.want)
		}
	}
	// Clip never lowers u(x) = −x log x: the point of Eq. 8.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		p, eps := rng.Float64(), 0.3*rng.Float64()
		if u(ClipValue(p, eps)) < u(p)-1e-15 {
			t.Fatalf("u(Clip(%v, %v)) = %v < u(p) = %v", p, eps, u(ClipValue(p, eps)), u(p))
		}
	}
	dst := Clip(make([]float64, 3), []float64{0.1, 0.9, 0.3}, []float64{0.05, 0.2, 0.1})
	if want := []float64{0.15, 0.7, a}; math.Abs(dst[0]-want[0]) > 1e-15 || math.Abs(dst[1]-want[1]) > 1e-15 || dst[2] != want[2] {
		t.Errorf("Clip = %v, want %v", dst, want)
	}
}

// diagReference returns the reference N(0, diag(v)).
func diagReference(t *testing.T, v ...float64) *FIDReference {
	t.Helper()
	s := mat.NewSymDense(len(v), nil)
	for i, x := range v {
		s.SetSym(i, i, x)
	}
	ref, err := NewFIDReference(frechet.Stats{Mu: make([]float64, len(v)), Sigma: s})
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

func TestFIDBonusesHandComputed(t *testing.T) {
	// Σ_r = diag(4, 1): ‖Σ_r‖₂ = 4, Tr Σ_r^{1/2} = 3. The expected values
	// were computed separately (Python) from Eq. 10 and Eq. 33 as written
	// in the doc comments.
	ref := diagReference(t, 4, 1)
	if ref.SpectralNorm() != 4 || ref.TraceSqrt() != 3 {
		t.Fatalf("reference: norm %v, trace sqrt %v; want 4, 3", ref.SpectralNorm(), ref.TraceSqrt())
	}
	e := FIDEstimate{N: 10, FID: 1.5, TraceCov: 3, MaxVar: 2, TruncAbsSum: 3.5, TruncTraceRef: 6, MeanDeviation: 1.2}
	p := DefaultFIDParams()
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"FIDUCBBonus (Eq. 10)", FIDUCBBonus(e, ref, p), 120.967499436911},
		{"NaiveFIDBonus (Eq. 33)", NaiveFIDBonus(e, ref, p), 42.7244267236373},
		{"FIDUCB index", FIDUCB.Index(e, ref, p), 1.5 - 120.967499436911},
		{"naive index", FIDNaiveUCB.Index(e, ref, p), 1.5 - 42.7244267236373},
		{"greedy index", FIDGreedy.Index(e, ref, p), 1.5},
		{"unvisited", FIDUCB.Index(FIDEstimate{}, ref, p), math.Inf(-1)},
	} {
		if !(math.Abs(c.got-c.want) <= 1e-12*math.Max(1, math.Abs(c.want))) && c.got != c.want {
			t.Errorf("%s = %.15g, want %.15g", c.name, c.got, c.want)
		}
	}
	// The bonuses shrink as samples accumulate.
	prev := math.Inf(1)
	for _, n := range []int{5, 50, 500, 5000} {
		e.N = n
		b := FIDUCBBonus(e, ref, p)
		if !(b < prev) {
			t.Errorf("FIDUCBBonus at n = %d is %v, not below %v", n, b, prev)
		}
		prev = b
	}
}

func TestISIndicesHandComputed(t *testing.T) {
	// K = 3, n = 400: ε = (0.0652, 0.0555, 0.0486); class 1 (0.35) is
	// within ε of 1/e and clips to it. Expected values computed separately
	// (Python) from Eq. 9, 32 and 34.
	e := ISEstimate{
		N:              400,
		Marginal:       []float64{0.55, 0.35, 0.10},
		MarginalVar:    []float64{0.04, 0.02, 0.01},
		CondEntropy:    0.5,
		CondEntropyVar: 0.09,
	}
	p := DefaultISParams()
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"OptimisticIS (Eq. 9)", OptimisticIS(e, p), 1.77667013128655},
		{"NaiveOptimisticIS (Eq. 34)", NaiveOptimisticIS(e, p), 1.85028787924941},
		{"EmpiricalIS (Eq. 4)", EmpiricalIS(e), 1.53189664246648},
		{"ISUCB index", ISUCB.Index(e, p), 1.77667013128655},
		{"naive index", ISNaiveUCB.Index(e, p), 1.85028787924941},
		{"greedy index", ISGreedy.Index(e, p), 1.53189664246648},
	} {
		if math.Abs(c.got-c.want) > 1e-13*c.want {
			t.Errorf("%s = %.15g, want %.15g", c.name, c.got, c.want)
		}
	}
	// An explicit C′ replaces log K.
	q := p
	q.EntropyBound = math.Log(3)
	if a, b := OptimisticIS(e, p), OptimisticIS(e, q); math.Abs(a-b) > 1e-15*a {
		t.Errorf("EntropyBound log 3 gives %v, default gives %v", b, a)
	}
	if got := OptimisticIS(ISEstimate{N: 1, Marginal: []float64{1, 0}, MarginalVar: []float64{math.NaN(), math.NaN()}, CondEntropyVar: math.NaN()}, p); !math.IsInf(got, 1) {
		t.Errorf("OptimisticIS with n = 1 = %v, want +Inf", got)
	}
	if got := ISUCB.Index(ISEstimate{}, p); !math.IsInf(got, 1) {
		t.Errorf("unvisited index = %v, want +Inf", got)
	}
}

func TestArgminTies(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		keys []float64
		want int
	}{
		{[]float64{3, 1, 2}, 1},
		{[]float64{1, 1, 1}, 0},
		{[]float64{2, 0, 0}, 1},
		{[]float64{-inf, -inf, 0}, 0},
		{[]float64{0, -inf, -inf}, 1},
		{[]float64{math.NaN(), 5, 5}, 1},
		{[]float64{5}, 0},
	} {
		if got := argmin(c.keys); got != c.want {
			t.Errorf("argmin(%v) = %d, want %d", c.keys, got, c.want)
		}
	}
}

// allAlgorithms returns every FID and IS selector over g generators.
func allAlgorithms(t *testing.T, ref *FIDReference, classes, g int) (fid, is []Algorithm) {
	t.Helper()
	for _, r := range []FIDRule{FIDUCB, FIDNaiveUCB, FIDGreedy} {
		a, err := NewFIDSelector(ref, g, r, DefaultFIDParams())
		if err != nil {
			t.Fatal(err)
		}
		fid = append(fid, a)
	}
	for _, r := range []ISRule{ISUCB, ISNaiveUCB, ISGreedy} {
		a, err := NewISSelector(classes, g, r, DefaultISParams())
		if err != nil {
			t.Fatal(err)
		}
		is = append(is, a)
	}
	return fid, is
}

// batchOf returns rows lo..lo+b-1 of x (wrapping around).
func batchOf(x *mat.Dense, lo, b int) *mat.Dense {
	n, d := x.Dims()
	out := mat.NewDense(b, d, nil)
	for i := 0; i < b; i++ {
		out.SetRow(i, x.RawRowView((lo+i)%n))
	}
	return out
}

func TestUnvisitedFirstAndGreedyArgmin(t *testing.T) {
	const G, b = 5, 4
	fam := newGaussFamily(t, 6, func(i int) float64 { return 1 / float64(i+1) }, linspace(0.2, 1.8, G), 200, 3)
	probs := classFamily(4, linspace(0.5, 3, G), linspace(0.5, 2, G), 200, 3)
	fidAlgs, isAlgs := allAlgorithms(t, fam.ref, 4, G)
	for _, set := range []struct {
		algs  []Algorithm
		pools []*mat.Dense
		fid   bool
	}{{fidAlgs, fam.pools, true}, {isAlgs, probs, false}} {
		unvisited := 1 // +Inf for IS
		if set.fid {
			unvisited = -1
		}
		for _, a := range set.algs {
			for g, s := range a.Scores() {
				if !math.IsInf(s, unvisited) {
					t.Errorf("%s: unvisited generator %d scores %v", a.Name(), g, s)
				}
			}
			// Every generator is visited once, in index order.
			for step := 0; step < G; step++ {
				g := a.Pick()
				if g != step {
					t.Fatalf("%s: step %d picked %d, want %d (unvisited first, lowest index)", a.Name(), step, g, step)
				}
				if err := a.Update(g, batchOf(set.pools[g], 0, b)); err != nil {
					t.Fatal(err)
				}
			}
			scores := a.Scores()
			for g, s := range scores {
				if math.IsInf(s, 0) || math.IsNaN(s) {
					t.Errorf("%s: generator %d scores %v after a visit", a.Name(), g, s)
				}
			}
			// The next pick is the best index: argmin for FID, argmax for IS.
			want := 0
			for g, s := range scores {
				if set.fid && s < scores[want] || !set.fid && s > scores[want] {
					want = g
				}
			}
			if got := a.Pick(); got != want {
				t.Errorf("%s: picked %d after one visit each, best index is %d (scores %v)", a.Name(), got, want, scores)
			}
		}
	}
	// Greedy's index is the empirical score itself.
	gr := fidAlgs[2].(*FIDSelector)
	for g, s := range gr.Scores() {
		e, err := gr.Estimate(g)
		if err != nil {
			t.Fatal(err)
		}
		if s != e.FID {
			t.Errorf("greedy FID score of %d = %v, empirical FID %v", g, s, e.FID)
		}
	}
	gi := isAlgs[2].(*ISSelector)
	for g, s := range gi.Scores() {
		e, _ := gi.Estimate(g)
		if math.Abs(s-EmpiricalIS(e)) > 1e-14*s {
			t.Errorf("greedy IS score of %d = %v, empirical IS %v", g, s, EmpiricalIS(e))
		}
	}
}

// truncSums recomputes the truncated statistics from a covariance.
func truncSums(s, ref *mat.SymDense, tau float64) (abs, tr float64) {
	d := s.SymmetricDim()
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			if v := s.At(i, j); math.Abs(v) >= tau {
				abs += math.Abs(v)
				tr += v * ref.At(j, i)
			}
		}
	}
	return abs, tr
}

func TestFIDIncrementalMatchesBatch(t *testing.T) {
	const d = 12
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		name     string
		spectrum func(i int) float64
		rank     int
		offset   float64 // added to the reference mean and to every row
		tol      float64
	}{
		// Incremental and batch updates sum in different orders, and
		// OpenBLAS orders its sums differently from gonum: 1e-9 relative
		// apart was seen under -tags openblas. A wrong normaliser moves
		// the FID by far more than 1e-8.
		{"full-rank reference", harmonic, d, 0, 1e-8},
		{"rank-5 reference", func(i int) float64 {
			if i < 5 {
				return 1 / float64(i+1)
			}
			return 0
		}, 5, 0, 1e-8},
		// Features sharing a large offset (1e4 against a spread of ~1):
		// the trace term must not lose its digits to cancellation.
		{"large common offset", harmonic, d, 1e4, 1e-8},
	} {
		fam := newGaussFamily(t, d, c.spectrum, []float64{0.7}, 1, 9)
		ref := fam.ref
		if c.offset != 0 {
			mu := make([]float64, d)
			for j := range mu {
				mu[j] = c.offset
			}
			var err error
			ref, err = NewFIDReference(frechet.Stats{Mu: mu, Sigma: fam.ref.sigma})
			if err != nil {
				t.Fatal(err)
			}
		}
		if ref.Rank() != c.rank {
			t.Fatalf("%s: rank %d, want %d", c.name, ref.Rank(), c.rank)
		}
		sel, err := NewFIDSelector(ref, 1, FIDUCB, DefaultFIDParams())
		if err != nil {
			t.Fatal(err)
		}
		// Rows with correlations, 3 per batch, through both the Gram
		// (n < rank) and the covariance (n ≥ rank) paths.
		var rows []float64
		for step := 1; step <= 12; step++ {
			b := mat.NewDense(3, d, nil)
			for i := 0; i < 3; i++ {
				for j := 0; j < d; j++ {
					b.Set(i, j, c.offset+0.1+rng.NormFloat64()+0.5*float64(j%3)*rng.NormFloat64())
				}
			}
			if err := sel.Update(0, b); err != nil {
				t.Fatal(err)
			}
			n := 3 * step
			if gram := sel.ests[0].yacc == nil; gram != (n < c.rank) {
				t.Errorf("%s, n = %d: Gram path %v, want %v", c.name, n, gram, n < c.rank)
			}
			rows = append(rows, b.RawMatrix().Data...)
			all := mat.NewDense(n, d, rows)
			got, err := sel.Estimate(0)
			if err != nil {
				t.Fatal(err)
			}
			st := frechet.StatsOf(all, 0)
			fid, err := ref.off.DistanceToSamples(all, 0)
			if err != nil {
				t.Fatal(err)
			}
			abs, tr := truncSums(st.Sigma, ref.sigma, DefaultTruncationRatio*ref.SpectralNorm())
			var dev, maxVar float64
			for i := 0; i < n; i++ {
				var s float64
				for j := 0; j < d; j++ {
					e := all.At(i, j) - st.Mu[j]
					s += e * e
				}
				dev += math.Sqrt(s)
			}
			dev /= float64(n)
			for j := 0; j < d; j++ {
				maxVar = math.Max(maxVar, st.Sigma.At(j, j))
			}
			want := FIDEstimate{N: n, FID: fid, TraceCov: mat.Trace(st.Sigma), MaxVar: maxVar, TruncAbsSum: abs, TruncTraceRef: tr, MeanDeviation: dev}
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"FID", got.FID, want.FID},
				{"TraceCov", got.TraceCov, want.TraceCov},
				{"MaxVar", got.MaxVar, want.MaxVar},
				{"TruncAbsSum", got.TruncAbsSum, want.TruncAbsSum},
				{"TruncTraceRef", got.TruncTraceRef, want.TruncTraceRef},
				{"MeanDeviation", got.MeanDeviation, want.MeanDeviation},
			} {
				if math.Abs(f.got-f.want) > c.tol*math.Max(1, math.Abs(f.want)) {
					t.Errorf("%s, n = %d: incremental %s = %.12g, batch %.12g", c.name, n, f.name, f.got, f.want)
				}
			}
			if got.N != want.N {
				t.Errorf("%s: N = %d, want %d", c.name, got.N, want.N)
			}
			// The selector's score is the index of this estimate.
			if s, w := sel.Scores()[0], FIDUCB.Index(got, ref, DefaultFIDParams()); s != w {
				t.Errorf("%s, n = %d: score %v, index of the estimate %v", c.name, n, s, w)
			}
		}
	}
}

func TestISIncrementalMatchesBatch(t *testing.T) {
	pools := classFamily(6, []float64{2}, []float64{1.5}, 40, 11)
	sel, err := NewISSelector(6, 1, ISUCB, DefaultISParams())
	if err != nil {
		t.Fatal(err)
	}
	for step := 1; step <= 8; step++ {
		if err := sel.Update(0, batchOf(pools[0], 5*(step-1), 5)); err != nil {
			t.Fatal(err)
		}
		n := 5 * step
		x := batchOf(pools[0], 0, n)
		got, _ := sel.Estimate(0)
		mean := make([]float64, 6)
		hs := make([]float64, n)
		for i := 0; i < n; i++ {
			hs[i] = entropy(x.RawRowView(i))
			for j, v := range x.RawRowView(i) {
				mean[j] += v / float64(n)
			}
		}
		var hm, hv float64
		for _, h := range hs {
			hm += h / float64(n)
		}
		for _, h := range hs {
			hv += (h - hm) * (h - hm) / float64(n-1)
		}
		for j := range mean {
			var v float64
			for i := 0; i < n; i++ {
				v += (x.At(i, j) - mean[j]) * (x.At(i, j) - mean[j]) / float64(n-1)
			}
			if math.Abs(got.Marginal[j]-mean[j]) > 1e-14 || math.Abs(got.MarginalVar[j]-v) > 1e-14 {
				t.Errorf("n = %d, class %d: incremental (%v, %v), batch (%v, %v)", n, j, got.Marginal[j], got.MarginalVar[j], mean[j], v)
			}
		}
		if math.Abs(got.CondEntropy-hm) > 1e-14 || math.Abs(got.CondEntropyVar-hv) > 1e-13 {
			t.Errorf("n = %d: entropy (%v, %v), batch (%v, %v)", n, got.CondEntropy, got.CondEntropyVar, hm, hv)
		}
		// The empirical IS is the offline one-split IS of the same rows.
		is, _, err := frechet.InceptionScore(x, 1)
		if err != nil {
			t.Fatal(err)
		}
		if e := EmpiricalIS(got); math.Abs(e-is) > 1e-12*is {
			t.Errorf("n = %d: empirical IS %v, frechet.InceptionScore %v", n, e, is)
		}
	}
}

func TestUpdateErrors(t *testing.T) {
	ref := diagReference(t, 1, 1, 1)
	fs, _ := NewFIDSelector(ref, 2, FIDUCB, DefaultFIDParams())
	is, _ := NewISSelector(3, 2, ISUCB, DefaultISParams())
	nan := math.NaN()
	for _, c := range []struct {
		name  string
		alg   Algorithm
		g     int
		batch *mat.Dense
	}{
		{"generator out of range", fs, 2, mat.NewDense(1, 3, nil)},
		{"negative generator", fs, -1, mat.NewDense(1, 3, nil)},
		{"wrong dimension", fs, 0, mat.NewDense(2, 4, nil)},
		{"NaN feature", fs, 0, mat.NewDense(1, 3, []float64{0, nan, 0})},
		{"nil batch", fs, 0, nil},
		{"wrong class count", is, 0, mat.NewDense(1, 2, []float64{0.5, 0.5})},
		{"negative probability", is, 0, mat.NewDense(1, 3, []float64{1.1, -0.1, 0})},
		{"row not summing to 1", is, 1, mat.NewDense(1, 3, []float64{0.5, 0.2, 0.2})},
	} {
		if err := c.alg.Update(c.g, c.batch); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	// Rejected batches change nothing.
	if s := fs.Scores(); !math.IsInf(s[0], -1) || !math.IsInf(s[1], -1) {
		t.Errorf("scores after rejected batches: %v", s)
	}
	if _, err := NewFIDSelector(ref, 0, FIDUCB, DefaultFIDParams()); err == nil {
		t.Error("0 generators: no error")
	}
	if _, err := NewFIDSelector(ref, 2, FIDUCB, FIDParams{}); err == nil {
		t.Error("zero FIDParams: no error")
	}
	if _, err := NewISSelector(1, 2, ISUCB, DefaultISParams()); err == nil {
		t.Error("1 class: no error")
	}
	if _, err := ParseFIDRule("ucb"); err == nil {
		t.Error(`ParseFIDRule("ucb"): no error`)
	}
	for _, r := range []FIDRule{FIDUCB, FIDNaiveUCB, FIDGreedy} {
		if got, err := ParseFIDRule(r.String()); err != nil || got != r {
			t.Errorf("ParseFIDRule(%q) = %v, %v", r.String(), got, err)
		}
	}
	for _, r := range []ISRule{ISUCB, ISNaiveUCB, ISGreedy} {
		if got, err := ParseISRule(r.String()); err != nil || got != r {
			t.Errorf("ParseISRule(%q) = %v, %v", r.String(), got, err)
		}
	}
}

func TestSumSqrtEigenUpper(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, c := range []struct {
		n, rank int
		scale   float64
	}{{1, 1, 1}, {2, 2, 1}, {3, 3, 1e3}, {10, 10, 1}, {10, 4, 1}, {64, 64, 1e-3}, {130, 50, 1}} {
		x := mat.NewDense(c.rank, c.n, nil)
		for i := range x.RawMatrix().Data {
			x.RawMatrix().Data[i] = c.scale * rng.NormFloat64()
		}
		s := mat.NewSymDense(c.n, nil)
		s.SymOuterK(1, x.T())
		var es mat.EigenSym
		if !es.Factorize(s, false) {
			t.Fatal("EigenSym failed")
		}
		var want float64
		for _, v := range es.Values(nil) {
			want += math.Sqrt(math.Max(v, 0))
		}
		// A stride larger than n, as the Gram buffer has.
		stride := c.n + 3
		a := make([]float64, c.n*stride)
		for i := 0; i < c.n; i++ {
			for j := i; j < c.n; j++ {
				a[i*stride+j] = s.At(i, j)
			}
		}
		got, err := sumSqrtEigenUpper(c.n, a, stride)
		if err != nil {
			t.Fatal(err)
		}
		// Rank-deficient matrices have eigenvalues at rounding level whose
		// square roots differ between solvers: compare at √ε of the scale.
		tol := 1e-12 * want
		if c.rank < c.n {
			tol = 1e-6 * want
		}
		if math.Abs(got-want) > tol {
			t.Errorf("n = %d, rank %d: Σ√λ = %.15g, EigenSym gives %.15g", c.n, c.rank, got, want)
		}
	}
}
