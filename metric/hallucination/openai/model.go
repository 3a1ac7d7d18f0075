package openai

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/metric/hallucination"
)

// Example is one (input, label) pair of a text classification context.
type Example = hallucination.Example[string, string]

// redraws bounds how many times an unusable generation (an imagined
// example that does not parse, an empty response) is drawn again.
const redraws = 4

// Condition implements hallucination.CGM: it checks the context and
// writes it in the prompt format.
func (c *Client) Condition(_ context.Context, d []Example) (hallucination.Conditioned[string, string], error) {
	var b strings.Builder
	for i, e := range d {
		if err := CheckExample(e.X, e.Y); err != nil {
			return nil, fmt.Errorf("context example %d: %w", i+1, err)
		}
		b.WriteString(FormatExample(e.X, e.Y))
	}
	return &Prompt{c: c, prefix: b.String()}, nil
}

// Prompt is the model given a context: the context written in the prompt
// format. It implements hallucination.Conditioned and is immutable.
type Prompt struct {
	c      *Client
	prefix string
}

// Text returns the context as the model reads it.
func (p *Prompt) Text() string { return p.prefix }

// Extend implements hallucination.Conditioned.
func (p *Prompt) Extend(_ context.Context, e Example) (hallucination.Conditioned[string, string], error) {
	if err := CheckExample(e.X, e.Y); err != nil {
		return nil, err
	}
	return &Prompt{c: p.c, prefix: p.prefix + FormatExample(e.X, e.Y)}, nil
}

// drawSeed takes one request seed from r: a non-negative int64, the same
// rule as categorical.DrawSeed, so a model served by llmtest sees the
// seeds it would draw itself.
func drawSeed(r *rand.Rand) uint64 { return r.Uint64() >> 1 }

func (p *Prompt) seed(s uint64) *int64 {
	if p.c.cfg.NoSeed {
		return nil
	}
	v := int64(s)
	return &v
}

// SamplePair implements hallucination.Conditioned by generating after
// "Input:" and parsing the example back.
func (p *Prompt) SamplePair(ctx context.Context, r *rand.Rand) (Example, error) {
	var last string
	for range redraws {
		resp, err := p.c.Complete(ctx, llm.CompletionBody{
			Prompt:      p.prefix + inputTag,
			MaxTokens:   p.c.cfg.PairMaxTokens,
			Temperature: 1,
			TopP:        p.c.cfg.PairTopP,
			Stop:        []string{"\n\n"},
			Seed:        p.seed(drawSeed(r)),
		})
		if err != nil {
			return Example{}, err
		}
		last = resp.Choices[0].Text
		if x, y, ok := ParsePair(last); ok && CheckExample(x, y) == nil {
			return Example{X: x, Y: y}, nil
		}
	}
	return Example{}, errorf("no imagined example in %d generations; the last was %q", redraws, abbreviate(last, 120))
}

// Sample implements hallucination.Predictive. The seeds are drawn from r
// in order before the requests go out concurrently, so the result does
// not depend on their timing.
func (p *Prompt) Sample(ctx context.Context, r *rand.Rand, x string, ys []string, logp []float64) error {
	if err := CheckInput(x); err != nil {
		return err
	}
	seeds := make([]uint64, len(ys))
	for i := range seeds {
		seeds[i] = drawSeed(r)
	}
	prompt := p.prefix + FormatQuery(x)
	return parallel(ctx, len(ys), func(ctx context.Context, i int) error {
		var err error
		ys[i], logp[i], err = p.sampleOne(ctx, prompt, seeds[i])
		return err
	})
}

func (p *Prompt) sampleOne(ctx context.Context, prompt string, seed uint64) (string, float64, error) {
	one := 1
	for attempt := range uint64(redraws) {
		resp, err := p.c.Complete(ctx, llm.CompletionBody{
			Prompt:      prompt,
			MaxTokens:   p.c.cfg.MaxTokens,
			Temperature: 1,
			TopP:        1,
			Logprobs:    &one,
			Stop:        []string{"\n"},
			// Redraws of an empty line take new seeds derived from the
			// first, so they stay reproducible.
			Seed: p.seed((seed + attempt*0x9e3779b97f4a7c15) & math.MaxInt64),
		})
		if err != nil {
			return "", 0, err
		}
		ch := resp.Choices[0]
		text := ch.Text
		end := utf8.RuneCountInString(text)
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			end = utf8.RuneCountInString(text[:i])
			text = text[:i]
		}
		y := strings.TrimSpace(text)
		if y == "" {
			continue
		}
		lp, err := spanLogprob(ch.Logprobs, 0, end, false)
		if err != nil {
			return "", 0, fmt.Errorf("%w (response %q)", err, abbreviate(y, 120))
		}
		return y, lp, nil
	}
	return "", 0, errorf("the model generated %d empty responses in a row", redraws)
}

