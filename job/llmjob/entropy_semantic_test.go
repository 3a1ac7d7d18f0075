package llmjob

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/entail"
	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/semantic"
	"github.com/genlens/genlens/network/nli"
)

// judgeReply scripts an entailment judge on the fake server: an answer
// entails another when their last words agree but for case; a premise
// ending in "garbled" gets an answer that is no label.
func judgeReply(calls *atomic.Int64) func(string) (llmtest.Reply, bool) {
	return func(prompt string) (llmtest.Reply, bool) {
		if !strings.HasPrefix(prompt, "We are evaluating answers") {
			return nil, false
		}
		calls.Add(1)
		// The premise and the hypothesis, each on its lines (a question
		// may hold several).
		last := func(from, to string) string {
			text := prompt[strings.Index(prompt, from)+len(from) : strings.Index(prompt, to)]
			f := strings.Fields(text)
			return f[len(f)-1]
		}
		a, b := last("Possible Answer 1: ", "\nPossible Answer 2: "), last("Possible Answer 2: ", "\nDoes Possible Answer 1")
		ans := "neutral"
		switch {
		case a == "garbled":
			ans = "it entails"
		case strings.EqualFold(a, b):
			ans = "Entailment."
		}
		return llmtest.Reply{{Text: ans}}, true
	}
}

const semanticRows = `{"id":"q1","prompt":"Capital of France?","samples":["Paris","paris","Lyon"],"correct":true,"logprobs":[[{"token":"Paris","logprob":-0.1}],[{"token":"paris","logprob":-0.2}],[{"token":"Lyon","logprob":-1}]]}` + "\n" +
	`{"id":"q2","prompt":"Capital of Italy?","samples":["Rome","rome"],"correct":false,"logprobs":[[{"token":"Rome","logprob":-0.3}],[{"token":"rome","logprob":-0.4}]]}` + "\n" +
	`{"id":"q3","prompt":"?","samples":["garbled","garbled"],"correct":true}` + "\n"

func TestEntropySemanticChatJudge(t *testing.T) {
	var calls atomic.Int64
	srv, _ := sampleServer(t, func(c *llmtest.Config) { c.Reply = judgeReply(&calls) })
	fsys := fstest.MapFS{"a.jsonl": {Data: []byte(semanticRows)}}
	req := NewEntropyRequest()
	req.In, req.Scores = "a.jsonl", "se,se-discrete,numsets"
	req.NLIBaseURL, req.NLIModel, req.NLIAPIKeyEnv = srv.URL+"/v1", "genlens-categorical", "SAMPLE_KEY"
	res, err := Entropy(context.Background(), job.Env{FS: fsys, Secret: sampleSecrets}, req)
	if err != nil {
		t.Fatal(err)
	}
	// q1: {Paris, paris}, {Lyon}; p ∝ e^-0.1 + e^-0.2, e^-1.
	a, b := math.Exp(-0.1)+math.Exp(-0.2), math.Exp(-1)
	pa, pb := a/(a+b), b/(a+b)
	h := func(ps ...float64) float64 {
		var s float64
		for _, p := range ps {
			s -= p * math.Log(p)
		}
		return s
	}
	for _, c := range []struct {
		item int
		key  string
		want float64
	}{
		{0, "se", h(pa, pb)}, {0, "se_discrete", h(2.0/3, 1.0/3)}, {0, "numsets", 2},
		{1, "se", 0}, {1, "se_discrete", 0}, {1, "numsets", 1},
		{2, "se_discrete", h(0.5, 0.5)}, {2, "numsets", 2}, // the refused pair does not merge
	} {
		if v := res.Items[c.item].Score(c.key); v == nil || math.Abs(float64(*v)-c.want) > 1e-12 {
			t.Errorf("%s %s = %v, want %v", res.Items[c.item].ID, c.key, v, c.want)
		}
	}
	if v := res.Items[2].Score("se"); v == nil || !math.IsNaN(float64(*v)) || !strings.Contains(res.Items[2].Reason, "se: no token logprobs") {
		t.Errorf("q3 se = %v (%q), want null: no logprobs", v, res.Items[2].Reason)
	}
	// Ordered pairs: q1 (0,1), (1,0), (0,2); q2 (0,1), (1,0); q3 (0,1).
	if calls.Load() != 6 {
		t.Errorf("%d judge calls, want 6", calls.Load())
	}
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, "the entailment judge answered 1 ordered pairs with something other than entailment") ||
		!strings.Contains(w, "se: unavailable on 1 of 3 scored rows") {
		t.Errorf("warnings %q", res.Warnings)
	}

	// Without a judge the scores are left out, with why; with all, the
	// others are computed.
	req.NLIBaseURL, req.NLIModel, req.NLIAPIKeyEnv = "", "", ""
	req.Scores = "numsets,lexsim"
	res, err = Entropy(context.Background(), job.Env{FS: fsys}, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Items[0].Scores["numsets"]; ok || !strings.Contains(strings.Join(res.Warnings, "\n"), "left out: numsets: no entailment judge (give {nli} with {nli_weights}, or {nli_base_url} with {nli_model})") {
		t.Errorf("no judge: %v, warnings %q", res.Items[0].Scores, res.Warnings)
	}
	req.Scores = "se"
	if _, err := Entropy(context.Background(), job.Env{FS: fsys}, req); fault.Classify(err) != fault.KindField || !strings.Contains(err.Error(), "no score can be computed") {
		t.Errorf("se alone without a judge: %v", err)
	}
}

