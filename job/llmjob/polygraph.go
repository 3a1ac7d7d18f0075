package llmjob

import (
	"context"
	"errors"
	"fmt"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/internal/text/tokenize"
	"github.com/genlens/genlens/metric/evalstat"
	"github.com/genlens/genlens/metric/uncertainty"
	"github.com/genlens/genlens/network/nli"
)

// What LM-Polygraph's estimators of the score table (cocoa-*,
// sentence-sar, semantic-density, luq) read besides the rows: the run's
// similarity of answers, and the entailment judge's label probabilities.

// Reasons the similarity of the answer under test is unavailable.
var (
	errNoAnswerText      = errors.New("no answer under test to compare with the samples (give answer in the rows, or set {holdout_first} to test the first sample)")
	errNoAnswerEmbedding = errors.New("the embedding similarity has no embedding of the answer under test (set {holdout_first} to test the first sample, or use {similarity} rougel)")
)

// attachSimilarities sets, for every scored row, the similarity of its
// answer under test with each scored sample and of the scored samples
// with each other, by the run's similarity: RougeL-F of the words (as
// the graph scores), the clipped cosine of the embeddings
// (uncertainty.CosineSimilarity), or the judge's probability of
// entailment both ways, averaged (uncertainty.EntailmentGraph; of the
// probabilities judgeProbabilities set). With the embedding similarity
// the answer under test has an embedding only when it is the first
// sample (holdoutFirst). The rows are shared among the CPUs, and a
// cancelled ctx starts no further row: RougeL over a row of long samples
// takes seconds, and a run of thousands of such rows minutes.
func attachSimilarities(ctx context.Context, prompts []uncertainty.Prompt, ps []*promptScores, scored []bool, sim uncertainty.Similarity, holdoutFirst bool) error {
	return par.For(ctx, len(ps), 0, func(_ context.Context, i int) error {
		return attachSimilarity(ctx, &prompts[i], ps[i], scored[i], sim, holdoutFirst)
	})
}

// attachSimilarity is attachSimilarities for one row. A row can hold
// thousands of long samples, millions of RougeL pairs: a cancelled ctx
// stops them, and attachSimilarity returns ctx's error.
func attachSimilarity(ctx context.Context, prompt *uncertainty.Prompt, p *promptScores, scored bool, sim uncertainty.Similarity, holdoutFirst bool) error {
	if !scored {
		return nil
	}
	if sim == uncertainty.SimilarityNLI {
		if p.sampleNLI != nil {
			p.sampleSim = uncertainty.EntailmentGraph(p.sampleNLI)
		}
		switch {
		case p.answerText == nil:
			p.simErr = errNoAnswerText
		case p.answerNLI != nil && p.answerNLIBack != nil:
			p.answerSim = make([]float64, len(p.samples))
			for k := range p.answerSim {
				p.answerSim[k] = (p.answerNLI[k][nli.Entailment] + p.answerNLIBack[k][nli.Entailment]) / 2
			}
		}
		return nil
	}
	if sim == uncertainty.SimilarityEmbedding {
		emb := prompt.Embeddings
		if emb == nil {
			p.simErr = errors.New("no embeddings for the embedding similarity")
			return nil
		}
		w := uncertainty.CosineSimilarity(emb)
		n, _ := w.Dims()
		if !holdoutFirst {
			p.sampleSim = w
			p.simErr = errNoAnswerEmbedding
			return nil
		}
		p.sampleSim = w.SliceSym(1, n)
		p.answerSim = make([]float64, n-1)
		for k := range p.answerSim {
			p.answerSim[k] = w.At(0, k+1)
		}
		return nil
	}
	words := make([][]string, len(p.samples))
	for k, s := range p.samples {
		words[k] = tokenize.Words(s)
	}
	w, err := uncertainty.RougeSimilarityContext(ctx, words)
	if err != nil {
		return err
	}
	p.sampleSim = w
	if p.answerText == nil {
		p.simErr = errNoAnswerText
		return nil
	}
	a := tokenize.Words(*p.answerText)
	p.answerSim = make([]float64, len(words))
	for k, w := range words {
		p.answerSim[k] = evalstat.RougeLF(a, w)
	}
	return nil
}

