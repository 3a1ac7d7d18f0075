package frechet

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Reference holds reference statistics (the real data of FID) prepared for
// many distance computations: the pivoted Cholesky factor G with
// Σ_ref = Gᵀ G is computed once, so each later distance pays only for the
// other side. Against a sample of n < d rows that is O(n d²) with no O(d³)
// step at all, which is what online model selection needs at every step.
//
// A Reference is read-only after NewReference and safe for concurrent use.
type Reference struct {
	stats Stats
	trace float64
	f     *pivChol // Σ_ref = Gᵀ G; nil when Σ_ref = 0
}

// NewReference validates s and factorises its covariance (O(d³/3)); a
// covariance that is clearly not positive semidefinite is an error
// wrapping ErrNotPSD (see Distance). The Reference keeps s.Mu and s.Sigma,
// which must not be modified afterwards.
func NewReference(s Stats) (*Reference, error) {
	if err := s.check("reference statistics"); err != nil {
		return nil, err
	}
	if err := CheckDim(s.Dim()); err != nil {
		return nil, err
	}
	f, perr := factor(s.Sigma)
	if perr != nil {
		return nil, fmt.Errorf("frechet: %w", perr.withWhich("reference statistics"))
	}
	return &Reference{stats: s, trace: trace(s.Sigma), f: f}, nil
}

// Stats returns the reference statistics.
func (r *Reference) Stats() Stats { return r.stats }

// Rank returns the numerical rank of the reference covariance.
func (r *Reference) Rank() int {
	if r.f == nil {
		return 0
	}
	return r.f.rank()
}

// Distance returns Distance(s, reference statistics), reusing the cached
// factor: one pivoted Cholesky of s.Sigma (d³/3 flops), one product and
// the singular values of an r_s×r matrix.
func (r *Reference) Distance(s Stats) (float64, error) {
	if err := s.check("statistics"); err != nil {
		return math.NaN(), err
	}
	if s.Dim() != r.stats.Dim() {
		return math.NaN(), fmt.Errorf("frechet: dimension mismatch: %d and reference %d", s.Dim(), r.stats.Dim())
	}
	var tr float64
	if equalSym(s.Sigma, r.stats.Sigma) {
		tr = r.trace
	} else {
		fs, perr := factor(s.Sigma)
		if perr != nil {
			return math.NaN(), fmt.Errorf("frechet: %w", perr.withWhich("statistics"))
		}
		if fs != nil && r.f != nil {
			var err error
			if tr, err = traceSqrtFactors(r.f, fs); err != nil {
				return math.NaN(), err
			}
		}
	}
	return assemble(s.Mu, r.stats.Mu, trace(s.Sigma), r.trace, tr)
}

// DistanceToSamples returns the Fréchet distance between the Gaussian
// fitted to the rows of x (covariance normalised by n - ddof) and the
// reference. With n < d rows it never forms a d×d matrix: with Z the
// (n-1)×d reduced centred rows of DistanceToRef, the trace term is the
// nuclear norm of Z Gᵀ / √(n - ddof), an (n-1)×r matrix, for O(n d r)
// flops (halved by G's triangular structure). With n >= d it computes the statistics and calls Distance.
func (r *Reference) DistanceToSamples(x *mat.Dense, ddof int) (float64, error) {
	n, d, err := checkSamples(x, r.stats, ddof)
	if err != nil {
		return math.NaN(), err
	}
	if n >= d {
		return r.Distance(StatsOf(x, ddof))
	}
	mu, z, sq := reduceCentred(x)
	den := float64(n - ddof)
	var tr float64
	if z != nil && r.f != nil {
		a := r.f.mulUT(1/math.Sqrt(den), r.f.permute(z))
		if tr, err = nuclearNorm(a); err != nil {
			return math.NaN(), err
		}
	}
	return assemble(mu, r.stats.Mu, sq/den, r.trace, tr)
}
