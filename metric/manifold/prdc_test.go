package manifold

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// bruteForce is compute_prdc written out with the whole distance matrices,
// independently of the blocked code: distances √Σ(a−b)², the radius the
// (k+1)-th smallest distance of a row to its own set, strict comparisons.
func bruteForce(real, fake *mat.Dense, k int) PRDC {
	dist := func(a, b []float64) float64 {
		var s float64
		for i := range a {
			t := a[i] - b[i]
			s += float64(t * t)
		}
		return math.Sqrt(s)
	}
	radii := func(x *mat.Dense) []float64 {
		n, _ := x.Dims()
		r := make([]float64, n)
		for i := range r {
			row := make([]float64, n)
			for j := range row {
				row[j] = dist(x.RawRowView(i), x.RawRowView(j))
			}
			slices.Sort(row)
			r[i] = row[k]
		}
		return r
	}
	nr, _ := real.Dims()
	nf, _ := fake.Dims()
	rr, fr := radii(real), radii(fake)
	var p PRDC
	inReal := make([]int, nf)
	for i := 0; i < nr; i++ {
		cov, rec := false, false
		for j := 0; j < nf; j++ {
			d := dist(real.RawRowView(i), fake.RawRowView(j))
			if d < rr[i] {
				inReal[j]++
				cov = true
			}
			if d < fr[j] {
				rec = true
			}
		}
		if cov {
			p.Coverage++
		}
		if rec {
			p.Recall++
		}
	}
	var sum float64
	for _, c := range inReal {
		if c > 0 {
			p.Precision++
		}
		sum += float64(c)
	}
	p.Precision /= float64(nf)
	p.Recall /= float64(nr)
	p.Coverage /= float64(nr)
	p.Density = sum / float64(nf) / float64(k)
	return p
}

func rows(vals ...[]float64) *mat.Dense {
	x := mat.NewDense(len(vals), len(vals[0]), nil)
	for i, v := range vals {
		x.SetRow(i, v)
	}
	return x
}

func close12(a, b PRDC) bool {
	c := func(x, y float64) bool { return math.Abs(x-y) <= 1e-12 }
	return c(a.Precision, b.Precision) && c(a.Recall, b.Recall) && c(a.Density, b.Density) && c(a.Coverage, b.Coverage)
}

// TestHandComputed checks a 1-D case worked out by hand, with a fake point
// exactly at a real radius (strict < leaves it out).
func TestHandComputed(t *testing.T) {
	real := rows([]float64{0}, []float64{1}, []float64{2}, []float64{3})
	for _, c := range []struct {
		name string
		fake *mat.Dense
		want PRDC
	}{
		// Real radii (k = 1) are all 1; fake radii are 9.5. Fake 0.5 is in
		// the balls of reals 0 and 1, fake 10 in none; every real lies
		// within 9.5 of fake 0.5; reals 0 and 1 have a fake in their ball.
		{"spread", rows([]float64{0.5}, []float64{10}), PRDC{Precision: 0.5, Recall: 1, Density: 1, Coverage: 0.5}},
		// Fake 4 is at distance 1 from real 3, exactly its radius: outside
		// (precision 1/2); fake 1 is inside real 1's ball alone, reals 0
		// and 2 being at exactly 1 (density 1/2, coverage 1/4). Fake radii
		// are 3, and every real is within 2 of fake 1 (recall 1).
		{"tie", rows([]float64{1}, []float64{4}), PRDC{Precision: 0.5, Recall: 1, Density: 0.5, Coverage: 1.0 / 4}},
	} {
		got, err := Compute(context.Background(), real, c.fake, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
		if b := bruteForce(real, c.fake, 1); b != c.want {
			t.Errorf("%s: brute force %+v, want %+v", c.name, b, c.want)
		}
	}
}

// lattice returns n points of dimension d with coordinates in {0, 1, 2}:
// many distances are equal, so radii tie with cross distances, and
// repeated points are duplicate rows.
func lattice(rng *rand.Rand, n, d int, offset float64) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, float64(rng.IntN(3))+offset)
		}
	}
	return x
}

func gauss(rng *rand.Rand, n, d int, shift float64) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.NormFloat64()+shift)
		}
	}
	return x
}

// withDuplicates copies some rows of x onto others, and some rows of src
// into x, so that duplicates occur within and across the sets.
func withDuplicates(rng *rand.Rand, x, src *mat.Dense) *mat.Dense {
	n, _ := x.Dims()
	m, _ := src.Dims()
	for c := 0; c < n/5; c++ {
		x.SetRow(rng.IntN(n), x.RawRowView(rng.IntN(n)))
		x.SetRow(rng.IntN(n), src.RawRowView(rng.IntN(m)))
	}
	return x
}

