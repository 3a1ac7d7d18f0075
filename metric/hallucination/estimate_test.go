package hallucination_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genlens/genlens/metric/hallucination"
	"github.com/genlens/genlens/metric/hallucination/bayeslin"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

// With the model equal to the reference and continuous responses, the
// fraction of the model's draws below the quantile Q̂ = k-th smallest of
// K reference draws has expectation E[U_(k)] = k/(K+1), k = ⌈εK⌉. This
// pins the convention: k+1 or "<=" or a linear interpolation would move
// the mean (k = 5: 0.0495; k = 6: 0.0594).
func TestRateExpectationContinuous(t *testing.T) {
	ctx := context.Background()
	m := bayeslin.Model{Features: bayeslin.Poly{Degree: 1}, Noise: 0.3, PriorScale: 1}
	f, err := m.NewFunction([]float64{0.5, -1})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	const k, reps, eps = 100, 4000, 0.05
	sum, sum2 := 0.0, 0.0
	for range reps {
		h, err := hallucination.Rate(ctx, r, f, f, 0.7, k, eps)
		if err != nil {
			t.Fatal(err)
		}
		sum += h
		sum2 += h * h
	}
	mean := sum / reps
	se := math.Sqrt((sum2/reps - mean*mean) / reps)
	want := 5.0 / 101
	if math.Abs(mean-want) > 4*se {
		t.Errorf("mean rate %.5f ± %.5f, want k/(K+1) = %.5f", mean, se, want)
	}
	if se > 0.002 {
		t.Errorf("standard error %.4f too large to tell k=5 from k=6", se)
	}
}

// Discrete responses: a label the reference gives 10% is never a
// hallucination at ε = 0.05, and always one at ε = 0.2, whatever the
// sample; the rate is then the model's probability of that label.
func TestRateDiscreteExact(t *testing.T) {
	ctx := context.Background()
	ref := &categorical.Truth{Theta: [][]float64{{0.9, 0.1}}}
	model := &categorical.Truth{Theta: [][]float64{{0.6, 0.4}}}
	r := rand.New(rand.NewPCG(3, 4))
	if h, err := hallucination.Rate(ctx, r, model, ref, 0, 2000, 0.05); err != nil || h != 0 {
		t.Errorf("eps=0.05: rate %v, %v; want exactly 0", h, err)
	}
	const k = 20000
	h, err := hallucination.Rate(ctx, r, model, ref, 0, k, 0.2)
	if err != nil {
		t.Fatal(err)
	}
	if se := math.Sqrt(0.4 * 0.6 / k); math.Abs(h-0.4) > 4*se {
		t.Errorf("eps=0.2: rate %.4f, want 0.4 (the model's mass on the 10%% label)", h)
	}
}

func TestErrorRate(t *testing.T) {
	if got := hallucination.ErrorRate([]string{"a", "b", "a", "c"}, "a"); got != 0.5 {
		t.Errorf("ErrorRate = %v, want 0.5", got)
	}
	if got := hallucination.ErrorRate[int](nil, 1); !math.IsNaN(got) {
		t.Errorf("ErrorRate of nothing = %v, want NaN", got)
	}
}

// MHR with the model as its own evaluation reference is the rate of
// Algorithm 2 with the longer context as reference; with a huge evaluation
// set drawn from the truth it approaches the true hallucination rate.
func TestMHRApproachesTrueRate(t *testing.T) {
	ctx := context.Background()
	m := categorical.Symmetric(1, 3, 0.5)
	truth := &categorical.Truth{Theta: [][]float64{{0.85, 0.12, 0.03}}}
	r := rand.New(rand.NewPCG(5, 6))
	d := truth.Data(r, 3)
	eval := truth.Data(r, 20000)
	post, _ := m.Posterior(d)
	want := post.TrueRate(truth, 0, 0.05)
	const k = 20000
	got, err := hallucination.MHR(ctx, r, m, d, eval, 0, k, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-want) > 4*math.Sqrt(want*(1-want)/k)+1e-3 {
		t.Errorf("MHR %.4f, true hallucination rate %.4f", got, want)
	}
}

