package hallucination

import (
	"context"
	"fmt"
	"math/rand/v2"
)

// Example is one (x, y) pair of an in-context dataset: a query and its
// response, e.g. an input text and its label, or a point of a regression.
type Example[X, Y any] struct {
	X X
	Y Y
}

// Predictive is a distribution of responses to a query: the predictive
// p(y | x, D) of a model given a context D, or the likelihood p(y | x, f) of
// a known mechanism f. Implementations must be safe for concurrent use; each
// goroutine passes its own *rand.Rand.
type Predictive[X, Y any] interface {
	// Sample draws len(ys) independent responses to x into ys and stores
	// log p(ys[i] | x) in logp[i] (len(logp) == len(ys)).
	Sample(ctx context.Context, r *rand.Rand, x X, ys []Y, logp []float64) error

	// LogProb stores log p(ys[i] | x) in logp[i].
	LogProb(ctx context.Context, x X, ys []Y, logp []float64) error
}

// Conditioned is a conditional generative model given a context D: it
// answers queries (Predictive), imagines further examples of the same task,
// p(x, y | D), and is conditioned on one more example by Extend.
//
// A Conditioned is immutable: Extend returns a new value and leaves the
// receiver as it was, so Algorithm 1 can branch M imagined datasets off one
// context concurrently.
type Conditioned[X, Y any] interface {
	Predictive[X, Y]

	// SamplePair draws an imagined example (x, y) ~ p(x, y | D).
	SamplePair(ctx context.Context, r *rand.Rand) (Example[X, Y], error)

	// Extend returns the model conditioned on D followed by e.
	Extend(ctx context.Context, e Example[X, Y]) (Conditioned[X, Y], error)
}

// CGM is a conditional generative model of in-context datasets: a model
// that, prompted with a context, generates further examples and responses
// to queries, and scores responses. Under the Bayesian view of in-context
// learning it computes the posterior predictive of a latent mechanism.
type CGM[X, Y any] interface {
	// Condition returns the model given the context d. It may keep d but
	// must not modify it.
	Condition(ctx context.Context, d []Example[X, Y]) (Conditioned[X, Y], error)
}

// Imaginer is implemented by a Conditioned model that can draw a whole
// imagined continuation of its context faster than pair by pair, for
// example by updating one private copy of its state in place instead of
// building an immutable model per pair. Imagine(ctx, r, n) must return
// exactly what n rounds of SamplePair and Extend would, drawing the same
// random numbers from r in the same order; Estimate uses it when present.
type Imaginer[X, Y any] interface {
	Imagine(ctx context.Context, r *rand.Rand, n int) (Conditioned[X, Y], error)
}

// Imagine extends c by n pairs drawn one at a time from the model, each
// given the ones before (Algorithm 1, lines 3-6), through c's Imagine
// method when it has one.
func Imagine[X, Y any](ctx context.Context, c Conditioned[X, Y], r *rand.Rand, n int) (Conditioned[X, Y], error) {
	if im, ok := c.(Imaginer[X, Y]); ok {
		return im.Imagine(ctx, r, n)
	}
	for j := range n {
		e, err := c.SamplePair(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("pair %d: %w", j+1, err)
		}
		if c, err = c.Extend(ctx, e); err != nil {
			return nil, fmt.Errorf("pair %d: %w", j+1, err)
		}
	}
	return c, nil
}
