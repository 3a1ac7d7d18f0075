package online

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/frechet"
)

// ISParams are the constants of the IS-UCB and naive-UCB indices. The zero
// value is not valid; start from DefaultISParams.
type ISParams struct {
	// Delta is the failure probability δ in (0, 1).
	Delta float64
	// EntropyBound is C′ of Theorem 6.1, an almost-sure bound on the
	// conditional entropy H(Y|x) of one sample (Algorithm 2 requires
	// C′ ≥ max_g |H(Y|X_g)|). 0 means log K for K classes, the natural
	// bound: the entropy of a distribution over K classes lies in
	// [0, log K], with log K reached by the uniform one. (The authors'
	// code uses 1.)
	EntropyBound float64
	// BonusScale multiplies the clip radii ε and e and the
	// conditional-entropy bonus, > 0 (DefaultBonusScale).
	BonusScale float64
}

// DefaultISParams returns δ = DefaultDelta, C′ = log K and
// DefaultBonusScale.
func DefaultISParams() ISParams { return ISParams{Delta: DefaultDelta, BonusScale: DefaultBonusScale} }

func (p ISParams) validate() error {
	if !(p.Delta > 0 && p.Delta < 1) {
		return fmt.Errorf("online: IS parameters: delta = %g, want 0 < delta < 1", p.Delta)
	}
	if !(p.EntropyBound >= 0) || math.IsInf(p.EntropyBound, 1) {
		return fmt.Errorf("online: IS parameters: entropy bound = %g, want a finite value >= 0 (0 for log K)", p.EntropyBound)
	}
	if !(p.BonusScale > 0) || math.IsInf(p.BonusScale, 1) {
		return fmt.Errorf("online: IS parameters: bonus scale = %g, want a finite value > 0", p.BonusScale)
	}
	return nil
}

// entropyBound returns C′ for k classes.
func (p ISParams) entropyBound(k int) float64 {
	if p.EntropyBound > 0 {
		return p.EntropyBound
	}
	return math.Log(float64(k))
}

// ISRule names one of the IS-based algorithms.
type ISRule int

const (
	// ISUCB is Algorithm 2: pick the highest optimistic IS of Eq. 9.
	ISUCB ISRule = iota
	// ISNaiveUCB is the naive-UCB baseline of Appendix D, item 4: the
	// Hoeffding-type optimistic IS of Eq. 34.
	ISNaiveUCB
	// ISGreedy picks the highest empirical IS (Eq. 4).
	ISGreedy
)

// String returns the rule's name as the CLI spells it: "is-ucb",
// "naive-ucb" or "greedy".
func (r ISRule) String() string {
	switch r {
	case ISUCB:
		return "is-ucb"
	case ISNaiveUCB:
		return "naive-ucb"
	case ISGreedy:
		return "greedy"
	}
	return fmt.Sprintf("ISRule(%d)", int(r))
}

// ISRules lists every IS rule, the paper's IS-UCB first, then its
// baselines: the line-up a simulation compares by default.
var ISRules = []ISRule{ISUCB, ISNaiveUCB, ISGreedy}

// ParseISRule returns the rule named by s (see ISRule.String).
func ParseISRule(s string) (ISRule, error) {
	for _, r := range ISRules {
		if s == r.String() {
			return r, nil
		}
	}
	return 0, fmt.Errorf("online: unknown IS algorithm %q (want is-ucb, naive-ucb or greedy)", s)
}

func (r ISRule) valid() bool { return r >= ISUCB && r <= ISGreedy }

// ISEstimate is what one generator's class-probability rows say, the
// inputs of every IS index.
type ISEstimate struct {
	// N is the number of samples.
	N int
	// Marginal is the empirical marginal class distribution p̃ (Eq. 5),
	// the mean of the rows.
	Marginal []float64
	// MarginalVar is, per class j, the sample variance of p(j|x_i)
	// with the n−1 denominator (Maurer and Pontil's V_n of Lemma E.4);
	// NaN for n < 2.
	MarginalVar []float64
	// CondEntropy is Ĥ(Y|X) = (1/n) Σ_i H(p(·|x_i)).
	CondEntropy float64
	// CondEntropyVar is the sample variance (n−1) of the H(p(·|x_i)),
	// NaN for n < 2.
	CondEntropyVar float64
}

