package llmproxy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/llm/chatnli"
	"github.com/genlens/genlens/metric/likelihood"
	"github.com/genlens/genlens/metric/uncertainty"
	"github.com/genlens/genlens/network/nli"
)

// LM-Polygraph's estimators of uncertainty's table beyond the samples'
// texts, logprobs and clusters: CoCoA and SentenceSAR read the RougeL
// similarity of the caller's answer with the samples and of the samples
// with each other; TokenSAR and SAR that of an answer with itself
// without each of its tokens; semantic density, LUQ and CCP the judge's
// label probabilities. Their inputs are built by package uncertainty's
// functions, as `genlens entropy` builds them with its default
// similarity (rougel), with the proxy's question (the last user message)
// where the entropy command puts its row's.

// judgeNeeds are the needs that read the entailment judge.
const judgeNeeds = uncertainty.NeedsJudge | uncertainty.NeedsEntailmentProbs | uncertainty.NeedsAnswerEntailmentProbs | uncertainty.NeedsAlternativesEntailment

// sampleNeeds are the needs that read the samples.
const sampleNeeds = uncertainty.NeedsSampleLogprobs | uncertainty.NeedsJudge | uncertainty.NeedsSimilarity | uncertainty.NeedsEntailmentProbs |
	uncertainty.NeedsAnswerEntailmentProbs | uncertainty.NeedsSampleTokenSimilarity | uncertainty.NeedsModel

// topScores are the scores that read the top-K alternatives of the
// caller's answer's tokens (Options.TopLogprobs).
var topScores = []string{"mte", "cocoa-mte", "ccp"}

// MaxRelevanceTokens bounds the tokens of an answer whose relevance
// TokenSAR and SAR weigh: the similarity of the answer with itself
// without each token costs tokens × RougeL of the whole answer, tokens³
// word comparisons, and an upstream decides how long its answers are.
// A longer answer leaves the score unavailable, saying so. Measured
// (uncertainty's BenchmarkTokenRelevanceRougeL, one core): 256 tokens
// take about 50 ms, 1024 over a second, and SAR weighs every sample's.
const MaxRelevanceTokens = 256

// sampleLogprobs returns the token logprobs of the samples, or why not.
func (p *Proxy) sampleLogprobs(choices []llm.Choice) ([][]likelihood.Token, error) {
	out := make([][]likelihood.Token, len(choices))
	for i, c := range choices {
		if c.Tokens == nil {
			return nil, fmt.Errorf("the upstream sent no logprobs with its samples, and %s needs them", p.score)
		}
		out[i] = make([]likelihood.Token, len(c.Tokens))
		for j, t := range c.Tokens {
			out[i][j].Logprob = t.Logprob
			for _, a := range t.Top {
				out[i][j].Top = append(out[i][j].Top, a.Logprob)
			}
		}
	}
	return out, nil
}

// relevanceSimilarities is the similarity of the text of toks with
// itself without each token (uncertainty.TokenSimilarities): RougeL, or
// with the nli similarity the entailment probability of m both ways.
func (p *Proxy) relevanceSimilarities(ctx context.Context, m nli.Model, what string, toks []llm.TokenLogprob) ([]float64, error) {
	if len(toks) > MaxRelevanceTokens {
		return nil, fmt.Errorf("%s has %d tokens, over the %d whose relevance the proxy weighs", what, len(toks), MaxRelevanceTokens)
	}
	texts := make([]string, len(toks))
	for i, t := range toks {
		texts[i] = t.Token
	}
	return uncertainty.TokenSimilarities(texts, func(a string, without []string) ([]float64, error) {
		if p.nliSim {
			return uncertainty.EntailmentTextSimilarity(ctx, m, a, without)
		}
		return uncertainty.RougeTextSimilarity(a, without), nil
	})
}

// value is the score of in; a score that is not finite is unavailable.
func (p *Proxy) value(in uncertainty.Input) (float64, error) {
	u, err := p.def.Value(in)
	switch {
	case err != nil:
		return math.NaN(), err
	case math.IsNaN(u) || math.IsInf(u, 0):
		return math.NaN(), errors.New("not finite: the token logprobs are too far below 0 to add up in float64")
	}
	return u, nil
}

// warnRefused logs the chat judge's answers that were no label.
func (p *Proxy) warnRefused(chat *chatnli.Judge) {
	if chat != nil && chat.Refused() > 0 {
		p.log.Warn("llm proxy: the entailment judge's answers were no label, taken as not entailing", "pairs", chat.Refused())
	}
}

// samplesScore is the score of the samples' similarities (SentenceSAR,
// SAR) or of the judge's probabilities of their pairs (LUQ).
func (p *Proxy) samplesScore(ctx context.Context, req llm.ChatRequest, choices []llm.Choice, texts []string) (float64, error) {
	n := p.def.Needs
	in := uncertainty.Input{Samples: texts}
	var err error
	if n&uncertainty.NeedsSampleLogprobs != 0 {
		if in.Logprobs, err = p.sampleLogprobs(choices); err != nil {
			return math.NaN(), err
		}
	}
	var m nli.Model
	var chat *chatnli.Judge
	if p.judge != nil {
		m, chat = p.judge()
		defer p.warnRefused(chat)
	}
	// The judge's probabilities of the pairs of samples: LUQ's, and the
	// nli similarity of the samples.
	nliSamples := p.nliSim && n&uncertainty.NeedsSimilarity != 0
	if n&uncertainty.NeedsEntailmentProbs != 0 || nliSamples {
		j, err := uncertainty.JudgeProbabilities(ctx, m, question(req.Messages), texts, nil, uncertainty.JudgeAsk{Samples: true})
		if err != nil {
			return math.NaN(), fmt.Errorf("entailment probabilities of the samples: %w", err)
		}
		in.SampleNLI = j.Samples
	}
	switch {
	case nliSamples:
		in.SampleSim = uncertainty.EntailmentGraph(in.SampleNLI)
	case n&uncertainty.NeedsSimilarity != 0:
		if in.SampleSim, err = uncertainty.RougeSampleSimilarity(ctx, texts); err != nil {
			return math.NaN(), err
		}
	}
	if n&uncertainty.NeedsSampleTokenSimilarity != 0 {
		in.SampleTokenSim = make([][]float64, len(choices))
		for k, c := range choices {
			if in.SampleTokenSim[k], err = p.relevanceSimilarities(ctx, m, fmt.Sprintf("sample %d", k), c.Tokens); err != nil {
				return math.NaN(), err
			}
		}
	}
	return p.value(in)
}

