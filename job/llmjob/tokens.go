package llmjob

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/job/internal/textembed"
	"github.com/genlens/genlens/metric/likelihood"
	"github.com/genlens/genlens/metric/uncertainty"
	"github.com/genlens/genlens/network/bert"
	"github.com/genlens/genlens/network/nli"
)

// What token-sar, sar and ccp read besides the rows' logprobs: the texts
// of the tokens (and of their top-K alternatives), the run's similarity
// of each answer with itself without one of its tokens, and the
// entailment judge's labels of each token's word against its
// alternatives'.

// Reasons the token-level statistics are unavailable.
var (
	errNoTokenTexts     = errors.New(`the tokens have no texts (each token's "token" in the rows' logprobs; genlens sample writes them)`)
	errNoAlternatives   = errors.New("no top-K alternatives of the tokens (sample with {top_logprobs} K)")
	errNoAlternateTexts = errors.New(`the tokens' top-K alternatives have no texts (each alternative's "token" in the rows' logprobs)`)
	errTokenEmbeddings  = errors.New("the embedding similarity of an answer without one of its tokens needs the embedder in process ({embedder} with {weights}); embeddings read from the rows or a file hold the whole answers only")
)

// tokenTexts returns the texts of ts, or nil when a token has none.
func tokenTexts(ts []dataio.Token) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		if !t.HasText {
			return nil
		}
		out[i] = t.Text
	}
	return out
}

// ccpCandidates returns the tokens of ts as CCP reads them, or why not:
// a token without text, or alternatives without theirs.
func ccpCandidates(ts []dataio.Token) ([]uncertainty.CCPCandidate, error) {
	out := make([]uncertainty.CCPCandidate, len(ts))
	for i, t := range ts {
		switch {
		case !t.HasText:
			return nil, errNoTokenTexts
		case t.Top == nil:
			return nil, errNoAlternatives
		case t.TopText == nil:
			return nil, errNoAlternateTexts
		}
		c := uncertainty.CCPCandidate{Text: t.Text, Logprob: t.Logprob, Alternatives: make([]uncertainty.Alternative, len(t.Top))}
		for k, lp := range t.Top {
			c.Alternatives[k] = uncertainty.Alternative{Text: t.TopText[k], Logprob: lp}
		}
		out[i] = c
	}
	return out, nil
}

// textSimilarity is the run's similarity of one text with each of
// others, batched.
type textSimilarity func(ctx context.Context, text string, others []string) ([]float64, error)

// rougeSimilarity is the RougeL-F of the words, as the graph scores'.
func rougeSimilarity(_ context.Context, text string, others []string) ([]float64, error) {
	return uncertainty.RougeTextSimilarity(text, others), nil
}

// embeddingSimilarity is max(0, cosine) of the embeddings of e, as
// uncertainty.CosineSimilarity of the samples' embeddings.
func embeddingSimilarity(e *bert.Embedder) textSimilarity {
	return func(ctx context.Context, text string, others []string) ([]float64, error) {
		texts := append([]string{text}, others...)
		var vecs [][]float32
		for i := 0; i < len(texts); i += textembed.Batch {
			v, err := e.Forward(ctx, texts[i:min(len(texts), i+textembed.Batch)])
			if err != nil {
				return nil, err
			}
			vecs = append(vecs, v...)
		}
		out := make([]float64, len(others))
		for i := range others {
			out[i] = clippedCosine(vecs[0], vecs[i+1])
		}
		return out, nil
	}
}

// clippedCosine is max(0, cos(a, b)), 0 for a zero vector.
func clippedCosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot, na, nb = dot+x*y, na+x*x, nb+y*y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return max(0, dot/(math.Sqrt(na)*math.Sqrt(nb)))
}

// entailmentSimilarity is the entailment probability of the judge m,
// both ways and averaged, (P(entailment | a, b) + P(entailment | b, a)) / 2,
// of the texts as they are (no question before them).
func entailmentSimilarity(m nli.Model) textSimilarity {
	return func(ctx context.Context, text string, others []string) ([]float64, error) {
		return uncertainty.EntailmentTextSimilarity(ctx, m, text, others)
	}
}

// attachTokenSimilarities sets, for every scored row, the run's
// similarity of its answer under test (answer) and of each of its scored
// samples (samples) with itself without each of its tokens
// (uncertainty.TokenSimilarities), or tokenSimErr why not. sim is nil
// when the run's similarity cannot compare such texts (errTokenEmbeddings).
// A failure of the similarity (a judge's server down after retries)
// fails the run.
func attachTokenSimilarities(ctx context.Context, sim textSimilarity, file string, recs []dataio.Record, ps []*promptScores, scored []bool, answer, samples bool, workers int) error {
	return par.For(ctx, len(recs), workers, func(ctx context.Context, i int) error {
		p := ps[i]
		if !scored[i] {
			return nil
		}
		if sim == nil {
			p.tokenSimErr = errTokenEmbeddings
			return nil
		}
		of := func(texts []string) ([]float64, error) {
			return uncertainty.TokenSimilarities(texts, func(a string, without []string) ([]float64, error) { return sim(ctx, a, without) })
		}
		fail := func(what string, err error) error {
			return fmt.Errorf("similarity of %s without each of its tokens, %s line %d (id %s): %w", what, file, recs[i].Line, recs[i].ID, err)
		}
		if answer {
			switch {
			case p.answer == nil:
				p.tokenSimErr = p.answerMissing
			case p.answerTexts == nil:
				p.tokenSimErr = errNoTokenTexts
			default:
				v, err := of(p.answerTexts)
				if err != nil {
					return fail("the answer under test", err)
				}
				p.answerTokenSim = v
			}
		}
		if samples {
			switch {
			case p.logprobs == nil:
				p.tokenSimErr = errNoLogprobs
			case p.sampleTexts == nil:
				p.tokenSimErr = errNoTokenTexts
			default:
				out := make([][]float64, len(p.sampleTexts))
				for k, texts := range p.sampleTexts {
					v, err := of(texts)
					if err != nil {
						return fail(fmt.Sprintf("sample %d", k), err)
					}
					out[k] = v
				}
				p.sampleTokenSim = out
			}
		}
		return nil
	})
}

// judgeAlternatives sets, for every scored row, the tokens of CCP of its
// answer under test: the judge m's label probabilities of each token's
// word against its alternatives' (uncertainty.CCPPairs), or ccpErr why
// not. A judge's failure fails the run.
func judgeAlternatives(ctx context.Context, m nli.Model, file string, recs []dataio.Record, ps []*promptScores, scored []bool, workers int) error {
	return par.For(ctx, len(recs), workers, func(ctx context.Context, i int) error {
		p := ps[i]
		if !scored[i] {
			return nil
		}
		if p.answerCands == nil {
			p.ccpErr = p.candsErr
			return nil
		}
		var judgeErr error
		p.ccp, p.ccpErr, judgeErr = uncertainty.JudgeAlternatives(ctx, m, p.answerCands)
		if judgeErr != nil {
			return fmt.Errorf("entailment of the answer's tokens with their alternatives, %s line %d (id %s): %w", file, recs[i].Line, recs[i].ID, judgeErr)
		}
		if p.ccpErr != nil && !errors.Is(p.ccpErr, uncertainty.ErrCCPPunctuation) && !errors.Is(p.ccpErr, likelihood.ErrNoLogprobs) {
			return fmt.Errorf("entailment of the answer's tokens with their alternatives, %s line %d (id %s): %w", file, recs[i].Line, recs[i].ID, p.ccpErr)
		}
		return nil
	})
}
