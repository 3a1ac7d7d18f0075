package kernel

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func randMat(r *rand.Rand, n, d int) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, r.NormFloat64())
		}
	}
	return x
}

// naive evaluates k(a, b) from its definition, pair by pair.
func naive(k Kernel, a, b []float64) float64 {
	var dot, sq, l1d, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		sq += (a[i] - b[i]) * (a[i] - b[i])
		l1d += math.Abs(a[i] - b[i])
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	switch k := k.(type) {
	case RBF:
		return math.Exp(-k.Gamma * sq)
	case Laplacian:
		return math.Exp(-k.Gamma * l1d)
	case Polynomial:
		return math.Pow(k.Gamma*dot+k.Coef0, float64(k.Degree))
	case Cosine:
		if na == 0 || nb == 0 {
			return 0
		}
		return dot / math.Sqrt(na*nb)
	case Linear:
		return dot
	}
	panic("unknown kernel")
}

func TestGramAndCrossMatchDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	x := randMat(r, 37, 9)
	y := randMat(r, 23, 9)
	x.SetRow(5, make([]float64, 9)) // a zero row exercises the cosine guard
	kernels := []Kernel{
		RBF{Gamma: 0.07}, Laplacian{Gamma: 0.2},
		Polynomial{Gamma: 1.0 / 9, Coef0: 1, Degree: 3}, Polynomial{Gamma: 0.5, Coef0: 0.25, Degree: 5},
		Cosine{}, Linear{},
	}
	for _, k := range kernels {
		t.Run(k.String(), func(t *testing.T) {
			g := k.Gram(x)
			c := k.Cross(x, y)
			for i := 0; i < 37; i++ {
				for j := 0; j < 37; j++ {
					want := naive(k, x.RawRowView(i), x.RawRowView(j))
					if got := g.At(i, j); math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
						t.Fatalf("Gram[%d][%d] = %v, want %v", i, j, got, want)
					}
				}
				for j := 0; j < 23; j++ {
					want := naive(k, x.RawRowView(i), y.RawRowView(j))
					if got := c.At(i, j); math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
						t.Fatalf("Cross[%d][%d] = %v, want %v", i, j, got, want)
					}
				}
			}
		})
	}
}

func TestGramLargeParallelPath(t *testing.T) {
	// Large enough for parallelRows to split the work; compare with Cross.
	r := rand.New(rand.NewPCG(3, 4))
	x := randMat(r, 400, 16)
	for _, k := range []Kernel{RBF{Gamma: 0.05}, Laplacian{Gamma: 0.05}, Polynomial{Gamma: 0.1, Coef0: 1, Degree: 2}} {
		g, c := k.Gram(x), k.Cross(x, x)
		for i := 0; i < 400; i++ {
			for j := 0; j < 400; j++ {
				if math.Abs(g.At(i, j)-c.At(i, j)) > 1e-12 {
					t.Fatalf("%v: Gram[%d][%d]=%v Cross=%v", k, i, j, g.At(i, j), c.At(i, j))
				}
			}
		}
	}
}

func TestMedianSqDist(t *testing.T) {
	// Rows 0, 1, 3: squared distances 1, 9, 4 (twice each) plus three
	// diagonal zeros: {0,0,0,1,1,4,4,9,9}, median 1.
	x := mat.NewDense(3, 1, []float64{0, 1, 3})
	if got := MedianSqDist(x); got != 1 {
		t.Errorf("MedianSqDist = %v, want 1", got)
	}
	// Four rows 0,1,2,4 on a line: off-diagonal squared distances
	// 1,4,16,1,9,4 -> doubled (12 values) + 4 zeros = 16 values;
	// sorted: 0 0 0 0 1 1 1 1 4 4 4 4 9 9 16 16, median (1+4)/2 = 2.5.
	x = mat.NewDense(4, 1, []float64{0, 1, 2, 4})
	if got := MedianSqDist(x); got != 2.5 {
		t.Errorf("MedianSqDist = %v, want 2.5", got)
	}
	if got := MedianL1(x); got != 1.5 { // L1: 1,2,4,1,3,2 -> 0000 1111 2222 33 44 -> (1+2)/2
		t.Errorf("MedianL1 = %v, want 1.5", got)
	}
}

