package kscore

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/metric/kernel"
)

// Entropy is the predictive kernel entropy of one model's samples for one
// input (Gruber & Buettner, ICML 2024, Algorithm 1):
// -1/(n(n-1)) Σ_{i≠j} k(x_i, x_j). It is NaN for fewer than two samples,
// which carry no information about spread.
func Entropy(k kernel.Kernel, x *mat.Dense) float64 {
	if r, _ := x.Dims(); r < 2 {
		return math.NaN()
	}
	return EntropyGram(k.Gram(x))
}

// EntropyGram is Entropy from a precomputed Gram matrix, for kernels on
// non-vector data such as kernel.CS.
func EntropyGram(g mat.Symmetric) float64 {
	n := g.SymmetricDim()
	if n < 2 {
		return math.NaN()
	}
	var s float64
	if rs, ok := g.(mat.RawSymmetricer); ok {
		raw := rs.RawSymmetric()
		for i := 0; i < n; i++ {
			for _, v := range raw.Data[i*raw.Stride+i+1 : i*raw.Stride+n] {
				s += v
			}
		}
	} else {
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				s += g.At(i, j)
			}
		}
	}
	return -2 * s / float64(n*(n-1))
}

// Entropies computes Entropy for many inputs (one prompt's sampled answers
// per element) on all CPUs through par.For. It stops early with ctx's
// error when ctx is cancelled; each element is one small Gram matrix, so
// that happens within milliseconds.
func Entropies(ctx context.Context, k kernel.Kernel, xs []*mat.Dense) ([]float64, error) {
	out := make([]float64, len(xs))
	err := par.For(ctx, len(xs), 0, func(_ context.Context, i int) error {
		out[i] = Entropy(k, xs[i])
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Score is the kernel score of the distribution sampled by x against the
// observations y, averaged over the rows of y:
// mean_{i≠j} k(x_i, x_j) - 2 mean_{i,l} k(x_i, y_l). Lower is better.
func Score(k kernel.Kernel, x, y *mat.Dense) (float64, error) {
	s, err := newSums(k, []*mat.Dense{x, y})
	if err != nil {
		return math.NaN(), err
	}
	if err := needRows(s, 0, "samples"); err != nil {
		return math.NaN(), err
	}
	return s.within(0) - 2*s.between(0, 1), nil
}

// MMD2 is the unbiased estimate of the squared maximum mean discrepancy
// between the distributions sampled by x and y (Gretton et al. 2012):
// mean_{i≠j} k(x_i,x_j) + mean_{i≠j} k(y_i,y_j) - 2 mean_{i,j} k(x_i,y_j).
//
// With the linear or polynomial kernel and rows that share a large offset
// (kernel.Offset of both sets), the kernel values are all about the same
// huge number and their differences lose every digit; MMD² is then
// computed around the offset with kernel.Shifted, which gives the same
// estimate in exact arithmetic (for the linear kernel, MMD² of rows minus
// a common vector: it is ‖x̄ − ȳ‖² − tr S_x/m − tr S_y/n, translation
// invariant).
func MMD2(k kernel.Kernel, x, y *mat.Dense) (float64, error) {
	if sk, ok := shiftable(k, x, y); ok {
		k = sk
		x, y = sk.augment(x), sk.augment(y)
	}
	s, err := newSums(k, []*mat.Dense{x, y})
	if err != nil {
		return math.NaN(), err
	}
	if err := needRows(s, 0, "x"); err != nil {
		return math.NaN(), err
	}
	if err := needRows(s, 1, "y"); err != nil {
		return math.NaN(), err
	}
	return s.within(0) + s.within(1) - 2*s.between(0, 1), nil
}

// Noise estimates -||Q||², the irreducible part of the expected kernel
// score, from observations y of the target: -mean_{l≠l'} k(y_l, y_l').
func Noise(k kernel.Kernel, y *mat.Dense) (float64, error) {
	s, err := newSums(k, []*mat.Dense{y})
	if err != nil {
		return math.NaN(), err
	}
	if err := needRows(s, 0, "targets"); err != nil {
		return math.NaN(), err
	}
	return -s.within(0), nil
}

// Variance is the unbiased distributional variance estimator of Eq. 9 for
// n ≥ 2 models, sets[i] holding m ≥ 2 samples of model i: the mean
// similarity within a model's samples minus the mean similarity between
// samples of different models.
func Variance(k kernel.Kernel, sets []*mat.Dense) (float64, error) {
	s, err := newSums(k, sets)
	if err != nil {
		return math.NaN(), err
	}
	return variance(s, 0, len(sets))
}

func variance(s *sums, lo, hi int) (float64, error) {
	n := hi - lo
	if n < 2 {
		return math.NaN(), errors.New("kscore: distributional variance needs at least 2 models")
	}
	var w float64
	for i := lo; i < hi; i++ {
		if err := needRows(s, i, fmt.Sprintf("model %d", i-lo)); err != nil {
			return math.NaN(), err
		}
		w += s.within(i)
	}
	return w/float64(n) - offDiagMean(s, lo, lo, n), nil
}

// offDiagMean is the mean of between(a+i, b+s) over i ≠ s in [0, n).
func offDiagMean(s *sums, a, b, n int) float64 {
	var t float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j {
				t += s.between(a+i, b+j)
			}
		}
	}
	return t / float64(n*(n-1))
}

// Covariance is the unbiased distributional covariance estimator of Eq. 10
// between paired collections: xs[i] and ys[i] are samples of the i-th
// draw (P_i, Q_i) of a joint distribution, e.g. member i of an ensemble at
// two training epochs.
func Covariance(k kernel.Kernel, xs, ys []*mat.Dense) (float64, error) {
	if len(xs) != len(ys) {
		return math.NaN(), fmt.Errorf("kscore: covariance needs paired collections, got %d and %d sets", len(xs), len(ys))
	}
	if len(xs) < 2 {
		return math.NaN(), errors.New("kscore: distributional covariance needs at least 2 pairs")
	}
	s, err := newSums(k, append(append([]*mat.Dense(nil), xs...), ys...))
	if err != nil {
		return math.NaN(), err
	}
	return covariance(s, 0, len(xs), len(xs)), nil
}

// covariance is Eq. 10 for the sets a..a+n-1 against b..b+n-1.
func covariance(s *sums, a, b, n int) float64 {
	var d float64
	for i := 0; i < n; i++ {
		d += s.between(a+i, b+i)
	}
	return d/float64(n) - offDiagMean(s, a, b, n)
}

// Correlation is the distributional correlation of Eq. 11: the covariance
// normalised by the covariance estimator applied to each collection with
// itself (not the variance estimator, which can be negative). It is NaN
// when either self-covariance is not positive.
func Correlation(k kernel.Kernel, xs, ys []*mat.Dense) (float64, error) {
	if len(xs) != len(ys) {
		return math.NaN(), fmt.Errorf("kscore: correlation needs paired collections, got %d and %d sets", len(xs), len(ys))
	}
	if len(xs) < 2 {
		return math.NaN(), errors.New("kscore: distributional correlation needs at least 2 pairs")
	}
	n := len(xs)
	s, err := newSums(k, append(append([]*mat.Dense(nil), xs...), ys...))
	if err != nil {
		return math.NaN(), err
	}
	return corr(covariance(s, 0, n, n), covariance(s, 0, 0, n), covariance(s, n, n, n)), nil
}

func corr(cxy, cxx, cyy float64) float64 {
	if !(cxx > 0) || !(cyy > 0) {
		return math.NaN()
	}
	return cxy / math.Sqrt(cxx*cyy)
}

// Bias is the unbiased estimate of ||E[P] - Q||² from n ≥ 2 models' samples
// and observations y of the target:
// mean_{i≠s} mean_{j,t} k(X_ij, X_st) - 2 mean_{i,j,l} k(X_ij, y_l) + mean_{l≠l'} k(y_l, y_l').
func Bias(k kernel.Kernel, sets []*mat.Dense, y *mat.Dense) (float64, error) {
	d, err := Decompose(k, sets, y)
	return d.Bias, err
}

// EnsembleGain is the predicted reduction of the expected kernel score when
// n identically distributed members are averaged instead of using one
// (Gruber & Buettner, ICML 2024, Example 3.4): (n-1)/n (Var - Cov). For
// members trained independently Cov is 0.
func EnsembleGain(variance, covariance float64, n int) float64 {
	if n < 1 {
		return math.NaN()
	}
	return float64(n-1) / float64(n) * (variance - covariance)
}

func needRows(s *sums, a int, what string) error {
	if s.m[a] < 2 {
		return fmt.Errorf("kscore: %s has %d sample(s); need at least 2", what, s.m[a])
	}
	return nil
}

// CMS is the cosine similarity of the mean embeddings of the distributions
// sampled by x and y, with the plug-in estimates of Gruber, Ziegler &
// Buettner ("Disentangling mean embeddings for better diagnostics of image
// generators", 2024, Appendix B.2): <μ_X, μ_Y> / sqrt(||μ_X||² ||μ_Y||²),
// each term a mean of k over all pairs, diagonal included. It is 1 for identical distributions and
// falls towards 0 as they separate (for kernels with k ≥ 0).
func CMS(k kernel.Kernel, x, y *mat.Dense) (float64, error) {
	s, err := newSums(k, []*mat.Dense{x, y})
	if err != nil {
		return math.NaN(), err
	}
	xx, yy := s.between(0, 0), s.between(1, 1)
	if !(xx > 0) || !(yy > 0) {
		return math.NaN(), errors.New("kscore: CMS needs mean embeddings with positive norm")
	}
	return s.between(0, 1) / math.Sqrt(xx*yy), nil
}
