package uncertainty

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/genlens/genlens/network/nli"
)

// pairJudge gives each pair an entailment probability that names it:
// 0.1 × (the premise's last letter's place in the alphabet) + 0.01 × the
// hypothesis's, so that a judgement put in the wrong place shows.
type pairJudge struct{ asked []nli.Pair }

func (j *pairJudge) Name() string { return "pairs" }

func (j *pairJudge) Classify(_ context.Context, pairs []nli.Pair) ([][3]float64, error) {
	j.asked = append(j.asked, pairs...)
	out := make([][3]float64, len(pairs))
	for i, p := range pairs {
		e := 0.1*float64(p.Premise[len(p.Premise)-1]-'a') + 0.01*float64(p.Hypothesis[len(p.Hypothesis)-1]-'a')
		out[i] = [3]float64{nli.Entailment: e, nli.Neutral: 1 - e}
	}
	return out, nil
}

func TestJudgeProbabilities(t *testing.T) {
	samples := []string{"x a", "x b", "x c"}
	answer := "x d"
	want := func(p, h byte) float64 { return 0.1*float64(p-'a') + 0.01*float64(h-'a') }
	for _, ask := range []JudgeAsk{{Samples: true}, {Samples: true, Diagonal: true}, {Answer: true}, {Answer: true, Back: true}, {Samples: true, Answer: true, Back: true}} {
		j := &pairJudge{}
		got, err := JudgeProbabilities(context.Background(), j, "Q?", samples, &answer, ask)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range j.asked {
			if !strings.HasPrefix(p.Premise, "Q? x ") || !strings.HasPrefix(p.Hypothesis, "Q? x ") {
				t.Errorf("%+v: pair %+v without the question before it", ask, p)
			}
		}
		if (got.Samples != nil) != ask.Samples || (got.Answer != nil) != ask.Answer || (got.AnswerBack != nil) != ask.Back {
			t.Fatalf("%+v: %+v", ask, got)
		}
		for a := range got.Samples {
			for b := range got.Samples[a] {
				w := want(byte('a'+a), byte('a'+b))
				if a == b && !ask.Diagonal {
					w = 1 // not asked: entailment
				}
				if math.Abs(got.Samples[a][b][nli.Entailment]-w) > 1e-12 {
					t.Errorf("%+v: samples (%d, %d): %v, want %v", ask, a, b, got.Samples[a][b], w)
				}
			}
		}
		for k := range got.Answer {
			if w := want('d', byte('a'+k)); math.Abs(got.Answer[k][nli.Entailment]-w) > 1e-12 {
				t.Errorf("%+v: answer with %d: %v, want %v", ask, k, got.Answer[k], w)
			}
		}
		for k, s := range got.AnswerSimilarity() {
			if w := (want('d', byte('a'+k)) + want(byte('a'+k), 'd')) / 2; math.Abs(s-w) > 1e-12 {
				t.Errorf("%+v: answer's similarity with %d: %v, want %v", ask, k, s, w)
			}
		}
	}
	// No answer under test: no answer pairs asked.
	j := &pairJudge{}
	got, err := JudgeProbabilities(context.Background(), j, "", samples, nil, JudgeAsk{Answer: true, Back: true})
	if err != nil || got.Answer != nil || len(j.asked) != 0 {
		t.Errorf("without an answer: %+v, %v, asked %v", got, err, j.asked)
	}
}

// The similarity of one text with others is the samples' matrix's row.
func TestRougeTextSimilarity(t *testing.T) {
	texts := []string{"the capital is Paris", "Paris", "it is Lyon", "the capital of France is Paris"}
	w, err := RougeSampleSimilarity(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range texts {
		row := RougeTextSimilarity(s, texts)
		for k := range texts {
			if k != i && row[k] != w.At(i, k) {
				t.Errorf("(%d, %d): %v, the matrix %v", i, k, row[k], w.At(i, k))
			}
		}
	}
	if v := RougeTextSimilarity("Paris", []string{"Lyon"})[0]; v != 0 {
		t.Errorf("disjoint texts: %v", v)
	}
}
