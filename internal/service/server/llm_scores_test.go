package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

// Each option of the scores beyond the samples' words is checked, a bad
// one a field error naming it.
func TestLLMOptionsScores(t *testing.T) {
	judge := server.LLMOptions{Score: "se", NLIBaseURL: "http://127.0.0.1:1/v1", NLIModel: "judge"}
	for _, tc := range []struct {
		field string
		o     server.LLMOptions
	}{
		{"llm_score", server.LLMOptions{Score: "se"}},
		{"llm_score", server.LLMOptions{Score: "numsets", NLIWeights: "/m"}},
		{"llm_score", server.LLMOptions{Score: "msp", NLIBaseURL: "http://127.0.0.1:1/v1", NLIModel: "judge"}},
		{"llm_nli", server.LLMOptions{Score: "se", NLI: "gpt", NLIWeights: "/m"}},
		{"llm_nli", server.LLMOptions{Score: "se", NLI: "bert", NLIWeights: "/m", NLIBaseURL: "http://127.0.0.1:1/v1"}},
		{"llm_nli_weights", server.LLMOptions{Score: "se", NLI: "bert"}},
		{"llm_nli_model", server.LLMOptions{Score: "se", NLIBaseURL: "http://127.0.0.1:1/v1"}},
		{"llm_nli_model", server.LLMOptions{Score: "se", NLI: "bert", NLIWeights: "/m", NLIModel: "judge"}},
		{"llm_nli_base_url", server.LLMOptions{Score: "se", NLIBaseURL: "ftp://x", NLIModel: "judge"}},
		{"llm_top_logprobs", server.LLMOptions{Score: "mte", TopLogprobs: 21}},
		{"llm_top_logprobs", server.LLMOptions{Score: "mte", TopLogprobs: -1}},
		{"llm_top_logprobs", server.LLMOptions{Score: "msp", TopLogprobs: 5}},
		{"llm_ptrue_prompt", server.LLMOptions{Score: "msp", PTruePrompt: "p.txt"}},
		{"", judge},
		{"", server.LLMOptions{Score: "mte", TopLogprobs: 20}},
	} {
		o := tc.o
		o.Upstream = "http://127.0.0.1:1/v1"
		o.EnsureDefaults()
		var fe *fault.FieldError
		err := o.Validate()
		if tc.field == "" && err != nil || tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field) {
			t.Errorf("%+v: err = %v, want a field error on %q", tc.o, err, tc.field)
		}
	}
	// A p(True) template is read when the server starts, and must place
	// the answer; an NLI model's directory must hold one.
	bad := filepath.Join(t.TempDir(), "p.txt")
	os.WriteFile(bad, []byte("Is it true?"), 0o644)
	c := upstreamClient(t, "http://127.0.0.1:1/v1", "", 0)
	for field, o := range map[string]server.LLMOptions{
		"llm_ptrue_prompt": {Client: c, Sampler: &fakeSampler{}, Score: "ptrue", PTruePrompt: bad},
		"llm_nli_weights":  {Client: c, Sampler: &fakeSampler{}, Score: "se", NLI: "bert", NLIWeights: t.TempDir()},
	} {
		opts := server.Options{LLM: o}
		opts.Store = newTestServer(t, dbtest.SQLite(t), server.Options{}).db
		var fe *fault.FieldError
		if _, err := server.New(context.Background(), opts); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
}

// The server hands the proxy its judge: se-discrete of the samples the
// fake model draws, clustered by the chat judge on the same server.
func TestLLMProxyJudgeOptions(t *testing.T) {
	h, err := llmtest.NewHandler(llmtest.Config{Model: categorical.Symmetric(1, 3, 1), Inputs: []string{"cat"},
		Labels: []string{"yes", "no", "maybe"}, APIKey: "sk-judge",
		Reply: func(prompt string) (llmtest.Reply, bool) {
			if !strings.HasPrefix(prompt, "We are evaluating answers") {
				return nil, false
			}
			last := func(from, to string) string {
				f := strings.Fields(prompt[strings.Index(prompt, from)+len(from) : strings.Index(prompt, to)])
				return f[len(f)-1]
			}
			if last("Possible Answer 1: ", "\nPossible Answer 2: ") == last("Possible Answer 2: ", "\nDoes Possible Answer 1") {
				return llmtest.Reply{{Text: "entailment"}}, true
			}
			return llmtest.Reply{{Text: "neutral"}}, true
		}})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(h)
	t.Cleanup(up.Close)
	c := upstreamClient(t, up.URL+"/v1", "sk-judge", 0)
	rs := &recordingSampler{c: c}
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{Token: "genlens-token-for-tests",
		LLM: server.LLMOptions{Client: c, Samples: 6, Sampler: rs, Score: "se-discrete",
			NLIBaseURL: up.URL + "/v1", NLIModel: "genlens-categorical", NLIAPIKey: "sk-judge"}})
	body := `{"model":"genlens-categorical","messages":[{"role":"user","content":"Input: cat\nLabel: yes\n\nInput: cat\nLabel:"}],"max_tokens":1}`
	resp, b := post(t, ts.URL, "genlens-token-for-tests", body)
	var a struct {
		Genlens struct{ Uncertainty *float64 }
	}
	if err := json.Unmarshal(b, &a); err != nil || resp.StatusCode != 200 || a.Genlens.Uncertainty == nil {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	rs.mu.Lock()
	drawn := rs.samples[0]
	rs.mu.Unlock()
	count := map[string]float64{}
	for _, s := range drawn {
		count[s]++
	}
	var want float64
	for _, n := range count {
		want -= n / 6 * math.Log(n/6)
	}
	if math.Abs(*a.Genlens.Uncertainty-want) > 1e-9 {
		t.Errorf("se-discrete %v, want %v of %q", *a.Genlens.Uncertainty, want, drawn)
	}
}