// Index returns the value rule r ranks a generator by, highest first:
// +Inf for a generator with no samples, else the rule's IS (EmpiricalIS,
// OptimisticIS or NaiveOptimisticIS).
func (r ISRule) Index(e ISEstimate, p ISParams) float64 {
	return math.Exp(r.logIndex(e, p))
}

func (r ISRule) logIndex(e ISEstimate, p ISParams) float64 {
	if e.N == 0 {
		return math.Inf(1)
	}
	switch r {
	case ISUCB:
		return logOptimisticIS(e, p)
	case ISNaiveUCB:
		return logNaiveOptimisticIS(e, p)
	}
	return entropy(e.Marginal) - e.CondEntropy
}

// EmpiricalIS returns the empirical Inception Score of Eq. 4,
// exp(H(p̃) − Ĥ(Y|X)); NaN with no samples.
func EmpiricalIS(e ISEstimate) float64 {
	if e.N == 0 {
		return math.NaN()
	}
	return math.Exp(entropy(e.Marginal) - e.CondEntropy)
}

// OptimisticIS returns the optimistic IS of Theorem 6.1 (Eq. 9), IS-UCB's
// index:
//
//	ε_j = √(2 V_j log(4K/δ) / n) + 7 log(4K/δ) / (3(n−1))            (Eq. 32)
//	p̂   = Clip(p̃, ε)                                                 (Eq. 6, 8)
//	ÎS  = exp(ℰ(p̂) − Ĥ(Y|X) + √(2 V_H log(4/δ) / n) + 7 C′ log(4/δ) / (3(n−1)))
//
// with ℰ(p) = −Σ_j p_j log p_j (p̂ need not sum to 1), V_j and V_H the
// sample variances of p(j|x_i) and of H(Y|x_i), and C′ = p.EntropyBound.
// p.BonusScale multiplies ε and the last two terms of the exponent.
//
// Readings of the paper, where it is ambiguous:
//   - Both radii are Maurer and Pontil's empirical Bernstein bound (Lemma
//     E.4) with the logarithm inside the square root and the 7/(3(n−1))
//     term outside it, as in Lemma E.4, Eq. 7 and the proof in B.1. Eq. 32
//     prints the square root over both terms and Eq. 9 prints the
//     logarithm outside the first one; both are typesetting slips.
//   - V is the n−1 sample variance that Lemma E.4 defines (the authors'
//     code uses the 1/n one).
//   - The log(4K/δ) of ε is Eq. 32's (δ/2 for the marginal, union bound
//     over K classes); Eq. 7 hides it in Õ.
//   - p̂ is computed on the side: the empirical marginal p̃ itself keeps
//     accumulating the raw rows. (The authors' code clips a view of its
//     running marginal, so each step's optimism is folded into the next
//     step's estimate.)
//
// The bound needs n ≥ 2 (the 7/(3(n−1)) term): with n = 1 the index is
// +Inf, so a generator queried with batches of one is queried again.
// OptimisticIS returns +Inf for n < 2.
func OptimisticIS(e ISEstimate, p ISParams) float64 {
	return math.Exp(logOptimisticIS(e, p))
}