func TestOptionsValidation(t *testing.T) {
	ctx := context.Background()
	m := categorical.Symmetric(1, 2, 1)
	for _, o := range []hallucination.Options{
		{Eps: 1}, {Eps: -0.1}, {Eps: math.NaN()}, {M: -1}, {K: -5}, {Extra: -1}, {Concurrency: -2},
	} {
		if _, err := hallucination.Estimate(ctx, m, nil, 0, o); err == nil {
			t.Errorf("Options %+v: no error", o)
		}
	}
	r := rand.New(rand.NewPCG(1, 1))
	ref := &categorical.Truth{Theta: [][]float64{{0.5, 0.5}}}
	if _, err := hallucination.Rate(ctx, r, ref, ref, 0, 0, 0.1); err == nil {
		t.Error("Rate with k = 0: no error")
	}
	if _, err := hallucination.Rate(ctx, r, ref, ref, 0, 10, 0); err == nil {
		t.Error("Rate with eps = 0: no error")
	}
}

// faulty is a CGM whose imagined pairs fail after a while, whose scores
// can be NaN, and which counts concurrent calls.
type faulty struct {
	failPair    int // SamplePair fails on this call (0: never)
	nanLogp     bool
	slow        time.Duration
	calls       atomic.Int64
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
}

type faultyCond struct{ f *faulty }

func (f *faulty) Condition(context.Context, []hallucination.Example[int, int]) (hallucination.Conditioned[int, int], error) {
	return faultyCond{f}, nil
}

func (c faultyCond) SamplePair(ctx context.Context, r *rand.Rand) (hallucination.Example[int, int], error) {
	n := c.f.inFlight.Add(1)
	defer c.f.inFlight.Add(-1)
	for {
		m := c.f.maxInFlight.Load()
		if n <= m || c.f.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	if c.f.slow > 0 {
		select {
		case <-time.After(c.f.slow):
		case <-ctx.Done():
			return hallucination.Example[int, int]{}, ctx.Err()
		}
	}
	if k := c.f.calls.Add(1); c.f.failPair > 0 && k >= int64(c.f.failPair) {
		return hallucination.Example[int, int]{}, errors.New("model unavailable")
	}
	return hallucination.Example[int, int]{X: 0, Y: r.IntN(2)}, nil
}

func (c faultyCond) Extend(context.Context, hallucination.Example[int, int]) (hallucination.Conditioned[int, int], error) {
	return c, nil
}

func (c faultyCond) Sample(_ context.Context, r *rand.Rand, _ int, ys []int, logp []float64) error {
	for i := range ys {
		ys[i] = r.IntN(2)
		logp[i] = math.Log(0.5)
	}
	return nil
}

func (c faultyCond) LogProb(_ context.Context, _ int, ys []int, logp []float64) error {
	for i := range ys {
		logp[i] = math.Log(0.5)
		if c.f.nanLogp {
			logp[i] = math.NaN()
		}
	}
	return nil
}

func TestEstimateErrors(t *testing.T) {
	ctx := context.Background()
	_, err := hallucination.Estimate(ctx, &faulty{failPair: 7}, nil, 0, hallucination.Options{M: 8, K: 10, Extra: 3, Concurrency: 2})
	if err == nil || !strings.Contains(err.Error(), "model unavailable") || !strings.Contains(err.Error(), "imagined dataset") {
		t.Errorf("failing SamplePair: error %v", err)
	}
	_, err = hallucination.Estimate(ctx, &faulty{nanLogp: true}, nil, 0, hallucination.Options{M: 2, K: 10, Extra: 1})
	if err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("NaN log-probability: error %v", err)
	}
}

func TestEstimateConcurrencyLimitAndCancel(t *testing.T) {
	f := &faulty{slow: 2 * time.Millisecond}
	if _, err := hallucination.Estimate(context.Background(), f, nil, 0, hallucination.Options{M: 12, K: 4, Extra: 2, Concurrency: 3}); err != nil {
		t.Fatal(err)
	}
	if got := f.maxInFlight.Load(); got > 3 || got < 2 {
		t.Errorf("%d imagined datasets ran at once, want several and at most the limit 3", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := hallucination.Estimate(ctx, &faulty{slow: 10 * time.Millisecond}, nil, 0, hallucination.Options{M: 100, K: 4, Extra: 50, Concurrency: 2})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled estimate: error %v", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("cancelled estimate took %v", el)
	}
}
