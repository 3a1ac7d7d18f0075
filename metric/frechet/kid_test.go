package frechet

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/genlens/genlens/internal/exactmmd"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/kernel"
	"github.com/genlens/genlens/metric/kscore"
)

func TestKID(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const d = 16
	// Two samples of one distribution: same mixing matrix (entries of
	// variance 1/d, so features have unit scale), fresh noise.
	w := randn(rng, d, d)
	w.Scale(1/math.Sqrt(d), w)
	draw := func(n int, shift float64) *mat.Dense {
		var z mat.Dense
		z.Mul(randn(rng, n, d), w)
		raw := z.RawMatrix()
		for i := range raw.Data {
			raw.Data[i] += shift
		}
		return &z
	}
	x, y := draw(400, 0), draw(500, 0)
	mean, std, err := KID(context.Background(), x, y, 50, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("same distribution: KID = %.3g ± %.3g", mean, std)
	if math.Abs(mean) >= 2*std {
		t.Errorf("same distribution: KID = %g ± %g, want |mean| < 2 std", mean, std)
	}
	shifted := draw(500, 1)
	ms, ss, err := KID(context.Background(), x, shifted, 50, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("shifted: KID = %.3g ± %.3g", ms, ss)
	if ms < 10*ss || ms < 10*math.Abs(mean) {
		t.Errorf("shifted: KID = %g ± %g, want clearly positive", ms, ss)
	}
	m2, s2, _ := KID(context.Background(), x, y, 50, 100, 1)
	if m2 != mean || s2 != std {
		t.Errorf("same seed: %g ± %g, then %g ± %g", mean, std, m2, s2)
	}
	if m3, _, _ := KID(context.Background(), x, y, 50, 100, 2); m3 == mean {
		t.Error("another seed gave the same KID")
	}
}

func TestKIDOneFullSubsetIsMMD2(t *testing.T) {
	// One subset holding every row is a permutation of the data, and the
	// unbiased MMD² does not depend on row order.
	rng := rand.New(rand.NewPCG(23, 24))
	const n, d = 60, 7
	x := correlated(rng, n, d, 0.1)
	y := correlated(rng, n, d, 0)
	mean, std, err := KID(context.Background(), x, y, 1, n, 5)
	if err != nil {
		t.Fatal(err)
	}
	want, err := kscore.MMD2(kernel.Polynomial{Gamma: 1.0 / d, Coef0: 1, Degree: 3}, x, y)
	if err != nil {
		t.Fatal(err)
	}
	if relErr(mean, want) > 1e-10 || std != 0 {
		t.Errorf("KID = %.15g ± %g, kscore.MMD2 = %.15g", mean, std, want)
	}
}

func TestKIDErrors(t *testing.T) {
	x := mat.NewDense(5, 3, nil)
	for _, tc := range []struct {
		name          string
		y             *mat.Dense
		subsets, size int
	}{
		{"dimension mismatch", mat.NewDense(5, 4, nil), 10, 5},
		{"subset of one row", mat.NewDense(5, 3, nil), 10, 1},
		{"one row in y", mat.NewDense(1, 3, nil), 10, 5},
		{"no subsets", mat.NewDense(5, 3, nil), 0, 5},
		// torch-fidelity refuses a subset larger than a side.
		{"subset larger than y", mat.NewDense(4, 3, nil), 10, 5},
		{"subset larger than x", mat.NewDense(9, 3, nil), 10, 6},
	} {
		if _, _, err := KID(context.Background(), x, tc.y, tc.subsets, tc.size, 1); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestKIDPathsAgree(t *testing.T) {
	// Small inputs precompute the whole kernel matrix; large ones compute
	// each subset with kscore.MMD2. Same seed, same subsets, same numbers.
	rng := rand.New(rand.NewPCG(25, 26))
	const d = 12
	x := correlated(rng, 150, d, 0)
	y := correlated(rng, 120, d, 0.2)
	for _, tc := range []struct{ subsets, size int }{{20, 50}, {3, 120}, {1, 2}} {
		m1, s1, err := KID(context.Background(), x, y, tc.subsets, tc.size, 7)
		if err != nil {
			t.Fatal(err)
		}
		old := kidGramLimit
		kidGramLimit = 0
		m2, s2, err := KID(context.Background(), x, y, tc.subsets, tc.size, 7)
		kidGramLimit = old
		if err != nil {
			t.Fatal(err)
		}
		if relErr(m1, m2) > 1e-10 || math.Abs(s1-s2) > 1e-10*math.Abs(m2)+1e-14 {
			t.Errorf("%+v: precomputed %.15g ± %g, per subset %.15g ± %g", tc, m1, s1, m2, s2)
		}
	}
}

// TestKIDCancel: a cancelled context stops KID between subsets.
func TestKIDCancel(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	x := correlated(rng, 50, 4, 0)
	y := correlated(rng, 50, 4, 0.1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, limit := range []int{kidGramLimit, 0} {
		old := kidGramLimit
		kidGramLimit = limit
		_, _, err := KID(ctx, x, y, 10, 20, 1)
		kidGramLimit = old
		if !errors.Is(err, context.Canceled) {
			t.Errorf("gram limit %d: got %v, want context.Canceled", limit, err)
		}
	}
}

// TestKIDAtLargeOffset: KID of rows sharing an offset of 1e8 equals the
// exact unbiased MMD² with the cubic kernel for the same float64 rows, on
// both paths (a subset of every row is the MMD² of the whole sets).
// Evaluated directly the kernel values are about 1e48 and KID came out
// 1.9e33 for 2.3e32. The kernel is not translation invariant: the offset
// belongs in the value, which the test's exact arithmetic keeps.
func TestKIDAtLargeOffset(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	const n, d = 16, 4
	for _, off := range []float64{0, 1e6, 1e8} {
		rows := func(shift float64) *mat.Dense {
			x := mat.NewDense(n, d, nil)
			for i := range n {
				for j := range d {
					x.Set(i, j, off+shift+rng.NormFloat64())
				}
			}
			return x
		}
		x, y := rows(0), rows(0.5)
		want := exactmmd.Poly(x, y, 1.0/d, 1, 3)
		for _, limit := range []int{kidGramLimit, 0} {
			old := kidGramLimit
			kidGramLimit = limit
			// Two subsets of every row: the whole kernel matrix is worth
			// computing first (n² < 4·subsets·m²) unless the limit forbids it.
			mean, std, err := KID(context.Background(), x, y, 2, n, 1)
			kidGramLimit = old
			if err != nil {
				t.Fatal(err)
			}
			if relErr(mean, want) > 1e-9 || std > 1e-12*math.Abs(want) {
				t.Errorf("offset %g, gram limit %d: KID = %.12g ± %g, exact %.12g", off, limit, mean, std, want)
			}
		}
	}
}
