package uncertainty

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/membudget"
	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/internal/text/tokenize"
	"github.com/genlens/genlens/metric/evalstat"
	"github.com/genlens/genlens/metric/kernel"
	"github.com/genlens/genlens/metric/kscore"
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
	// Entailment[i][j] holds the entailment judge's label probabilities
	// (indexed by nli.Label) of the ordered pair (sample i, sample j) of
	// the samples Evaluate scores (Samples[1:] with HoldoutFirst), the
	// diagonal judged too; required by SimilarityNLI.
	Entailment [][][3]float64
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
	// Scores are the scores to compute; nil means DefaultScores. Those
	// not asked for are NaN in every Result and Summary.
	Scores []Score
	// Similarity is the similarity of the graph scores (KLE, EigV,
	// Degree, Ecc); "" means SimilarityRougeL. SimilarityEmbedding needs
	// Embeddings, SimilarityNLI Entailment.
	Similarity Similarity
	// KLETime is the heat-kernel time t of KLE; 0 means DefaultKLETime.
	KLETime float64
	// Progress, when set, is called after each prompt with the number of
	// prompts done and their total. It may be called from several
	// goroutines, but never concurrently.
	Progress func(done, total int)
}

// Result is the evaluation of one prompt. Scores are NaN when the prompt
// has fewer than two usable samples (Reason says why) and when they were
// not asked for; Correct is nil when correctness cannot be determined (no
// answer, or no reference and no given label).
type Result struct {
	ID                string
	KernelEntropy     float64
	LexicalSimilarity float64
	KLE               float64 // kernel language entropy of the similarity graph (see KLE)
	EigV              float64 // see EigV
	Degree            float64 // see Degree
	Ecc               float64 // see Ecc
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
	// class). The uncertainties (kernel entropy, KLE, EigV, Degree) enter
	// as they are, the confidence lexical similarity negated, so that 0.5
	// is chance and higher is better for every score. NaN when all
	// labelled answers are correct, or all incorrect, and for scores not
	// computed.
	AUROCKernelEntropy     float64
	AUROCLexicalSimilarity float64
	AUROCKLE               float64
	AUROCEigV              float64
	AUROCDegree            float64
	AUROCEcc               float64
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
	opt, set, thr, err := opt.settled()
	if err != nil {
		return nil, Summary{}, err
	}
	results := make([]Result, len(prompts))
	errs := make([]error, len(prompts))
	var mu sync.Mutex
	done := 0
	err = par.For(ctx, len(prompts), 0, func(_ context.Context, i int) error {
		results[i], errs[i] = evaluate(ctx, &prompts[i], opt, set, thr)
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
	return results, summarize(results, set), nil
}

// Scorer scores prompts one at a time as they come (an online proxy),
// with options checked once, when it is made.
type Scorer struct {
	opt Options
	set scoreSet
	thr float64
}

// NewScorer returns the scorer of opt, or why opt is not valid (as
// Evaluate refuses it).
func NewScorer(opt Options) (*Scorer, error) {
	opt, set, thr, err := opt.settled()
	if err != nil {
		return nil, err
	}
	return &Scorer{opt: opt, set: set, thr: thr}, nil
}

// Evaluate scores one prompt as Evaluate scores each, on the caller's
// goroutine and without a summary.
func (s *Scorer) Evaluate(p Prompt) (Result, error) {
	return evaluate(context.Background(), &p, s.opt, s.set, s.thr)
}

// settled returns opt with its defaults filled in, its scores and its
// RougeL threshold of correctness, or why opt is not valid.
func (opt Options) settled() (Options, scoreSet, float64, error) {
	thr := DefaultRougeThreshold
	if opt.RougeThreshold != nil {
		thr = *opt.RougeThreshold
	}
	set, err := newScoreSet(opt.Scores)
	if err != nil {
		return opt, set, thr, err
	}
	switch opt.Similarity {
	case "":
		opt.Similarity = SimilarityRougeL
	case SimilarityRougeL, SimilarityEmbedding, SimilarityNLI:
	default:
		return opt, set, thr, fmt.Errorf("uncertainty: unknown similarity %q (want %s, %s or %s)", string(opt.Similarity), SimilarityRougeL, SimilarityEmbedding, SimilarityNLI)
	}
	if opt.KLETime == 0 {
		opt.KLETime = DefaultKLETime
	}
	if !(opt.KLETime > 0) || math.IsInf(opt.KLETime, 1) {
		return opt, set, thr, fmt.Errorf("uncertainty: KLE time %v: want a positive finite number", opt.KLETime)
	}
	return opt, set, thr, nil
}

// evaluate scores one prompt; a cancelled ctx stops the pairwise loops
// over its samples (RougeSimilarity, the lexical similarity, the CS
// kernel's Gram matrix) with ctx's error.
func evaluate(ctx context.Context, p *Prompt, opt Options, set scoreSet, thr float64) (Result, error) {
	nan := math.NaN()
	r := Result{ID: p.ID, KernelEntropy: nan, LexicalSimilarity: nan, KLE: nan, EigV: nan, Degree: nan, Ecc: nan}
	samples, emb := p.Samples, p.Embeddings
	if emb != nil {
		if n, _ := emb.Dims(); n != len(samples) {
			return r, fmt.Errorf("uncertainty: prompt %s: %d embeddings for %d samples", p.ID, n, len(samples))
		}
	}
	if opt.HoldoutFirst && len(samples) > 0 {
		samples = samples[1:]
		if emb != nil {
			_, d := emb.Dims()
			if len(samples) > 0 {
				emb = emb.Slice(1, len(samples)+1, 0, d).(*mat.Dense)
			} else {
				emb = nil
			}
		}
	}
	r.Correct = Correctness(p, opt.HoldoutFirst, thr)
	if len(samples) < 2 {
		what := "kernel entropy needs"
		if !set.has(ScoreKernelEntropy) {
			what = "the scores need"
		}
		r.Reason = fmt.Sprintf("%d usable sample(s); %s at least 2", len(samples), what)
		return r, nil
	}
	// The similarity matrix of the samples, the graph's weights, its
	// Laplacian and the eigensolver's copy: a few m × m at once.
	if err := membudget.Check("the similarity matrices of one prompt's samples", 4, len(samples), len(samples)); err != nil {
		return r, fmt.Errorf("uncertainty: prompt %s: %w", p.ID, err)
	}
	vectorKernel := opt.Kernel != nil && set.has(ScoreKernelEntropy)
	embeddingGraph := set.graph() && opt.Similarity == SimilarityEmbedding
	nliGraph := set.graph() && opt.Similarity == SimilarityNLI
	if nliGraph {
		if p.Entailment == nil {
			r.Reason = "no entailment probabilities of the samples for the nli similarity"
			return r, nil
		}
		if len(p.Entailment) != len(samples) {
			return r, fmt.Errorf("uncertainty: prompt %s: entailment of %d samples for %d", p.ID, len(p.Entailment), len(samples))
		}
		for i, row := range p.Entailment {
			if len(row) != len(samples) {
				return r, fmt.Errorf("uncertainty: prompt %s: entailment row %d has %d entries for %d samples", p.ID, i, len(row), len(samples))
			}
		}
	}
	if emb == nil && (vectorKernel || embeddingGraph) {
		r.Reason = "no embeddings for a vector kernel"
		if !vectorKernel {
			r.Reason = "no embeddings for the embedding similarity"
		}
		return r, nil
	}
	var toks [][]string
	if set.has(ScoreLexSim) || (set.has(ScoreKernelEntropy) && !vectorKernel) || (set.graph() && !embeddingGraph && !nliGraph) {
		toks = make([][]string, len(samples))
		for i, s := range samples {
			toks[i] = tokenize.Words(s)
		}
	}
	var rouge *mat.SymDense
	var err error
	if set.graph() && !embeddingGraph && !nliGraph {
		if rouge, err = RougeSimilarityContext(ctx, toks); err != nil {
			return r, err
		}
	}
	switch {
	case set.has(ScoreLexSim) && rouge != nil:
		r.LexicalSimilarity = meanUpper(rouge)
	case set.has(ScoreLexSim):
		if r.LexicalSimilarity, err = evalstat.LexicalSimilarityContext(ctx, toks); err != nil {
			return r, err
		}
	}
	if set.has(ScoreKernelEntropy) {
		if vectorKernel {
			r.KernelEntropy = kscore.Entropy(opt.Kernel, emb)
		} else {
			// Its t-grams, priced before they are counted: t × words.
			if err := membudget.CheckBytes("the t-grams of one prompt's samples", len(toks), opt.Sequence.T, opt.Sequence.CostBytes(toks)); err != nil {
				return r, fmt.Errorf("uncertainty: prompt %s: %w", p.ID, err)
			}
			g, err := opt.Sequence.GramContext(ctx, toks)
			if err != nil {
				return r, err
			}
			r.KernelEntropy = kscore.EntropyGram(g)
		}
	}
	if set.graph() {
		w := rouge
		switch {
		case embeddingGraph:
			w = CosineSimilarity(emb)
		case nliGraph:
			w = EntailmentGraph(p.Entailment)
		}
		g := newGraph(w)
		if set.has(ScoreKLE) {
			if nliGraph {
				r.KLE = KLE(KLEEntailmentGraph(p.Entailment), opt.KLETime)
			} else {
				r.KLE = g.kle(opt.KLETime)
			}
		}
		if set.has(ScoreEigV) {
			r.EigV = g.eigv()
		}
		if set.has(ScoreDegree) {
			r.Degree = g.degree()
		}
		if set.has(ScoreEcc) {
			r.Ecc = g.ecc(EccThreshold)
		}
	}
	return r, nil
}

// Correctness judges the answer under test of p: its given label, else
// whether its RougeL-F with one of the references exceeds thr; nil when
// neither is known. The answer under test is Samples[0] with
// holdoutFirst, p.Answer otherwise.
func Correctness(p *Prompt, holdoutFirst bool, thr float64) *bool {
	answer := p.Answer
	if holdoutFirst {
		answer = nil
		if len(p.Samples) > 0 {
			answer = &p.Samples[0]
		}
	}
	switch {
	case p.Correct != nil:
		c := *p.Correct
		return &c
	case answer != nil && len(p.References) > 0:
		a := tokenize.Words(*answer)
		for _, ref := range p.References {
			if evalstat.RougeLF(a, tokenize.Words(ref)) > thr {
				return new(true)
			}
		}
		return new(false)
	}
	return nil
}

// meanUpper returns the mean of w above the diagonal: with the RougeL-F
// matrix, evalstat.LexicalSimilarity of the samples, bit for bit (the
// same terms summed in the same order), without their LCS again.
func meanUpper(w *mat.SymDense) float64 {
	n := w.SymmetricDim()
	var sum float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			sum += w.At(i, j)
		}
	}
	return sum / float64(n*(n-1)/2)
}

