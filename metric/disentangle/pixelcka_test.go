package disentangle

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/kernel"
)

// naivePixelCKA is Algorithm 1 as the authors' code runs it: for every
// batch and every pair of pixels, the RBF Gram matrices of the two pixels'
// channel values, H K H by matrix products, and
// CKA = tr(Kcᵀ Lc) / (||Kc||_F ||Lc||_F); averaged over the batches where
// both pixels vary.
func naivePixelCKA(x *mat.Dense, g Grid, gamma float64, batch int) *mat.Dense {
	n, _ := x.Dims()
	P := g.Pixels()
	nb := n / batch
	sum := mat.NewDense(P, P, nil)
	count := mat.NewDense(P, P, nil)
	h := centering(batch)
	k := kernel.RBF{Gamma: gamma}
	for b := 0; b < nb; b++ {
		kc := make([]*mat.Dense, P)
		for p := 0; p < P; p++ {
			xp := mat.NewDense(batch, g.C, nil)
			for i := 0; i < batch; i++ {
				for c := 0; c < g.C; c++ {
					xp.Set(i, c, x.At(b*batch+i, p*g.C+c))
				}
			}
			var a, m mat.Dense
			a.Mul(h, k.Gram(xp))
			m.Mul(&a, h)
			kc[p] = &m
		}
		for p := 0; p < P; p++ {
			for q := 0; q < P; q++ {
				np, nq := mat.Norm(kc[p], 2), mat.Norm(kc[q], 2)
				if np < 1e-12 || nq < 1e-12 { // constant pixel in this batch
					continue
				}
				var prod mat.Dense
				prod.Mul(kc[p].T(), kc[q])
				sum.Set(p, q, sum.At(p, q)+mat.Trace(&prod)/(np*nq))
				count.Set(p, q, count.At(p, q)+1)
			}
		}
	}
	for p := 0; p < P; p++ {
		for q := 0; q < P; q++ {
			if c := count.At(p, q); c > 0 {
				sum.Set(p, q, sum.At(p, q)/c)
			}
		}
	}
	return sum
}

func TestPixelCKAMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	tests := []struct {
		name  string
		g     Grid
		n, b  int
		gamma float64
	}{
		{"grey 3x4", Grid{3, 4, 1}, 25, 8, 0.7},
		{"rgb 2x3", Grid{2, 3, 3}, 21, 7, 0.2},
		{"tiny gamma", Grid{2, 2, 1}, 12, 6, 1e-6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Correlated pixels: a shared latent plus pixel noise.
			x := mat.NewDense(tc.n, tc.g.Dim(), nil)
			for i := 0; i < tc.n; i++ {
				z := r.NormFloat64()
				for j := 0; j < tc.g.Dim(); j++ {
					x.Set(i, j, z*float64(j%3)/2+r.NormFloat64())
				}
			}
			// Pixel 0 is constant in every batch; pixel 1 only in the
			// first batch.
			for i := 0; i < tc.n; i++ {
				for c := 0; c < tc.g.C; c++ {
					x.Set(i, c, 0.25)
					if i < tc.b {
						x.Set(i, tc.g.C+c, -0.5)
					}
				}
			}
			got, err := PixelCKA(context.Background(), x, tc.g, tc.gamma, tc.b, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := naivePixelCKA(x, tc.g, tc.gamma, tc.b)
			P := tc.g.Pixels()
			for p := 0; p < P; p++ {
				for q := 0; q < P; q++ {
					w := want.At(p, q)
					if p == 0 || q == 0 {
						w = 0 // never varies: CKA 0 by convention, even with itself
					}
					if math.Abs(got.At(p, q)-w) > 1e-9 {
						t.Errorf("CKA(%d, %d) = %.12f, want %.12f", p, q, got.At(p, q), w)
					}
				}
			}
		})
	}
}

func TestPixelCKAHandCase(t *testing.T) {
	// Two pixels with identical values have CKA 1; a pixel whose values
	// are a strictly monotone map of another's does not (the RBF kernel is
	// not invariant to it), but two pixels with the same values up to
	// sign have equal distances |a_i - a_j|, hence CKA exactly 1.
	x := mat.NewDense(4, 3, []float64{
		0, 0, 1,
		1, -1, 5,
		3, -3, 2,
		4, -4, 0,
	})
	c, err := PixelCKA(context.Background(), x, Grid{1, 3, 1}, 0.1, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := c.At(0, 1); math.Abs(v-1) > 1e-12 {
		t.Errorf("CKA(a, -a) = %v, want 1", v)
	}
	if v := c.At(0, 2); !(v > 0 && v < 1) {
		t.Errorf("CKA(a, b) = %v, want in (0, 1)", v)
	}
	// The same pair through CKA on explicit Gram matrices.
	k := kernel.RBF{Gamma: 0.1}
	a := mat.NewDense(4, 1, []float64{0, 1, 3, 4})
	b := mat.NewDense(4, 1, []float64{1, 5, 2, 0})
	want, _ := CKA(k.Gram(a), k.Gram(b))
	if math.Abs(c.At(0, 2)-want) > 1e-12 {
		t.Errorf("CKA(a, b) = %v, want %v", c.At(0, 2), want)
	}
}

func TestPixelCKABadInput(t *testing.T) {
	x := mat.NewDense(10, 4, nil)
	g := Grid{2, 2, 1}
	for _, tc := range []struct {
		name  string
		g     Grid
		gamma float64
		batch int
	}{
		{"wrong grid", Grid{3, 2, 1}, 1, 5},
		{"zero gamma", g, 0, 5},
		{"NaN gamma", g, math.NaN(), 5},
		{"batch 1", g, 1, 1},
		{"batch > n", g, 1, 11},
	} {
		if _, err := PixelCKA(context.Background(), x, tc.g, tc.gamma, tc.batch, nil); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestRowDistances(t *testing.T) {
	c := mat.NewSymDense(3, []float64{
		1, 0.5, 0,
		0.5, 1, 0.25,
		0, 0.25, 1,
	})
	d, _ := RowDistances(context.Background(), c)
	rows := [][]float64{{1, 0.5, 0}, {0.5, 1, 0.25}, {0, 0.25, 1}}
	for i := range rows {
		for j := range rows {
			var s float64
			for k := range rows[i] {
				s += (rows[i][k] - rows[j][k]) * (rows[i][k] - rows[j][k])
			}
			if math.Abs(d.At(i, j)-math.Sqrt(s)) > 1e-12 {
				t.Errorf("d(%d,%d) = %v, want %v", i, j, d.At(i, j), math.Sqrt(s))
			}
		}
	}
}
