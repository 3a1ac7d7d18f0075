package kscore

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/kernel"
)

// Decomposition holds the terms of Theorem 3.2 of Gruber & Buettner
// (ICML 2024) estimated from samples of n models (and, optionally,
// observations of the target):
//
//	expected kernel score = noise + bias + variance
//
// Fields that need targets are NaN without them; Variance and Bias are NaN
// for a single model.
type Decomposition struct {
	Models  int // n
	Samples int // m, samples per model (the smallest, if they differ)

	KernelEntropy float64 // mean over models of the predictive kernel entropy
	Variance      float64 // distributional variance, Eq. 9
	// EnsembleGain is the predicted score reduction of averaging all n
	// models, (n-1)/n Var, assuming independently trained members.
	EnsembleGain float64

	Noise       float64 // -||Q||²
	Bias        float64 // ||E[P] - Q||², unbiased
	KernelScore float64 // mean over models of the kernel score against the targets
	MMD2        float64 // mean over models of the unbiased MMD² to the targets
	// IdentityGap is KernelScore - Noise - Bias - Variance, zero up to
	// rounding for these estimators; a large value means a bug.
	IdentityGap float64
}

// Decompose estimates the decomposition from models[i], the m samples
// (rows) of model i, and targets y (nil for none).
func Decompose(k kernel.Kernel, models []*mat.Dense, y *mat.Dense) (Decomposition, error) {
	return decomposeCtx(context.Background(), k, models, y)
}

func decomposeCtx(ctx context.Context, k kernel.Kernel, models []*mat.Dense, y *mat.Dense) (Decomposition, error) {
	sets := models
	if y != nil {
		sets = append(append([]*mat.Dense(nil), models...), y)
	}
	s, err := newSumsCtx(ctx, k, sets)
	if err != nil {
		return nanDecomposition(), err
	}
	return decompose(s, len(models), y != nil)
}

func nanDecomposition() Decomposition {
	nan := math.NaN()
	return Decomposition{KernelEntropy: nan, Variance: nan, EnsembleGain: nan, Noise: nan, Bias: nan, KernelScore: nan, MMD2: nan, IdentityGap: nan}
}

// decompose reads the terms off sums of n model sets followed, when
// targets is set, by one target set.
func decompose(s *sums, n int, targets bool) (Decomposition, error) {
	d := nanDecomposition()
	d.Models = n
	if n == 0 {
		return d, errors.New("kscore: no models")
	}
	d.Samples = s.m[0]
	var ent float64
	for i := 0; i < n; i++ {
		if err := needRows(s, i, fmt.Sprintf("model %d", i)); err != nil {
			return d, err
		}
		d.Samples = min(d.Samples, s.m[i])
		ent -= s.within(i)
	}
	d.KernelEntropy = ent / float64(n)
	if n >= 2 {
		d.Variance, _ = variance(s, 0, n)
		d.EnsembleGain = EnsembleGain(d.Variance, 0, n)
	}
	if !targets {
		return d, nil
	}
	t := n // index of the target set
	if err := needRows(s, t, "targets"); err != nil {
		return d, err
	}
	d.Noise = -s.within(t)
	var cross float64
	for i := 0; i < n; i++ {
		cross += s.between(i, t)
	}
	cross /= float64(n)
	d.KernelScore = -d.KernelEntropy - 2*cross
	d.MMD2 = d.KernelScore - d.Noise
	if n >= 2 {
		d.Bias = offDiagMean(s, 0, 0, n) - 2*cross + s.within(t)
		d.IdentityGap = d.KernelScore - d.Noise - d.Bias - d.Variance
	}
	return d, nil
}

