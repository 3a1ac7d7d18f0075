package online

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// An Algorithm is an online evaluator of Protocol 1: it repeatedly names
// the generator to query next and learns from the batch drawn from it.
//
// Pick does not take the step number: none of the paper's indices depends
// on it (the bonuses use a fixed failure probability δ, not log t), and an
// evaluator that needs it can count its own Updates.
type Algorithm interface {
	// Name identifies the algorithm, e.g. "fid-ucb".
	Name() string
	// Pick returns the generator to query next, in [0, G).
	Pick() int
	// Update adds a batch of rows drawn from generator g and refreshes
	// g's estimate, and only g's. A batch with the wrong number of
	// columns, non-finite values or (for IS) rows that are not
	// distributions is rejected with an error and changes nothing.
	Update(g int, batch *mat.Dense) error
	// Scores returns each generator's current index, the value Pick
	// ranks by: the optimistic (or, for greedy, empirical) FID, lowest
	// first, or IS, highest first; ±Inf for generators not yet visited.
	Scores() []float64
}

var (
	_ Algorithm = (*FIDSelector)(nil)
	_ Algorithm = (*ISSelector)(nil)
)

// argmin returns the index of the smallest key, the lowest index among
// equal keys. NaN never wins (a NaN key could only come from a bug, and
// picking it forever would hide the bug behind plausible output).
func argmin(keys []float64) int {
	best := 0
	for g := 1; g < len(keys); g++ {
		k, b := keys[g], keys[best]
		if k < b || (math.IsNaN(b) && !math.IsNaN(k)) {
			best = g
		}
	}
	return best
}

// estimator is one generator's incremental state under one metric.
type estimator interface {
	// add adds a validated batch.
	add(batch *mat.Dense) error
	// keys writes one ranking key per rule into dst; lower keys are
	// picked first whatever the metric.
	keys(dst []float64) error
}

// selector is the shared machinery of FIDSelector and ISSelector: one
// estimator per generator and the current key of each.
type selector struct {
	name  string
	ests  []estimator
	keys  []float64
	buf   []float64
	check func(batch *mat.Dense) error
	score func(key float64) float64 // key -> the index reported by Scores
}

func newSelector(name string, ests []estimator, check func(*mat.Dense) error, score func(float64) float64) *selector {
	keys := make([]float64, len(ests))
	for g := range keys {
		keys[g] = math.Inf(-1)
	}
	return &selector{name: name, ests: ests, keys: keys, buf: make([]float64, 1), check: check, score: score}
}

func (s *selector) Name() string { return s.name }

func (s *selector) Pick() int { return argmin(s.keys) }

func (s *selector) Update(g int, batch *mat.Dense) error {
	if g < 0 || g >= len(s.ests) {
		return fmt.Errorf("online: %s: generator %d out of range [0, %d)", s.name, g, len(s.ests))
	}
	if batch == nil || batch.IsEmpty() {
		return fmt.Errorf("online: %s: generator %d: empty batch", s.name, g)
	}
	if err := s.check(batch); err != nil {
		return fmt.Errorf("online: %s: generator %d: %w", s.name, g, err)
	}
	if err := s.ests[g].add(batch); err != nil {
		return fmt.Errorf("online: %s: generator %d: %w", s.name, g, err)
	}
	if err := s.ests[g].keys(s.buf); err != nil {
		return fmt.Errorf("online: %s: generator %d: %w", s.name, g, err)
	}
	s.keys[g] = s.buf[0]
	return nil
}

func (s *selector) Scores() []float64 {
	out := make([]float64, len(s.keys))
	for g, k := range s.keys {
		out[g] = s.score(k)
	}
	return out
}
