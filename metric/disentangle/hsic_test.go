package disentangle

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/metric/kernel"
)

func randDense(r *rand.Rand, n, d int) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = r.NormFloat64()
	}
	return x
}

// centering returns H = I - 11ᵀ/n as a dense matrix.
func centering(n int) *mat.Dense {
	h := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			h.Set(i, j, -1/float64(n))
		}
		h.Set(i, i, 1-1/float64(n))
	}
	return h
}

// naiveHSIC is tr(K H L H) with explicit matrix products (Eq. 11 of Gruber,
// Ziegler & Buettner 2024 as written, and the authors' notebook).
func naiveHSIC(k, l mat.Matrix) float64 {
	n, _ := k.Dims()
	h := centering(n)
	var a, b, c mat.Dense
	a.Mul(k, h)
	b.Mul(&a, l)
	c.Mul(&b, h)
	return mat.Trace(&c)
}

func TestHSICMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	x, y := randDense(r, 9, 3), randDense(r, 9, 5)
	for _, k := range []kernel.Kernel{kernel.Linear{}, kernel.RBF{Gamma: 0.3}} {
		kx, ky := k.Gram(x), k.Gram(y)
		got, err := HSIC(kx, ky)
		if err != nil {
			t.Fatal(err)
		}
		if want := naiveHSIC(kx, ky); math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("%v: HSIC = %v, want tr(KHLH) = %v", k, got, want)
		}
	}
	// Closed form for linear kernels: tr(X Xᵀ H Y Yᵀ H) = ||Xcᵀ Yc||_F²
	// with column-centred Xc, Yc.
	xc, yc := mat.DenseCopyOf(x), mat.DenseCopyOf(y)
	for _, m := range []*mat.Dense{xc, yc} {
		rows, cols := m.Dims()
		for j := 0; j < cols; j++ {
			mean := mat.Sum(m.ColView(j)) / float64(rows)
			for i := 0; i < rows; i++ {
				m.Set(i, j, m.At(i, j)-mean)
			}
		}
	}
	var cross mat.Dense
	cross.Mul(xc.T(), yc)
	want := mat.Norm(&cross, 2) * mat.Norm(&cross, 2)
	got, _ := HSIC(kernel.Linear{}.Gram(x), kernel.Linear{}.Gram(y))
	if math.Abs(got-want) > 1e-10*want {
		t.Errorf("linear HSIC = %v, want ||XcᵀYc||² = %v", got, want)
	}
	if _, err := HSIC(mat.NewSymDense(3, nil), mat.NewSymDense(4, nil)); err == nil {
		t.Error("mismatched Gram sizes: no error")
	}
}

// bruteUnbiasedHSIC averages h over all ordered quadruples of distinct
// indices (Song et al. 2012, Eq. 4): k_ij l_ij + k_ij l_qr - 2 k_ij l_iq.
func bruteUnbiasedHSIC(k, l mat.Symmetric) float64 {
	n := k.SymmetricDim()
	var s float64
	var count int
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			for q := 0; q < n; q++ {
				for r := 0; r < n; r++ {
					if i == j || i == q || i == r || j == q || j == r || q == r {
						continue
					}
					kij := k.At(i, j)
					s += kij*l.At(i, j) + kij*l.At(q, r) - 2*kij*l.At(i, q)
					count++
				}
			}
		}
	}
	return s / float64(count)
}

func TestHSICUnbiasedMatchesUStatistic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{4, 5, 8} {
		x := randDense(r, n, 2)
		y := mat.NewDense(n, 2, nil)
		y.Add(x, randDense(r, n, 2))
		for _, k := range []kernel.Kernel{kernel.Linear{}, kernel.RBF{Gamma: 0.5}} {
			kx, ky := k.Gram(x), k.Gram(y)
			got, err := HSICUnbiased(kx, ky)
			if err != nil {
				t.Fatal(err)
			}
			if want := bruteUnbiasedHSIC(kx, ky); math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
				t.Errorf("n=%d %v: unbiased HSIC = %v, want %v", n, k, got, want)
			}
		}
	}
	if _, err := HSICUnbiased(mat.NewSymDense(3, nil), mat.NewSymDense(3, nil)); err == nil {
		t.Error("n=3: no error")
	}
}

func TestCKAProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := randDense(r, 20, 4)
	lin := kernel.Linear{}
	// Linear CKA is invariant to isotropic scaling and orthogonal maps.
	q := mat.NewDense(4, 4, []float64{0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0})
	var y mat.Dense
	y.Mul(x, q)
	y.Scale(3.5, &y)
	if c, _ := CKA(lin.Gram(x), lin.Gram(&y)); math.Abs(c-1) > 1e-12 {
		t.Errorf("CKA(X, 3.5 X Q) = %v, want 1", c)
	}
	// A constant representation has no alignment.
	if c, _ := CKA(lin.Gram(x), lin.Gram(mat.NewDense(20, 2, nil))); !math.IsNaN(c) {
		t.Errorf("CKA with a constant representation = %v, want NaN", c)
	}
	// CKA = HSIC(K,L)/sqrt(HSIC(K,K) HSIC(L,L)) from the naive traces.
	z := randDense(r, 20, 3)
	kx, kz := kernel.RBF{Gamma: 0.2}.Gram(x), kernel.RBF{Gamma: 0.4}.Gram(z)
	want := naiveHSIC(kx, kz) / math.Sqrt(naiveHSIC(kx, kx)*naiveHSIC(kz, kz))
	if c, _ := CKA(kx, kz); math.Abs(c-want) > 1e-12 {
		t.Errorf("CKA = %v, want %v", c, want)
	}
}

// The reference values of Kornblith et al.'s CKA notebook on
// X = randn(100, 10), Y = randn(100, 10) + X (numpy seed 1337).
func TestKornblithFixtures(t *testing.T) {
	xPath := shareddata.Path(t, "fixtures/kornblith_X.csv")
	yPath := shareddata.Path(t, "fixtures/kornblith_Y.csv")
	raw, err := os.ReadFile(shareddata.Path(t, "fixtures/kornblith_expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Linear         float64 `json:"linear"`
		RBFHalfMedian  float64 `json:"rbf_half_median"`
		LinearDebiased float64 `json:"linear_debiased"`
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	x, err := dataio.ReadMatrix(xPath, dataio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	y, err := dataio.ReadMatrix(yPath, dataio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, c := x.Dims(); r != 100 || c != 10 {
		t.Fatalf("X is %dx%d, want 100x10", r, c)
	}
	lx, ly := kernel.Linear{}.Gram(x), kernel.Linear{}.Gram(y)
	lin, _ := CKA(lx, ly)
	deb, err := CKAUnbiased(lx, ly)
	if err != nil {
		t.Fatal(err)
	}
	kx, err := KornblithRBF(x, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	ky, err := KornblithRBF(y, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	rbf, _ := CKA(kx.Gram(x), ky.Gram(y))
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"linear", lin, want.Linear},
		{"rbf threshold 0.5", rbf, want.RBFHalfMedian},
		{"debiased linear", deb, want.LinearDebiased},
	} {
		t.Logf("%-18s %.12f (reference %.12f)", c.name, c.got, c.want)
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s CKA = %.12f, want %.12f", c.name, c.got, c.want)
		}
	}
}

func ExampleCKA() {
	// Two representations of the same 4 examples: y is x rotated by 90°
	// and stretched, which linear CKA does not see.
	x := mat.NewDense(4, 2, []float64{0, 0, 1, 0, 0, 1, 1, 1.5})
	y := mat.NewDense(4, 2, []float64{0, 0, 0, 2, -2, 0, -3, 2})
	c, _ := CKA(kernel.Linear{}.Gram(x), kernel.Linear{}.Gram(y))
	fmt.Printf("%.3f\n", c)
	// Output: 1.000
}
