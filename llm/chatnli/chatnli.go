package chatnli

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/network/nli"
)

// Prompt is the question put to the judge; %s are the premise and the
// hypothesis (each already prefixed with the question they answer).
const Prompt = `We are evaluating answers to a question.
Here are two possible answers, each after the question it answers:
Possible Answer 1: %s
Possible Answer 2: %s
Does Possible Answer 1 semantically entail Possible Answer 2? Respond with exactly one word: entailment, contradiction, or neutral.`

// Judge is an nli.Model over one chat model. Its zero value is not
// usable: make it with New.
type Judge struct {
	client  *llm.Client
	model   string
	refused atomic.Int64
	mu      sync.Mutex
	cache   map[nli.Pair][3]float64
}

// New returns a judge asking model through client, at temperature 0.
func New(client *llm.Client, model string) *Judge {
	return &Judge{client: client, model: model, cache: map[nli.Pair][3]float64{}}
}

// Name is "chat MODEL".
func (j *Judge) Name() string { return "chat " + j.model }

// Refused counts the answers that were not one of the three labels.
func (j *Judge) Refused() int64 { return j.refused.Load() }

// Classify asks the judge about each pair not asked before.
func (j *Judge) Classify(ctx context.Context, pairs []nli.Pair) ([][3]float64, error) {
	out := make([][3]float64, len(pairs))
	for i, p := range pairs {
		j.mu.Lock()
		v, ok := j.cache[p]
		j.mu.Unlock()
		if !ok {
			var err error
			if v, err = j.ask(ctx, p); err != nil {
				return nil, fmt.Errorf("chatnli: pair %d: %w", i, err)
			}
			j.mu.Lock()
			j.cache[p] = v
			j.mu.Unlock()
		}
		out[i] = v
	}
	return out, nil
}

func (j *Judge) ask(ctx context.Context, p nli.Pair) ([3]float64, error) {
	zero := 0.0
	ch, _, err := j.client.Chat(ctx, llm.ChatRequest{Model: j.model, Temperature: &zero, MaxTokens: 8,
		Messages: []llm.Message{{Role: "user", Content: fmt.Sprintf(Prompt, p.Premise, p.Hypothesis)}}})
	if err != nil {
		return [3]float64{}, err
	}
	l, ok := Parse(ch[0].Text)
	if !ok {
		j.refused.Add(1)
		l = nli.Neutral
	}
	var v [3]float64
	v[l] = 1
	return v, nil
}

// Parse reads a judge's answer: one of the three label words, in any
// case, with surrounding space and one trailing full stop allowed.
// Anything else (two words, "entails", "yes") is not a label.
func Parse(s string) (nli.Label, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimSuffix(s, ".")
	switch s {
	case "entailment":
		return nli.Entailment, true
	case "contradiction":
		return nli.Contradiction, true
	case "neutral":
		return nli.Neutral, true
	}
	return nli.Neutral, false
}
