package diversity

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/membudget"
)

// MaxDualDim bounds the side of the matrix whose eigenvalues Vendi
// computes: min(n, d), so d×d for features of dimension d below n. An
// eigendecomposition of 8192×8192 takes minutes; larger features are a
// mistake (say, flattened images) rather than an embedding.
const MaxDualDim = 8192

// Vendi returns the Vendi score (order 1) of the rows of x with the linear
// kernel on L2-normalised rows: k(a, b) = a·b / (‖a‖ ‖b‖). A row of zeros
// stays zero (it is similar to nothing, itself included), as
// sklearn.preprocessing.normalize leaves it. x needs at least one row.
func Vendi(x *mat.Dense) (float64, error) {
	n, d := x.Dims()
	if n == 0 || d == 0 {
		return math.NaN(), errors.New("diversity: Vendi of an empty set")
	}
	m := min(n, d)
	if m > MaxDualDim {
		return math.NaN(), fmt.Errorf("diversity: %d rows of dimension %d: the eigenvalues of a %d×%d matrix are beyond the bound of %d", n, d, m, m, MaxDualDim)
	}
	// The similarity matrix and the eigensolver's working copy.
	if err := membudget.Check("the similarity matrix of the samples", 2, m, m); err != nil {
		return math.NaN(), err
	}
	for i := 0; i < n; i++ {
		for _, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return math.NaN(), fmt.Errorf("diversity: row %d has a value %v", i, v)
			}
		}
	}
	var k *mat.SymDense
	if d < n {
		// score_dual: S = X̂ᵀX̂, then S/n, accumulated over blocks of
		// normalised rows so that no normalised copy of x is held.
		k = mat.NewSymDense(d, nil)
		rk := k.RawSymmetric()
		blk := normalized(x, 0, min(vendiBlock, n))
		for lo := 0; lo < n; lo += vendiBlock {
			hi := min(lo+vendiBlock, n)
			if lo > 0 {
				blk = normalized(x, lo, hi)
			}
			raw := blk.RawMatrix()
			blas64.Implementation().Dsyrk(blas.Upper, blas.Trans, d, hi-lo, 1, raw.Data, raw.Stride, 1, rk.Data, rk.Stride)
		}
	} else {
		k = linalg.Gram(normalized(x, 0, n))
	}
	k.ScaleSym(1/float64(n), k)
	return entropyExp(k)
}

// VendiK returns the Vendi score (order 1) of the similarity matrix k of
// n samples: exp of the Shannon entropy of the eigenvalues of k/n.
func VendiK(k mat.Symmetric) (float64, error) {
	n := k.SymmetricDim()
	if n == 0 {
		return math.NaN(), errors.New("diversity: Vendi of an empty set")
	}
	if n > MaxDualDim {
		return math.NaN(), fmt.Errorf("diversity: a %d×%d similarity matrix is beyond the bound of %d", n, n, MaxDualDim)
	}
	if err := membudget.Check("the similarity matrix of the samples", 2, n, n); err != nil {
		return math.NaN(), err
	}
	s := mat.NewSymDense(n, nil)
	s.ScaleSym(1/float64(n), k)
	return entropyExp(s)
}

// vendiBlock is the number of rows normalised and added to X̂ᵀX̂ at a
// time.
const vendiBlock = 1024

// normalized returns rows [lo, hi) of x divided by their Euclidean norms;
// a row of zeros stays zero, as sklearn.preprocessing.normalize leaves it.
func normalized(x *mat.Dense, lo, hi int) *mat.Dense {
	_, d := x.Dims()
	out := mat.NewDense(hi-lo, d, nil)
	for i := lo; i < hi; i++ {
		row := x.RawRowView(i)
		var s float64
		for _, v := range row {
			s += v * v
		}
		norm := math.Sqrt(s)
		if norm == 0 {
			continue
		}
		dst := out.RawRowView(i - lo)
		for j, v := range row {
			dst[j] = v / norm
		}
	}
	return out
}

// entropyExp returns exp(−Σ λ log λ) over the positive eigenvalues of s.
func entropyExp(s *mat.SymDense) (float64, error) {
	var es mat.EigenSym
	if !es.Factorize(s, false) {
		return math.NaN(), errors.New("diversity: eigenvalues did not converge")
	}
	var h float64
	for _, l := range es.Values(nil) {
		if l > 0 {
			h -= l * math.Log(l)
		}
	}
	return math.Exp(h), nil
}
