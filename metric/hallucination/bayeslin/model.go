package bayeslin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/membudget"
	"github.com/genlens/genlens/metric/hallucination"
)

// Example is one (x, y) observation.
type Example = hallucination.Example[float64, float64]

// Model is Bayesian linear regression with known noise: w ~ N(0, S² I),
// x ~ U[Lo, Hi], y | x, w ~ N(w·φ(x), Noise²). It implements
// hallucination.CGM.
type Model struct {
	Features   Features
	Noise      float64 // σ > 0, the noise standard deviation
	PriorScale float64 // S > 0, the prior standard deviation of each weight
	Lo, Hi     float64 // input domain; both zero means [-2, 2]
}

func (m Model) resolved() (Model, error) {
	if m.Lo == 0 && m.Hi == 0 {
		m.Lo, m.Hi = -2, 2
	}
	switch {
	case m.Features == nil || m.Features.Dim() < 1:
		return m, errors.New("bayeslin: no features")
	case !(m.Noise > 0) || math.IsInf(m.Noise, 0):
		return m, fmt.Errorf("bayeslin: noise %v: want a positive standard deviation", m.Noise)
	case !(m.PriorScale > 0) || math.IsInf(m.PriorScale, 0):
		return m, fmt.Errorf("bayeslin: prior scale %v: want a positive standard deviation", m.PriorScale)
	case !(m.Lo < m.Hi) || math.IsInf(m.Lo, 0) || math.IsInf(m.Hi, 0):
		return m, fmt.Errorf("bayeslin: input domain [%v, %v] is empty or unbounded", m.Lo, m.Hi)
	}
	return m, nil
}

// Condition implements hallucination.CGM.
func (m Model) Condition(_ context.Context, d []Example) (hallucination.Conditioned[float64, float64], error) {
	return m.Posterior(d)
}

// Posterior returns the exact posterior given the context d.
func (m Model) Posterior(d []Example) (*Posterior, error) {
	m, err := m.resolved()
	if err != nil {
		return nil, err
	}
	dim := m.Features.Dim()
	// The covariance and the precision, d × d each.
	if err := membudget.Check("the posterior covariance of the features", 2, dim, dim); err != nil {
		return nil, err
	}
	p := &Posterior{model: m, mean: make([]float64, dim), cov: mat.NewSymDense(dim, nil), n: len(d)}
	s2 := m.PriorScale * m.PriorScale
	if len(d) == 0 {
		for i := range dim {
			p.cov.SetSym(i, i, s2)
		}
		return p, nil
	}
	// Precision Λ = I/S² + ΦᵀΦ/σ² from one SYRK on Φᵀ/σ (d x n), then
	// Σ = Λ⁻¹ through its Cholesky factor and m = Σ Φᵀy/σ².
	inv := 1 / m.Noise
	phiT := mat.NewDense(dim, len(d), nil)
	b := make([]float64, dim)
	phi := make([]float64, dim)
	for j, e := range d {
		if math.IsNaN(e.X) || math.IsInf(e.X, 0) || math.IsNaN(e.Y) || math.IsInf(e.Y, 0) {
			return nil, fmt.Errorf("bayeslin: context example %d is (%v, %v): want finite numbers", j+1, e.X, e.Y)
		}
		m.Features.Eval(e.X, phi)
		for i, v := range phi {
			phiT.Set(i, j, v*inv)
			b[i] += v * e.Y * inv * inv
		}
	}
	prec := linalg.Gram(phiT)
	for i := range dim {
		prec.SetSym(i, i, prec.At(i, i)+1/s2)
	}
	var chol mat.Cholesky
	if !chol.Factorize(prec) {
		return nil, errors.New("bayeslin: posterior precision is not positive definite (features overflow?)")
	}
	if err := chol.InverseTo(p.cov); err != nil {
		return nil, fmt.Errorf("bayeslin: inverting the posterior precision: %w", err)
	}
	mv := mat.NewVecDense(dim, p.mean)
	mv.MulVec(p.cov, mat.NewVecDense(dim, b))
	return p, nil
}

// SampleFunction draws a mechanism f, i.e. weights w ~ N(0, S² I), from
// the prior.
func (m Model) SampleFunction(r *rand.Rand) (*Function, error) {
	m, err := m.resolved()
	if err != nil {
		return nil, err
	}
	w := make([]float64, m.Features.Dim())
	for i := range w {
		w[i] = m.PriorScale * r.NormFloat64()
	}
	return &Function{model: m, W: w}, nil
}

// NewFunction returns the mechanism with weights w.
func (m Model) NewFunction(w []float64) (*Function, error) {
	m, err := m.resolved()
	if err != nil {
		return nil, err
	}
	if len(w) != m.Features.Dim() {
		return nil, fmt.Errorf("bayeslin: %d weights for %d features", len(w), m.Features.Dim())
	}
	return &Function{model: m, W: append([]float64(nil), w...)}, nil
}

