package kernel

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Offset returns the mean of the rows of all sets together when they
// share an offset large enough to cost a Gram matrix's products more than
// three digits (the squared norm of the mean over 1000 times the mean
// squared distance of a row to it), and nil otherwise, as the RBF kernel
// decides for its own rows. All sets must have the same number of columns.
//
// Two-sample statistics whose value does not change under a common shift
// of both samples (MMD² with the linear kernel) can then be computed on
// the rows minus the offset; for those that do change (MMD² with the
// polynomial kernel), see Shifted.
func Offset(sets ...*mat.Dense) []float64 {
	var m []float64
	n := 0
	for _, x := range sets {
		r, c := x.Dims()
		if m == nil {
			m = make([]float64, c)
		}
		for i := 0; i < r; i++ {
			for j, v := range x.RawRowView(i) {
				m[j] += v
			}
		}
		n += r
	}
	if n == 0 {
		return nil
	}
	var mm float64
	for j := range m {
		m[j] /= float64(n)
		mm += m[j] * m[j]
	}
	var ss float64
	for _, x := range sets {
		r, _ := x.Dims()
		for i := 0; i < r; i++ {
			for j, v := range x.RawRowView(i) {
				ss += (v - m[j]) * (v - m[j])
			}
		}
	}
	if !(mm > 1000*ss/float64(n)) {
		return nil
	}
	return m
}

// Shifted is the polynomial kernel k(x, y) = (γ x·y + c₀)^D rewritten for
// rows x = c + u, y = c + v around a common shift c, for statistics that
// are differences of kernel means (the unbiased MMD², KID).
//
// With A = γ|c|² + c₀, a = γ c·u, b = γ c·v and q = γ u·v,
//
//	k(x, y) = (A + a + b + q)^D.
//
// At a large offset every k is about A^D and MMD² is a difference of such
// numbers: at +1e8 on every feature, float64 keeps none of KID's digits
// (1.9e33 came out for 2.3e32). But the unbiased MMD², a mean over pairs
// within x plus one within y minus twice one between them, is unchanged
// when a constant or any g(x) + g(y) is subtracted from k: their three
// means cancel exactly. Excess subtracts g(u) + g(v) − A^D with
// g(u) = (A + a)^D, which leaves
//
//	h = [(S + q)^D − S^D] + [(A + a + b)^D − (A + a)^D − (A + b)^D + A^D],   S = A + a + b,
//
// both brackets written as sums of products that cancel nothing: the
// first as q Σₖ (S + q)^k S^(D−1−k), the second, a mixed difference, as
// Σ_{j,l ≥ 1} D!/(j! l! (D−j−l)!) a^j b^l A^(D−j−l). MMD² from h equals
// MMD² from k in exact arithmetic, for any c; the shift only decides
// which numbers are rounded. The polynomial kernel is not translation
// invariant, so centring the rows alone would change the estimate; h
// does not.
type Shifted struct {
	K Polynomial
	C []float64 // the shift c
	A float64   // γ|c|² + c₀
}

// Shift returns k rewritten around c (see Shifted).
func (k Polynomial) Shift(c []float64) Shifted {
	var cc float64
	for _, v := range c {
		cc += v * v
	}
	return Shifted{K: k, C: c, A: k.Gamma*cc + k.Coef0}
}

// Proj returns a = γ c·u for a row u already centred on c.
func (s Shifted) Proj(u []float64) float64 {
	var t float64
	for j, v := range u {
		t += s.C[j] * v
	}
	return s.K.Gamma * t
}

// Excess returns h for q = γ u·v, a = γ c·u and b = γ c·v (see Shifted).
func (s Shifted) Excess(q, a, b float64) float64 {
	A, D := s.A, s.K.Degree
	S := A + a + b
	if D == 3 { // KID's kernel, without the loops
		return q*(3*S*S+3*S*q+q*q) + 3*a*b*(2*A+a+b)
	}
	// q Σₖ (S + q)^k S^(D−1−k)
	var geo float64
	for k := 0; k < D; k++ {
		geo += ipow(S+q, k) * ipow(S, D-1-k)
	}
	h := q * geo
	// Σ_{j,l ≥ 1, j+l ≤ D} D!/(j! l! (D−j−l)!) a^j b^l A^(D−j−l)
	for j := 1; j < D; j++ {
		for l := 1; j+l <= D; l++ {
			h += multinomial(D, j, l) * ipow(a, j) * ipow(b, l) * ipow(A, D-j-l)
		}
	}
	return h
}

// ipow is x^n for n ≥ 0 by repeated multiplication (n is a kernel degree).
func ipow(x float64, n int) float64 {
	p := 1.0
	for ; n > 0; n-- {
		p *= x
	}
	return p
}

// multinomial is D!/(j! l! (D−j−l)!).
func multinomial(D, j, l int) float64 {
	f := func(n int) float64 { return math.Gamma(float64(n + 1)) }
	return math.Round(f(D) / (f(j) * f(l) * f(D-j-l)))
}

// Centre returns x with c subtracted from every row (a copy).
func Centre(x *mat.Dense, c []float64) *mat.Dense { return centred(x, c) }