// answerScore is the score of the caller's answer a: of its logprobs
// alone (msp, perplexity, mte), of its tokens' relevance (TokenSAR) or
// alternatives (CCP), or with the samples of sc (CoCoA, semantic
// density).
func (p *Proxy) answerScore(ctx context.Context, req llm.ChatRequest, sc scored, a llm.Choice) scored {
	start := time.Now()
	fail := func(err error) scored {
		if ctx.Err() == context.DeadlineExceeded {
			return scored{uncertainty: math.NaN(), err: p.cutErr()}
		}
		return scored{uncertainty: math.NaN(), err: fmt.Errorf("scoring: %w", err)}
	}
	if a.Tokens == nil {
		return scored{uncertainty: math.NaN(), err: fmt.Errorf("scoring: the upstream sent no logprobs with the answer, and %s needs them", p.score)}
	}
	n := p.def.Needs
	if n&^uncertainty.NeedsAnswerLogprobs != 0 {
		// More than the logprobs: a similarity or a judge's work.
		select {
		case scoreSlots <- struct{}{}:
		case <-ctx.Done():
			return scored{uncertainty: math.NaN(), err: fmt.Errorf("scoring: no free scoring slot within the proxy's timeout (%s)", p.timeout)}
		}
		defer func() { <-scoreSlots }()
	}
	toks := make([]likelihood.Token, len(a.Tokens))
	for i, t := range a.Tokens {
		toks[i].Logprob = t.Logprob
		for _, alt := range t.Top {
			toks[i].Top = append(toks[i].Top, alt.Logprob)
		}
	}
	in := uncertainty.Input{Answer: toks, Samples: sc.samples}
	var err error
	if n&uncertainty.NeedsSampleLogprobs != 0 {
		if in.Logprobs, err = p.sampleLogprobs(sc.choices); err != nil {
			return scored{uncertainty: math.NaN(), err: fmt.Errorf("scoring: %w", err)}
		}
	}
	var m nli.Model
	var chat *chatnli.Judge
	if p.judge != nil {
		m, chat = p.judge()
		defer p.warnRefused(chat)
	}
	// The judge's probabilities of the answer with the samples: semantic
	// density's, and (both ways) the nli similarity of the answer.
	nliAnswer := p.nliSim && n&uncertainty.NeedsSimilarity != 0
	if n&uncertainty.NeedsAnswerEntailmentProbs != 0 || nliAnswer {
		ask := uncertainty.JudgeAsk{Answer: true, Back: nliAnswer}
		j, err := uncertainty.JudgeProbabilities(ctx, m, question(req.Messages), sc.samples, &a.Text, ask)
		if err != nil {
			return fail(fmt.Errorf("entailment probabilities of the answer with the samples: %w", err))
		}
		in.AnswerNLI = j.Answer
		if nliAnswer {
			in.AnswerSim = j.AnswerSimilarity()
		}
	}
	if n&uncertainty.NeedsSimilarity != 0 && !nliAnswer {
		in.AnswerSim = uncertainty.RougeTextSimilarity(a.Text, sc.samples)
	}
	if n&uncertainty.NeedsAnswerTokenSimilarity != 0 {
		if in.AnswerTokenSim, err = p.relevanceSimilarities(ctx, m, "the answer", a.Tokens); err != nil {
			return fail(err)
		}
	}
	if n&uncertainty.NeedsAlternativesEntailment != 0 {
		cands, err := ccpCandidates(a.Tokens)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", p.score, err))
		}
		var judgeErr error
		if in.CCP, in.CCPErr, judgeErr = uncertainty.JudgeAlternatives(ctx, m, cands); judgeErr != nil {
			return fail(fmt.Errorf("entailment of the answer's tokens with their alternatives: %w", judgeErr))
		}
	}
	u, err := p.value(in)
	if err != nil {
		return fail(err)
	}
	return scored{uncertainty: u, seconds: sc.seconds + time.Since(start).Seconds()}
}

// ccpCandidates returns the answer's tokens as CCP reads them, or why
// not: a token without its top-K alternatives.
func ccpCandidates(ts []llm.TokenLogprob) ([]uncertainty.CCPCandidate, error) {
	out := make([]uncertainty.CCPCandidate, len(ts))
	for i, t := range ts {
		if t.Top == nil {
			return nil, errors.New("the upstream sent no top-K alternatives of the answer's tokens (top_logprobs)")
		}
		c := uncertainty.CCPCandidate{Text: t.Token, Logprob: t.Logprob, Alternatives: make([]uncertainty.Alternative, len(t.Top))}
		for k, alt := range t.Top {
			c.Alternatives[k] = uncertainty.Alternative{Text: alt.Token, Logprob: alt.Logprob}
		}
		out[i] = c
	}
	return out, nil
}