// Posterior is the model conditioned on a context: w ~ N(m, Σ). It
// implements hallucination.Conditioned and is immutable.
type Posterior struct {
	model Model
	mean  []float64
	cov   *mat.SymDense
	n     int
}

// Len returns the number of examples conditioned on.
func (p *Posterior) Len() int { return p.n }

// Noise returns σ.
func (p *Posterior) Noise() float64 { return p.model.Noise }

// Weights returns copies of the posterior mean m and covariance Σ of w.
func (p *Posterior) Weights() ([]float64, *mat.SymDense) {
	return append([]float64(nil), p.mean...), mat.NewSymDense(len(p.mean), append([]float64(nil), p.cov.RawSymmetric().Data...))
}

// Predict returns the posterior mean and variance of f(x) = w·φ(x). The
// posterior predictive of y is N(mean, variance + σ²).
func (p *Posterior) Predict(x float64) (mean, variance float64) {
	phi := make([]float64, len(p.mean))
	u := make([]float64, len(p.mean))
	return p.predict(x, phi, u)
}

// predict evaluates φ(x) into phi and Σφ(x) into u.
func (p *Posterior) predict(x float64, phi, u []float64) (mean, variance float64) {
	p.model.Features.Eval(x, phi)
	d := len(phi)
	vphi := blas64.Vector{N: d, Inc: 1, Data: phi}
	vu := blas64.Vector{N: d, Inc: 1, Data: u}
	blas64.Symv(1, p.cov.RawSymmetric(), vphi, 0, vu)
	mean = blas64.Dot(vphi, blas64.Vector{N: d, Inc: 1, Data: p.mean})
	// Rounding can leave a vanishing variance a hair below zero.
	variance = max(0, blas64.Dot(vphi, vu))
	return mean, variance
}

// Sample implements hallucination.Predictive: y ~ N(μ(x), σ² + v(x)).
func (p *Posterior) Sample(_ context.Context, r *rand.Rand, x float64, ys, logp []float64) error {
	mu, v := p.Predict(x)
	sampleNormal(r, mu, math.Sqrt(v+p.model.Noise*p.model.Noise), ys, logp)
	return nil
}

// LogProb implements hallucination.Predictive.
func (p *Posterior) LogProb(_ context.Context, x float64, ys, logp []float64) error {
	mu, v := p.Predict(x)
	logNormal(mu, math.Sqrt(v+p.model.Noise*p.model.Noise), ys, logp)
	return nil
}

// SamplePair implements hallucination.Conditioned: x ~ U[lo, hi], then y
// from the posterior predictive at x.
func (p *Posterior) SamplePair(_ context.Context, r *rand.Rand) (Example, error) {
	x := p.model.Lo + (p.model.Hi-p.model.Lo)*r.Float64()
	mu, v := p.Predict(x)
	return Example{X: x, Y: mu + math.Sqrt(v+p.model.Noise*p.model.Noise)*r.NormFloat64()}, nil
}

// Extend implements hallucination.Conditioned with the rank-one update
// c = σ² + φᵀΣφ, m' = m + Σφ (y - φᵀm)/c, Σ' = Σ - (Σφ)(Σφ)ᵀ/c.
func (p *Posterior) Extend(_ context.Context, e Example) (hallucination.Conditioned[float64, float64], error) {
	return p.Update(e)
}

// Update is Extend with a concrete result type.
func (p *Posterior) Update(e Example) (*Posterior, error) {
	if math.IsNaN(e.X) || math.IsInf(e.X, 0) || math.IsNaN(e.Y) || math.IsInf(e.Y, 0) {
		return nil, fmt.Errorf("bayeslin: example (%v, %v): want finite numbers", e.X, e.Y)
	}
	d := len(p.mean)
	phi := make([]float64, d)
	u := make([]float64, d)
	mu, v := p.predict(e.X, phi, u)
	c := p.model.Noise*p.model.Noise + v
	q := &Posterior{model: p.model, mean: make([]float64, d), n: p.n + 1}
	gain := (e.Y - mu) / c
	for i := range q.mean {
		q.mean[i] = p.mean[i] + u[i]*gain
	}
	raw := p.cov.RawSymmetric()
	data := make([]float64, len(raw.Data))
	copy(data, raw.Data)
	cov := blas64.Symmetric{Uplo: blas.Upper, N: d, Stride: raw.Stride, Data: data}
	blas64.Syr(-1/c, blas64.Vector{N: d, Inc: 1, Data: u}, cov)
	q.cov = mat.NewSymDense(d, nil)
	q.cov.SetRawSymmetric(cov)
	return q, nil
}

