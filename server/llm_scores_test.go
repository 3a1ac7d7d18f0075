package server_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/dbtest"
	"github.com/genlens/genlens/server"
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
