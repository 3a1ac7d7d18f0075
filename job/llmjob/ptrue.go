package llmjob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/llm"
)

// errPTrueNoAnswer is why p(True) cannot judge a row.
var errPTrueNoAnswer = errors.New("no answer under test (give the rows an answer, or set {holdout_first})")

// AsksModel reports whether the request asks the model that sampled a
// question (ptrue, ptrue-empirical, verbalized-1s, verbalized-2s,
// linguistic-1s), by name or as one of all.
func (r *EntropyRequest) AsksModel() bool {
	defs, _ := r.scores()
	return r.allScores() || slices.ContainsFunc(defs, asksModel)
}

// asksModel reports whether d asks the model that sampled a question.
func asksModel(d *scoreDef) bool { return d.source == sourceModel }

// modelScoreNames lists the scores that ask the model a question.
func modelScoreNames() string {
	var names []string
	for i := range entropyScores {
		if asksModel(&entropyScores[i]) {
			names = append(names, entropyScores[i].name)
		}
	}
	return strings.Join(names, ", ")
}

// questionPrompts are the request's fields of the questions' template
// files, by score.
func (r *EntropyRequest) questionPrompts() map[string]struct {
	field, path string
} {
	type fp = struct{ field, path string }
	return map[string]fp{
		"ptrue-empirical": {"ptrue_empirical_prompt", r.PTrueEmpiricalPrompt},
		"verbalized-1s":   {"verbalized_1s_prompt", r.Verbalized1SPrompt},
		"verbalized-2s":   {"verbalized_2s_prompt", r.Verbalized2SPrompt},
		"linguistic-1s":   {"linguistic_1s_prompt", r.Linguistic1SPrompt},
	}
}

// questionPrompt is the template file of score's question, "" for
// genlens's.
func (r *EntropyRequest) questionPrompt(score string) string { return r.questionPrompts()[score].path }

// checkPTrueFields checks the fields of the model the questions ask, and
// of their templates.
func (r *EntropyRequest) checkPTrueFields(defs []*scoreDef) error {
	all := r.allScores()
	asked := all || slices.ContainsFunc(defs, asksModel)
	for score, f := range r.questionPrompts() {
		if f.path != "" && !all && !containsScore(defs, score) {
			return fault.Fieldf(f.field, "{%s} applies only to {scores} %s", f.field, score)
		}
	}
	switch {
	case r.PTruePrompt != "" && !all && !containsScore(defs, "ptrue"):
		return fault.Fieldf("ptrue_prompt", "{ptrue_prompt} applies only to {scores} ptrue")
	case (r.BaseURL != "" || r.Model != "" || r.APIKeyEnv != "" || r.API != "" && r.API != "chat") && !asked:
		return fault.Fieldf("base_url", "{base_url}, {model}, {api_key_env} and {api} name the model that {scores} %s ask, none of which is asked for", modelScoreNames())
	case r.API != "" && r.API != "chat" && r.API != "completions":
		return fault.Fieldf("api", "{api} %q: want chat or completions", r.API)
	case !asked || r.BaseURL == "" && r.Model == "":
		return nil
	case r.BaseURL == "" || r.Model == "":
		return fault.Fieldf("base_url", "%s ask the model: give both {base_url} URL and {model} NAME", modelScoreNames())
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
		if why := llm.Refusal(err); why != nil {
			p.ptrueErr = why
			return nil
		}
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

// askQuestion puts q, its template filled, to the model about the answer
// under test of every scored row, the replies becoming the row's
// q.Score's. A row without a question or an answer under test the
// template needs, or whose question the model refused, has its reason
// instead; a request that fails after retries fails the run.
func askQuestion(ctx context.Context, client *llm.Client, r *EntropyRequest, q llm.Question, template string, recs []dataio.Record, ps []*promptScores, scored []bool) error {
	return par.For(ctx, len(recs), 8, func(ctx context.Context, i int) error {
		if !scored[i] {
			return nil
		}
		p := ps[i]
		if p.replies == nil {
			p.replies, p.repliesErr = map[string][]string{}, map[string]error{}
		}
		needs := func(s string) bool { return q.FollowUp || strings.Contains(template, s) }
		switch {
		case q.FollowUp && r.API == "completions":
			p.repliesErr[q.Score] = llm.ErrFollowUpCompletions
			return nil
		case needs("{question}") && p.question == "":
			p.repliesErr[q.Score] = errNoQuestion
			return nil
		case needs("{answer}") && p.answerText == nil:
			p.repliesErr[q.Score] = errPTrueNoAnswer
			return nil
		}
		answer := ""
		if p.answerText != nil {
			answer = *p.answerText
		}
		replies, err := q.Ask(ctx, client, r.Model, r.API == "completions", template, p.question, answer)
		if why := llm.Refusal(err); why != nil {
			p.repliesErr[q.Score] = why
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s of %s line %d (id %s): %w", q.Score, r.In, recs[i].Line, recs[i].ID, err)
		}
		p.replies[q.Score] = replies
		return nil
	})
}

// errNoQuestion is why a question about the prompt cannot be asked of a
// row.
var errNoQuestion = errors.New("no question in the row (its prompt, or its messages' last user message)")