// Imagine implements hallucination.Imaginer: it draws n pairs as n
// rounds of SamplePair and Extend would, but updates one private copy of
// (m, Σ) in place and reuses Σφ(x) of each draw for its update, so an
// imagined pair costs one SYMV and one SYR and no allocation.
func (p *Posterior) Imagine(_ context.Context, r *rand.Rand, n int) (hallucination.Conditioned[float64, float64], error) {
	d := len(p.mean)
	raw := p.cov.RawSymmetric()
	q := &Posterior{model: p.model, mean: append([]float64(nil), p.mean...), n: p.n + n}
	cov := blas64.Symmetric{Uplo: blas.Upper, N: d, Stride: raw.Stride, Data: append([]float64(nil), raw.Data...)}
	q.cov = mat.NewSymDense(d, nil)
	q.cov.SetRawSymmetric(cov)
	phi := make([]float64, d)
	u := make([]float64, d)
	s2 := p.model.Noise * p.model.Noise
	vu := blas64.Vector{N: d, Inc: 1, Data: u}
	for range n {
		x := p.model.Lo + (p.model.Hi-p.model.Lo)*r.Float64()
		mu, v := q.predict(x, phi, u)
		c := s2 + v
		y := mu + math.Sqrt(c)*r.NormFloat64()
		gain := (y - mu) / c
		for i := range q.mean {
			q.mean[i] += u[i] * gain
		}
		blas64.Syr(-1/c, vu, cov)
	}
	return q, nil
}

// z returns Φ⁻¹(1 - ε/2): the (1-ε)-likely set of N(f(x), σ²) is
// f(x) ± zσ.
func z(eps float64) float64 { return -math.Sqrt2 * math.Erfinv(eps-1) }

// ExactPHR returns the posterior hallucination rate of Definition 4 at x
// in closed form, 2 Φ(-z σ / sqrt(σ² + 2 v(x))) (see the package
// documentation).
func (p *Posterior) ExactPHR(x, eps float64) float64 {
	_, v := p.Predict(x)
	s := p.model.Noise
	return math.Erfc(z(eps) * s / math.Sqrt(s*s+2*v) / math.Sqrt2)
}

// TrueRate returns the true hallucination rate of Definition 3 for the
// mechanism f at x: the probability that y ~ p(y | x, D) falls outside
// f(x) ± zσ.
func (p *Posterior) TrueRate(f *Function, x, eps float64) float64 {
	mu, v := p.Predict(x)
	s := math.Sqrt(v + p.model.Noise*p.model.Noise)
	a := z(eps) * p.model.Noise
	fx := f.Mean(x)
	return normCDF((fx-a-mu)/s) + normCDF((mu-fx-a)/s)
}

// Entropy returns the total, aleatoric and epistemic uncertainty of
// Appendix D at x in nats: H(N(μ, σ² + v)), H(N(f(x), σ²)) (the same for
// every f) and their difference, the mutual information ½ log(1 + v/σ²).
func (p *Posterior) Entropy(x float64) (total, aleatoric, epistemic float64) {
	_, v := p.Predict(x)
	s2 := p.model.Noise * p.model.Noise
	aleatoric = 0.5 * math.Log(2*math.Pi*math.E*s2)
	epistemic = 0.5 * math.Log1p(v/s2)
	return aleatoric + epistemic, aleatoric, epistemic
}

// Function is a mechanism f: y | x ~ N(w·φ(x), σ²). It implements
// hallucination.Predictive, as the reference of the true hallucination
// rate.
type Function struct {
	model Model
	W     []float64
}

// Mean returns f(x) = w·φ(x).
func (f *Function) Mean(x float64) float64 {
	phi := make([]float64, len(f.W))
	f.model.Features.Eval(x, phi)
	s := 0.0
	for i, v := range phi {
		s += v * f.W[i]
	}
	return s
}

// Sample implements hallucination.Predictive.
func (f *Function) Sample(_ context.Context, r *rand.Rand, x float64, ys, logp []float64) error {
	sampleNormal(r, f.Mean(x), f.model.Noise, ys, logp)
	return nil
}

// LogProb implements hallucination.Predictive.
func (f *Function) LogProb(_ context.Context, x float64, ys, logp []float64) error {
	logNormal(f.Mean(x), f.model.Noise, ys, logp)
	return nil
}

// Data draws n examples from the mechanism: x ~ U[lo, hi], y ~ N(f(x), σ²).
func (f *Function) Data(r *rand.Rand, n int) []Example {
	d := make([]Example, n)
	for i := range d {
		x := f.model.Lo + (f.model.Hi-f.model.Lo)*r.Float64()
		d[i] = Example{X: x, Y: f.Mean(x) + f.model.Noise*r.NormFloat64()}
	}
	return d
}

// logNormConst is log sqrt(2π).
var logNormConst = 0.5 * math.Log(2*math.Pi)

func sampleNormal(r *rand.Rand, mu, s float64, ys, logp []float64) {
	ls := math.Log(s)
	for i := range ys {
		e := r.NormFloat64()
		ys[i] = mu + s*e
		logp[i] = -logNormConst - ls - 0.5*e*e
	}
}

func logNormal(mu, s float64, ys, logp []float64) {
	ls := math.Log(s)
	for i, y := range ys {
		e := (y - mu) / s
		logp[i] = -logNormConst - ls - 0.5*e*e
	}
}

func normCDF(t float64) float64 { return 0.5 * math.Erfc(-t/math.Sqrt2) }