// DecomposeConditional estimates the decomposition for conditional
// predictions: models[i][c] holds model i's samples for input instance c,
// targets[c] the observations for instance c (targets may be nil). Terms
// are estimated per instance and averaged over instances; the per-instance
// terms are returned too. A cancelled ctx stops the work between panels
// of kernel sums and returns ctx's error.
func DecomposeConditional(ctx context.Context, k kernel.Kernel, models [][]*mat.Dense, targets []*mat.Dense) (Decomposition, []Decomposition, error) {
	if len(models) == 0 {
		return nanDecomposition(), nil, errors.New("kscore: no models")
	}
	instances := len(models[0])
	for i, m := range models {
		if len(m) != instances {
			return nanDecomposition(), nil, fmt.Errorf("kscore: model %d has %d instances, model 0 has %d", i, len(m), instances)
		}
	}
	if instances == 0 {
		return nanDecomposition(), nil, errors.New("kscore: no instances")
	}
	if targets != nil && len(targets) != instances {
		return nanDecomposition(), nil, fmt.Errorf("kscore: %d target sets for %d instances", len(targets), instances)
	}
	per := make([]Decomposition, instances)
	sets := make([]*mat.Dense, len(models))
	// Many instances: progress counts instances, not the sums of each.
	report, inner := progressOf(ctx), ctx
	if instances > 1 {
		inner = withoutProgress(ctx)
		report(0, instances)
	}
	for c := 0; c < instances; c++ {
		for i := range models {
			sets[i] = models[i][c]
		}
		var y *mat.Dense
		if targets != nil {
			y = targets[c]
		}
		d, err := decomposeCtx(inner, k, sets, y)
		if ctx.Err() != nil {
			return nanDecomposition(), nil, ctx.Err()
		}
		if err != nil {
			return nanDecomposition(), nil, fmt.Errorf("instance %d: %w", c, err)
		}
		per[c] = d
		if instances > 1 {
			report(c+1, instances)
		}
	}
	return Mean(per), per, nil
}

// Mean averages decompositions field by field (the conditional estimate
// from per-instance estimates).
func Mean(ds []Decomposition) Decomposition {
	out := nanDecomposition()
	if len(ds) == 0 {
		return out
	}
	out.Models, out.Samples = ds[0].Models, ds[0].Samples
	fields := func(d *Decomposition) []*float64 {
		return []*float64{&d.KernelEntropy, &d.Variance, &d.EnsembleGain, &d.Noise, &d.Bias, &d.KernelScore, &d.MMD2, &d.IdentityGap}
	}
	acc := make([]float64, len(fields(&out)))
	for i := range ds {
		out.Samples = min(out.Samples, ds[i].Samples)
		for f, p := range fields(&ds[i]) {
			acc[f] += *p
		}
	}
	for f, p := range fields(&out) {
		*p = acc[f] / float64(len(ds))
	}
	return out
}

// CovarianceMatrix estimates, for E collections of n paired models (e.g.
// the n members of an ensemble saved at E training epochs: epochs[e][i] is
// member i's samples at epoch e), the E×E matrix of distributional
// covariances (Eq. 10, members paired by index; the diagonal is the
// covariance estimator of a collection with itself) and the E variances
// (Eq. 9). All kernel sums come from one pass over the samples; a
// cancelled ctx stops it between panels and returns ctx's error.
func CovarianceMatrix(ctx context.Context, k kernel.Kernel, epochs [][]*mat.Dense) (cov *mat.SymDense, variances []float64, err error) {
	E := len(epochs)
	if E == 0 {
		return nil, nil, errors.New("kscore: no collections")
	}
	n := len(epochs[0])
	if n < 2 {
		return nil, nil, errors.New("kscore: covariance needs at least 2 members per collection")
	}
	var sets []*mat.Dense
	for e, ms := range epochs {
		if len(ms) != n {
			return nil, nil, fmt.Errorf("kscore: collection %d has %d members, collection 0 has %d", e, len(ms), n)
		}
		sets = append(sets, ms...)
	}
	s, err := newSumsCtx(ctx, k, sets)
	if err != nil {
		return nil, nil, err
	}
	cov = mat.NewSymDense(E, nil)
	variances = make([]float64, E)
	for e := 0; e < E; e++ {
		if variances[e], err = variance(s, e*n, (e+1)*n); err != nil {
			return nil, nil, fmt.Errorf("collection %d: %w", e, err)
		}
		for f := e; f < E; f++ {
			cov.SetSym(e, f, covariance(s, e*n, f*n, n))
		}
	}
	return cov, variances, nil
}

// CorrelationMatrix normalises a covariance matrix as in Eq. 11; entries
// whose self-covariances are not positive are NaN.
func CorrelationMatrix(cov mat.Symmetric) *mat.SymDense {
	E := cov.SymmetricDim()
	c := mat.NewSymDense(E, nil)
	for e := 0; e < E; e++ {
		for f := e; f < E; f++ {
			c.SetSym(e, f, corr(cov.At(e, f), cov.At(e, e), cov.At(f, f)))
		}
	}
	return c
}
