package hallucination

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/par"
)

// Options configures Estimate. Zero fields take the paper's defaults for
// synthetic tasks (SyntheticDefaults); LLMDefaults holds those it used for
// natural-language tasks.
type Options struct {
	// Eps is the tolerance ε in (0, 1): a response outside the (1-ε)-likely
	// set is a hallucination.
	Eps float64
	// M is the number of imagined datasets (Monte Carlo samples of the
	// future context).
	M int
	// Extra is N-n, the number of imagined examples appended to the
	// context in each imagined dataset.
	Extra int
	// K is the number of responses drawn for each THR estimate, both for
	// its quantile and for its hallucination count.
	K int
	// Concurrency bounds how many imagined datasets are processed at once;
	// 0 means runtime.GOMAXPROCS(0).
	Concurrency int
	// Seed fixes all randomness. Results do not depend on Concurrency.
	Seed uint64
}

var (
	// SyntheticDefaults are the paper's settings for synthetic regression
	// (Section 3.1): ε = 0.05, N-n = 100, M = 40, K = 2000.
	SyntheticDefaults = Options{Eps: 0.05, M: 40, Extra: 100, K: 2000}
	// LLMDefaults are the paper's settings for language tasks (Section
	// 3.2): ε = 0.05, N-n = 5, M = 10, K = 50.
	LLMDefaults = Options{Eps: 0.05, M: 10, Extra: 5, K: 50}
)

// withDefaults fills zero fields and validates the rest.
func (o Options) withDefaults() (Options, error) {
	d := SyntheticDefaults
	if o.Eps == 0 {
		o.Eps = d.Eps
	}
	if o.M == 0 {
		o.M = d.M
	}
	if o.Extra == 0 {
		o.Extra = d.Extra
	}
	if o.K == 0 {
		o.K = d.K
	}
	if o.Concurrency == 0 {
		o.Concurrency = runtime.GOMAXPROCS(0)
	}
	switch {
	case !(o.Eps > 0 && o.Eps < 1):
		return o, fmt.Errorf("hallucination: eps %v: want a value in (0, 1)", o.Eps)
	case o.M < 1 || o.Extra < 1 || o.K < 1:
		return o, fmt.Errorf("hallucination: M=%d, Extra=%d, K=%d: want positive values", o.M, o.Extra, o.K)
	case o.Concurrency < 1:
		return o, fmt.Errorf("hallucination: concurrency %d: want a positive value", o.Concurrency)
	}
	return o, nil
}

// Result holds the estimates for one query.
type Result[Y any] struct {
	// PHR is the posterior hallucination rate (Algorithm 1): the mean of
	// THR.
	PHR float64
	// StdErr is the Monte Carlo standard error of PHR across the imagined
	// datasets, sd(THR)/sqrt(M) (NaN for M = 1).
	StdErr float64
	// THR holds one THR estimate per imagined dataset (Algorithm 2).
	THR []float64
	// Total is the total predictive uncertainty H(Y | x, D_n), estimated
	// as -mean log p(y | x, D_n) over all M*K responses drawn from the
	// model given the context (Eq. 35). In nats; a differential entropy
	// for continuous responses.
	Total float64
	// Aleatoric is the expected entropy of the likelihood E[H(Y | x, f)]
	// (Algorithm 3): the mean over imagined datasets D of
	// -mean log p(y | x, D), y ~ p(y | x, D).
	Aleatoric float64
	// Epistemic is Total - Aleatoric, the mutual information
	// I(Y; F | x, D_n) (Eq. 37).
	Epistemic float64
	// Responses are the M*K responses drawn from p(y | x, D_n), for
	// ErrorRate.
	Responses []Y
}

// Estimate computes the posterior hallucination rate of model m answering
// query x given context d (Algorithm 1), with the total, aleatoric and
// epistemic uncertainty of Appendix D from the same draws.
//
// For each of opt.M imagined datasets it extends d by opt.Extra pairs drawn
// one at a time from the model, p(x_j, y_j | D), and runs Algorithm 2 with
// the extended context D as reference (see Rate). Algorithm 3 averages the
// entropy of p(y | x, D) over the same imagined datasets, estimated from the
// responses Algorithm 2 draws for its quantile, so the uncertainties cost no
// extra model calls.
func Estimate[X, Y any](ctx context.Context, m CGM[X, Y], d []Example[X, Y], x X, opt Options) (Result[Y], error) {
	var res Result[Y]
	opt, err := opt.withDefaults()
	if err != nil {
		return res, err
	}
	// BLAS on one thread whatever opt.Concurrency: par.For takes this
	// lease only when it runs more than one worker, and OpenBLAS's
	// threaded kernels round differently from its single-threaded ones,
	// so without it Concurrency 1 would give other last bits than 3. The
	// models' matrices are small (d ≤ a few hundred), where one thread is
	// also the faster.
	defer linalg.SingleThreaded()()
	base, err := m.Condition(ctx, d)
	if err != nil {
		return res, err
	}
	res.THR = make([]float64, opt.M)
	res.Responses = make([]Y, opt.M*opt.K)
	aleatoric := make([]float64, opt.M)
	total := make([]float64, opt.M)
	err = par.For(ctx, opt.M, opt.Concurrency, func(ctx context.Context, i int) error {
		// Both words of the generator's state from the dataset's index,
		// so that no two datasets share a half of it.
		r := rand.New(rand.NewPCG(par.Mix(opt.Seed, uint64(i)), par.Mix(opt.Seed, uint64(i), 1)))
		cur, err := Imagine(ctx, base, r, opt.Extra)
		if err != nil {
			return fmt.Errorf("hallucination: imagined dataset %d: %w", i+1, err)
		}
		ys := res.Responses[i*opt.K : (i+1)*opt.K]
		rr, err := rate(ctx, r, base, cur, x, opt.K, opt.Eps, ys)
		if err != nil {
			return fmt.Errorf("hallucination: imagined dataset %d: %w", i+1, err)
		}
		res.THR[i] = rr.rate
		aleatoric[i] = -mean(rr.refLogp)
		total[i] = -mean(rr.modelLogp)
		return nil
	})
	if err != nil {
		return Result[Y]{}, err
	}
	res.PHR = mean(res.THR)
	res.StdErr = math.Sqrt(variance(res.THR) / float64(opt.M))
	res.Total = mean(total) // every dataset drew K responses: the mean of means is the mean
	res.Aleatoric = mean(aleatoric)
	res.Epistemic = res.Total - res.Aleatoric
	return res, nil
}

