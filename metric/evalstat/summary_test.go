package evalstat

import (
	"math"
	"slices"
	"testing"
)

func TestQuantile(t *testing.T) {
	ten := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, test := range []struct {
		x    []float64
		p    float64
		want float64
	}{
		// Values from numpy.quantile (default method "linear").
		{x: []float64{1, 2, 3, 4}, p: 0.25, want: 1.75},
		{x: []float64{1, 2, 3, 4}, p: 0.5, want: 2.5},
		{x: []float64{4, 3, 2, 1}, p: 0.75, want: 3.25},
		{x: []float64{3, 1, 2}, p: 0.5, want: 2},
		{x: ten, p: 0.9, want: 9.1},
		{x: ten, p: 0.1, want: 1.9},
		{x: ten, p: 0.95, want: 9.55},
		{x: []float64{7, -1, 3}, p: 0, want: -1},
		{x: []float64{7, -1, 3}, p: 1, want: 7},
		{x: []float64{5}, p: 0, want: 5},
		{x: []float64{5}, p: 0.3, want: 5},
		{x: []float64{5}, p: 1, want: 5},
		{x: []float64{2, 2, 2}, p: 0.4, want: 2},
		// h = 2*0.5 = 1 falls exactly on an element.
		{x: []float64{10, 0, 20}, p: 0.5, want: 10},
	} {
		orig := slices.Clone(test.x)
		got := Quantile(test.x, test.p)
		if math.Abs(got-test.want) > tol {
			t.Errorf("Quantile(%v, %v) = %v, want %v", test.x, test.p, got, test.want)
		}
		if !slices.Equal(test.x, orig) {
			t.Errorf("Quantile modified its input: %v -> %v", orig, test.x)
		}
	}

	for _, test := range []struct {
		x []float64
		p float64
	}{
		{x: nil, p: 0.5},
		{x: []float64{}, p: 0},
		{x: []float64{1, 2}, p: -0.1},
		{x: []float64{1, 2}, p: 1.1},
		{x: []float64{1, 2}, p: math.NaN()},
		{x: []float64{1, math.NaN(), 2}, p: 0.5},
	} {
		if got := Quantile(test.x, test.p); !math.IsNaN(got) {
			t.Errorf("Quantile(%v, %v) = %v, want NaN", test.x, test.p, got)
		}
	}
}

func TestMeanStd(t *testing.T) {
	for _, test := range []struct {
		x        []float64
		ddof     int
		wantMean float64
		wantStd  float64
	}{
		// numpy.std([1, 2, 3, 4]) = sqrt(1.25); ddof=1: sqrt(5/3).
		{x: []float64{1, 2, 3, 4}, ddof: 0, wantMean: 2.5, wantStd: 1.118033988749895},
		{x: []float64{1, 2, 3, 4}, ddof: 1, wantMean: 2.5, wantStd: 1.2909944487358056},
		{x: []float64{3}, ddof: 0, wantMean: 3, wantStd: 0},
		{x: []float64{-1, 1}, ddof: 0, wantMean: 0, wantStd: 1},
		{x: []float64{-1, 1}, ddof: 1, wantMean: 0, wantStd: math.Sqrt2},
		// n - ddof <= 0: numpy gives NaN.
		{x: []float64{3}, ddof: 1, wantMean: 3, wantStd: math.NaN()},
		{x: nil, ddof: 0, wantMean: math.NaN(), wantStd: math.NaN()},
	} {
		if got := Mean(test.x); !sameFloat(got, test.wantMean) {
			t.Errorf("Mean(%v) = %v, want %v", test.x, got, test.wantMean)
		}
		if got := Std(test.x, test.ddof); !sameFloat(got, test.wantStd) {
			t.Errorf("Std(%v, %d) = %v, want %v", test.x, test.ddof, got, test.wantStd)
		}
	}
}

// sameFloat reports whether a and b agree within tol or are both NaN.
func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol
}
