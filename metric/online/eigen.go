package online

import (
	"math"

	"gonum.org/v1/gonum/floats"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"
)

// lapackMinN is the size from which sumSqrtEigenUpper calls LAPACK when
// built with -tags openblas.
const lapackMinN = 256

// sumSqrtEigenUpper returns Σ √max(λ, 0) over the eigenvalues of the n×n
// symmetric matrix whose upper triangle is stored row-major in a with the
// given stride; rounding can turn a zero eigenvalue slightly negative. a is
// overwritten.
//
// Every FID step solves one such problem (of size min(n, rank Σ_r)), so its
// speed sets the speed of the simulations. With OpenBLAS, LAPACK's dsyev is
// fastest for large n; below lapackMinN its cgo calls and threads cost more
// than they save. In pure Go, gonum's Dsytrd spends most of its time in a
// scalar symmetric matrix-vector product; tridiagonalizing with the
// vectorised dot and axpy kernels instead (householderTridiag) makes the
// whole eigenvalue computation about a third faster at n = 128
// (BenchmarkTraceSqrt128). Both are Householder reductions followed by
// root-free QR on the tridiagonal matrix (Dsterf), with the same backward
// stability.
func sumSqrtEigenUpper(n int, a []float64, stride int) (float64, error) {
	switch n {
	case 0:
		return 0, nil
	case 1:
		return math.Sqrt(max(a[0], 0)), nil
	}
	var vals []float64
	if openblas && n > lapackMinN {
		var es mat.EigenSym
		s := mat.NewSymDense(n, nil)
		sr := s.RawSymmetric()
		for i := 0; i < n; i++ {
			copy(sr.Data[i*sr.Stride+i:i*sr.Stride+n], a[i*stride+i:i*stride+n])
		}
		if !es.Factorize(s, false) {
			return math.NaN(), errEigen
		}
		vals = es.Values(nil)
	} else {
		d := make([]float64, n)
		e := make([]float64, n-1)
		householderTridiag(n, a, stride, d, e, make([]float64, n))
		if !(lapackgonum.Implementation{}).Dsterf(n, d, e) {
			return math.NaN(), errEigen
		}
		vals = d
	}
	var t float64
	for _, v := range vals {
		if v > 0 {
			t += math.Sqrt(v)
		}
	}
	return t, nil
}

// householderTridiag reduces the symmetric matrix in the upper triangle of
// a (n×n, row-major, stride s; overwritten) to the tridiagonal matrix with
// diagonal d and off-diagonal e, by n−2 Householder similarity transforms
// (Golub and Van Loan, Algorithm 8.3.1). Step k annihilates row k beyond
// its first off-diagonal entry: with the reflector H = I − τ v vᵀ of that
// row segment, p = τ A₂₂ v, w = p − (τ/2)(pᵀv) v, and the trailing block
// becomes A₂₂ − v wᵀ − w vᵀ; only its upper triangle is read and updated,
// row by row, so every inner loop is a contiguous dot or axpy (gonum's
// vectorised kernels, through package floats). p is
// scratch of length n.
func householderTridiag(n int, a []float64, s int, d, e, p []float64) {
	var impl lapackgonum.Implementation
	for k := 0; k < n-2; k++ {
		m := n - k - 1
		v := a[k*s+k+1 : k*s+n] // row k right of the diagonal
		beta, tau := impl.Dlarfg(m, v[0], v[1:], 1)
		d[k], e[k] = a[k*s+k], beta
		if tau == 0 {
			continue // already reduced
		}
		v[0] = 1
		off := (k+1)*s + k + 1
		pp := p[:m]
		clear(pp)
		for i := 0; i < m; i++ {
			row := a[off+i*s+i : off+i*s+m] // A₂₂[i, i:]
			pp[i] += floats.Dot(row, v[i:])
			if i+1 < m {
				floats.AddScaled(pp[i+1:], v[i], row[1:])
			}
		}
		var pv float64
		for i := range pp {
			pp[i] *= tau
			pv += pp[i] * v[i]
		}
		c := -0.5 * tau * pv
		for i := range pp {
			pp[i] += c * v[i]
		}
		for i := 0; i < m; i++ {
			row := a[off+i*s+i : off+i*s+m]
			floats.AddScaled(row, -v[i], pp[i:])
			floats.AddScaled(row, -pp[i], v[i:])
		}
	}
	d[n-2], e[n-2], d[n-1] = a[(n-2)*s+n-2], a[(n-2)*s+n-1], a[(n-1)*s+n-1]
}
