package categorical

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/genlens/genlens/metric/hallucination"
)

// Example is one (input group, label) pair.
type Example = hallucination.Example[int, int]

// Model is the Dirichlet-categorical in-context classifier: Groups input
// values, len(Alpha) labels, θ_g ~ Dir(Alpha) per group. It implements
// hallucination.CGM.
type Model struct {
	Groups int
	Alpha  []float64 // Dirichlet concentration per label, all > 0
}

// Symmetric returns a model with groups inputs, labels labels and the
// symmetric prior Dir(alpha, ..., alpha).
func Symmetric(groups, labels int, alpha float64) Model {
	a := make([]float64, labels)
	for i := range a {
		a[i] = alpha
	}
	return Model{Groups: groups, Alpha: a}
}

// Labels returns the number of labels.
func (m Model) Labels() int { return len(m.Alpha) }

// Validate reports whether the model is well defined.
func (m Model) Validate() error {
	if m.Groups < 1 {
		return fmt.Errorf("categorical: %d input groups: want at least 1", m.Groups)
	}
	if len(m.Alpha) < 2 {
		return fmt.Errorf("categorical: %d labels: want at least 2", len(m.Alpha))
	}
	for i, a := range m.Alpha {
		if !(a > 0) || math.IsInf(a, 0) {
			return fmt.Errorf("categorical: alpha[%d] = %v: want a positive number", i, a)
		}
	}
	return nil
}

// Condition implements hallucination.CGM.
func (m Model) Condition(_ context.Context, d []Example) (hallucination.Conditioned[int, int], error) {
	return m.Posterior(d)
}

// Posterior returns the model given the context d.
func (m Model) Posterior(d []Example) (*Posterior, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	p := &Posterior{model: m, counts: make([]int, m.Groups*len(m.Alpha)), totals: make([]int, m.Groups)}
	for i, e := range d {
		if err := m.check(e); err != nil {
			return nil, fmt.Errorf("categorical: context example %d: %w", i+1, err)
		}
		p.counts[e.X*len(m.Alpha)+e.Y]++
		p.totals[e.X]++
	}
	p.n = len(d)
	return p, nil
}

func (m Model) check(e Example) error {
	if e.X < 0 || e.X >= m.Groups {
		return fmt.Errorf("input %d outside [0, %d)", e.X, m.Groups)
	}
	if e.Y < 0 || e.Y >= len(m.Alpha) {
		return fmt.Errorf("label %d outside [0, %d)", e.Y, len(m.Alpha))
	}
	return nil
}

// SampleTruth draws a mechanism from the prior: θ_g ~ Dir(α) per group.
func (m Model) SampleTruth(r *rand.Rand) (*Truth, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	t := &Truth{Theta: make([][]float64, m.Groups)}
	for g := range t.Theta {
		t.Theta[g] = dirichlet(r, m.Alpha)
	}
	return t, nil
}

// dirichlet draws θ ~ Dir(a) by normalising Gamma(a_i, 1) variates.
func dirichlet(r *rand.Rand, a []float64) []float64 {
	th := make([]float64, len(a))
	dirichletTo(th, r, a)
	return th
}

func dirichletTo(th []float64, r *rand.Rand, a []float64) {
	s := 0.0
	for i, ai := range a {
		th[i] = distuv.Gamma{Alpha: ai, Beta: 1, Src: r}.Rand()
		s += th[i]
	}
	if s == 0 {
		// Every variate underflowed (tiny α): the mass goes to one label
		// as the α -> 0 limit would put it.
		th[r.IntN(len(th))] = 1
		return
	}
	for i := range th {
		th[i] /= s
	}
}

// Posterior is the model given a context: per-group label counts. It
// implements hallucination.Conditioned and is immutable.
type Posterior struct {
	model  Model
	counts []int // counts[g*L+y]
	totals []int // totals[g]
	n      int
}

// Len returns the number of examples conditioned on.
func (p *Posterior) Len() int { return p.n }

// Model returns the model the posterior belongs to.
func (p *Posterior) Model() Model { return p.model }

// Predictive returns p(y | x, D) for every label y: the Pólya urn
// (α_y + c_{x,y}) / (Σα + c_x).
func (p *Posterior) Predictive(x int) []float64 {
	out := make([]float64, len(p.model.Alpha))
	p.predictive(x, out)
	return out
}

func (p *Posterior) predictive(x int, out []float64) {
	l := len(p.model.Alpha)
	den := float64(p.totals[x])
	for _, a := range p.model.Alpha {
		den += a
	}
	for y, a := range p.model.Alpha {
		out[y] = (a + float64(p.counts[x*l+y])) / den
	}
}