// The in-process judge clusters as its model says.
func TestEntropySemanticNLIModel(t *testing.T) {
	dir := tinyDeBERTaDir(t)
	fsys := fstest.MapFS{"a.jsonl": {Data: []byte(semanticRows)}}
	req := NewEntropyRequest()
	req.In, req.Scores, req.NLI, req.NLIWeights = "a.jsonl", "numsets,se-discrete", "deberta", dir
	res, err := Entropy(context.Background(), job.Env{FS: fsys}, req)
	if err != nil {
		t.Fatal(err)
	}
	m, err := entail.Open("deberta", dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range []struct {
		question string
		samples  []string
	}{{"Capital of France?", []string{"Paris", "paris", "Lyon"}}, {"Capital of Italy?", []string{"Rome", "rome"}}, {"?", []string{"garbled", "garbled"}}} {
		c, err := semantic.Clusters(len(q.samples), func(a, b int) (bool, error) {
			v, err := m.Classify(context.Background(), []nli.Pair{{Premise: q.question + " " + q.samples[a], Hypothesis: q.question + " " + q.samples[b]}})
			return err == nil && nli.Predict(v[0]) == nli.Entailment, err
		})
		if err != nil {
			t.Fatal(err)
		}
		if v := res.Items[i].Score("numsets"); v == nil || float64(*v) != float64(semantic.NumSets(c)) {
			t.Errorf("%s numsets %v, want %d", res.Items[i].ID, v, semantic.NumSets(c))
		}
	}
}

func TestEntropyValidateNLI(t *testing.T) {
	for _, tc := range []struct {
		name, field, want string
		edit              func(r *EntropyRequest)
	}{
		{"both", "nli", "give {nli} or {nli_base_url}, not both", func(r *EntropyRequest) {
			r.Scores, r.NLI, r.NLIWeights, r.NLIBaseURL, r.NLIModel = "se", "deberta", "d", "http://x/v1", "m"
		}},
		{"unused", "nli", "{nli} applies only to {scores} se, se-discrete, numsets, label-prob, semantic-density, luq", func(r *EntropyRequest) { r.NLI, r.NLIWeights = "deberta", "d" }},
		{"no weights", "nli_weights", "{nli} deberta needs {nli_weights} DIR", func(r *EntropyRequest) { r.Scores, r.NLI = "se", "deberta" }},
		{"unknown model", "nli", `{nli} "roberta": want deberta-large-mnli, deberta, bert`, func(r *EntropyRequest) { r.Scores, r.NLI, r.NLIWeights = "se", "roberta", "d" }},
		{"no judge model", "nli_model", "{nli_base_url} needs {nli_model} NAME", func(r *EntropyRequest) { r.Scores, r.NLIBaseURL = "numsets", "http://x/v1" }},
		{"bad url", "nli_base_url", "{nli_base_url}:", func(r *EntropyRequest) { r.Scores, r.NLIBaseURL, r.NLIModel = "numsets", "ftp://x", "m" }},
		{"base_url without ptrue", "base_url", "name the model that {scores} ptrue, ptrue-empirical, verbalized-1s, verbalized-2s, linguistic-1s ask, none of which is asked for", func(r *EntropyRequest) { r.BaseURL = "http://x/v1" }},
		{"ptrue_prompt without ptrue", "ptrue_prompt", "{ptrue_prompt} applies only to {scores} ptrue", func(r *EntropyRequest) { r.PTruePrompt = "t.txt" }},
		{"ptrue model half", "base_url", "give both {base_url} URL and {model} NAME", func(r *EntropyRequest) { r.Scores, r.BaseURL = "ptrue", "http://x/v1" }},
		{"weights alone", "nli_weights", "{nli_weights} needs {nli} NAME", func(r *EntropyRequest) { r.Scores, r.NLIWeights = "all", "d" }},
	} {
		r := NewEntropyRequest()
		r.In = "a.jsonl"
		tc.edit(&r)
		err := r.Validate()
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.want) {
			t.Errorf("%s: %v, want a FieldError on %s containing %q", tc.name, err, tc.field, tc.want)
		}
	}
}

