package llmjob

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strings"
	"time"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/llm"
)

// PTruePrompt is the question p(True) puts to the model, after Kadavath
// et al., "Language Models (Mostly) Know What They Know" (2022): the
// question, the sampled answers as brainstormed ideas (one a line), and
// the answer under test. {question}, {samples} and {answer} are replaced;
// a template of {ptrue_prompt} must hold {answer}.
const PTruePrompt = `Question: {question}
Here are some brainstormed ideas: {samples}
Proposed Answer: {answer}
Is the proposed answer:
 (A) True
 (B) False
The proposed answer is:`

// PTrueTopLogprobs is the alternatives asked of the answer's first
// token: the most the OpenAI API returns, so that " True" is among them
// whenever it is likely at all.
const PTrueTopLogprobs = 20

// ptrueTimeout bounds one p(True) request.
const ptrueTimeout = 60 * time.Second

// errPTrueNoAnswer is why p(True) cannot judge a row.
var errPTrueNoAnswer = errors.New("no answer under test (give the rows an answer, or set {holdout_first})")

// PTrueText fills a p(True) template: the question, the sampled answers
// and the answer under test.
func PTrueText(template, question string, samples []string, answer string) string {
	return strings.NewReplacer("{question}", question, "{samples}", strings.Join(samples, "\n"), "{answer}", answer).Replace(template)
}

// ReadPTruePrompt returns the template of {ptrue_prompt} read from fsys,
// PTruePrompt when it is "": a template without {answer} is refused.
func ReadPTruePrompt(fsys fs.FS, path string) (string, error) {
	if path == "" {
		return PTruePrompt, nil
	}
	b, err := fs.ReadFile(fsys, path)
	if err != nil {
		return "", &fault.InputError{File: path, Msg: "cannot read: " + errText(err), Err: err}
	}
	t := string(b)
	if !strings.Contains(t, "{answer}") {
		return "", &fault.InputError{File: path, Msg: "a p(True) template must place the proposed answer, and this one has no placeholder for it (the word answer in braces)"}
	}
	return t, nil
}

// PTrueOf reads p(True) from the tokens of a model's answer to the p(True)
// question: the probability of "True" as its first token, the sum over
// the first token and its top alternatives of those that read "True" once
// surrounding space is trimmed (" True" and "True" are different tokens
// of the same answer). When none of them does, the probability is below
// the least likely alternative and counts as 0. Without tokens (the
// endpoint sent no logprobs) it returns an error.
func PTrueOf(toks []llm.TokenLogprob) (float64, error) {
	if len(toks) == 0 {
		return 0, errors.New("the model sent no logprobs for the p(True) question")
	}
	seen := map[string]bool{}
	var p float64
	add := func(tok string, lp float64) {
		if seen[tok] {
			return
		}
		seen[tok] = true
		if strings.TrimSpace(tok) == "True" {
			p += math.Exp(lp)
		}
	}
	add(toks[0].Token, toks[0].Logprob)
	for _, a := range toks[0].Top {
		add(a.Token, a.Logprob)
	}
	return min(p, 1), nil
}

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
	return llm.Config{BaseURL: r.BaseURL, APIKey: key, Timeout: ptrueTimeout, MaxRetries: llm.DefaultMaxRetries,
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
		text := PTrueText(template, recs[i].Question, p.samples, *answer)
		toks, err := AskPTrue(ctx, client, r.Model, r.API == "completions", text)
		if err != nil {
			return fmt.Errorf("p(True) of %s line %d (id %s): %w", r.In, recs[i].Line, recs[i].ID, err)
		}
		pt, err := PTrueOf(toks)
		if err != nil {
			p.ptrueErr = err
			return nil
		}
		p.ptrue, p.ptrueErr = 1-pt, nil
		return nil
	})
}

// AskPTrue puts the p(True) question text to model through client (its
// completions API when completions is set, else chat), at temperature 0
// for one token with PTrueTopLogprobs alternatives, and returns that
// token's logprobs for PTrueOf: none when the endpoint sends none.
func AskPTrue(ctx context.Context, client *llm.Client, model string, completions bool, text string) ([]llm.TokenLogprob, error) {
	zero := 0.0
	var (
		choices []llm.Choice
		err     error
	)
	if completions {
		choices, _, err = client.Complete(ctx, llm.CompletionRequest{Model: model, Prompt: text, Temperature: &zero, MaxTokens: 1,
			Logprobs: true, TopLogprobs: PTrueTopLogprobs})
	} else {
		choices, _, err = client.Chat(ctx, llm.ChatRequest{Model: model, Temperature: &zero, MaxTokens: 1,
			Messages: []llm.Message{{Role: "user", Content: text}}, Logprobs: true, TopLogprobs: PTrueTopLogprobs})
	}
	if err != nil {
		return nil, err
	}
	return choices[0].Tokens, nil
}
