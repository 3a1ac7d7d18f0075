package nli

import (
	"context"
	"strings"
)

// Label is one of the three classes of natural language inference, in the
// order the MNLI-trained models of the field emit their logits.
type Label int

const (
	Contradiction Label = iota
	Neutral
	Entailment
)

func (l Label) String() string {
	switch l {
	case Contradiction:
		return "contradiction"
	case Neutral:
		return "neutral"
	case Entailment:
		return "entailment"
	}
	return "unknown"
}

// Pair is one premise and one hypothesis. Semantic entropy asks about both
// orders of two answers, each prefixed with the question.
type Pair struct {
	Premise    string
	Hypothesis string
}

// Model judges entailment.
type Model interface {
	// Name identifies the model and its weights, for caches and reports
	// ("deberta-large-mnli sha256:…", "chat gpt-4o-mini").
	Name() string
	// Classify returns, for each pair, the probabilities of the three labels
	// indexed by Label. A judge that answers with a single label returns
	// that label with probability 1.
	Classify(ctx context.Context, pairs []Pair) ([][3]float64, error)
}

// Predict returns the most probable label of p; ties go to the lower label,
// so a judge never reads entailment out of a tie.
func Predict(p [3]float64) Label {
	best := Contradiction
	for l := Neutral; l <= Entailment; l++ {
		if p[l] > p[best] {
			best = l
		}
	}
	return best
}

// ParseLabel reads a label as model configurations name it (id2label's
// "CONTRADICTION", "Neutral", "entailment"), in any case.
func ParseLabel(name string) (Label, bool) {
	switch strings.ToLower(name) {
	case "contradiction":
		return Contradiction, true
	case "neutral":
		return Neutral, true
	case "entailment":
		return Entailment, true
	}
	return 0, false
}
