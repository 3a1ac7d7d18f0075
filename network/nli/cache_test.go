package nli

import (
	"context"
	"errors"
	"testing"
)

// counting judges by the lengths of the texts and counts what it is asked.
type counting struct {
	asked []Pair
	fail  bool
}

func (c *counting) Name() string { return "counting" }

func (c *counting) Classify(_ context.Context, pairs []Pair) ([][3]float64, error) {
	if c.fail {
		return nil, errors.New("down")
	}
	c.asked = append(c.asked, pairs...)
	out := make([][3]float64, len(pairs))
	for i, p := range pairs {
		out[i] = [3]float64{float64(len(p.Premise)), float64(len(p.Hypothesis)), 1}
	}
	return out, nil
}

func TestCached(t *testing.T) {
	inner := &counting{}
	m := Cached(inner)
	ab, ba, aa := Pair{"a", "bb"}, Pair{"bb", "a"}, Pair{"a", "a"}
	got, err := m.Classify(context.Background(), []Pair{ab, ba, ab, aa})
	if err != nil {
		t.Fatal(err)
	}
	if len(inner.asked) != 3 {
		t.Errorf("first batch asked %d pairs, want 3 (a repeated pair once)", len(inner.asked))
	}
	if got[0] != ([3]float64{1, 2, 1}) || got[1] != ([3]float64{2, 1, 1}) || got[2] != got[0] || got[3] != ([3]float64{1, 1, 1}) {
		t.Errorf("answers %v", got)
	}
	got, err = m.Classify(context.Background(), []Pair{ba, {"c", "a"}, ab})
	if err != nil {
		t.Fatal(err)
	}
	if len(inner.asked) != 4 || inner.asked[3] != (Pair{"c", "a"}) {
		t.Errorf("second batch asked %v, want only the new pair", inner.asked[3:])
	}
	if got[0] != ([3]float64{2, 1, 1}) || got[2] != ([3]float64{1, 2, 1}) {
		t.Errorf("answers %v", got)
	}
	inner.fail = true
	if _, err := m.Classify(context.Background(), []Pair{{"new", "x"}}); err == nil {
		t.Error("an error of the model was not passed on")
	}
	if _, err := m.Classify(context.Background(), []Pair{ab}); err != nil {
		t.Errorf("a cached pair needs no model: %v", err)
	}
	if m.Name() != "counting" {
		t.Error("Name")
	}
}