// Concentration returns the parameters α + c_x of the Dirichlet posterior
// of θ_x.
func (p *Posterior) Concentration(x int) []float64 {
	l := len(p.model.Alpha)
	out := make([]float64, l)
	for y, a := range p.model.Alpha {
		out[y] = a + float64(p.counts[x*l+y])
	}
	return out
}

func (p *Posterior) checkInput(x int) error {
	if x < 0 || x >= p.model.Groups {
		return fmt.Errorf("categorical: input %d outside [0, %d)", x, p.model.Groups)
	}
	return nil
}

// Sample implements hallucination.Predictive. Each response uses one seed
// drawn from r (see the package documentation).
func (p *Posterior) Sample(_ context.Context, r *rand.Rand, x int, ys []int, logp []float64) error {
	if err := p.checkInput(x); err != nil {
		return err
	}
	pred := p.Predictive(x)
	logPred := logs(pred)
	for i := range ys {
		s := NewStream(DrawSeed(r))
		ys[i] = Pick(pred, s.Float64())
		logp[i] = logPred[ys[i]]
	}
	return nil
}

// LogProb implements hallucination.Predictive.
func (p *Posterior) LogProb(_ context.Context, x int, ys []int, logp []float64) error {
	if err := p.checkInput(x); err != nil {
		return err
	}
	logPred := logs(p.Predictive(x))
	for i, y := range ys {
		if y < 0 || y >= len(logPred) {
			return fmt.Errorf("categorical: label %d outside [0, %d)", y, len(logPred))
		}
		logp[i] = logPred[y]
	}
	return nil
}

func logs(p []float64) []float64 {
	out := make([]float64, len(p))
	for i, v := range p {
		out[i] = math.Log(v)
	}
	return out
}

// SamplePair implements hallucination.Conditioned: one seed from r, then
// the input from the first uniform of its stream and the label from the
// second.
func (p *Posterior) SamplePair(_ context.Context, r *rand.Rand) (Example, error) {
	s := NewStream(DrawSeed(r))
	x := Pick(Uniform(p.model.Groups), s.Float64())
	y := Pick(p.Predictive(x), s.Float64())
	return Example{X: x, Y: y}, nil
}

// Extend implements hallucination.Conditioned.
func (p *Posterior) Extend(_ context.Context, e Example) (hallucination.Conditioned[int, int], error) {
	return p.Update(e)
}

// Update is Extend with a concrete result type.
func (p *Posterior) Update(e Example) (*Posterior, error) {
	if err := p.model.check(e); err != nil {
		return nil, fmt.Errorf("categorical: %w", err)
	}
	q := &Posterior{model: p.model, counts: slices.Clone(p.counts), totals: slices.Clone(p.totals), n: p.n + 1}
	q.counts[e.X*len(p.model.Alpha)+e.Y]++
	q.totals[e.X]++
	return q, nil
}

// Imagine implements hallucination.Imaginer: n rounds of SamplePair and
// Extend with the same draws, counting into one private copy of the
// counts.
func (p *Posterior) Imagine(_ context.Context, r *rand.Rand, n int) (hallucination.Conditioned[int, int], error) {
	q := &Posterior{model: p.model, counts: slices.Clone(p.counts), totals: slices.Clone(p.totals), n: p.n + n}
	uniform := Uniform(p.model.Groups)
	pred := make([]float64, len(p.model.Alpha))
	for range n {
		s := NewStream(DrawSeed(r))
		x := Pick(uniform, s.Float64())
		q.predictive(x, pred)
		y := Pick(pred, s.Float64())
		q.counts[x*len(pred)+y]++
		q.totals[x]++
	}
	return q, nil
}

// TrueRate returns the true hallucination rate of Definition 3 at x for
// the mechanism t: the predictive mass of the labels outside the
// (1-ε)-likely set of θ_x (hallucination.OutsideLikelySet).
func (p *Posterior) TrueRate(t *Truth, x int, eps float64) float64 {
	out := hallucination.OutsideLikelySet(t.Theta[x], eps)
	pred := p.Predictive(x)
	h := 0.0
	for y, o := range out {
		if o {
			h += pred[y]
		}
	}
	return h
}

// PHR returns the posterior hallucination rate of Definition 4 at x,
// Σ_y p(y | x, D) P(y outside the likely set of θ | D) with
// θ ~ Dir(α + c_x). With two labels the probability is exact: label y is
// outside exactly when θ_y < min(ε, 1/2) (the less likely label, when its
// probability is below ε; boundaries have probability zero), a Beta
// distribution function. With more labels it is averaged over draws
// samples of θ from r (the sum over labels stays exact), with Monte Carlo
// standard error at most 0.5/sqrt(draws).
func (p *Posterior) PHR(x int, eps float64, r *rand.Rand, draws int) float64 {
	pred := p.Predictive(x)
	conc := p.Concentration(x)
	if len(conc) == 2 {
		total := conc[0] + conc[1]
		h := 0.0
		for y := range 2 {
			h += pred[y] * mathext.RegIncBeta(conc[y], total-conc[y], min(eps, 0.5))
		}
		return h
	}
	h := 0.0
	th := make([]float64, len(conc))
	scratch := make([]float64, len(conc))
	for range draws {
		dirichletTo(th, r, conc)
		t := hallucination.LikelyThreshold(th, eps, scratch)
		for y, v := range th {
			if v < t {
				h += pred[y]
			}
		}
	}
	return h / float64(draws)
}

