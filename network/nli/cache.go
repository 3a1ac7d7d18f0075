package nli

import (
	"context"
	"sync"
)

// cacheKey is one ordered pair as judged by one model.
type cacheKey struct{ model, premise, hypothesis string }

type cached struct {
	m  Model
	mu sync.Mutex
	p  map[cacheKey][3]float64
}

// Cached returns a Model that judges each ordered pair once: Classify
// asks m only about the pairs it has not seen (each once, however often
// it occurs in the batch) and answers the rest from memory, keyed by
// m.Name(), premise and hypothesis. Semantic entropy asks about both
// orders of every two answers, and the same answers come back across
// scores. It is safe for concurrent use; the memory grows with the
// pairs seen.
func Cached(m Model) Model {
	return &cached{m: m, p: map[cacheKey][3]float64{}}
}

func (c *cached) Name() string { return c.m.Name() }

func (c *cached) Classify(ctx context.Context, pairs []Pair) ([][3]float64, error) {
	name := c.m.Name()
	out := make([][3]float64, len(pairs))
	var miss []Pair
	where := map[cacheKey][]int{}
	c.mu.Lock()
	for i, p := range pairs {
		k := cacheKey{name, p.Premise, p.Hypothesis}
		if v, ok := c.p[k]; ok {
			out[i] = v
			continue
		}
		if _, ok := where[k]; !ok {
			miss = append(miss, p)
		}
		where[k] = append(where[k], i)
	}
	c.mu.Unlock()
	if len(miss) == 0 {
		return out, nil
	}
	got, err := c.m.Classify(ctx, miss)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for j, p := range miss {
		k := cacheKey{name, p.Premise, p.Hypothesis}
		c.p[k] = got[j]
		for _, i := range where[k] {
			out[i] = got[j]
		}
	}
	return out, nil
}
