package llmjob

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/llm"
)

// ptrueReply scripts the model asked p(True): "True" at 0.8 (as " True")
// plus 0.05 (as "True") for a proposed answer paris, 0.2 otherwise; the
// prompts it saw are kept.
func ptrueReply(mu *sync.Mutex, seen *[]string) func(string) (llmtest.Reply, bool) {
	return func(prompt string) (llmtest.Reply, bool) {
		if !strings.Contains(prompt, "Proposed Answer:") && !strings.HasPrefix(prompt, "Q=") {
			return nil, false
		}
		mu.Lock()
		*seen = append(*seen, prompt)
		mu.Unlock()
		top := map[string]float64{" True": math.Log(0.2), " False": math.Log(0.75), "(B": math.Log(0.05)}
		first := " False"
		if strings.Contains(prompt, "Answer: paris\n") || strings.Contains(prompt, "A=paris") {
			top = map[string]float64{" True": math.Log(0.8), " False": math.Log(0.15), "True": math.Log(0.05)}
			first = " True"
		}
		return llmtest.Reply{{Text: first, Logprob: top[first], Top: top}, {Text: " (A)", Logprob: -0.1}}, true
	}
}

func TestEntropyPTrue(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv, _ := sampleServer(t, func(c *llmtest.Config) { c.Reply = ptrueReply(&mu, &seen) })
	fsys := fstest.MapFS{"a.jsonl": {Data: []byte(likelihoodRows)}, "t.txt": {Data: []byte("Q={question} A={answer} S={samples}")}}
	for _, api := range []string{"chat", "completions"} {
		seen = nil
		req := NewEntropyRequest()
		req.In, req.Scores, req.API = "a.jsonl", "ptrue", api
		req.BaseURL, req.Model, req.APIKeyEnv = srv.URL+"/v1", "genlens-categorical", "SAMPLE_KEY"
		res, err := Entropy(context.Background(), job.Env{FS: fsys, Secret: sampleSecrets}, req)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []float64{1 - 0.85, 1 - 0.2} {
			if v := res.Items[i].Score("ptrue"); v == nil || math.Abs(float64(*v)-want) > 1e-12 {
				t.Errorf("%s: %s ptrue = %v, want %v", api, res.Items[i].ID, v, want)
			}
		}
		wantPrompt := "Question: Capital of France?\nHere are some brainstormed ideas: paris\nparis city\nlyon\nProposed Answer: paris\nIs the proposed answer:\n (A) True\n (B) False\nThe proposed answer is:"
		if len(seen) != 2 || !strings.Contains(strings.Join(seen, "\x00"), wantPrompt) {
			t.Errorf("%s: prompts %q", api, seen)
		}
	}
	// The template of a file; without a model, ptrue is left out.
	seen = nil
	req := NewEntropyRequest()
	req.In, req.Scores, req.PTruePrompt, req.HoldoutFirst = "a.jsonl", "ptrue,lexsim", "t.txt", true
	req.BaseURL, req.Model, req.APIKeyEnv = srv.URL+"/v1", "genlens-categorical", "SAMPLE_KEY"
	res, err := Entropy(context.Background(), job.Env{FS: fsys, Secret: sampleSecrets}, req)
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Items[0].Score("ptrue"); v == nil || math.Abs(float64(*v)-0.15) > 1e-12 || !slicesContain(seen, "Q=Capital of France? A=paris S=paris city\nlyon") {
		t.Errorf("template: ptrue %v, prompts %q", v, seen)
	}
	req.BaseURL, req.Model = "", ""
	res, err = Entropy(context.Background(), job.Env{FS: fsys}, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Items[0].Scores["ptrue"]; ok || !strings.Contains(strings.Join(res.Warnings, "\n"), "left out: ptrue: no model to ask (give {base_url} and {model})") {
		t.Errorf("no model: %v %q", res.Items[0].Scores, res.Warnings)
	}
	fsys["bad.txt"] = &fstest.MapFile{Data: []byte("Is {question} true?")}
	req.PTruePrompt, req.BaseURL, req.Model = "bad.txt", srv.URL+"/v1", "m"
	if _, err := Entropy(context.Background(), job.Env{FS: fsys}, req); err == nil || !strings.Contains(err.Error(), "no placeholder for it") {
		t.Errorf("template without {answer}: %v", err)
	}
}

func slicesContain(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestPTrueOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		toks []llm.TokenLogprob
		want float64
		err  bool
	}{
		{"no logprobs", nil, 0, true},
		{"first token only", []llm.TokenLogprob{{Token: "True", Logprob: math.Log(0.6)}}, 0.6, false},
		{"listed twice", []llm.TokenLogprob{{Token: " True", Logprob: math.Log(0.6), Top: []llm.TokenChoice{{Token: " True", Logprob: math.Log(0.6)}, {Token: "True", Logprob: math.Log(0.1)}, {Token: "true", Logprob: math.Log(0.1)}}}}, 0.7, false},
		{"absent", []llm.TokenLogprob{{Token: " False", Logprob: -0.1, Top: []llm.TokenChoice{{Token: " False", Logprob: -0.1}}}}, 0, false},
	} {
		got, err := llm.PTrueOf(tc.toks)
		if (err != nil) != tc.err || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

// TestEntropyQuestions: the questions of ptrue-empirical, verbalized-1s,
// verbalized-2s and linguistic-1s go to the model once per prompt, with
// genlens's templates or a file's; verbalized-2s follows the question
// and the answer under test as a chat; a reply that states no confidence
// is null with its reason, never 0; a model that refuses a question (the
// categorical model: 400, its prompt format) leaves the score out,
// saying so, and the run goes on.
func TestEntropyQuestions(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv, _ := sampleServer(t, func(c *llmtest.Config) {
		c.Reply = func(prompt string) (llmtest.Reply, bool) {
			var text string
			switch {
			case strings.HasPrefix(prompt, "Capital of France?paris"): // the chat of verbalized-2s
				text = "Probability: 0.35"
			case strings.HasPrefix(prompt, "2+2?5"):
				text = "I cannot say."
			case strings.HasPrefix(prompt, "V1 "):
				text = "Guess: Paris\nProbability: 0.9"
			default:
				return nil, false
			}
			mu.Lock()
			seen = append(seen, prompt)
			mu.Unlock()
			return llmtest.Reply{{Text: text, Logprob: -0.1}}, true
		}
	})
	fsys := fstest.MapFS{"a.jsonl": {Data: []byte(likelihoodRows)}, "v1.txt": {Data: []byte("V1 {question}")}, "bad.txt": {Data: []byte("Q {answer}")}}
	req := NewEntropyRequest()
	req.In, req.Scores, req.Verbalized1SPrompt = "a.jsonl", "verbalized-1s,verbalized-2s,linguistic-1s,pe", "v1.txt"
	req.BaseURL, req.Model, req.APIKeyEnv = srv.URL+"/v1", "genlens-categorical", "SAMPLE_KEY"
	res, err := Entropy(context.Background(), job.Env{FS: fsys, Secret: sampleSecrets}, req)
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Items[0].Score("verbalized-1s"); v == nil || math.Abs(float64(*v)-0.1) > 1e-15 {
		t.Errorf("verbalized-1s = %v, want 0.1", v)
	}
	if v := res.Items[0].Score("verbalized-2s"); v == nil || math.Abs(float64(*v)-0.65) > 1e-15 {
		t.Errorf("verbalized-2s = %v, want 0.65", v)
	}
	wantFollowUp := "Capital of France?parisWhat is the probability, between 0.0 and 1.0, that your answer is correct?"
	if !slices.ContainsFunc(seen, func(s string) bool { return strings.HasPrefix(s, wantFollowUp) }) || !slicesContain(seen, "V1 2+2?") {
		t.Errorf("prompts %q", seen)
	}
	if v := res.Items[1].Score("verbalized-2s"); v == nil || !math.IsNaN(float64(*v)) || !strings.Contains(res.Items[1].Reason, "verbalized-2s: the model's reply states no confidence") {
		t.Errorf("an answer without a probability: %v, reason %q", v, res.Items[1].Reason)
	}
	w := strings.Join(res.Warnings, "\n")
	if _, ok := res.Items[0].Scores["linguistic_1s"]; ok || !strings.Contains(w, "left out: linguistic-1s: the model refused the question (400 Bad Request: prompt character 0") {
		t.Errorf("a refused question: %v; warnings %q", res.Items[0].Scores, w)
	}
	// The completions API cannot put the answer as the model's own turn.
	req.API, req.Scores, req.Verbalized1SPrompt = "completions", "verbalized-2s,pe", ""
	res, err = Entropy(context.Background(), job.Env{FS: fsys, Secret: sampleSecrets}, req)
	if err != nil || !strings.Contains(strings.Join(res.Warnings, "\n"), "left out: verbalized-2s: the question follows the answer under test in a chat") {
		t.Errorf("completions: %v, %q", err, res.Warnings)
	}
	// A template without the placeholder its question needs.
	req.API, req.Scores, req.PTrueEmpiricalPrompt = "chat", "ptrue-empirical", "v1.txt"
	if _, err := Entropy(context.Background(), job.Env{FS: fsys, Secret: sampleSecrets}, req); err == nil || !strings.Contains(err.Error(), "must place the answer") {
		t.Errorf("ptrue-empirical template without {answer}: %v", err)
	}
	req.Scores = "pe"
	if err := req.Validate(); err == nil || !strings.Contains(err.Error(), "ptrue_empirical_prompt applies only to scores ptrue-empirical") {
		t.Errorf("a template of a score not asked for: %v", err)
	}
}