func logOptimisticIS(e ISEstimate, p ISParams) float64 {
	if e.N < 2 {
		return math.Inf(1)
	}
	n := float64(e.N)
	k := len(e.Marginal)
	lk := math.Log(4 * float64(k) / p.Delta)
	var h float64
	for j, pj := range e.Marginal {
		eps := math.Sqrt(2*e.MarginalVar[j]*lk/n) + 7*lk/(3*(n-1))
		h += u(ClipValue(pj, p.BonusScale*eps))
	}
	l := math.Log(4 / p.Delta)
	bonus := math.Sqrt(2*e.CondEntropyVar*l/n) + 7*p.entropyBound(k)*l/(3*(n-1))
	return h - e.CondEntropy + p.BonusScale*bonus
}

// NaiveOptimisticIS returns naive-UCB's optimistic IS, Eq. 34 (Appendix
// D, item 4), with data-independent Hoeffding radii:
//
//	e   = √(log(4K/δ) / (2n))
//	ÎS  = exp(ℰ(Clip(p̃, e)) − Ĥ(Y|X) + C′ √(log(4/δ) / (2n))),
//
// with e and the last term multiplied by p.BonusScale. It returns +Inf with no samples.
func NaiveOptimisticIS(e ISEstimate, p ISParams) float64 {
	return math.Exp(logNaiveOptimisticIS(e, p))
}

func logNaiveOptimisticIS(e ISEstimate, p ISParams) float64 {
	if e.N == 0 {
		return math.Inf(1)
	}
	n := float64(e.N)
	k := len(e.Marginal)
	eps := p.BonusScale * math.Sqrt(math.Log(4*float64(k)/p.Delta)/(2*n))
	var h float64
	for _, pj := range e.Marginal {
		h += u(ClipValue(pj, eps))
	}
	return h - e.CondEntropy + p.BonusScale*p.entropyBound(k)*math.Sqrt(math.Log(4/p.Delta)/(2*n))
}

// ClipValue is the element-wise operator Clip_{1/e} of Eq. 8: it moves p
// by eps toward 1/e, where u(x) = −x log x is largest, and stops at 1/e:
//
//	p + sign(1/e − p)·eps   if |1/e − p| ≥ eps,
//	1/e                     otherwise.
//
// When p = 1/e and eps = 0 the sign is 0/0 in the paper; the result is p,
// the limit of both branches. eps must be ≥ 0.
func ClipValue(p, eps float64) float64 {
	const target = 1 / math.E
	switch diff := target - p; {
	case math.Abs(diff) < eps:
		return target
	case diff > 0:
		return p + eps
	case diff < 0:
		return p - eps
	}
	return p
}

// Clip applies ClipValue element-wise, dst[j] = ClipValue(p[j], eps[j]),
// and returns dst; dst may be p. It panics if the lengths differ.
func Clip(dst, p, eps []float64) []float64 {
	if len(p) != len(eps) || len(dst) != len(p) {
		panic("online: Clip: lengths differ")
	}
	for j := range p {
		dst[j] = ClipValue(p[j], eps[j])
	}
	return dst
}

// u is −x log x, with u(0) = 0.
func u(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return -x * math.Log(x)
}

// entropy is Σ u(p_j).
func entropy(p []float64) float64 {
	var h float64
	for _, v := range p {
		h += u(v)
	}
	return h
}

// isEstimator is one generator's incremental IS state: per-class running
// mean and scatter (Welford) of the class probabilities, and the same for
// the entropy of each row. A batch costs O(bK).
type isEstimator struct {
	p      ISParams
	rules  []ISRule
	n      int
	mean   []float64
	m2     []float64
	hMean  float64
	hM2    float64
	scrVar []float64
}

func newISEstimator(k int, p ISParams, rules []ISRule) *isEstimator {
	return &isEstimator{p: p, rules: rules, mean: make([]float64, k), m2: make([]float64, k), scrVar: make([]float64, k)}
}

func (e *isEstimator) add(batch *mat.Dense) error {
	b, k := batch.Dims()
	raw := batch.RawMatrix()
	for i := 0; i < b; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+k]
		e.n++
		inv := 1 / float64(e.n)
		for j, v := range row {
			dlt := v - e.mean[j]
			e.mean[j] += dlt * inv
			e.m2[j] += dlt * (v - e.mean[j])
		}
		h := entropy(row)
		dlt := h - e.hMean
		e.hMean += dlt * inv
		e.hM2 += dlt * (h - e.hMean)
	}
	return nil
}

