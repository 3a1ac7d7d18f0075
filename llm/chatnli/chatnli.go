package chatnli

import (
	"context"
	"fmt"
	"math"
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
	// logprobs and oneHot count the answers whose probabilities came
	// from the answer token's top_logprobs and those read as one-hot.
	logprobs atomic.Int64
	oneHot   atomic.Int64
	mu       sync.Mutex
	cache    map[nli.Pair][3]float64
}

// New returns a judge asking model through client, at temperature 0.
func New(client *llm.Client, model string) *Judge {
	return &Judge{client: client, model: model, cache: map[nli.Pair][3]float64{}}
}

// Name is "chat MODEL".
func (j *Judge) Name() string { return "chat " + j.model }

// Refused counts the answers that were not one of the three labels.
func (j *Judge) Refused() int64 { return j.refused.Load() }

// Probability sources, as Source reports them.
const (
	SourceLogprobs = "logprobs" // every answer's from its first token's top_logprobs
	SourceOneHot   = "one-hot"  // at least one answer read as its label's probability 1
)

// Source says where the probabilities of the pairs asked so far come
// from: SourceLogprobs when every answer sent the top_logprobs of its
// first token, SourceOneHot when one at least did not (the endpoint sends
// no logprobs, or none of the alternatives read as a label), "" before
// any pair is asked.
func (j *Judge) Source() string {
	switch {
	case j.oneHot.Load() > 0:
		return SourceOneHot
	case j.logprobs.Load() > 0:
		return SourceLogprobs
	}
	return ""
}

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
		Messages: []llm.Message{{Role: "user", Content: fmt.Sprintf(Prompt, p.Premise, p.Hypothesis)}},
		Logprobs: true, TopLogprobs: llm.MaxTopLogprobs})
	if err != nil {
		return [3]float64{}, err
	}
	l, ok := Parse(ch[0].Text)
	if !ok {
		j.refused.Add(1)
		l = nli.Neutral
	}
	if ok {
		if v, ok := Probabilities(ch[0].Tokens); ok {
			j.logprobs.Add(1)
			return v, nil
		}
	}
	j.oneHot.Add(1)
	var v [3]float64
	v[l] = 1
	return v, nil
}

// Probabilities reads the three labels' probabilities (indexed by
// nli.Label) from the tokens of a judge's answer: over the first token
// that is not space alone and its top alternatives, the probabilities of
// those that read as the start of a label once trimmed and lower-cased
// ("Ent" of "Entailment", " neutral"; the labels start with different
// letters) are summed per label, each token once, and renormalised over
// the three. ok is false without tokens, without alternatives (an
// endpoint that ignores top_logprobs) or when no alternative reads as a
// label.
func Probabilities(toks []llm.TokenLogprob) (v [3]float64, ok bool) {
	i := 0
	for i < len(toks) && strings.TrimSpace(toks[i].Token) == "" {
		i++
	}
	if i == len(toks) || len(toks[i].Top) == 0 {
		return v, false // no alternatives: the label alone, one-hot
	}
	seen := map[string]bool{}
	add := func(tok string, lp float64) {
		if seen[tok] {
			return
		}
		seen[tok] = true
		if l, ok := labelOf(tok); ok {
			v[l] += math.Exp(lp)
		}
	}
	add(toks[i].Token, toks[i].Logprob)
	for _, a := range toks[i].Top {
		add(a.Token, a.Logprob)
	}
	sum := v[0] + v[1] + v[2]
	if !(sum > 0) || math.IsInf(sum, 0) {
		return [3]float64{}, false
	}
	for k := range v {
		v[k] /= sum
	}
	return v, true
}

// labelOf reads a token as the start of a label: trimmed, lower-cased and
// without one trailing full stop, a non-empty prefix of one of the three
// words.
func labelOf(tok string) (nli.Label, bool) {
	t := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(tok)), ".")
	if t == "" {
		return 0, false
	}
	for _, c := range []struct {
		word string
		l    nli.Label
	}{{"entailment", nli.Entailment}, {"contradiction", nli.Contradiction}, {"neutral", nli.Neutral}} {
		if strings.HasPrefix(c.word, t) {
			return c.l, true
		}
	}
	return 0, false
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