// Entropy returns the total, aleatoric and epistemic uncertainty of
// Appendix D at x in nats: the entropy of the predictive, the posterior
// expected entropy of θ_x, E[H(θ)] = ψ(A+1) - Σ_y (a_y/A) ψ(a_y+1) for
// θ ~ Dir(a), A = Σa, and their difference.
func (p *Posterior) Entropy(x int) (total, aleatoric, epistemic float64) {
	for _, q := range p.Predictive(x) {
		if q > 0 {
			total -= q * math.Log(q)
		}
	}
	conc := p.Concentration(x)
	a0 := 0.0
	for _, a := range conc {
		a0 += a
	}
	aleatoric = mathext.Digamma(a0 + 1)
	for _, a := range conc {
		aleatoric -= a / a0 * mathext.Digamma(a+1)
	}
	return total, aleatoric, total - aleatoric
}

// Truth is a mechanism: one label distribution per input group. It
// implements hallucination.Predictive, as the reference of the true
// hallucination rate.
type Truth struct {
	Theta [][]float64
}

func (t *Truth) check(x int) error {
	if x < 0 || x >= len(t.Theta) {
		return fmt.Errorf("categorical: input %d outside [0, %d)", x, len(t.Theta))
	}
	return nil
}

// Sample implements hallucination.Predictive.
func (t *Truth) Sample(_ context.Context, r *rand.Rand, x int, ys []int, logp []float64) error {
	if err := t.check(x); err != nil {
		return err
	}
	for i := range ys {
		s := NewStream(DrawSeed(r))
		ys[i] = Pick(t.Theta[x], s.Float64())
		logp[i] = math.Log(t.Theta[x][ys[i]])
	}
	return nil
}

// LogProb implements hallucination.Predictive.
func (t *Truth) LogProb(_ context.Context, x int, ys []int, logp []float64) error {
	if err := t.check(x); err != nil {
		return err
	}
	for i, y := range ys {
		if y < 0 || y >= len(t.Theta[x]) {
			return errors.New("categorical: label out of range")
		}
		logp[i] = math.Log(t.Theta[x][y])
	}
	return nil
}

// Data draws n examples from the mechanism: x uniform, y ~ θ_x.
func (t *Truth) Data(r *rand.Rand, n int) []Example {
	d := make([]Example, n)
	for i := range d {
		x := r.IntN(len(t.Theta))
		d[i] = Example{X: x, Y: Pick(t.Theta[x], r.Float64())}
	}
	return d
}

// DrawSeed takes the seed of one random draw from r: a non-negative
// 63-bit integer, so that it fits the signed 64-bit "seed" field of
// OpenAI-compatible servers.
func DrawSeed(r *rand.Rand) uint64 { return r.Uint64() >> 1 }

// streamTag is the second PCG word of every draw's stream.
const streamTag = 0xda3e39cb94b95bdb

// Stream is the generator of one draw: PCG seeded with (seed, a fixed
// tag). It is a value, so a draw allocates nothing.
type Stream struct{ pcg rand.PCG }

// NewStream returns the generator of one draw with the given seed.
func NewStream(seed uint64) Stream {
	var s Stream
	s.pcg.Seed(seed, streamTag)
	return s
}

// Float64 returns the next uniform in [0, 1), built from the top 53 bits
// of the next PCG output.
func (s *Stream) Float64() float64 { return float64(s.pcg.Uint64()>>11) / (1 << 53) }

// Pick returns the outcome of the discrete distribution p selected by the
// uniform u in [0, 1): the first y with p_0 + ... + p_y > u (inverse
// distribution function). Rounding that leaves the total below u picks
// the last outcome with positive probability.
func Pick(p []float64, u float64) int {
	c := 0.0
	last := 0
	for y, q := range p {
		if q <= 0 {
			continue
		}
		c += q
		last = y
		if u < c {
			return y
		}
	}
	return last
}

// Uniform returns the uniform distribution over n outcomes.
func Uniform(n int) []float64 {
	p := make([]float64, n)
	for i := range p {
		p[i] = 1 / float64(n)
	}
	return p
}