// view returns the estimate without copying: Marginal and MarginalVar
// alias the estimator's buffers.
func (e *isEstimator) view() ISEstimate {
	out := ISEstimate{N: e.n, Marginal: e.mean, MarginalVar: e.scrVar, CondEntropy: e.hMean, CondEntropyVar: math.NaN()}
	for j := range e.scrVar {
		if e.n < 2 {
			e.scrVar[j] = math.NaN()
		} else {
			e.scrVar[j] = e.m2[j] / float64(e.n-1)
		}
	}
	if e.n >= 2 {
		out.CondEntropyVar = e.hM2 / float64(e.n-1)
	}
	return out
}

// keys writes −log of each rule's index: IS is maximised, keys are
// minimised, and the logarithm keeps the ranking exact where exp would
// overflow (ℰ(p̂) can reach K/e).
func (e *isEstimator) keys(dst []float64) error {
	v := e.view()
	for i, r := range e.rules {
		dst[i] = -r.logIndex(v, e.p)
	}
	return nil
}

// ISSelector is an IS-based Algorithm (IS-UCB, naive-UCB or greedy) over G
// generators whose samples are class-probability rows over K classes.
type ISSelector struct {
	sel  *selector
	ests []*isEstimator
}

// Name returns the rule's name (ISRule.String).
func (s *ISSelector) Name() string { return s.sel.Name() }

// Pick returns the generator with the highest index, the lowest-numbered
// among equals; unvisited generators (+Inf) first.
func (s *ISSelector) Pick() int { return s.sel.Pick() }

// Update adds a batch of class-probability rows drawn from generator g (K
// columns, each row a distribution) and recomputes g's index.
func (s *ISSelector) Update(g int, batch *mat.Dense) error { return s.sel.Update(g, batch) }

// Scores returns the current index of every generator, +Inf when
// unvisited.
func (s *ISSelector) Scores() []float64 { return s.sel.Scores() }

// NewISSelector returns an IS-based Algorithm over the given number of
// generators, all unvisited, for rows over the given number of classes.
func NewISSelector(classes, generators int, rule ISRule, p ISParams) (*ISSelector, error) {
	if classes < 2 {
		return nil, fmt.Errorf("online: IS selector: %d classes, want at least 2", classes)
	}
	if generators < 1 {
		return nil, fmt.Errorf("online: IS selector: %d generators, want at least 1", generators)
	}
	if !rule.valid() {
		return nil, fmt.Errorf("online: IS selector: unknown rule %v", rule)
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	ests := make([]*isEstimator, generators)
	es := make([]estimator, generators)
	for g := range ests {
		ests[g] = newISEstimator(classes, p, []ISRule{rule})
		es[g] = ests[g]
	}
	check := func(b *mat.Dense) error {
		if _, c := b.Dims(); c != classes {
			return fmt.Errorf("batch has %d columns, want %d classes", c, classes)
		}
		return frechet.CheckProbs(b, frechet.ProbTolerance)
	}
	score := func(k float64) float64 { return math.Exp(-k) }
	return &ISSelector{sel: newSelector(rule.String(), es, check, score), ests: ests}, nil
}

// Estimate returns what generator g's samples so far say; the slices are
// copies.
func (s *ISSelector) Estimate(g int) (ISEstimate, error) {
	if g < 0 || g >= len(s.ests) {
		return ISEstimate{}, fmt.Errorf("online: %s: generator %d out of range [0, %d)", s.Name(), g, len(s.ests))
	}
	v := s.ests[g].view()
	v.Marginal = append([]float64(nil), v.Marginal...)
	v.MarginalVar = append([]float64(nil), v.MarginalVar...)
	return v, nil
}
