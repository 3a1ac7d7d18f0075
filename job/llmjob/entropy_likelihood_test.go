package llmjob

import (
	"context"
	"math"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/job"
)

// likelihoodRows: q1 with logprobs of every sample and of the answer
// (with top-2 alternatives), q2 with none.
const likelihoodRows = `{"id":"q1","prompt":"Capital of France?","samples":["paris","paris city","lyon"],"answer":"paris","reference":"paris",` +
	`"logprobs":[[{"token":"par","logprob":-0.1},{"token":"is","logprob":-0.2}],[{"token":"paris","logprob":-1}],[{"token":"l","logprob":-0.5},{"token":"y","logprob":-0.5},{"token":"on","logprob":-0.5}]],` +
	`"answer_logprobs":[{"token":"paris","logprob":-0.2,"top":[{"token":"paris","logprob":-0.2},{"token":"lyon","logprob":-2}]}]}` + "\n" +
	`{"id":"q2","prompt":"2+2?","samples":["4","four"],"answer":"5","reference":"4"}` + "\n"

func TestEntropyLikelihoodScores(t *testing.T) {
	fsys := fstest.MapFS{"a.jsonl": {Data: []byte(likelihoodRows)}}
	req := NewEntropyRequest()
	req.In, req.Scores = "a.jsonl", "pe,ne,msp,perplexity,mte"
	res, err := Entropy(context.Background(), job.Env{FS: fsys}, req)
	if err != nil {
		t.Fatal(err)
	}
	// mte of one token with top logprobs −0.2, −2, renormalised.
	z := math.Exp(-0.2) + math.Exp(-2)
	p1, p2 := math.Exp(-0.2)/z, math.Exp(-2)/z
	q1 := res.Items[0]
	for _, c := range []struct {
		key  string
		want float64
	}{
		{"pe", (0.3 + 1 + 1.5) / 3},
		{"ne", (0.15 + 1 + 0.5) / 3},
		{"msp", 1 - math.Exp(-0.2)},
		{"perplexity", math.Exp(0.2)},
		{"mte", -p1*math.Log(p1) - p2*math.Log(p2)},
	} {
		if v := q1.Score(c.key); v == nil || math.Abs(float64(*v)-c.want) > 1e-12 {
			t.Errorf("q1 %s = %v, want %v", c.key, v, c.want)
		}
		if v := res.Items[1].Score(c.key); v == nil || !math.IsNaN(float64(*v)) {
			t.Errorf("q2 %s = %v, want null", c.key, v)
		}
	}
	if q1.Reason != "" || !strings.Contains(res.Items[1].Reason, "pe, ne: no token logprobs") || !strings.Contains(res.Items[1].Reason, "msp, perplexity, mte: no answer_logprobs") {
		t.Errorf("reasons %q, %q", q1.Reason, res.Items[1].Reason)
	}
	if res.Summary.Skipped != 1 || len(res.Warnings) < 5 || !strings.Contains(strings.Join(res.Warnings, "\n"), "pe: unavailable on 1 of 2 scored rows, which are skipped (first, line 2: no token logprobs") {
		t.Errorf("summary %+v, warnings %q", res.Summary, res.Warnings)
	}

	// With the first sample held out it is the answer under test: msp
	// of its tokens; pe over the other two.
	req.HoldoutFirst = true
	fsys["b.jsonl"] = &fstest.MapFile{Data: []byte(strings.SplitAfter(likelihoodRows, "\n")[0])}
	req.In = "b.jsonl"
	req.Scores = "pe,msp,mte"
	res, err = Entropy(context.Background(), job.Env{FS: fsys}, req)
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Items[0].Score("pe"); v == nil || math.Abs(float64(*v)-2.5/2) > 1e-12 {
		t.Errorf("holdout pe = %v", v)
	}
	if v := res.Items[0].Score("msp"); v == nil || math.Abs(float64(*v)-(1-math.Exp(-0.3))) > 1e-12 {
		t.Errorf("holdout msp = %v", v)
	}
	// The sampled tokens carry no alternatives: mte is left out, not 0.
	if _, ok := res.Items[0].Scores["mte"]; ok || len(res.Warnings) != 2 ||
		!strings.Contains(res.Warnings[1], "left out: mte: no top-K alternatives") {
		t.Errorf("mte %v, warnings %q", res.Items[0].Scores, res.Warnings)
	}
}

// Logprobs of -1e308 are finite, but two of them sum to -Inf: pe, ne
// and perplexity come out infinite. Such a score is null with a reason
// and a warning, and stays out of the AUROC like any null; it was
// printed as null with no reason, yet ranked as the most uncertain, so a
// correct answer holding it pulled the AUROC down.
func TestEntropyInfiniteScoreIsNull(t *testing.T) {
	row := func(id string, correct bool, lp string) string {
		return `{"id":"` + id + `","samples":["a","b"],"correct":` + map[bool]string{true: "true", false: "false"}[correct] +
			`,"logprobs":[[{"token":"a","logprob":` + lp + `},{"token":"a","logprob":` + lp + `}],[{"token":"b","logprob":` + lp + `}]],` +
			`"answer_logprobs":[{"token":"a","logprob":` + lp + `},{"token":"a","logprob":` + lp + `}]}` + "\n"
	}
	rows := row("sure", true, "-0.1") + row("unsure", false, "-3") + row("huge", true, "-1e308") + row("mid", false, "-1")
	req := NewEntropyRequest()
	req.In, req.Scores = "a.jsonl", "pe,ne,perplexity"
	res, err := Entropy(context.Background(), job.Env{FS: fstest.MapFS{"a.jsonl": {Data: []byte(rows)}}}, req)
	if err != nil {
		t.Fatal(err)
	}
	huge := res.Items[2]
	for _, key := range []string{"pe", "perplexity"} {
		if v := huge.Score(key); v == nil || !math.IsNaN(float64(*v)) {
			t.Errorf("%s of -1e308 logprobs = %v, want null", key, v)
		}
	}
	if !strings.Contains(huge.Reason, "not finite") {
		t.Errorf("reason %q: want why the score is null", huge.Reason)
	}
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, "pe: unavailable on 1 of 4 scored rows") || !strings.Contains(w, "not finite") {
		t.Errorf("warnings %q", res.Warnings)
	}
	if res.Summary.Skipped != 1 || res.Summary.Labelled != 3 {
		t.Errorf("summary %+v: want the infinite row skipped", res.Summary)
	}
	for _, key := range []string{"pe", "ne", "perplexity"} {
		if v := res.Summary.AUROC[key]; v == nil || float64(*v) != 1 {
			t.Errorf("AUROC %s = %v, want 1 over the three finite rows", key, v)
		}
	}
}