// LogProb implements hallucination.Predictive by scoring the echoed
// prompt; each distinct response is scored once.
func (p *Prompt) LogProb(ctx context.Context, x string, ys []string, logp []float64) error {
	if err := CheckInput(x); err != nil {
		return err
	}
	index := map[string]int{}
	var distinct []string
	for _, y := range ys {
		if _, ok := index[y]; !ok {
			if err := CheckExample(x, y); err != nil {
				return err
			}
			index[y] = len(distinct)
			distinct = append(distinct, y)
		}
	}
	scores := make([]float64, len(distinct))
	query := p.prefix + FormatQuery(x)
	start := utf8.RuneCountInString(query)
	one := 1
	err := parallel(ctx, len(distinct), func(ctx context.Context, i int) error {
		prompt := query + " " + distinct[i]
		seed := int64(0)
		resp, err := p.c.Complete(ctx, llm.CompletionBody{
			Prompt:      prompt,
			MaxTokens:   p.c.cfg.EchoMaxTokens,
			Temperature: 1,
			TopP:        1,
			Logprobs:    &one,
			Echo:        true,
			Seed:        &seed,
		})
		if err != nil {
			return err
		}
		ch := resp.Choices[0]
		if !strings.HasPrefix(ch.Text, prompt) {
			return errorf("the server did not echo the prompt (it must support \"echo\": true with \"logprobs\" on /completions to score responses)")
		}
		scores[i], err = spanLogprob(ch.Logprobs, start, start+utf8.RuneCountInString(" "+distinct[i]), true)
		if err != nil {
			return fmt.Errorf("%w (scoring %q)", err, abbreviate(distinct[i], 120))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, y := range ys {
		logp[i] = scores[index[y]]
	}
	return nil
}

// spanLogprob sums the log-probabilities of the tokens that start in the
// character span [start, end) of the choice's text. Offsets are taken
// from text_offset, relative to the first token (servers differ on whether
// generated offsets count the prompt), or from the token strings when the
// server sends no offsets. With aligned set, a token must start exactly at
// start: a label merged into one token with the text before it cannot be
// scored on its own.
func spanLogprob(lp *llm.Logprobs, start, end int, aligned bool) (float64, error) {
	if lp == nil || len(lp.TokenLogprobs) == 0 {
		return 0, fmt.Errorf("openai: %w; genlens needs \"logprobs\" on /completions", ErrNoLogprobs)
	}
	n := len(lp.TokenLogprobs)
	offsets := lp.TextOffset
	if len(offsets) != n {
		if len(lp.Tokens) != n {
			return 0, errorf("%d token log-probabilities for %d tokens and %d offsets", n, len(lp.Tokens), len(lp.TextOffset))
		}
		offsets = make([]int, n)
		pos := 0
		for i, t := range lp.Tokens {
			offsets[i] = pos
			pos += utf8.RuneCountInString(t)
		}
	}
	base := offsets[0]
	sum, found, atStart, straddles := 0.0, 0, false, false
	for i, off := range offsets {
		off -= base
		if off < start {
			// A token that begins before the span and reaches into it.
			next := off
			if i < len(lp.Tokens) {
				next += utf8.RuneCountInString(lp.Tokens[i])
			}
			if i+1 < n {
				next = offsets[i+1] - base
			}
			straddles = straddles || next > start
			continue
		}
		if off >= end {
			continue
		}
		atStart = atStart || off == start
		v := lp.TokenLogprobs[i]
		if v == nil {
			return 0, fmt.Errorf("openai: %w for token %d", ErrNoLogprobs, i+1)
		}
		if math.IsNaN(*v) || *v > 1e-6 {
			return 0, errorf("token %d has log-probability %v", i+1, *v)
		}
		sum += *v
		found++
	}
	switch {
	case aligned && (straddles || (found > 0 && !atStart)):
		return 0, errorf("the label does not start a token: the server's tokenizer merged it with the text before it")
	case found == 0:
		return 0, errorf("no token in characters [%d, %d) of the text (did the server echo the prompt?)", start, end)
	}
	return sum, nil
}

// parallel runs fn(ctx, i) for i in [0, n) on n goroutines at once and
// returns the first error, cancelling the others. It is not a worker
// pool: the Client's semaphore (Config.Concurrency) is the limiter that
// bounds the requests in flight, across every query that shares the
// Client, so a goroutine per call only waits its turn there.
func parallel(ctx context.Context, n int, fn func(context.Context, int) error) error {
	if n == 1 {
		return fn(ctx, 0)
	}
	return par.For(ctx, n, n, fn)
}
