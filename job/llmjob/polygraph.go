package llmjob

import (
	"context"
	"errors"
	"fmt"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/tensor/par"
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
		default:
			p.answerSim = uncertainty.Judged{Answer: p.answerNLI, AnswerBack: p.answerNLIBack}.AnswerSimilarity()
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
	w, err := uncertainty.RougeSampleSimilarity(ctx, p.samples)
	if err != nil {
		return err
	}
	p.sampleSim = w
	if p.answerText == nil {
		p.simErr = errNoAnswerText
		return nil
	}
	p.answerSim = uncertainty.RougeTextSimilarity(*p.answerText, p.samples)
	return nil
}

// judgeProbabilities sets, for every scored row, the judge's label
// probabilities of the pairs ask names: of its samples (sampleNLI; the
// diagonal entailment 1 unless judged) and of its answer under test with
// each sample (answerNLI, and answerNLIBack the other way), each text
// prefixed with the row's question as clusterAnswers prefixes them, so
// the pairs the clustering asked are not asked again of a caching judge.
// A row without an answer under test gets no answer judgements.
func judgeProbabilities(ctx context.Context, m nli.Model, file string, recs []dataio.Record, ps []*promptScores, scored []bool, ask uncertainty.JudgeAsk, workers int) error {
	return par.For(ctx, len(recs), workers, func(ctx context.Context, i int) error {
		p := ps[i]
		if !scored[i] {
			return nil
		}
		j, err := uncertainty.JudgeProbabilities(ctx, m, p.question, p.samples, p.answerText, ask)
		if err != nil {
			return fmt.Errorf("entailment probabilities of the answers of %s line %d (id %s): %w", file, recs[i].Line, recs[i].ID, err)
		}
		p.sampleNLI, p.answerNLI, p.answerNLIBack = j.Samples, j.Answer, j.AnswerBack
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
