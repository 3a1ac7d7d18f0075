package frechet

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randn returns an n×d matrix of standard normal entries.
func randn(rng *rand.Rand, n, d int) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	raw := x.RawMatrix()
	for i := range raw.Data {
		raw.Data[i] = rng.NormFloat64()
	}
	return x
}

// correlated returns n rows of d-dimensional Gaussian data with a random
// full covariance (rows of z times a random mixing matrix) and mean shift.
func correlated(rng *rand.Rand, n, d int, shift float64) *mat.Dense {
	z := randn(rng, n, d)
	w := randn(rng, d, d)
	for i := 0; i < d; i++ {
		w.Set(i, i, w.At(i, i)+2)
	}
	var x mat.Dense
	x.Mul(z, w)
	raw := x.RawMatrix()
	for i := range raw.Data {
		raw.Data[i] += shift
	}
	return &x
}

// randSPD returns a random symmetric positive definite d×d matrix with
// eigenvalues spread over [lo, hi] in random directions.
func randSPD(rng *rand.Rand, d int, lo, hi float64) *mat.SymDense {
	q := randOrth(rng, d)
	ev := make([]float64, d)
	for i := range ev {
		ev[i] = lo + (hi-lo)*rng.Float64()
	}
	return fromEig(q, ev)
}

// randOrth returns a random d×d orthogonal matrix (Q of a QR).
func randOrth(rng *rand.Rand, d int) *mat.Dense {
	var qr mat.QR
	qr.Factorize(randn(rng, d, d))
	var q mat.Dense
	qr.QTo(&q)
	return &q
}

// fromEig returns Q diag(ev) Qᵀ.
func fromEig(q *mat.Dense, ev []float64) *mat.SymDense {
	d := len(ev)
	s := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			var v float64
			for k := 0; k < d; k++ {
				v += q.At(i, k) * ev[k] * q.At(j, k)
			}
			s.SetSym(i, j, v)
		}
	}
	return s
}

// naiveStats is the textbook two-pass mean and covariance, the reference
// the streaming code must agree with.
func naiveStats(x *mat.Dense, ddof int) ([]float64, *mat.SymDense) {
	n, d := x.Dims()
	mu := make([]float64, d)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			mu[j] += x.At(i, j)
		}
	}
	for j := range mu {
		mu[j] /= float64(n)
	}
	s := mat.NewSymDense(d, nil)
	for a := 0; a < d; a++ {
		for b := a; b < d; b++ {
			var v float64
			for i := 0; i < n; i++ {
				v += (x.At(i, a) - mu[a]) * (x.At(i, b) - mu[b])
			}
			s.SetSym(a, b, v/float64(n-ddof))
		}
	}
	return mu, s
}

// sqrtSym returns the symmetric square root of a PSD matrix through its
// eigendecomposition: an independent route to the trace term.
func sqrtSym(t *testing.T, s *mat.SymDense) *mat.Dense {
	t.Helper()
	var es mat.EigenSym
	if !es.Factorize(s, true) {
		t.Fatal("EigenSym failed")
	}
	var v mat.Dense
	es.VectorsTo(&v)
	ev := es.Values(nil)
	for i := range ev {
		ev[i] = math.Sqrt(max(ev[i], 0))
	}
	d := len(ev)
	r := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			var x float64
			for k := 0; k < d; k++ {
				x += v.At(i, k) * ev[k] * v.At(j, k)
			}
			r.Set(i, j, x)
		}
	}
	return r
}

// traceSqrtIndependent is Tr sqrt(S₁S₂) = Σ √λ(S₂^{1/2} S₁ S₂^{1/2}),
// computed with eigenvectors, not with this package's factor route.
func traceSqrtIndependent(t *testing.T, s1, s2 *mat.SymDense) float64 {
	t.Helper()
	r := sqrtSym(t, s2)
	var m mat.Dense
	m.Product(r, s1, r)
	d := s1.SymmetricDim()
	sym := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			sym.SetSym(i, j, (m.At(i, j)+m.At(j, i))/2)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(sym, false) {
		t.Fatal("EigenSym failed")
	}
	var tr float64
	for _, v := range es.Values(nil) {
		tr += math.Sqrt(max(v, 0))
	}
	return tr
}

func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

func diagSym(v []float64) *mat.SymDense {
	s := mat.NewSymDense(len(v), nil)
	for i, x := range v {
		s.SetSym(i, i, x)
	}
	return s
}
