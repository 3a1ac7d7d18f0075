package disentangle

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/kernel"
)

// Center returns H K H, the doubly centred Gram matrix, with
// H = I - 11ᵀ/n: (HKH)_ij = K_ij - r_i - r_j + m for the row means r and
// the grand mean m. It costs O(n²), never forming H.
func Center(k mat.Symmetric) *mat.SymDense {
	n := k.SymmetricDim()
	r := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			r[i] += k.At(i, j)
		}
	}
	var m float64
	for i := range r {
		m += r[i]
		r[i] /= float64(n)
	}
	m /= float64(n) * float64(n)
	c := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			c.SetSym(i, j, k.At(i, j)-r[i]-r[j]+m)
		}
	}
	return c
}

// frobenius returns <A, B>_F = sum_ij A_ij B_ij of two symmetric matrices.
func frobenius(a, b mat.Symmetric) float64 {
	n := a.SymmetricDim()
	var diag, off float64
	for i := 0; i < n; i++ {
		diag += a.At(i, i) * b.At(i, i)
		for j := i + 1; j < n; j++ {
			off += a.At(i, j) * b.At(i, j)
		}
	}
	return diag + 2*off
}

func checkGrams(k, l mat.Symmetric) error {
	if n, m := k.SymmetricDim(), l.SymmetricDim(); n != m {
		return fmt.Errorf("disentangle: Gram matrices of %d and %d examples (want the same examples in the same order)", n, m)
	}
	return nil
}

// HSIC returns the biased HSIC estimate of Gruber, Ziegler & Buettner, Eq. 11:
// tr(K H L H) for the Gram matrices K and L of the same n examples.
//
// The paper leaves out Gretton et al.'s factor 1/(n-1)²; it cancels in
// CKA, the only place genlens uses HSIC, and keeping the paper's form makes
// the estimate easy to check by hand.
func HSIC(k, l mat.Symmetric) (float64, error) {
	if err := checkGrams(k, l); err != nil {
		return 0, err
	}
	// tr(KHLH) = <HKH, L>_F since H is symmetric and idempotent.
	return frobenius(Center(k), l), nil
}

// HSICUnbiased returns the unbiased HSIC estimator of Song et al. (2012,
// Eq. 5), a U-statistic over quadruples of distinct examples:
//
//	1/(n(n-3)) [tr(K̃L̃) + 1ᵀK̃1 1ᵀL̃1 / ((n-1)(n-2)) - 2/(n-2) 1ᵀK̃L̃1]
//
// where K̃ and L̃ are K and L with zero diagonals. It needs n >= 4.
func HSICUnbiased(k, l mat.Symmetric) (float64, error) {
	if err := checkGrams(k, l); err != nil {
		return 0, err
	}
	n := k.SymmetricDim()
	if n < 4 {
		return 0, fmt.Errorf("disentangle: unbiased HSIC needs at least 4 examples, got %d", n)
	}
	rk, rl := make([]float64, n), make([]float64, n) // row sums of K̃, L̃
	var tr float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			a, b := k.At(i, j), l.At(i, j)
			rk[i] += a
			rl[i] += b
			tr += a * b
		}
	}
	var sk, sl, cross float64
	for i := range rk {
		sk += rk[i]
		sl += rl[i]
		cross += rk[i] * rl[i]
	}
	fn := float64(n)
	return (tr + sk*sl/((fn-1)*(fn-2)) - 2/(fn-2)*cross) / (fn * (fn - 3)), nil
}

// CKA returns the centred kernel alignment of Gruber, Ziegler & Buettner, Eq. 13:
// HSIC(K, L) / sqrt(HSIC(K, K) HSIC(L, L)), in [0, 1] for p.s.d. kernels.
// It is NaN when either centred Gram matrix is zero (a representation
// constant over the examples), where alignment is undefined.
func CKA(k, l mat.Symmetric) (float64, error) {
	if err := checkGrams(k, l); err != nil {
		return 0, err
	}
	kc, lc := Center(k), Center(l)
	// With both matrices centred, <Kc, Lc> = tr(KHLH) and <Kc, Kc> =
	// tr(KHKH), so CKA is the cosine between vec(Kc) and vec(Lc): the form
	// the pixel CKA matrix vectorises.
	nk, nl := frobenius(kc, kc), frobenius(lc, lc)
	if nk == 0 || nl == 0 {
		return math.NaN(), nil
	}
	return frobenius(kc, lc) / math.Sqrt(nk*nl), nil
}

// CKAUnbiased returns CKA with the unbiased HSIC estimator in place of
// the biased one ("debiased CKA", Kornblith et al. 2019, Section 3 and
// their notebook's cka(..., debiased=True)). It can be slightly negative
// for independent representations, and is NaN when an unbiased HSIC(K, K)
// is not positive. It needs n >= 4.
func CKAUnbiased(k, l mat.Symmetric) (float64, error) {
	kl, err := HSICUnbiased(k, l)
	if err != nil {
		return 0, err
	}
	kk, _ := HSICUnbiased(k, k)
	ll, _ := HSICUnbiased(l, l)
	if !(kk > 0 && ll > 0) {
		return math.NaN(), nil
	}
	return kl / math.Sqrt(kk*ll), nil
}

// KornblithRBF returns the RBF kernel of Kornblith et al. (2019) for the
// rows of x: exp(-||x_i - x_j||² / (2σ²)) with σ² = threshold² × the
// median squared distance between rows (over all n² pairs, diagonal zeros
// included, as numpy's median of the full distance matrix), i.e.
// gamma = 1 / (2 threshold² median).
func KornblithRBF(x *mat.Dense, threshold float64) (kernel.RBF, error) {
	return KornblithRBFContext(context.Background(), x, threshold)
}

// KornblithRBFContext is KornblithRBF stopping, with ctx's error, inside
// the distances' Gram matrix once ctx is done
// (kernel.MedianSqDistContext).
func KornblithRBFContext(ctx context.Context, x *mat.Dense, threshold float64) (kernel.RBF, error) {
	if !(threshold > 0) || math.IsInf(threshold, 0) {
		return kernel.RBF{}, fmt.Errorf("disentangle: RBF threshold %g: want a positive number", threshold)
	}
	med, err := kernel.MedianSqDistContext(ctx, x)
	if err != nil {
		return kernel.RBF{}, err
	}
	if !(med > 0) {
		return kernel.RBF{}, kernel.ErrZeroMedian
	}
	return kernel.RBF{Gamma: 1 / (2 * threshold * threshold * med)}, nil
}