// judgeAsk says which pairs of a row judgeProbabilities asks the judge.
type judgeAsk struct {
	samples  bool // the ordered pairs of distinct samples
	diagonal bool // and each sample with itself
	answer   bool // the answer under test with each sample
	back     bool // and each sample with the answer under test
}

// judgeProbabilities sets, for every scored row, the judge's label
// probabilities of the pairs ask names: of its samples (sampleNLI; the
// diagonal entailment 1 unless judged) and of its answer under test with
// each sample (answerNLI, and answerNLIBack the other way), each text
// prefixed with the row's question as clusterAnswers prefixes them, so
// the pairs the clustering asked are not asked again of a caching judge.
// A row without an answer under test gets no answer judgements.
func judgeProbabilities(ctx context.Context, m nli.Model, file string, recs []dataio.Record, ps []*promptScores, scored []bool, ask judgeAsk, workers int) error {
	return par.For(ctx, len(recs), workers, func(ctx context.Context, i int) error {
		p := ps[i]
		if !scored[i] {
			return nil
		}
		text := func(s string) string {
			if p.question == "" {
				return s
			}
			return p.question + " " + s
		}
		n := len(p.samples)
		var pairs []nli.Pair
		if ask.samples {
			for a := range n {
				for b := range n {
					if a != b || ask.diagonal {
						pairs = append(pairs, nli.Pair{Premise: text(p.samples[a]), Hypothesis: text(p.samples[b])})
					}
				}
			}
		}
		withAnswer := (ask.answer || ask.back) && p.answerText != nil
		if withAnswer {
			for _, s := range p.samples {
				if ask.answer {
					pairs = append(pairs, nli.Pair{Premise: text(*p.answerText), Hypothesis: text(s)})
				}
				if ask.back {
					pairs = append(pairs, nli.Pair{Premise: text(s), Hypothesis: text(*p.answerText)})
				}
			}
		}
		if len(pairs) == 0 {
			return nil
		}
		probs, err := m.Classify(ctx, pairs)
		if err == nil && len(probs) != len(pairs) {
			err = fmt.Errorf("%d judgements for %d pairs", len(probs), len(pairs))
		}
		if err != nil {
			return fmt.Errorf("entailment probabilities of the answers of %s line %d (id %s): %w", file, recs[i].Line, recs[i].ID, err)
		}
		if ask.samples {
			p.sampleNLI = make([][][3]float64, n)
			for a := range n {
				p.sampleNLI[a] = make([][3]float64, n)
				p.sampleNLI[a][a] = [3]float64{nli.Entailment: 1}
				for b := range n {
					if a != b || ask.diagonal {
						p.sampleNLI[a][b], probs = probs[0], probs[1:]
					}
				}
			}
		}
		if withAnswer {
			for range p.samples {
				if ask.answer {
					p.answerNLI, probs = append(p.answerNLI, probs[0]), probs[1:]
				}
				if ask.back {
					p.answerNLIBack, probs = append(p.answerNLIBack, probs[0]), probs[1:]
				}
			}
		}
		return nil
	})
}

// probabilityScores lists the scores of defs that read the judge's
// probabilities, and whether they read those of the pairs of samples and
// of the answer's pairs.
func probabilityScores(defs []*scoreDef) (names []string, samples, answer bool) {
	for _, d := range defs {
		s := d.needs&uncertainty.NeedsEntailmentProbs != 0
		a := d.needs&uncertainty.NeedsAnswerEntailmentProbs != 0
		if s || a {
			names = append(names, d.name)
		}
		samples, answer = samples || s, answer || a
	}
	return names, samples, answer
}