// A judge that never answers fails the run within {request_timeout},
// retries included, naming the bound: it held the run for 5 attempts of
// 60 s, with no setting to shorten them.
func TestEntropyHungJudgeTimesOut(t *testing.T) {
	var attempts atomic.Int64
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		select {
		case <-r.Context().Done():
		case <-hang:
		}
	}))
	defer srv.Close()
	defer close(hang)
	req := NewEntropyRequest()
	req.In, req.Scores = "a.jsonl", "numsets"
	req.NLIBaseURL, req.NLIModel = srv.URL+"/v1", "judge"
	req.RequestTimeout = 50 * time.Millisecond
	_, err := Entropy(context.Background(), job.Env{FS: fstest.MapFS{"a.jsonl": {Data: []byte(semanticRows)}}}, req)
	if err == nil || !strings.Contains(err.Error(), "no complete response within 50ms, retries included") {
		t.Fatalf("a judge that never answers: %v", err)
	}
	if n := attempts.Load(); n > 8 {
		t.Errorf("%d attempts: want each question asked once, not retried past the bound", n)
	}
	bad := NewEntropyRequest()
	bad.In, bad.RequestTimeout = "a.jsonl", -time.Second
	var fe *fault.FieldError
	if err := bad.Validate(); !errors.As(err, &fe) || fe.Field != "request_timeout" {
		t.Errorf("negative {request_timeout}: %v", err)
	}
}

// A chat judge whose endpoint sends logprobs gives the three labels'
// probabilities renormalised from its answer token's top_logprobs, and
// semantic-density reads them: the judge answers every pair entailment
// with probability 0.6, neutral 0.2 (" neutral"), contradiction 0.1
// ("contr", the start of the word) and 0.1 on a token that is no label.
func TestEntropyChatJudgeLogprobs(t *testing.T) {
	var calls atomic.Int64
	srv, _ := sampleServer(t, func(c *llmtest.Config) {
		c.Reply = func(prompt string) (llmtest.Reply, bool) {
			if !strings.HasPrefix(prompt, "We are evaluating answers") {
				return nil, false
			}
			calls.Add(1)
			return llmtest.Reply{{Text: "entailment", Logprob: math.Log(0.6), Top: map[string]float64{
				"entailment": math.Log(0.6), " neutral": math.Log(0.2), "contr": math.Log(0.1), "The": math.Log(0.1)}}}, true
		}
	})
	rows := `{"id":"q1","prompt":"Q?","samples":["a","b"],"answer":"a","correct":true,"logprobs":[[{"token":"a","logprob":-0.1}],[{"token":"b","logprob":-0.5}]],"answer_logprobs":[{"token":"a","logprob":-0.1}]}` + "\n"
	req := NewEntropyRequest()
	req.In, req.Scores = "a.jsonl", "semantic-density"
	req.NLIBaseURL, req.NLIModel, req.NLIAPIKeyEnv = srv.URL+"/v1", "genlens-categorical", "SAMPLE_KEY"
	res, err := Entropy(context.Background(), job.Env{FS: fstest.MapFS{"a.jsonl": {Data: []byte(rows)}}, Secret: sampleSecrets}, req)
	if err != nil {
		t.Fatal(err)
	}
	// K = 1 − (P(contradiction) + P(neutral)/2) = 1 − (1/9 + 1/9) = 7/9
	// for both samples; the answer's own kernel is 1.
	g, pa, pb := math.Exp(-0.1), math.Exp(-0.1), math.Exp(-0.5)
	want := -(g + (pa+pb)*7/9) / (g + pa + pb)
	if v := res.Items[0].Score("semantic-density"); v == nil || math.Abs(float64(*v)-want) > 1e-12 {
		t.Errorf("semantic-density = %v, want %v", v, want)
	}
	if res.Summary.JudgeProbabilities != "logprobs" {
		t.Errorf("judge_probabilities %q, want logprobs", res.Summary.JudgeProbabilities)
	}
	if w := strings.Join(res.Warnings, "\n"); strings.Contains(w, "probability as 1") {
		t.Errorf("warning of one-hot probabilities with logprobs: %q", w)
	}
	if calls.Load() == 0 {
		t.Error("the judge was not asked")
	}

	// Without alternatives the judge's label is read as probability 1,
	// and a warning says so: K = 1 for both samples.
	srv, _ = sampleServer(t, func(c *llmtest.Config) {
		c.Reply = func(prompt string) (llmtest.Reply, bool) {
			return llmtest.Reply{{Text: "entailment"}}, strings.HasPrefix(prompt, "We are evaluating answers")
		}
	})
	req.NLIBaseURL = srv.URL + "/v1"
	if res, err = Entropy(context.Background(), job.Env{FS: fstest.MapFS{"a.jsonl": {Data: []byte(rows)}}, Secret: sampleSecrets}, req); err != nil {
		t.Fatal(err)
	}
	if v := res.Items[0].Score("semantic-density"); v == nil || math.Abs(float64(*v)+1) > 1e-12 {
		t.Errorf("one-hot semantic-density = %v, want -1", v)
	}
	if w := strings.Join(res.Warnings, "\n"); res.Summary.JudgeProbabilities != "one-hot" || !strings.Contains(w, "semantic-density read that label's probability as 1") {
		t.Errorf("judge_probabilities %q, warnings %q", res.Summary.JudgeProbabilities, res.Warnings)
	}
}
