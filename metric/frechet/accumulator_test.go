package frechet

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// maxDiff returns the largest absolute difference between the statistics,
// relative to the largest variance.
func maxDiff(mu1 []float64, s1 *mat.SymDense, mu2 []float64, s2 *mat.SymDense) (dmu, dsig float64) {
	d := len(mu1)
	var scale float64
	for i := 0; i < d; i++ {
		scale = max(scale, math.Abs(s2.At(i, i)))
		dmu = max(dmu, math.Abs(mu1[i]-mu2[i]))
		for j := i; j < d; j++ {
			dsig = max(dsig, math.Abs(s1.At(i, j)-s2.At(i, j)))
		}
	}
	return dmu, dsig / scale
}

func TestAccumulatorMatchesTwoPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := correlated(rng, 157, 23, 2)
	for _, ddof := range []int{0, 1} {
		wantMu, wantSig := naiveStats(x, ddof)
		for _, tc := range []struct {
			name  string
			feed  func(a *Accumulator)
			chunk int // chunkElems for the test; 0 leaves the default
		}{
			{"StatsOf", func(a *Accumulator) { a.AddRows(x) }, 0},
			{"three uneven batches", func(a *Accumulator) {
				a.AddRows(x.Slice(0, 3, 0, 23).(*mat.Dense))
				a.AddRows(x.Slice(3, 120, 0, 23).(*mat.Dense))
				a.AddRows(x.Slice(120, 157, 0, 23).(*mat.Dense))
			}, 0},
			{"row by row", func(a *Accumulator) {
				for i := 0; i < 157; i++ {
					a.Add(x.RawRowView(i))
				}
			}, 0},
			{"chunks of 10 rows", func(a *Accumulator) { a.AddRows(x) }, 10 * 23},
			{"chunks of 1 row", func(a *Accumulator) { a.AddRows(x) }, 1},
			{"merged halves", func(a *Accumulator) {
				b := NewAccumulator(23)
				a.AddRows(x.Slice(0, 60, 0, 23).(*mat.Dense))
				b.AddRows(x.Slice(60, 157, 0, 23).(*mat.Dense))
				a.Merge(b)
				a.Merge(NewAccumulator(23))
			}, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if tc.chunk > 0 {
					old := chunkElems
					chunkElems = tc.chunk
					defer func() { chunkElems = old }()
				}
				a := NewAccumulator(23)
				tc.feed(a)
				if a.N() != 157 {
					t.Fatalf("N = %d", a.N())
				}
				dmu, dsig := maxDiff(a.Mean(), a.Cov(ddof), wantMu, wantSig)
				if dmu > 1e-12 || dsig > 1e-12 {
					t.Errorf("ddof %d: mean off by %g, covariance by %g (relative)", ddof, dmu, dsig)
				}
			})
		}
	}
}

func TestAccumulatorLargeOffset(t *testing.T) {
	// Rows 1e6 + z: the covariance must be that of z. Raw sums of squares
	// (Σxxᵀ - n μμᵀ) leave no correct digit here.
	rng := rand.New(rand.NewPCG(2, 2))
	const n, d = 500, 8
	z := randn(rng, n, d)
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			v := 1e6 + z.At(i, j)
			x.Set(i, j, v)
			z.Set(i, j, v-1e6) // exact: what the offset rows really hold
		}
	}
	wantMu, wantSig := naiveStats(z, 1)
	for j := range wantMu {
		wantMu[j] += 1e6
	}
	check := func(name string, a *Accumulator) {
		dmu, dsig := maxDiff(a.Mean(), a.Cov(1), wantMu, wantSig)
		if dmu > 1e-9 || dsig > 1e-9 {
			t.Errorf("%s: mean off by %g, covariance by %g (relative)", name, dmu, dsig)
		}
	}
	a := NewAccumulator(d)
	a.AddRows(x.Slice(0, 100, 0, d).(*mat.Dense))
	a.AddRows(x.Slice(100, n, 0, d).(*mat.Dense))
	check("batches", a)
	b := NewAccumulator(d)
	for i := 0; i < n; i++ {
		b.Add(x.RawRowView(i))
	}
	check("rows", b)
}

func TestAccumulatorFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	const n, d = 40, 5
	a, b := NewAccumulator(d), NewAccumulator(d)
	wide := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		row := make([]float32, d)
		for j := range row {
			row[j] = float32(rng.NormFloat64()*3 + 100)
			wide.Set(i, j, float64(row[j]))
		}
		a.AddFloat32(row)
		b.Add(wide.RawRowView(i))
	}
	if dmu, dsig := maxDiff(a.Mean(), a.Cov(1), b.Mean(), b.Cov(1)); dmu != 0 || dsig != 0 {
		t.Errorf("float32 rows differ from their float64 widening: %g %g", dmu, dsig)
	}
	wantMu, wantSig := naiveStats(wide, 1)
	if dmu, dsig := maxDiff(a.Mean(), a.Cov(1), wantMu, wantSig); dmu > 1e-12 || dsig > 1e-12 {
		t.Errorf("float32 statistics off by %g, %g", dmu, dsig)
	}
}

func TestAccumulatorDegenerate(t *testing.T) {
	a := NewAccumulator(3)
	if m := a.Mean(); !math.IsNaN(m[0]) {
		t.Errorf("mean of no rows = %v, want NaN", m)
	}
	a.Add([]float64{1, 2, 3})
	if c := a.Cov(1); !math.IsNaN(c.At(0, 0)) {
		t.Errorf("ddof-1 covariance of one row = %v, want NaN", c.At(0, 0))
	}
	if c := a.Cov(0); c.At(1, 2) != 0 {
		t.Errorf("ddof-0 covariance of one row = %v, want 0", c.At(1, 2))
	}
	a.Add([]float64{3, 2, 1})
	s := a.Stats(0)
	if s.N != 2 || s.Sigma.At(0, 2) != -1 || s.Sigma.At(0, 0) != 1 || s.Mu[0] != 2 {
		t.Errorf("Stats(0) = %+v, %v", s, mat.Formatted(s.Sigma))
	}
	if c := a.Cov(1); c.At(0, 0) != 2 {
		t.Errorf("ddof-1 variance = %g, want 2", c.At(0, 0))
	}
	defer func() {
		if recover() == nil {
			t.Error("Add with a short row did not panic")
		}
	}()
	a.Add([]float64{1})
}
