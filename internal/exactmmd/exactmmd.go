// Package exactmmd computes the unbiased MMD² of a polynomial kernel in
// rational arithmetic, taking every float64 input exactly: the value any
// rounding-free evaluation of the definition gives. Tests of the
// floating-point estimators compare against it where cancellation (large
// offsets, high degrees) would hide an error in a float64 reference.
package exactmmd

import (
	"math/big"

	"gonum.org/v1/gonum/mat"
)

// Poly returns the unbiased MMD² of the rows of x and y with the kernel
// (γ a·b + c₀)^degree: the means of k over distinct pairs within x and
// within y, minus twice the mean over all pairs across, rounded once to
// float64. It costs O((m+n)² d) rational operations: small inputs only.
func Poly(x, y *mat.Dense, gamma, coef0 float64, degree int) float64 {
	g, c0 := new(big.Rat).SetFloat64(gamma), new(big.Rat).SetFloat64(coef0)
	k := func(a, b []float64) *big.Rat {
		dot := new(big.Rat)
		for j := range a {
			dot.Add(dot, new(big.Rat).Mul(new(big.Rat).SetFloat64(a[j]), new(big.Rat).SetFloat64(b[j])))
		}
		base := new(big.Rat).Add(new(big.Rat).Mul(g, dot), c0)
		p := big.NewRat(1, 1)
		for range degree {
			p.Mul(p, base)
		}
		return p
	}
	mean := func(a, b *mat.Dense, distinct bool) *big.Rat {
		ra, _ := a.Dims()
		rb, _ := b.Dims()
		s, n := new(big.Rat), 0
		for i := 0; i < ra; i++ {
			for j := 0; j < rb; j++ {
				if distinct && i == j {
					continue
				}
				s.Add(s, k(a.RawRowView(i), b.RawRowView(j)))
				n++
			}
		}
		return s.Quo(s, new(big.Rat).SetInt64(int64(n)))
	}
	v := new(big.Rat).Add(mean(x, x, true), mean(y, y, true))
	v.Sub(v, new(big.Rat).Mul(big.NewRat(2, 1), mean(x, y, false)))
	f, _ := v.Float64()
	return f
}
