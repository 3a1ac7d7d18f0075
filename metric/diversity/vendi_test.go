package diversity

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func entropyOf(lams ...float64) float64 {
	var h float64
	for _, l := range lams {
		if l > 0 {
			h -= l * math.Log(l)
		}
	}
	return math.Exp(h)
}

// TestReadmeExamples checks the two examples of the Vendi-Score README:
// vendi.score([0, 0, 10, 10, 20, 20], exp(−|a − b|)) prints 2.9999 and
// vendi.score_K of a 3×3 matrix prints 2.1573; each is also checked to
// 1e-12 against its eigenvalues in closed form.
func TestReadmeExamples(t *testing.T) {
	samples := []float64{0, 0, 10, 10, 20, 20}
	k := mat.NewSymDense(6, nil)
	for i, a := range samples {
		for j, b := range samples {
			k.SetSym(i, j, math.Exp(-math.Abs(a-b)))
		}
	}
	got, err := VendiK(k)
	if err != nil {
		t.Fatal(err)
	}
	// K is the all-ones 2×2 block (eigenvalues 2, 0) times the 3×3
	// Toeplitz matrix M of 1, a = e^−10, b = e^−20, so the eigenvalues of
	// K/6 are those of M over 3: 1 − b, and (2 + b ± √(b² + 8a²))/2.
	a, b := math.Exp(-10), math.Exp(-20)
	r := math.Sqrt(b*b + 8*a*a)
	want := entropyOf((1-b)/3, (2+b+r)/6, (2+b-r)/6)
	if math.Abs(got-2.9999) > 1e-4 || math.Abs(got-want) > 1e-12 {
		t.Errorf("samples example: %.12f, README 2.9999, closed form %.12f", got, want)
	}

	k3 := mat.NewSymDense(3, []float64{1, 0.9, 0, 0.9, 1, 0, 0, 0, 1})
	got, err = VendiK(k3)
	if err != nil {
		t.Fatal(err)
	}
	want = entropyOf(1.9/3, 0.1/3, 1.0/3)
	if math.Abs(got-2.1573) > 1e-4 || math.Abs(got-want) > 1e-12 {
		t.Errorf("score_K example: %.12f, README 2.1573, closed form %.12f", got, want)
	}
}

// TestLinear checks the feature-row route: orthogonal directions count
// once each whatever their length, repeats and scalings do not add
// diversity, zero rows dilute, and the d×d (d < n) and n×n (d ≥ n)
// routes agree.
func TestLinear(t *testing.T) {
	for _, c := range []struct {
		name string
		rows [][]float64
		want float64
	}{
		{"orthogonal", [][]float64{{3, 0, 0}, {0, 0.5, 0}, {0, 0, 7}}, 3},
		{"one direction", [][]float64{{1, 2}, {2, 4}, {0.5, 1}, {10, 20}}, 1},
		// Two of one direction, two of another: K/n has eigenvalues 1/2, 1/2.
		{"two pairs", [][]float64{{1, 0, 0}, {5, 0, 0}, {0, 2, 0}, {0, 3, 0}}, 2},
		// A zero row: K/3 has eigenvalues 1/3, 1/3, 0.
		{"zero row", [][]float64{{1, 0}, {0, 1}, {0, 0}}, entropyOf(1.0/3, 1.0/3)},
		// 45°: K = [[1, c], [c, 1]] with c = cos 45°.
		{"45 degrees", [][]float64{{1, 0}, {1, 1}}, entropyOf((1+math.Sqrt(0.5))/2, (1-math.Sqrt(0.5))/2)},
	} {
		x := mat.NewDense(len(c.rows), len(c.rows[0]), nil)
		for i, r := range c.rows {
			x.SetRow(i, r)
		}
		got, err := Vendi(x)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %.15f, want %.15f", c.name, got, c.want)
		}
	}
	// d < n (dual) against the n×n matrix of the same rows.
	rng := rand.New(rand.NewPCG(5, 6))
	x := mat.NewDense(50, 7, nil)
	for i := 0; i < 50; i++ {
		for j := 0; j < 7; j++ {
			x.Set(i, j, rng.NormFloat64()+0.3)
		}
	}
	dual, err := Vendi(x)
	if err != nil {
		t.Fatal(err)
	}
	k := mat.NewSymDense(50, nil)
	for i := 0; i < 50; i++ {
		for j := 0; j < 50; j++ {
			a, b := x.RawRowView(i), x.RawRowView(j)
			k.SetSym(i, j, mat.Dot(mat.NewVecDense(7, a), mat.NewVecDense(7, b))/
				(mat.Norm(mat.NewVecDense(7, a), 2)*mat.Norm(mat.NewVecDense(7, b), 2)))
		}
	}
	primal, err := VendiK(k)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(dual-primal) > 1e-10*primal || dual < 1 || dual > 7 {
		t.Errorf("d < n: %.14f, n×n matrix %.14f (want equal, within [1, 7])", dual, primal)
	}
	wide := mat.NewDense(7, 50, nil)
	wide.CloneFrom(x.T())
	wt, err := Vendi(wide)
	if err != nil || wt < 1 || wt > 7 {
		t.Errorf("d ≥ n: %v (%v), want within [1, 7]", wt, err)
	}
}

func TestErrors(t *testing.T) {
	if _, err := Vendi(mat.NewDense(2, 2, []float64{1, math.NaN(), 0, 1})); err == nil {
		t.Error("NaN accepted")
	}
	if v, err := Vendi(mat.NewDense(1, 3, []float64{1, 2, 3})); err != nil || v != 1 {
		t.Errorf("one row: %v, %v; want 1", v, err)
	}
}

// TestBlocks: 2,100 rows (three blocks of the d×d accumulation) cycling
// through 5 orthogonal directions with random lengths: exactly 5, and
// unequal counts per direction give the entropy of their frequencies.
func TestBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		n    int
		want float64
	}{
		{2100, 5},
		// 2101 rows: direction 0 gets 421, the others 420.
		{2101, entropyOf(421.0/2101, 420.0/2101, 420.0/2101, 420.0/2101, 420.0/2101)},
	} {
		x := mat.NewDense(c.n, 5, nil)
		for i := 0; i < c.n; i++ {
			x.Set(i, i%5, 0.1+rng.Float64())
		}
		got, err := Vendi(x)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%d rows: %.15f, want %.15f", c.n, got, c.want)
		}
	}
}
