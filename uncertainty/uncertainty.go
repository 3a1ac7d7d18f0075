package uncertainty

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"

	"genlens/evalstat"
	"genlens/internal/par"
	"genlens/kernel"
	"genlens/kscore"
	"genlens/tokenize"
)

// DefaultRougeThreshold is the RougeL-F above which an answer counts as
// correct (Gruber & Buettner, ICML 2024, Section 5.3, following Kuhn et
// al. 2023).
const DefaultRougeThreshold = 0.3

// Prompt is one prompt's sampled answers and what is known about the
// answer under test.
type Prompt struct {
	ID      string
	Samples []string
	// Embeddings holds one row per sample; required by vector kernels.
	Embeddings *mat.Dense
	Answer     *string  // the answer under test, if not the first sample
	References []string // acceptable reference answers
	Correct    *bool    // given correctness; overrides the RougeL rule
}

// Options configures Evaluate.
type Options struct {
	// Kernel is the vector kernel applied to Embeddings; nil selects the
	// sequence kernel Sequence on word tokens.
	Kernel   kernel.Kernel
	Sequence kernel.CS
	// HoldoutFirst judges Samples[0] and scores uncertainty on Samples[1:].
	HoldoutFirst bool
	// RougeThreshold is the correctness threshold: an answer is correct
	// when its RougeL-F with a reference exceeds it. nil means
	// DefaultRougeThreshold; a threshold of 0 counts any answer sharing a
	// word with a reference as correct.
	RougeThreshold *float64
	// Progress, when set, is called after each prompt with the number of
	// prompts done and their total. It may be called from several
	// goroutines, but never concurrently.
	Progress func(done, total int)
}

// Result is the evaluation of one prompt. Scores are NaN when the prompt
// has fewer than two usable samples (Reason says why); Correct is nil when
// correctness cannot be determined (no answer, or no reference and no
// given label).
type Result struct {
	ID                string
	KernelEntropy     float64
	LexicalSimilarity float64
	Correct           *bool
	Reason            string
}

// Summary aggregates Results over the prompts with scores and a known
// correctness.
type Summary struct {
	N        int     // prompts
	Skipped  int     // prompts without scores
	Labelled int     // prompts with scores and known correctness
	Accuracy float64 // fraction correct among Labelled
	// AUROC of each score for detecting incorrect answers (the positive
	// class): kernel entropy as is, lexical similarity negated. NaN when
	// all labelled answers are correct, or all incorrect.
	AUROCKernelEntropy     float64
	AUROCLexicalSimilarity float64
}

// Evaluate scores every prompt (concurrently, through par.For) and
// summarises. A cancelled ctx stops it within one prompt's work per CPU
// and returns ctx's error. The results do not depend on the number of
// CPUs; when several prompts fail, the error is the first one's in
// prompt order.
func Evaluate(ctx context.Context, prompts []Prompt, opt Options) ([]Result, Summary, error) {
	if len(prompts) == 0 {
		return nil, Summary{}, errors.New("uncertainty: no prompts")
	}
	thr := DefaultRougeThreshold
	if opt.RougeThreshold != nil {
		thr = *opt.RougeThreshold
	}
	results := make([]Result, len(prompts))
	errs := make([]error, len(prompts))
	var mu sync.Mutex
	done := 0
	err := par.For(ctx, len(prompts), 0, func(_ context.Context, i int) error {
		results[i], errs[i] = evaluate(&prompts[i], opt, thr)
		if opt.Progress != nil {
			mu.Lock()
			done++
			opt.Progress(done, len(prompts))
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return nil, Summary{}, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, Summary{}, err
		}
	}
	return results, Summarize(results), nil
}

func evaluate(p *Prompt, opt Options, thr float64) (Result, error) {
	r := Result{ID: p.ID, KernelEntropy: math.NaN(), LexicalSimilarity: math.NaN()}
	samples, emb := p.Samples, p.Embeddings
	if emb != nil {
		if n, _ := emb.Dims(); n != len(samples) {
			return r, fmt.Errorf("uncertainty: prompt %s: %d embeddings for %d samples", p.ID, n, len(samples))
		}
	}
	var answer *string
	switch {
	case opt.HoldoutFirst && len(samples) > 0:
		answer = &samples[0]
		samples = samples[1:]
		if emb != nil {
			_, d := emb.Dims()
			if len(samples) > 0 {
				emb = emb.Slice(1, len(samples)+1, 0, d).(*mat.Dense)
			} else {
				emb = nil
			}
		}
	case !opt.HoldoutFirst:
		answer = p.Answer
	}
	switch {
	case p.Correct != nil:
		c := *p.Correct
		r.Correct = &c
	case answer != nil && len(p.References) > 0:
		c := false
		a := tokenize.Words(*answer)
		for _, ref := range p.References {
			if evalstat.RougeLF(a, tokenize.Words(ref)) > thr {
				c = true
				break
			}
		}
		r.Correct = &c
	}
	if len(samples) < 2 {
		r.Reason = fmt.Sprintf("%d usable sample(s); kernel entropy needs at least 2", len(samples))
		return r, nil
	}
	toks := make([][]string, len(samples))
	for i, s := range samples {
		toks[i] = tokenize.Words(s)
	}
	r.LexicalSimilarity = evalstat.LexicalSimilarity(toks)
	if opt.Kernel == nil {
		r.KernelEntropy = kscore.EntropyGram(opt.Sequence.Gram(toks))
		return r, nil
	}
	if emb == nil {
		r.Reason = "no embeddings for a vector kernel"
		r.LexicalSimilarity = math.NaN()
		return r, nil
	}
	r.KernelEntropy = kscore.Entropy(opt.Kernel, emb)
	return r, nil
}

// Summarize aggregates results (see Summary).
func Summarize(results []Result) Summary {
	s := Summary{N: len(results), AUROCKernelEntropy: math.NaN(), AUROCLexicalSimilarity: math.NaN(), Accuracy: math.NaN()}
	var ke, ls []float64
	var wrong []bool
	correct := 0
	for _, r := range results {
		if math.IsNaN(r.KernelEntropy) {
			s.Skipped++
			continue
		}
		if r.Correct == nil {
			continue
		}
		s.Labelled++
		if *r.Correct {
			correct++
		}
		ke = append(ke, r.KernelEntropy)
		ls = append(ls, -r.LexicalSimilarity)
		wrong = append(wrong, !*r.Correct)
	}
	if s.Labelled == 0 {
		return s
	}
	s.Accuracy = float64(correct) / float64(s.Labelled)
	if a, err := evalstat.AUROC(ke, wrong); err == nil {
		s.AUROCKernelEntropy = a
	}
	if a, err := evalstat.AUROC(ls, wrong); err == nil {
		s.AUROCLexicalSimilarity = a
	}
	return s
}