// TestAgainstBruteForce compares Compute with the brute force on lattice
// points (ties everywhere), Gaussian sets with duplicate rows, sets with a
// large common offset (where the GEMM estimate is coarse and most
// decisions fall back to exact distances), and sets larger than one
// block in both directions.
func TestAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name       string
		real, fake *mat.Dense
		k          int
	}{
		{"lattice d2", lattice(rng, 40, 2, 0), lattice(rng, 30, 2, 0), 5},
		{"lattice d3 k1", lattice(rng, 60, 3, 0), lattice(rng, 50, 3, 0), 1},
		{"lattice d4 offset", lattice(rng, 50, 4, 1e6), lattice(rng, 70, 4, 1e6), 3},
		{"gauss duplicates", withDuplicates(rng, gauss(rng, 120, 8, 0), gauss(rng, 20, 8, 0)), withDuplicates(rng, gauss(rng, 90, 8, 0.5), gauss(rng, 20, 8, 0)), 5},
		{"gauss offset", gauss(rng, 100, 16, 1e7), gauss(rng, 80, 16, 1e7+0.3), 4},
		{"blocks", gauss(rng, 1100, 3, 0), gauss(rng, 1300, 3, 0.2), 7},
		{"blocks lattice", gauss(rng, 1100, 3, 0), lattice(rng, 1300, 3, -1), 7}, // fake radii 0: recall 0
		{"k = n - 1", lattice(rng, 6, 2, 0), gauss(rng, 9, 2, 1), 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Compute(context.Background(), c.real, c.fake, c.k)
			if err != nil {
				t.Fatal(err)
			}
			want := bruteForce(c.real, c.fake, c.k)
			if !close12(got, want) {
				t.Errorf("got %+v, brute force %+v", got, want)
			}
			t.Logf("%+v", got)
		})
	}
}

// TestDuplicateIsNeighbour: with each real row present twice, the first
// neighbour (k = 1) is the duplicate at distance 0, every real radius is
// 0, and no fake row can be strictly inside a ball: precision, density
// and coverage are 0, whatever the fake rows.
func TestDuplicateIsNeighbour(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := gauss(rng, 20, 5, 0)
	real := mat.NewDense(40, 5, nil)
	for i := 0; i < 20; i++ {
		real.SetRow(2*i, x.RawRowView(i))
		real.SetRow(2*i+1, x.RawRowView(i))
	}
	r, err := Radii(context.Background(), real, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range r {
		if v != 0 {
			t.Fatalf("radius %d = %g, want 0", i, v)
		}
	}
	got, err := Compute(context.Background(), real, x, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Precision != 0 || got.Density != 0 || got.Coverage != 0 {
		t.Errorf("got %+v, want precision, density and coverage 0", got)
	}
	// With k = 2 the radius is the distance to the nearest other point.
	r2, _ := Radii(context.Background(), real, 2)
	for i := 0; i < 40; i++ {
		best := math.Inf(1)
		for j := 0; j < 20; j++ {
			if j != i/2 {
				best = math.Min(best, math.Sqrt(sqDist(real.RawRowView(i), x.RawRowView(j))))
			}
		}
		if r2[i] != best {
			t.Fatalf("k = 2 radius %d = %v, want %v", i, r2[i], best)
		}
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	a := mat.NewDense(5, 2, nil)
	for _, c := range []struct {
		name       string
		real, fake *mat.Dense
		k          int
	}{
		{"dims", a, mat.NewDense(5, 3, nil), 1},
		{"k0", a, a, 0},
		{"few rows", a, mat.NewDense(3, 2, nil), 3},
		{"nan", rows([]float64{0, math.NaN()}, []float64{1, 1}, []float64{2, 2}), a, 1},
	} {
		if _, err := Compute(ctx, c.real, c.fake, c.k); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Compute(cctx, a, a, 1); err == nil {
		t.Error("cancelled context: no error")
	}
}

// TestProgress: the count grows by one per block and ends at the total:
// 3 + 1 tiles of the two self passes (two and one blocks of 512 rows)
// and two row blocks of the cross pass.
func TestProgress(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var seen []int
	total := 0
	_, err := ComputeProgress(context.Background(), gauss(rng, 600, 2, 0), gauss(rng, 100, 2, 0), 3, func(d, n int) {
		seen = append(seen, d)
		total = n
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range seen {
		if d != i {
			t.Fatalf("progress %v: want 0, 1, 2, ...", seen)
		}
	}
	if total != 6 || seen[len(seen)-1] != 6 {
		t.Errorf("progress %v of %d, want 0..6 of 6", seen, total)
	}
}
