package linalg

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestSqDistFromGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 7} {
		x := mat.NewDense(n, 3, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < 3; j++ {
				x.Set(i, j, rng.NormFloat64())
			}
		}
		if n > 1 {
			x.SetRow(n-1, x.RawRowView(0)) // a repeated row: distance exactly 0, not a rounding negative
		}
		g := Gram(x)
		SqDistFromGram(g)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				var want float64
				for c := 0; c < 3; c++ {
					d := x.At(i, c) - x.At(j, c)
					want += d * d
				}
				got := g.At(i, j)
				if got < 0 || math.Abs(got-want) > 1e-12 {
					t.Errorf("n=%d: d²(%d,%d) = %v, want %v", n, i, j, got, want)
				}
			}
		}
	}
}

func TestCentreGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, d = 6, 4
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.NormFloat64()+5)
		}
	}
	// Direct: the Gram matrix of the centred rows.
	xc := mat.DenseCopyOf(x)
	for j := 0; j < d; j++ {
		col := mat.Col(nil, j, x)
		var m float64
		for _, v := range col {
			m += v
		}
		m /= n
		for i := 0; i < n; i++ {
			xc.Set(i, j, x.At(i, j)-m)
		}
	}
	var want mat.Dense
	want.Mul(xc, xc.T())

	var full mat.Dense
	full.Mul(x, x.T())
	const s = n + 2 // a stride wider than the matrix
	k := make([]float64, n*s)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			k[i*s+j] = full.At(i, j)
		}
	}
	dst := make([]float64, n*n)
	rm := make([]float64, n)
	CentreGram(dst, n, k, s, n, rm)
	for i := 0; i < n; i++ {
		var r float64
		for j := 0; j < n; j++ {
			r += full.At(i, j)
			if got := dst[i*n+j]; math.Abs(got-want.At(i, j)) > 1e-10 {
				t.Errorf("HKH[%d][%d] = %v, want %v", i, j, got, want.At(i, j))
			}
		}
		if math.Abs(rm[i]-r/n) > 1e-12 {
			t.Errorf("row mean %d = %v, want %v", i, rm[i], r/n)
		}
	}
	// In place gives the same, and a nil rm is allowed.
	CentreGram(k, s, k, s, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if k[i*s+j] != dst[i*n+j] {
				t.Errorf("in place [%d][%d] = %v, want %v", i, j, k[i*s+j], dst[i*n+j])
			}
		}
	}
}