// Summarize aggregates results (see Summary) over scores, DefaultScores
// when none are given. A prompt is skipped when one of them is NaN.
func Summarize(results []Result, scores ...Score) Summary {
	if len(scores) == 0 {
		scores = DefaultScores
	}
	var set scoreSet
	for _, s := range scores {
		if s.Valid() {
			set |= 1 << s.index()
		}
	}
	return summarize(results, set)
}

func summarize(results []Result, set scoreSet) Summary {
	nan := math.NaN()
	s := Summary{N: len(results), Accuracy: nan,
		AUROCKernelEntropy: nan, AUROCLexicalSimilarity: nan, AUROCKLE: nan, AUROCEigV: nan, AUROCDegree: nan, AUROCEcc: nan}
	var scores []Score
	for _, sc := range AllScores {
		if set.has(sc) {
			scores = append(scores, sc)
		}
	}
	values := make([][]float64, len(scores))
	var wrong []bool
	correct := 0
results:
	for _, r := range results {
		for _, sc := range scores {
			if math.IsNaN(r.Value(sc)) {
				s.Skipped++
				continue results
			}
		}
		if r.Correct == nil {
			continue
		}
		s.Labelled++
		if *r.Correct {
			correct++
		}
		for k, sc := range scores {
			v := r.Value(sc)
			if sc == ScoreLexSim {
				v = -v // a confidence: low similarity flags a wrong answer
			}
			values[k] = append(values[k], v)
		}
		wrong = append(wrong, !*r.Correct)
	}
	if s.Labelled == 0 {
		return s
	}
	s.Accuracy = float64(correct) / float64(s.Labelled)
	for k, sc := range scores {
		if a, err := evalstat.AUROC(values[k], wrong); err == nil {
			s.setAUROC(sc, a)
		}
	}
	return s
}
