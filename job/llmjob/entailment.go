package llmjob

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/entail"
	"github.com/genlens/genlens/internal/hub"
	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/llm/chatnli"
	"github.com/genlens/genlens/metric/semantic"
	"github.com/genlens/genlens/metric/uncertainty"
	"github.com/genlens/genlens/network/nli"
)

// The sources a score may need besides the rows.
const (
	sourceNLI   scoreSource = "nli"   // an entailment judge: {nli} or {nli_base_url}
	sourceModel scoreSource = "model" // the model that sampled: {base_url} and {model}
)

// sourceMissing says why a score needing source cannot be computed.
var sourceMissing = map[scoreSource]string{
	sourceNLI:   "no entailment judge (give {nli} with {nli_weights}, or {nli_base_url} with {nli_model})",
	sourceModel: "no model to ask (give {base_url} and {model})",
}

// judgeScoreNames lists the scores that read the entailment judge.
func judgeScoreNames() string {
	var names []string
	for _, d := range entropyScores {
		if d.source == sourceNLI {
			names = append(names, d.name)
		}
	}
	return strings.Join(names, ", ")
}

// hasNLI reports whether the request names an entailment judge.
func (r *EntropyRequest) hasNLI() bool { return r.NLI != "" || r.NLIBaseURL != "" }

// checkNLIFields checks the entailment judge's fields: one judge, whole,
// and only for a score that uses it.
func (r *EntropyRequest) checkNLIFields(defs []*scoreDef) error {
	uses := r.allScores() || r.Similarity == string(uncertainty.SimilarityNLI)
	for _, d := range defs {
		uses = uses || d.source == sourceNLI
	}
	switch {
	case r.NLI != "" && r.NLIBaseURL != "":
		return fault.Fieldf("nli", "give {nli} or {nli_base_url}, not both")
	case r.hasNLI() && !uses:
		field := "nli"
		if r.NLI == "" {
			field = "nli_base_url"
		}
		return fault.Fieldf(field, "{%s} applies only to {scores} %s", field, judgeScoreNames())
	case r.NLIWeights != "" && r.NLI == "":
		return fault.Fieldf("nli_weights", "{nli_weights} needs {nli} NAME")
	case r.NLI != "" && r.NLIWeights == "" && !publishedNLI(r.NLI):
		return fault.Fieldf("nli_weights", "{nli} %s needs {nli_weights} DIR, the model's directory, or a Hugging Face model id (org/name)", r.NLI)
	case r.NLIBaseURL != "" && r.NLIModel == "":
		return fault.Fieldf("nli_model", "{nli_base_url} needs {nli_model} NAME")
	case r.NLIModel != "" && r.NLIBaseURL == "":
		return fault.Fieldf("nli_model", "{nli_model} needs {nli_base_url} URL")
	case r.NLIAPIKeyEnv != "" && r.NLIBaseURL == "":
		return fault.Fieldf("nli_api_key_env", "{nli_api_key_env} needs {nli_base_url} URL")
	}
	if r.NLIBaseURL != "" {
		if _, err := llm.New(r.judgeConfig("")); err != nil {
			return fault.Fieldf("nli_base_url", "{nli_base_url}: %s", configMsg(err))
		}
	}
	if r.NLI != "" && !slices.Contains(entail.Models, r.NLI) {
		return fault.Fieldf("nli", "{nli} %q: want %s", r.NLI, strings.Join(entail.Models, ", "))
	}
	return nil
}

// outbound returns the servers the request calls, for a service's
// allow-list.
func (r *EntropyRequest) outbound() []job.Outbound {
	var out []job.Outbound
	if r.BaseURL != "" && r.AsksModel() {
		out = append(out, job.Outbound{Field: "base_url", URL: r.BaseURL, SecretField: "api_key_env", Secret: r.APIKeyEnv})
	}
	if r.NLIBaseURL != "" {
		out = append(out, job.Outbound{Field: "nli_base_url", URL: r.NLIBaseURL, SecretField: "nli_api_key_env", Secret: r.NLIAPIKeyEnv})
	}
	return out
}

func (r *EntropyRequest) judgeConfig(key string) llm.Config {
	return llm.Config{BaseURL: r.NLIBaseURL, APIKey: key, Timeout: r.requestTimeout(), RequestTimeout: r.requestTimeout(), MaxRetries: llm.DefaultMaxRetries,
		RetryBase: 500 * time.Millisecond, Concurrency: 8}
}

// publishedNLI reports whether the NLI model name is fetched by name
// (deberta-large-mnli), its {nli_weights} then optional.
func publishedNLI(name string) bool {
	m, ok := hub.Lookup(name)
	return ok && m.Repo != ""
}

// entailmentJudge opens the request's judge: the in-process NLI model
// (OpenNLI, its pairs cached) or the chat judge (chatnli.Judge, which
// caches its pairs itself); chat is the chat judge, to count its refused
// answers.
func entailmentJudge(ctx context.Context, env job.Env, r *EntropyRequest) (m nli.Model, chat *chatnli.Judge, err error) {
	if r.NLI != "" {
		dir, err := job.ModelFolder(ctx, env, "nli_weights", r.NLI, r.NLIWeights, entail.Files(r.NLI))
		if err != nil {
			return nil, nil, err
		}
		m, err := entail.Open(r.NLI, dir)
		return m, nil, err
	}
	key := ""
	if r.NLIAPIKeyEnv != "" {
		k, ok := env.LookupSecret(r.NLIAPIKeyEnv)
		if !ok {
			return nil, nil, fault.Fieldf("nli_api_key_env", "{nli_api_key_env} %s: no such secret (set the variable, or leave {nli_api_key_env} empty for a server without keys)", r.NLIAPIKeyEnv)
		}
		key = k
	}
	cfg := r.judgeConfig(key)
	cfg.HTTPClient = env.HTTPClient
	client, err := llm.New(cfg)
	if err != nil {
		return nil, nil, fault.Fieldf("nli_base_url", "{nli_base_url}: %s", configMsg(err))
	}
	j := chatnli.New(client, r.NLIModel)
	return j, j, nil
}

// clusterAnswers groups the scored samples of every row with scored true
// by bidirectional entailment (semantic.Clusters), each answer prefixed
// with its row's question as Kuhn et al. do. A judge's failure (its
// server down after retries) fails the run.
func clusterAnswers(ctx context.Context, m nli.Model, file string, recs []dataio.Record, ps []*promptScores, scored []bool, workers int) error {
	return par.For(ctx, len(recs), workers, func(ctx context.Context, i int) error {
		if !scored[i] {
			return nil
		}
		c, err := semantic.ClusterAnswers(ctx, m, recs[i].Question, ps[i].samples)
		if err != nil {
			return fmt.Errorf("entailment of the answers of %s line %d (id %s): %w", file, recs[i].Line, recs[i].ID, err)
		}
		ps[i].clusters = c
		return nil
	})
}
