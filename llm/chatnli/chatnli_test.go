package chatnli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/network/nli"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want nli.Label
		ok   bool
	}{
		{"entailment", nli.Entailment, true},
		{" Entailment.\n", nli.Entailment, true},
		{"CONTRADICTION", nli.Contradiction, true},
		{"neutral", nli.Neutral, true},
		{"entails", nli.Neutral, false},
		{"yes", nli.Neutral, false},
		{"entailment or neutral", nli.Neutral, false},
		{"", nli.Neutral, false},
	} {
		l, ok := Parse(tc.in)
		if l != tc.want || ok != tc.ok {
			t.Errorf("Parse(%q) = %v, %v; want %v, %v", tc.in, l, ok, tc.want, tc.ok)
		}
	}
}

// The judge answers from the premise's text; each ordered pair is asked
// once, and a malformed answer is refused (neutral, counted), never read
// as entailment.
func TestJudge(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		c := req.Messages[0].Content
		ans := "neutral"
		switch {
		case strings.Contains(c, "Answer 1: Q: Paris"):
			ans = "Entailment."
		case strings.Contains(c, "Answer 1: Q: garbled"):
			ans = "I think it entails, probably"
		}
		fmt.Fprintf(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, ans)
	}))
	defer srv.Close()
	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Timeout: 5 * time.Second, RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	j := New(c, "judge")
	pairs := []nli.Pair{{Premise: "Q: Paris", Hypothesis: "Q: paris"}, {Premise: "Q: garbled", Hypothesis: "Q: Paris"}, {Premise: "Q: Lyon", Hypothesis: "Q: Paris"}, {Premise: "Q: Paris", Hypothesis: "Q: paris"}}
	got, err := j.Classify(context.Background(), pairs)
	if err != nil {
		t.Fatal(err)
	}
	want := []nli.Label{nli.Entailment, nli.Neutral, nli.Neutral, nli.Entailment}
	for i, p := range got {
		if nli.Predict(p) != want[i] {
			t.Errorf("pair %d: %v, want %v", i, nli.Predict(p), want[i])
		}
	}
	if j.Refused() != 1 {
		t.Errorf("refused %d, want 1", j.Refused())
	}
	if j.Source() != SourceOneHot || got[0] != [3]float64{nli.Entailment: 1} {
		t.Errorf("a judge without logprobs: source %q, %v; want one-hot", j.Source(), got[0])
	}
	if calls.Load() != 3 {
		t.Errorf("%d calls for 3 distinct ordered pairs", calls.Load())
	}
	if _, err := j.Classify(context.Background(), pairs[:1]); err != nil || calls.Load() != 3 {
		t.Errorf("cached pair asked again: %d calls, %v", calls.Load(), err)
	}
}

// The labels' probabilities are summed over the first token that is not
// space and its alternatives, each token once, read as the start of a
// label trimmed and lower-cased, and renormalised.
func TestProbabilities(t *testing.T) {
	lp := math.Log
	toks := []llm.TokenLogprob{{Token: "\n", Logprob: lp(0.9)}, {Token: "Ent", Logprob: lp(0.5), Top: []llm.TokenChoice{
		{Token: "Ent", Logprob: lp(0.5)}, {Token: " entailment", Logprob: lp(0.1)}, {Token: "Neutral", Logprob: lp(0.2)},
		{Token: "CON", Logprob: lp(0.1)}, {Token: "Yes", Logprob: lp(0.05)}, {Token: " ", Logprob: lp(0.05)}}}}
	v, ok := Probabilities(toks)
	want := [3]float64{nli.Contradiction: 0.1 / 0.9, nli.Neutral: 0.2 / 0.9, nli.Entailment: 0.6 / 0.9}
	for k := range v {
		if !ok || math.Abs(v[k]-want[k]) > 1e-12 {
			t.Fatalf("Probabilities = %v, %v; want %v", v, ok, want)
		}
	}
	if _, ok := Probabilities(nil); ok {
		t.Error("no tokens: ok")
	}
	if _, ok := Probabilities([]llm.TokenLogprob{{Token: "Yes", Logprob: 0, Top: []llm.TokenChoice{{Token: "Yes"}, {Token: "No", Logprob: -3}}}}); ok {
		t.Error("no label among the alternatives: ok")
	}
	if _, ok := Probabilities([]llm.TokenLogprob{{Token: "neutral", Logprob: 0}}); ok {
		t.Error("no alternatives (top_logprobs ignored): ok")
	}
}
