package llmjob

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/llm"
)

// errPTrueNoAnswer is why p(True) cannot judge a row.
var errPTrueNoAnswer = errors.New("no answer under test (give the rows an answer, or set {holdout_first})")

// AsksPTrue reports whether the request asks for ptrue, by name or as
// one of all.
func (r *EntropyRequest) AsksPTrue() bool {
	defs, _ := r.scores()
	return r.allScores() || containsScore(defs, "ptrue")
}

// checkPTrueFields checks the fields of the model p(True) asks.
func (r *EntropyRequest) checkPTrueFields(defs []*scoreDef) error {
	asked := r.allScores() || containsScore(defs, "ptrue")
	switch {
	case r.PTruePrompt != "" && !asked:
		return fault.Fieldf("ptrue_prompt", "{ptrue_prompt} applies only to {scores} ptrue")
	case (r.BaseURL != "" || r.Model != "" || r.APIKeyEnv != "" || r.API != "" && r.API != "chat") && !asked:
		return fault.Fieldf("base_url", "{base_url}, {model}, {api_key_env} and {api} name the model {scores} ptrue asks, which is not asked for")
	case r.API != "" && r.API != "chat" && r.API != "completions":
		return fault.Fieldf("api", "{api} %q: want chat or completions", r.API)
	case !asked || r.BaseURL == "" && r.Model == "":
		return nil
	case r.BaseURL == "" || r.Model == "":
		return fault.Fieldf("base_url", "ptrue asks the model: give both {base_url} URL and {model} NAME")
	}
	if _, err := llm.New(r.ptrueConfig("")); err != nil {
		return fault.Fieldf("base_url", "{base_url}: %s", configMsg(err))
	}
	return nil
}

// ptrueClient makes the client of the model p(True) asks.
func ptrueClient(env job.Env, r *EntropyRequest) (*llm.Client, error) {
	key := ""
	if r.APIKeyEnv != "" {
		k, ok := env.LookupSecret(r.APIKeyEnv)
		if !ok {
			return nil, fault.Fieldf("api_key_env", "{api_key_env} %s: no such secret (set the variable, or leave {api_key_env} empty for a server without keys)", r.APIKeyEnv)
		}
		key = k
	}
	cfg := r.ptrueConfig(key)
	cfg.HTTPClient = env.HTTPClient
	c, err := llm.New(cfg)
	if err != nil {
		return nil, fault.Fieldf("base_url", "{base_url}: %s", configMsg(err))
	}
	return c, nil
}

func (r *EntropyRequest) ptrueConfig(key string) llm.Config {
	return llm.Config{BaseURL: r.BaseURL, APIKey: key, Timeout: r.requestTimeout(), RequestTimeout: r.requestTimeout(), MaxRetries: llm.DefaultMaxRetries,
		RetryBase: 500 * time.Millisecond, Concurrency: 8}
}

// askPTrue asks the model p(True) of the answer under test of every
// scored row, 1 − p(True) becoming the row's ptrue score. A row without
// an answer under test, or an answer without logprobs, has its reason
// instead; a request that fails after retries fails the run.
func askPTrue(ctx context.Context, client *llm.Client, r *EntropyRequest, template string, recs []dataio.Record, ps []*promptScores, scored []bool) error {
	return par.For(ctx, len(recs), 8, func(ctx context.Context, i int) error {
		if !scored[i] {
			return nil
		}
		p := ps[i]
		answer := recs[i].Answer
		if r.HoldoutFirst {
			answer = &recs[i].Samples[0]
		}
		if answer == nil {
			p.ptrueErr = errPTrueNoAnswer
			return nil
		}
		text := llm.PTrueText(template, recs[i].Question, p.samples, *answer)
		toks, err := llm.AskPTrue(ctx, client, r.Model, r.API == "completions", text)
		if err != nil {
			return fmt.Errorf("p(True) of %s line %d (id %s): %w", r.In, recs[i].Line, recs[i].ID, err)
		}
		pt, err := llm.PTrueOf(toks)
		if err != nil {
			p.ptrueErr = err
			return nil
		}
		p.ptrue, p.ptrueErr = 1-pt, nil
		return nil
	})
}
