package semantic

import (
	"context"

	"github.com/genlens/genlens/network/nli"
)

// ClusterAnswers groups the answers to question by bidirectional
// entailment (Clusters), each answer prefixed with the question
// as Kuhn et al. do (unless it is ""); m judges each ordered pair.
func ClusterAnswers(ctx context.Context, m nli.Model, question string, answers []string) ([]int, error) {
	text := func(k int) string {
		if question == "" {
			return answers[k]
		}
		return question + " " + answers[k]
	}
	return Clusters(len(answers), func(a, b int) (bool, error) {
		v, err := m.Classify(ctx, []nli.Pair{{Premise: text(a), Hypothesis: text(b)}})
		if err != nil {
			return false, err
		}
		return nli.Predict(v[0]) == nli.Entailment, nil
	})
}