func TestParseBandwidthAndNew(t *testing.T) {
	x := mat.NewDense(3, 4, []float64{0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3})
	cases := []struct {
		kernel, gamma string
		want          Kernel
		wantErr       bool
	}{
		{"rbf", "dim", RBF{Gamma: 0.25}, false},
		{"rbf", "median", RBF{Gamma: 1}, false}, // sq dists 1, 9, 10 -> {0,0,0,1,1,9,9,10,10}
		{"rbf", "0.5", RBF{Gamma: 0.5}, false},
		{"laplacian", "median", Laplacian{Gamma: 1}, false},
		{"poly", "dim", Polynomial{Gamma: 0.25, Coef0: 1, Degree: 3}, false},
		{"cosine", "dim", Cosine{}, false},
		{"linear", "median", Linear{}, false},
		{"rbf", "-1", nil, true},
		{"rbf", "NaN", nil, true},
		{"rbf", "wide", nil, true},
		{"gauss", "dim", nil, true},
	}
	for _, c := range cases {
		bw, err := ParseBandwidth(c.gamma)
		if err != nil {
			if !c.wantErr {
				t.Errorf("ParseBandwidth(%q): %v", c.gamma, err)
			}
			continue
		}
		k, err := New(c.kernel, bw, x)
		if (err != nil) != c.wantErr {
			t.Errorf("New(%q, %q) error = %v, wantErr %v", c.kernel, c.gamma, err, c.wantErr)
			continue
		}
		if err == nil && k != c.want {
			t.Errorf("New(%q, %q) = %v, want %v", c.kernel, c.gamma, k, c.want)
		}
	}
	// All rows identical: the median rule must refuse, not return +Inf.
	same := mat.NewDense(3, 2, []float64{1, 1, 1, 1, 1, 1})
	if _, err := New("rbf", Bandwidth{Rule: Median}, same); err == nil {
		t.Error("median bandwidth on identical rows: want error")
	}
}

func TestSampleRowsEvenlySpaced(t *testing.T) {
	a := mat.NewDense(3, 1, []float64{0, 1, 2})
	b := mat.NewDense(4, 1, []float64{3, 4, 5, 6})
	// 7 rows, limit 3: step ceil(7/3) = 3, rows 0, 3, 6 across the sets.
	got := SampleRows([]*mat.Dense{a, nil, b}, 3)
	if want := mat.NewDense(3, 1, []float64{0, 3, 6}); !mat.Equal(got, want) {
		t.Errorf("SampleRows = %v, want %v", mat.Formatted(got.T()), mat.Formatted(want.T()))
	}
	if all := SampleRows([]*mat.Dense{a, b}, 100); all.RawMatrix().Rows != 7 {
		t.Errorf("under the limit: %d rows, want all 7", all.RawMatrix().Rows)
	}
	if SampleRows(nil, 10) != nil {
		t.Error("SampleRows of no rows is not nil")
	}
}

func TestResolve(t *testing.T) {
	x := mat.NewDense(4, 2, []float64{0, 0, 1, 0, 0, 1, 1, 1})
	k, err := Resolve("rbf", Bandwidth{Rule: Dim}, []*mat.Dense{x})
	if err != nil || k != (RBF{Gamma: 0.5}) {
		t.Errorf("Resolve(rbf, dim) = %v, %v; want rbf(gamma=0.5)", k, err)
	}
	k, err = Resolve("rbf", Bandwidth{Rule: Median}, []*mat.Dense{x})
	if err != nil || k != (RBF{Gamma: 1 / MedianSqDist(x)}) {
		t.Errorf("Resolve(rbf, median) = %v, %v", k, err)
	}
	constant := mat.NewDense(3, 2, nil)
	if _, err := Resolve("rbf", Bandwidth{Rule: Median}, []*mat.Dense{constant}); !errors.Is(err, ErrZeroMedian) {
		t.Errorf("median of constant rows: err %v, want ErrZeroMedian", err)
	}
	if _, err := Resolve("gauss", Bandwidth{Rule: Fixed, Value: 1}, nil); err == nil || err.Error() != ValidName("gauss").Error() {
		t.Errorf("unknown kernel: err %v", err)
	}
}
