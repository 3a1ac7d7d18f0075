package uncertainty

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/metric/kernel"
)

func ptr[T any](v T) *T { return &v }

func TestEvaluateCorrectnessRules(t *testing.T) {
	prompts := []Prompt{
		// RougeL-F("the city of paris", "paris") = 2·1/(4+1) = 0.4 > 0.3.
		{ID: "rouge-yes", Samples: []string{"a", "b"}, Answer: ptr("The city of Paris"), References: []string{"Paris"}},
		// 2·1/(5+1) = 0.333 > 0.3 with the second reference only.
		{ID: "second-ref", Samples: []string{"a", "b"}, Answer: ptr("it is the capital paris"), References: []string{"Lyon", "Paris"}},
		// 2·1/(6+1) = 0.286 < 0.3.
		{ID: "rouge-no", Samples: []string{"a", "b"}, Answer: ptr("it is the capital city paris"), References: []string{"Paris"}},
		// A given label wins over the rule.
		{ID: "given", Samples: []string{"a", "b"}, Answer: ptr("Paris"), References: []string{"Paris"}, Correct: ptr(false)},
		// No answer: unknown.
		{ID: "unknown", Samples: []string{"a", "b"}, References: []string{"Paris"}},
	}
	res, sum, err := Evaluate(context.Background(), prompts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []*bool{ptr(true), ptr(true), ptr(false), ptr(false), nil}
	for i, r := range res {
		if (r.Correct == nil) != (want[i] == nil) || (r.Correct != nil && *r.Correct != *want[i]) {
			t.Errorf("%s: correct = %v, want %v", r.ID, r.Correct, want[i])
		}
	}
	if sum.Labelled != 4 || sum.Accuracy != 0.5 {
		t.Errorf("summary %+v", sum)
	}
}

func TestHoldoutFirstUsesOnlyTheRest(t *testing.T) {
	// samples[0] is judged; the other samples all agree, so the entropy
	// is -1 whatever samples[0] says.
	p := Prompt{ID: "q", Samples: []string{"London", "Paris", "paris", "PARIS."}, References: []string{"Paris"}}
	res, _, err := Evaluate(context.Background(), []Prompt{p}, Options{HoldoutFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	if r.KernelEntropy != -1 || r.LexicalSimilarity != 1 || r.Correct == nil || *r.Correct {
		t.Errorf("holdout: %+v", r)
	}
	// Without holdout, no answer -> unknown correctness, all four samples.
	res, _, _ = Evaluate(context.Background(), []Prompt{p}, Options{})
	if res[0].Correct != nil || res[0].KernelEntropy != -0.5 { // 3 of 6 pairs agree
		t.Errorf("no holdout: %+v", res[0])
	}
	// Two samples with holdout leave one: skipped with a reason.
	res, sum, _ := Evaluate(context.Background(), []Prompt{{ID: "s", Samples: []string{"a", "b"}, References: []string{"a"}}}, Options{HoldoutFirst: true})
	if !math.IsNaN(res[0].KernelEntropy) || res[0].Reason == "" || sum.Skipped != 1 {
		t.Errorf("short prompt: %+v %+v", res[0], sum)
	}
}

func TestHoldoutFirstSlicesEmbeddings(t *testing.T) {
	emb := mat.NewDense(3, 1, []float64{100, 0, 1})
	res, _, err := Evaluate(context.Background(), []Prompt{{ID: "e", Samples: []string{"x", "y", "z"}, Embeddings: emb}}, Options{Kernel: kernel.Linear{}, HoldoutFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].KernelEntropy != 0 { // rows 0 and 1: dot product 0
		t.Errorf("entropy %v, want 0 (row 0 must be held out)", res[0].KernelEntropy)
	}
	if _, _, err := Evaluate(context.Background(), []Prompt{{ID: "bad", Samples: []string{"x"}, Embeddings: emb}}, Options{Kernel: kernel.Linear{}}); err == nil {
		t.Error("3 embeddings for 1 sample: want error")
	}
}

func TestSummaryAUROC(t *testing.T) {
	// Incorrect answers have the higher entropy and the lower lexical
	// similarity: both AUROCs are 1.
	prompts := []Prompt{
		{ID: "1", Samples: []string{"a b", "a b", "a b"}, Correct: ptr(true)},
		{ID: "2", Samples: []string{"a b", "a b", "c d"}, Correct: ptr(true)},
		{ID: "3", Samples: []string{"a b", "c d", "e f"}, Correct: ptr(false)},
	}
	_, sum, err := Evaluate(context.Background(), prompts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.AUROCKernelEntropy != 1 || sum.AUROCLexicalSimilarity != 1 {
		t.Errorf("%+v", sum)
	}
	// All correct: AUROC undefined.
	prompts[2].Correct = ptr(true)
	_, sum, _ = Evaluate(context.Background(), prompts, Options{})
	if !math.IsNaN(sum.AUROCKernelEntropy) {
		t.Errorf("AUROC with one class = %v, want NaN", sum.AUROCKernelEntropy)
	}
}

func TestRougeThresholdZero(t *testing.T) {
	// RougeL-F("it is the capital city paris", "paris") = 0.286; "lyon"
	// shares no word with "paris" (RougeL-F 0).
	prompts := []Prompt{
		{ID: "overlap", Samples: []string{"a", "b"}, Answer: ptr("it is the capital city paris"), References: []string{"Paris"}},
		{ID: "disjoint", Samples: []string{"a", "b"}, Answer: ptr("Lyon"), References: []string{"Paris"}},
	}
	for _, c := range []struct {
		name string
		opt  Options
		want []bool
	}{
		{"unset means the default 0.3", Options{}, []bool{false, false}},
		{"set 0 means 0", Options{RougeThreshold: ptr(0.0)}, []bool{true, false}},
		{"set 0.2", Options{RougeThreshold: ptr(0.2)}, []bool{true, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, _, err := Evaluate(context.Background(), prompts, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res {
				if r.Correct == nil || *r.Correct != c.want[i] {
					t.Errorf("%s: correct = %v, want %v", r.ID, r.Correct, c.want[i])
				}
			}
		})
	}
}

func TestEvaluateProgressAndCancel(t *testing.T) {
	prompts := make([]Prompt, 50)
	for i := range prompts {
		prompts[i] = Prompt{ID: fmt.Sprint(i), Samples: []string{"a b", "a c", "b c"}}
	}
	calls, last := 0, 0
	opt := Options{Progress: func(done, total int) {
		calls++
		if done != last+1 || total != len(prompts) {
			t.Errorf("progress(%d, %d) after %d", done, total, last)
		}
		last = done
	}}
	if _, _, err := Evaluate(context.Background(), prompts, opt); err != nil || calls != len(prompts) {
		t.Errorf("err %v, %d progress calls, want %d", err, calls, len(prompts))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Evaluate(ctx, prompts, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err %v, want context.Canceled", err)
	}
}

// TestEvaluateGraphScores: the graph scores of a prompt are those of the
// similarity matrix of its scored samples (samples[1:] under
// HoldoutFirst), and only the scores asked for are computed.
func TestEvaluateGraphScores(t *testing.T) {
	// samples[1:]: "paris" twice and "lyon": RougeL W = [J₂ 0; 0 1], two
	// clusters of 2 and 1: EigV 2, Degree 1 − (4 + 1)/9 = 4/9, KLE with
	// L eigenvalues 0, 0, 2.
	p := Prompt{ID: "q", Samples: []string{"rome", "Paris", "paris", "Lyon"}, References: []string{"Paris"},
		Embeddings: mat.NewDense(4, 2, []float64{-1, 0, 1, 0, 1, 0.1, 0, 1})}
	res, sum, err := Evaluate(context.Background(), []Prompt{p}, Options{Scores: AllScores, HoldoutFirst: true, KLETime: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	if r.Correct == nil || *r.Correct {
		t.Errorf("samples[0] rome judged %v, want false", r.Correct)
	}
	wantKLE := entropyOf(1, 1, math.Exp(-0.5*2))
	if math.Abs(r.KLE-wantKLE) > 1e-12 || math.Abs(r.EigV-2) > 1e-12 || math.Abs(r.Degree-4.0/9) > 1e-15 {
		t.Errorf("graph scores %v %v %v, want %v 2 4/9", r.KLE, r.EigV, r.Degree, wantKLE)
	}
	if r.KernelEntropy != -1.0/3 || r.LexicalSimilarity != 1.0/3 {
		t.Errorf("kernel entropy %v, lexical similarity %v, want -1/3 and 1/3", r.KernelEntropy, r.LexicalSimilarity)
	}
	if sum.Labelled != 1 || sum.Skipped != 0 {
		t.Errorf("summary %+v", sum)
	}

	// The embedding similarity: rows (1, 0), (1, 0.1), (0, 1) of
	// samples[1:]; cosines c = 1/√1.01, 0 and 0.1/√1.01.
	res, _, err = Evaluate(context.Background(), []Prompt{p}, Options{Scores: []Score{ScoreDegree}, Similarity: SimilarityEmbedding, HoldoutFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	c := 1 / math.Sqrt(1.01)
	if want := 1 - (3+2*(c+0.1*c))/9; math.Abs(res[0].Degree-want) > 1e-15 {
		t.Errorf("embedding Degree %v, want %v", res[0].Degree, want)
	}
	if !math.IsNaN(res[0].KernelEntropy) || !math.IsNaN(res[0].LexicalSimilarity) || !math.IsNaN(res[0].KLE) || !math.IsNaN(res[0].EigV) {
		t.Errorf("scores not asked for must be NaN: %+v", res[0])
	}
	// Without embeddings the embedding similarity skips the prompt.
	p.Embeddings = nil
	res, sum, err = Evaluate(context.Background(), []Prompt{p}, Options{Scores: []Score{ScoreEigV}, Similarity: SimilarityEmbedding})
	if err != nil || res[0].Reason != "no embeddings for the embedding similarity" || sum.Skipped != 1 {
		t.Errorf("no embeddings: %+v %+v %v", res[0], sum, err)
	}
}

// TestGraphScoresAUROCOrientation: EigV, Degree and KLE grow with the
// disagreement of the samples, so like kernel entropy they enter the
// AUROC as they are; lexical similarity is negated. With the wrong
// answers the ones with the most diverse samples, every AUROC is 1.
func TestGraphScoresAUROCOrientation(t *testing.T) {
	prompts := []Prompt{
		{ID: "1", Samples: []string{"a b", "a b", "a b", "a b"}, Correct: ptr(true)},
		{ID: "2", Samples: []string{"a b", "a b", "a b", "c d"}, Correct: ptr(true)},
		{ID: "3", Samples: []string{"a b", "a b", "c d", "e f"}, Correct: ptr(false)},
		{ID: "4", Samples: []string{"a b", "c d", "e f", "g h"}, Correct: ptr(false)},
	}
	_, sum, err := Evaluate(context.Background(), prompts, Options{Scores: AllScores})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range AllScores {
		if sum.AUROC(s) != 1 {
			t.Errorf("AUROC %s = %v, want 1", s, sum.AUROC(s))
		}
	}
	// The default set leaves the graph AUROCs NaN.
	_, sum, _ = Evaluate(context.Background(), prompts, Options{})
	if sum.AUROCKernelEntropy != 1 || !math.IsNaN(sum.AUROCKLE) || !math.IsNaN(sum.AUROCEigV) || !math.IsNaN(sum.AUROCDegree) {
		t.Errorf("default scores: %+v", sum)
	}
}

func TestEvaluateRejectsOptions(t *testing.T) {
	p := []Prompt{{ID: "q", Samples: []string{"a", "b"}}}
	for _, opt := range []Options{
		{Scores: []Score{"entropy"}},
		{Scores: []Score{}},
		{Similarity: "jaccard"},
		{KLETime: -1},
		{KLETime: math.Inf(1)},
		{KLETime: math.NaN()},
	} {
		if _, _, err := Evaluate(context.Background(), p, opt); err == nil {
			t.Errorf("%+v: want an error", opt)
		}
	}
}

// TestLexSimFromGraphBitForBit: with the RougeL graph at hand, lexical
// similarity is read from it rather than recomputed; it must equal
// evalstat.LexicalSimilarity exactly, on the real TriviaQA answers when
// present and on a few awkward samples (empty answers, repeats).
func TestLexSimFromGraphBitForBit(t *testing.T) {
	prompts := []Prompt{
		{ID: "a", Samples: []string{"", "", "x"}},
		{ID: "b", Samples: []string{"the cat sat", "a cat sat down", "cat", "the the the", "sat cat the"}},
		{ID: "c", Samples: []string{"1.5 million", "one and a half million", "1,500,000", "about 1.5 million people"}},
	}
	if dir := os.Getenv("GENLENS_SHARED_DATA"); dir != "" {
		recs, err := dataio.ReadRecords(filepath.Join(dir, "llm", "triviaqa_llama13b_500x20.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			prompts = append(prompts, Prompt{ID: r.ID, Samples: r.Samples})
		}
	} else {
		t.Log("GENLENS_SHARED_DATA not set: synthetic samples only")
	}
	def, _, err := Evaluate(context.Background(), prompts, Options{Scores: []Score{ScoreLexSim}})
	if err != nil {
		t.Fatal(err)
	}
	all, _, err := Evaluate(context.Background(), prompts, Options{Scores: []Score{ScoreLexSim, ScoreDegree}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range prompts {
		if math.Float64bits(def[i].LexicalSimilarity) != math.Float64bits(all[i].LexicalSimilarity) {
			t.Errorf("%s: lexical similarity %v alone, %v beside the graph", prompts[i].ID, def[i].LexicalSimilarity, all[i].LexicalSimilarity)
		}
	}
}

// A Scorer gives Evaluate's result for one prompt, and refuses the
// options Evaluate refuses.
func TestScorer(t *testing.T) {
	p := Prompt{ID: "q", Samples: []string{"Paris", "Paris is", "Lyon", "the capital is Paris"}}
	opt := Options{Sequence: DefaultSequence, Scores: AllScores} // none NaN, which DeepEqual would tell apart
	all, _, err := Evaluate(context.Background(), []Prompt{p}, opt)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewScorer(opt)
	if err != nil {
		t.Fatal(err)
	}
	one, err := s.Evaluate(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(one, all[0]) {
		t.Errorf("Scorer.Evaluate = %+v, Evaluate's = %+v", one, all[0])
	}
	opt.Similarity = "cosine"
	if _, err := NewScorer(opt); err == nil {
		t.Errorf("unknown similarity accepted")
	}
}