// Rate estimates the probability that a response drawn from model is a
// hallucination with respect to ref (Algorithm 2): it draws k responses
// y ~ ref and takes Q̂, the ε-quantile of their log ref(y | x) (see the
// package documentation), then draws k responses y ~ model and returns the
// fraction with log ref(y | x) < Q̂.
//
// With model = p(· | x, D_n) and ref = p(· | x, D) for an imagined extension
// D of D_n this is the THR estimate of Algorithm 2; with ref = p(· | x, f)
// for the true mechanism f it estimates the true hallucination rate
// (Definition 3); with ref = p(· | x, D_n ∪ D_eval) it is the model
// hallucination rate (Section 3.2).
func Rate[X, Y any](ctx context.Context, r *rand.Rand, model, ref Predictive[X, Y], x X, k int, eps float64) (float64, error) {
	if k < 1 {
		return 0, fmt.Errorf("hallucination: k = %d: want a positive number of responses", k)
	}
	if !(eps > 0 && eps < 1) {
		return 0, fmt.Errorf("hallucination: eps %v: want a value in (0, 1)", eps)
	}
	rr, err := rate(ctx, r, model, ref, x, k, eps, make([]Y, k))
	if err != nil {
		return 0, fmt.Errorf("hallucination: %w", err)
	}
	return rr.rate, nil
}

type rateResult struct {
	rate      float64
	refLogp   []float64 // log ref(y) of the k responses drawn from ref (reordered)
	modelLogp []float64 // log model(y) of the k responses drawn from model
}

// rate is Algorithm 2; ys receives the k responses drawn from model.
func rate[X, Y any](ctx context.Context, r *rand.Rand, model, ref Predictive[X, Y], x X, k int, eps float64, ys []Y) (rateResult, error) {
	refYs := make([]Y, k)
	refLogp := make([]float64, k)
	if err := ref.Sample(ctx, r, x, refYs, refLogp); err != nil {
		return rateResult{}, err
	}
	if err := checkLogp(refLogp, "reference"); err != nil {
		return rateResult{}, err
	}
	modelLogp := make([]float64, k)
	if err := model.Sample(ctx, r, x, ys, modelLogp); err != nil {
		return rateResult{}, err
	}
	if err := checkLogp(modelLogp, "model"); err != nil {
		return rateResult{}, err
	}
	scored := make([]float64, k)
	if err := ref.LogProb(ctx, x, ys, scored); err != nil {
		return rateResult{}, err
	}
	if err := checkLogp(scored, "reference"); err != nil {
		return rateResult{}, err
	}
	// The mean of refLogp is order-free, so select in place.
	q := kthSmallest(refLogp, QuantileRank(k, eps))
	return rateResult{
		rate:      float64(countBelow(scored, q)) / float64(k),
		refLogp:   refLogp,
		modelLogp: modelLogp,
	}, nil
}

// checkLogp rejects NaN and +Inf. Positive values are fine: they are log
// densities of continuous responses.
func checkLogp(logp []float64, who string) error {
	for i, v := range logp {
		if math.IsNaN(v) || math.IsInf(v, 1) {
			return fmt.Errorf("%s log-probability of response %d is %v", who, i+1, v)
		}
	}
	return nil
}

// MHR estimates the model hallucination rate of Section 3.2: Rate with the
// model given d as the model and the model given d followed by eval as the
// reference, standing in for the unknown mechanism.
func MHR[X, Y any](ctx context.Context, r *rand.Rand, m CGM[X, Y], d, eval []Example[X, Y], x X, k int, eps float64) (float64, error) {
	model, err := m.Condition(ctx, d)
	if err != nil {
		return 0, err
	}
	both := make([]Example[X, Y], 0, len(d)+len(eval))
	both = append(append(both, d...), eval...)
	ref, err := m.Condition(ctx, both)
	if err != nil {
		return 0, err
	}
	return Rate(ctx, r, model, ref, x, k, eps)
}

// ErrorRate is the empirical error rate of Eq. 9: the fraction of responses
// different from the true response. It returns NaN for no responses.
func ErrorRate[Y comparable](responses []Y, truth Y) float64 {
	if len(responses) == 0 {
		return math.NaN()
	}
	wrong := 0
	for _, y := range responses {
		if y != truth {
			wrong++
		}
	}
	return float64(wrong) / float64(len(responses))
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// variance is the sample variance (n-1 denominator).
func variance(x []float64) float64 {
	if len(x) < 2 {
		return math.NaN()
	}
	m := mean(x)
	s := 0.0
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return s / float64(len(x)-1)
}
