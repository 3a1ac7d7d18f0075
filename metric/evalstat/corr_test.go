package evalstat

import (
	"math"
	"slices"
	"testing"
)

func TestPearsonSpearman(t *testing.T) {
	for _, test := range []struct {
		name         string
		x, y         []float64
		wantPearson  float64
		wantSpearman float64
	}{
		{
			// scipy.stats.pearsonr / spearmanr. By hand: centred
			// sums Sxy = 6, Sxx = 10, Syy = 5.2, r = 6/sqrt(52).
			// Ranks of y are [1 2 3.5 5 3.5]: Sxy = 8, Syy = 9.5,
			// rho = 8/sqrt(95).
			name:         "scipy",
			x:            []float64{1, 2, 3, 4, 5},
			y:            []float64{5, 6, 7, 8, 7},
			wantPearson:  0.8320502943378437,
			wantSpearman: 0.8207826816681233,
		},
		{
			name:         "identity",
			x:            []float64{0.5, -2, 3, 10},
			y:            []float64{0.5, -2, 3, 10},
			wantPearson:  1,
			wantSpearman: 1,
		},
		{
			name:         "negated",
			x:            []float64{1, 2, 3},
			y:            []float64{-1, -2, -3},
			wantPearson:  -1,
			wantSpearman: -1,
		},
		{
			// Uncorrelated: Sxy = (-1)(1)+0+(1)(1) = 0.
			name:         "zero",
			x:            []float64{1, 2, 3},
			y:            []float64{1, 0, 1},
			wantPearson:  0,
			wantSpearman: 0,
		},
		{
			// Large offset: the two-pass sums keep full accuracy.
			name:         "offset",
			x:            []float64{1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4, 1e9 + 5},
			y:            []float64{5, 6, 7, 8, 7},
			wantPearson:  0.8320502943378437,
			wantSpearman: 0.8207826816681233,
		},
	} {
		p, err := Pearson(test.x, test.y)
		if err != nil {
			t.Errorf("%s: Pearson: unexpected error: %v", test.name, err)
		} else if math.Abs(p-test.wantPearson) > tol {
			t.Errorf("%s: Pearson = %v, want %v", test.name, p, test.wantPearson)
		}
		s, err := Spearman(test.x, test.y)
		if err != nil {
			t.Errorf("%s: Spearman: unexpected error: %v", test.name, err)
		} else if math.Abs(s-test.wantSpearman) > tol {
			t.Errorf("%s: Spearman = %v, want %v", test.name, s, test.wantSpearman)
		}
	}
}

// A monotone but non-linear relation is perfectly rank-correlated but not
// perfectly linearly correlated.
func TestMonotoneNonlinear(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6}
	up := make([]float64, len(x))
	down := make([]float64, len(x))
	for i, v := range x {
		up[i] = math.Exp(v)
		down[i] = -v * v * v
	}
	for _, test := range []struct {
		name string
		y    []float64
		sign float64
	}{
		{name: "exp", y: up, sign: 1},
		{name: "-x^3", y: down, sign: -1},
	} {
		s, err := Spearman(x, test.y)
		if err != nil || s != test.sign {
			t.Errorf("%s: Spearman = %v, %v; want %v", test.name, s, err, test.sign)
		}
		p, err := Pearson(x, test.y)
		if err != nil || !(math.Abs(p) < 0.99) || p*test.sign <= 0 {
			t.Errorf("%s: Pearson = %v, %v; want sign %v and |r| < 0.99", test.name, p, err, test.sign)
		}
	}
}

func TestCorrelationErrors(t *testing.T) {
	for _, test := range []struct {
		name string
		x, y []float64
	}{
		{name: "empty", x: nil, y: nil},
		{name: "one", x: []float64{1}, y: []float64{2}},
		{name: "mismatch", x: []float64{1, 2, 3}, y: []float64{1, 2}},
		{name: "constant x", x: []float64{0.1, 0.1, 0.1}, y: []float64{1, 2, 3}},
		{name: "constant y", x: []float64{1, 2, 3}, y: []float64{4, 4, 4}},
		{name: "NaN", x: []float64{1, math.NaN(), 3}, y: []float64{1, 2, 3}},
	} {
		if r, err := Pearson(test.x, test.y); err == nil {
			t.Errorf("%s: Pearson: expected error, got %v", test.name, r)
		}
		if r, err := Spearman(test.x, test.y); err == nil {
			t.Errorf("%s: Spearman: expected error, got %v", test.name, r)
		}
	}
}

func TestRanks(t *testing.T) {
	for _, test := range []struct {
		x, want []float64
	}{
		{x: nil, want: []float64{}},
		{x: []float64{42}, want: []float64{1}},
		{x: []float64{3, 1, 2}, want: []float64{3, 1, 2}},
		{x: []float64{10, 20, 10, 30}, want: []float64{1.5, 3, 1.5, 4}},
		// scipy.stats.rankdata([0, 2, 3, 2]) -> [1, 2.5, 4, 2.5]
		{x: []float64{0, 2, 3, 2}, want: []float64{1, 2.5, 4, 2.5}},
		{x: []float64{5, 5, 5}, want: []float64{2, 2, 2}},
		{x: []float64{2, 1, 2, 1, 2}, want: []float64{4, 1.5, 4, 1.5, 4}},
		{x: []float64{math.Inf(1), 0, math.Inf(-1)}, want: []float64{3, 2, 1}},
		// -0 and +0 compare equal and so tie.
		{x: []float64{math.Copysign(0, -1), 0}, want: []float64{1.5, 1.5}},
	} {
		orig := slices.Clone(test.x)
		got := Ranks(test.x)
		if !slices.Equal(got, test.want) {
			t.Errorf("Ranks(%v) = %v, want %v", test.x, got, test.want)
		}
		if !slices.Equal(test.x, orig) {
			t.Errorf("Ranks modified its input: %v -> %v", orig, test.x)
		}
	}

	got := Ranks([]float64{1, math.NaN(), 2})
	for _, r := range got {
		if !math.IsNaN(r) {
			t.Errorf("Ranks with NaN = %v, want all NaN", got)
			break
		}
	}
}
