package icljob

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/fields"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/metric/hallucination"
	"github.com/genlens/genlens/metric/hallucination/bayeslin"
	"github.com/genlens/genlens/metric/hallucination/categorical"
	"github.com/genlens/genlens/metric/hallucination/openai"
)

// HallucinationRunRequest is a request of `genlens hallucination run`: the
// PHR, total, aleatoric and epistemic uncertainty of every query given
// the context, through an OpenAI-compatible completions server or an
// exact Bayesian model. Start from NewHallucinationRunRequest, which holds
// the command line's defaults.
//
// The API key of the openai backend never travels in a request: APIKeyEnv
// names the secret, which the job reads through Env.Secret.
type HallucinationRunRequest struct {
	Backend string `json:"backend" help:"openai, linear or categorical"`                  // openai, linear or categorical
	Context string `json:"context" help:"context examples (.jsonl rows {\"x\", \"y\"})"`  // JSONL rows {"x", "y"}
	Queries string `json:"queries" help:"queries (.jsonl rows {\"id\", \"x\"[, \"y\"]})"` // JSONL rows {"id", "x"[, "y"]}

	Eps         float64 `json:"eps" help:"tolerance ε (the paper used 0.75 to compare with the error rate)"`
	M           int     `json:"M"`                                                                         // 0: the backend's default
	K           int     `json:"K"`                                                                         // 0: the backend's default
	Extra       int     `json:"extra" help:"imagined examples N - n (default 5 openai, 100 exact models)"` // 0: the backend's default
	Concurrency int     `json:"concurrency" help:"requests in flight (openai) and queries at once"`
	Seed        uint64  `json:"seed" help:"random seed (sent to the server as per-request seeds)"`

	// The openai backend (package openai).
	BaseURL   string        `json:"base_url" help:"openai: API root, e.g. http://127.0.0.1:8000/v1"`
	Model     string        `json:"model"`
	APIKeyEnv string        `json:"api_key_env" help:"openai: environment variable holding the API key (may be unset)"` // the name of the secret holding the API key
	Timeout   time.Duration `json:"timeout" help:"openai: per-request timeout"`                                         // per request, in nanoseconds
	Retries   int           `json:"retries" help:"openai: retries on 429, 5xx, timeouts and connection errors"`
	MaxTokens int           `json:"max_tokens" help:"openai: tokens generated per answer (one line)"`
	PairTopP  float64       `json:"pair_top_p" help:"openai: top_p when imagining examples (the paper used 0.9)"`
	NoSeed    bool          `json:"no_seed" help:"openai: do not send per-request seeds"`

	// The linear model (bayeslin).
	Features   string  `json:"features" help:"linear model: poly:DEG or relu:WIDTH:SEED features of x ~ U[-2, 2]"`
	Noise      float64 `json:"noise" help:"linear model: noise standard deviation σ"`
	PriorScale float64 `json:"prior_scale" help:"linear model: prior w ~ N(0, S² I) with this S"`
	// The categorical model, with named inputs and labels.
	Inputs string  `json:"inputs" help:"categorical model: comma-separated input names (one Dirichlet per input)"` // comma-separated input names
	Labels string  `json:"labels" help:"categorical model: comma-separated label names"`                           // comma-separated label names
	Alpha  float64 `json:"alpha" help:"categorical model: symmetric Dirichlet prior concentration"`
}

// NewHallucinationRunRequest returns a request with the command line's
// defaults and no inputs.
func NewHallucinationRunRequest() HallucinationRunRequest {
	return HallucinationRunRequest{Backend: "openai", Eps: 0.05, Concurrency: 8, Seed: 1,
		APIKeyEnv: "OPENAI_API_KEY", Timeout: 60 * time.Second, Retries: llm.DefaultMaxRetries, MaxTokens: 16, PairTopP: 1,
		Features: "poly:3", Noise: 0.1, PriorScale: 1, Inputs: "red,green,blue", Labels: "yes,no,maybe", Alpha: 0.5}
}

// Validate checks the fields that need no input file.
func (r *HallucinationRunRequest) Validate() (verr error) {
	defer func() { verr = job.WithDefault(verr, r, NewHallucinationRunRequest()) }()
	if err := job.CheckLimits("", job.Lim("M", r.M, maxDrawsEach), job.Lim("K", r.K, maxDrawsEach), job.Lim("extra", r.Extra, maxExtra),
		job.Lim("concurrency", r.Concurrency, job.MaxWorkers), job.Lim("retries", r.Retries, llm.MaxRetries), job.Lim("max_tokens", r.MaxTokens, llm.MaxMaxTokens)); err != nil {
		return err
	}
	if err := job.CheckTimeout("timeout", r.Timeout, llm.MaxTimeout); err != nil {
		return err
	}
	switch {
	case r.Context == "" || r.Queries == "":
		return fault.Fieldf("context", "hallucination run: {context} FILE and {queries} FILE are required")
	case r.Concurrency < 1:
		return fault.Fieldf("concurrency", "{concurrency} %d: want at least 1", r.Concurrency)
	}
	if err := checkDraws(r.Eps, r.M, r.K, r.Extra, 0); err != nil {
		return err
	}
	switch r.Backend {
	case "openai":
		_, err := r.openaiConfig("")
		return err
	case "linear":
		_, err := linearModel(r.Features, r.Noise, r.PriorScale)
		return err
	case "categorical":
		_, _, _, err := NamedCategorical(r.Inputs, r.Labels, r.Alpha)
		return err
	}
	return fault.Fieldf("backend", "{backend} %q: want openai, linear or categorical", r.Backend)
}

// openaiConfig returns the client configuration, checked.
func (r *HallucinationRunRequest) openaiConfig(key string) (openai.Config, error) {
	switch {
	case r.MaxTokens < 1:
		return openai.Config{}, fault.Fieldf("max_tokens", "{max_tokens} %d: want at least 1", r.MaxTokens)
	case !(r.PairTopP > 0 && r.PairTopP <= 1):
		return openai.Config{}, fault.Fieldf("pair_top_p", "{pair_top_p} %v: want a value in (0, 1]", r.PairTopP)
	case r.Timeout <= 0:
		return openai.Config{}, fault.Fieldf("timeout", "{timeout} %v: want a positive duration", r.Timeout)
	case r.Retries < 0:
		return openai.Config{}, fault.Fieldf("retries", "{retries} %d: want 0 or more", r.Retries)
	case r.BaseURL == "" || r.Model == "":
		return openai.Config{}, fault.Fieldf("base_url", "{backend} openai needs {base_url} URL and {model} NAME")
	}
	cfg := openai.Config{BaseURL: r.BaseURL, Model: r.Model, APIKey: key, Timeout: r.Timeout, MaxRetries: r.Retries,
		Concurrency: r.Concurrency, MaxTokens: r.MaxTokens, PairTopP: r.PairTopP, NoSeed: r.NoSeed}
	if _, err := openai.New(cfg); err != nil {
		return cfg, fault.Fieldf("base_url", "%s", err)
	}
	return cfg, nil
}

// NamedCategorical returns the Dirichlet-categorical classifier with named
// inputs and labels (comma-separated lists), as `hallucination run
// --backend categorical` estimates and `hallucination serve-model` serves
// it.
func NamedCategorical(inputNames, labelNames string, alpha float64) (categorical.Model, []string, []string, error) {
	split := func(field, s string) ([]string, error) {
		var out []string
		seen := map[string]bool{}
		for _, p := range strings.Split(s, ",") {
			p = strings.TrimSpace(p)
			if p == "" || seen[p] {
				return nil, fault.Fieldf(field, "{%s} %q: want distinct, non-empty, comma-separated names", field, s)
			}
			seen[p] = true
			out = append(out, p)
		}
		return out, nil
	}
	inputs, err := split("inputs", inputNames)
	if err != nil {
		return categorical.Model{}, nil, nil, err
	}
	labels, err := split("labels", labelNames)
	if err != nil {
		return categorical.Model{}, nil, nil, err
	}
	// As in simulate's groups and labels: the posterior holds a count per
	// input and label.
	if err := job.CheckLimits("", job.Lim("inputs", len(inputs), maxCategories), job.Lim("labels", len(labels), maxCategories)); err != nil {
		return categorical.Model{}, nil, nil, err
	}
	if len(inputs)*len(labels) > maxCategoryCells {
		return categorical.Model{}, nil, nil, fault.Fieldf("inputs", "{inputs} %d x {labels} %d: at most %d cells", len(inputs), len(labels), maxCategoryCells)
	}
	m := categorical.Symmetric(len(inputs), len(labels), alpha)
	if err := m.Validate(); err != nil {
		return m, nil, nil, fault.Fieldf("inputs", "{inputs} %q, {labels} %q, {alpha} %v: %s", inputNames, labelNames, alpha, err)
	}
	return m, inputs, labels, nil
}

// HallucinationRunResult is the result of `genlens hallucination run`; it
// marshals to the command's --json document.
type HallucinationRunResult struct {
	Items []HallucinationItem `json:"items"`
	// Failed counts the items whose query failed (their Error says why);
	// Incomplete is set when the run was interrupted and Items holds the
	// queries finished by then.
	Failed     int                      `json:"failed"`
	Incomplete bool                     `json:"incomplete,omitempty"`
	Settings   HallucinationRunSettings `json:"settings"`
	Stats      *HallucinationStats      `json:"stats,omitempty"` // the openai backend only
}

// HallucinationItem holds the estimates of one query.
type HallucinationItem struct {
	ID        string      `json:"id"`
	PHR       jsonnum.Num `json:"phr"`
	PHRStdErr jsonnum.Num `json:"phr_stderr"`
	Total     jsonnum.Num `json:"total"`
	Aleatoric jsonnum.Num `json:"aleatoric"`
	Epistemic jsonnum.Num `json:"epistemic"`
	// ErrorRate is the fraction of the sampled answers that differ from
	// the query's "y" (Eq. 9); null when the query has none.
	ErrorRate jsonnum.Num `json:"error_rate"`
	// ExactPHR is the PHR of Definition 4 from the exact posterior (exact
	// models only).
	ExactPHR *jsonnum.Num `json:"exact_phr,omitempty"`
	// Error says why the query failed (its numbers are then NaN); one
	// failed query does not lose the others.
	Error string `json:"error,omitempty"`
}

// HallucinationRunSettings echoes the settings of a run, with the
// defaults filled in. The fields are in alphabetical order of their keys,
// as the document had them when it was a map; a backend's fields are left
// out for the others.
type HallucinationRunSettings struct {
	K               int      `json:"K"`
	M               int      `json:"M"`
	Alpha           float64  `json:"alpha,omitempty"`
	Backend         string   `json:"backend"`
	BaseURL         string   `json:"base_url,omitempty"`
	ContextExamples int      `json:"context_examples"`
	Eps             float64  `json:"eps"`
	Extra           int      `json:"extra"`
	Features        string   `json:"features,omitempty"`
	Inputs          []string `json:"inputs,omitempty"`
	Labels          []string `json:"labels,omitempty"`
	Model           string   `json:"model,omitempty"`
	Noise           float64  `json:"noise,omitempty"`
	PriorScale      float64  `json:"prior_scale,omitempty"`
	Seed            uint64   `json:"seed"`
}

// HallucinationStats counts the requests of the openai backend.
type HallucinationStats struct {
	Requests       int64   `json:"requests"`
	Retries        int64   `json:"retries"`
	Seconds        float64 `json:"seconds"`
	RequestsPerSec float64 `json:"requests_per_second"`
}

// HallucinationRun runs `genlens hallucination run`: it reads the context
// and the queries through env.FS, the API key of the openai backend
// through env.Secret, and reports the queries done through env.Progress.
// Queries run up to req.Concurrency at once, each with its own seed
// derived from req.Seed and its index, so the result does not depend on
// the concurrency.
func HallucinationRun(ctx context.Context, env job.Env, req HallucinationRunRequest) (*HallucinationRunResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	defaults := hallucination.SyntheticDefaults
	if req.Backend == "openai" {
		defaults = hallucination.LLMDefaults
	}
	opt := hallucination.Options{Eps: req.Eps, M: orDefault(req.M, defaults.M), K: orDefault(req.K, defaults.K),
		Extra: orDefault(req.Extra, defaults.Extra), Concurrency: req.Concurrency}
	if float64(opt.M)*float64(opt.K) > hallucination.MaxDraws {
		return nil, checkDraws(opt.Eps, opt.M, opt.K, opt.Extra, 1)
	}
	fsys := env.InputFS()
	ctxRows, err := readPHRRows(fsys, req.Context, true)
	if err != nil {
		return nil, err
	}
	queries, err := readPHRRows(fsys, req.Queries, false)
	if err != nil {
		return nil, err
	}
	if len(queries) == 0 {
		return nil, &fault.InputError{File: req.Queries, Msg: "no queries"}
	}
	s := HallucinationRunSettings{Backend: req.Backend, Eps: opt.Eps, M: opt.M, K: opt.K, Extra: opt.Extra, Seed: req.Seed, ContextExamples: len(ctxRows)}
	var query phrQuery
	var client *openai.Client
	switch req.Backend {
	case "openai":
		key, _ := env.LookupSecret(req.APIKeyEnv)
		cfg, err := req.openaiConfig(key)
		if err != nil {
			return nil, err
		}
		cfg.HTTPClient = env.HTTPClient
		if client, err = openai.New(cfg); err != nil {
			return nil, err
		}
		s.Model, s.BaseURL = req.Model, req.BaseURL
		query, err = openaiQueries(client, req.Context, req.Queries, ctxRows)
		if err != nil {
			return nil, err
		}
	case "linear":
		m, _ := linearModel(req.Features, req.Noise, req.PriorScale) // checked by Validate
		s.Features, s.Noise, s.PriorScale = m.Features.String(), m.Noise, m.PriorScale
		if query, err = linearQueries(m, req.Context, req.Queries, ctxRows); err != nil {
			return nil, err
		}
	case "categorical":
		m, inputs, labels, _ := NamedCategorical(req.Inputs, req.Labels, req.Alpha) // checked by Validate
		s.Inputs, s.Labels, s.Alpha = inputs, labels, req.Alpha
		if query, err = categoricalQueries(m, inputs, labels, req.Context, req.Queries, ctxRows); err != nil {
			return nil, err
		}
	}
	items := make([]HallucinationItem, len(queries))
	finished := make([]bool, len(queries))
	errs := make([]error, len(queries))
	var (
		mu   sync.Mutex
		done int
	)
	start := time.Now()
	// BLAS on one thread for every query, whatever the concurrency, so the
	// exact values computed beside Estimate round alike (see
	// hallucination.Estimate).
	release := linalg.SingleThreaded()
	err = par.For(ctx, len(queries), req.Concurrency, func(ctx context.Context, i int) error {
		o := opt
		o.Seed = par.Mix(req.Seed, uint64(i))
		it, err := query(ctx, queries[i], o)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// One bad query (a server error after retries, an input
			// the backend refuses) is reported on its row; the others
			// go on.
			it = newItem(queries[i].id, math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN())
			errs[i] = fields.Errorf("query %q (%s line %d): %w", queries[i].id, req.Queries, queries[i].line, err)
			it.Error = errs[i].Error()
		}
		items[i] = it
		mu.Lock()
		finished[i] = true
		done++
		env.ReportProgress(done, len(queries))
		mu.Unlock()
		return nil
	})
	release()
	out := &HallucinationRunResult{Settings: s}
	for i, it := range items {
		if !finished[i] {
			continue
		}
		out.Items = append(out.Items, it)
		if it.Error != "" {
			out.Failed++
		}
	}
	if err != nil {
		// Interrupted: the finished queries are returned with the error,
		// so that a caller can still write them (a partial --out).
		out.Incomplete = true
		return out, err
	}
	if out.Failed == len(items) {
		return nil, errs[0] // nothing to show: the run fails as the first query did
	}
	hallucinationRunWarnings(env, out)
	if client != nil {
		n, retries := client.Stats()
		sec := time.Since(start).Seconds()
		out.Stats = &HallucinationStats{Requests: n, Retries: retries, Seconds: sec, RequestsPerSec: float64(n) / sec}
	}
	return out, nil
}

// hallucinationRunWarnings says which estimates cannot be read: a PHR
// within two standard errors of 0 (or exactly 0 with no spread: every
// one of the M·K responses fell inside the (1-ε)-likely set, which says
// little when K is small), and a negative epistemic uncertainty, which
// the exact mutual information never is: total and aleatoric are Monte
// Carlo estimates from different draws, and their difference carries the
// noise of both. A negative total or aleatoric uncertainty is another
// matter: of a discrete answer (openai, categorical) they are entropies,
// −mean log p ≥ 0 draw by draw, but the linear backend's y is continuous
// and they are differential entropies, negative whenever the predictive
// density is narrow (a normal's is ½ ln(2πe σ²), below 0 for
// σ < 1/√(2πe) ≈ 0.242), which the note says instead of calling it noise.
func hallucinationRunWarnings(env job.Env, r *HallucinationRunResult) {
	var noise, negative, differential []string
	for _, it := range r.Items {
		if it.Error != "" {
			continue
		}
		phr, se := float64(it.PHR), float64(it.PHRStdErr)
		if phr <= 2*se || phr == 0 {
			noise = append(noise, it.ID)
		}
		if float64(it.Epistemic) < 0 {
			negative = append(negative, it.ID)
		}
		if float64(it.Total) < 0 || float64(it.Aleatoric) < 0 {
			differential = append(differential, it.ID)
		}
	}
	s := r.Settings
	if len(noise) > 0 {
		env.Warning(fmt.Sprintf("%d of %d queries (%s) have a PHR within two standard errors of 0: with M %d and K %d the rate cannot be told from 0 (the smallest nonzero rate one dataset resolves is 1/K = %.3g); raise {K} and {M} for a readable estimate",
			len(noise), len(r.Items), listIDs(noise), s.M, s.K, 1/float64(s.K)))
	}
	if len(negative) > 0 {
		env.Warning(fmt.Sprintf("%d queries (%s) have a negative epistemic uncertainty: it is total minus aleatoric, two Monte Carlo estimates from different draws, and 0 or more only in expectation; a negative value is noise around a small one (raise {M} and {K})",
			len(negative), listIDs(negative)))
	}
	if len(differential) > 0 && s.Backend == "linear" {
		env.Warning(fmt.Sprintf("%d queries (%s) have a negative total or aleatoric uncertainty, as they should: y is continuous on the linear backend, so both are differential entropies (nats), negative whenever the predictive density is narrow; a normal's is ½ ln(2πe σ²), below 0 for σ < 0.242 and %.3g for the likelihood's σ = {noise} %g. Compare them across queries, not with 0",
			len(differential), listIDs(differential), 0.5*math.Log(2*math.Pi*math.E*s.Noise*s.Noise), s.Noise))
	}
	if r.Failed > 0 {
		env.Warning(fmt.Sprintf("%d of %d queries failed; their rows carry the error", r.Failed, len(r.Items)))
	}
}

// listIDs names up to five ids.
func listIDs(ids []string) string {
	if len(ids) > 5 {
		return strings.Join(ids[:5], ", ") + fmt.Sprintf(", ... %d more", len(ids)-5)
	}
	return strings.Join(ids, ", ")
}

// orDefault returns v, or def when v is 0 (the backend's default).
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// phrRow is one row of a JSONL file of the run job: x and y are kept raw,
// since the backend decides whether they are text, numbers or names.
type phrRow struct {
	line int
	id   string
	x, y json.RawMessage
	hasY bool
}

// readPHRRows reads a JSONL file of objects with "x" and (when needY) "y"
// fields; "id" is a string or a number ("row-<line>" when absent). Blank
// lines are skipped; lines are numbered from 1 as in an editor.
func readPHRRows(fsys fs.FS, path string, needY bool) ([]phrRow, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, &fault.InputError{File: path, Msg: "cannot open", Err: err}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var rows []phrRow
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(text, &obj); err != nil {
			return nil, &fault.InputError{File: path, Line: line, Msg: fmt.Sprintf("not a JSON object: %v", err)}
		}
		r := phrRow{line: line, id: "row-" + strconv.Itoa(line)}
		if raw, ok := obj["id"]; ok && string(raw) != "null" {
			var s string
			var n json.Number
			switch {
			case json.Unmarshal(raw, &s) == nil:
				r.id = s
			case json.Unmarshal(raw, &n) == nil:
				r.id = n.String()
			default:
				return nil, &fault.InputError{File: path, Line: line, Field: "id", Msg: "want a string or a number"}
			}
		}
		x, ok := obj["x"]
		if !ok || string(x) == "null" {
			return nil, &fault.InputError{File: path, Line: line, Field: "x", Msg: "missing"}
		}
		r.x = x
		if y, ok := obj["y"]; ok && string(y) != "null" {
			r.y, r.hasY = y, true
		} else if needY {
			return nil, &fault.InputError{File: path, Line: line, Field: "y", Msg: "missing"}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, &fault.InputError{File: path, Msg: "reading", Err: err}
	}
	return rows, nil
}

// phrText decodes a text field (a string, or a number taken as its text).
func phrText(path string, r phrRow, field string, raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String(), nil
	}
	return "", &fault.InputError{File: path, Line: r.line, Field: field, Msg: "want a string"}
}

func phrNumber(path string, r phrRow, field string, raw json.RawMessage) (float64, error) {
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, &fault.InputError{File: path, Line: r.line, Field: field, Msg: "want a number (the linear backend regresses numbers on numbers)"}
	}
	return v, nil
}

func phrName(path string, r phrRow, field string, raw json.RawMessage, names []string) (int, error) {
	s, err := phrText(path, r, field, raw)
	if err != nil {
		return 0, err
	}
	for i, n := range names {
		if n == s {
			return i, nil
		}
	}
	return 0, &fault.InputError{File: path, Line: r.line, Field: field, Msg: fmt.Sprintf("%q is not one of the model's names %s", s, strings.Join(names, ", "))}
}

// phrQuery estimates one query.
type phrQuery func(ctx context.Context, q phrRow, opt hallucination.Options) (HallucinationItem, error)

func openaiQueries(c *openai.Client, ctxPath, qPath string, ctxRows []phrRow) (phrQuery, error) {
	d := make([]openai.Example, len(ctxRows))
	for i, r := range ctxRows {
		x, err := phrText(ctxPath, r, "x", r.x)
		if err != nil {
			return nil, err
		}
		y, err := phrText(ctxPath, r, "y", r.y)
		if err != nil {
			return nil, err
		}
		var fe *openai.FormatError
		if err := openai.CheckExample(x, y); errors.As(err, &fe) {
			return nil, &fault.InputError{File: ctxPath, Line: r.line, Msg: fe.Msg, Err: err}
		} else if err != nil {
			return nil, err
		}
		d[i] = openai.Example{X: x, Y: y}
	}
	return func(ctx context.Context, q phrRow, opt hallucination.Options) (HallucinationItem, error) {
		x, err := phrText(qPath, q, "x", q.x)
		if err != nil {
			return HallucinationItem{}, err
		}
		var fe *openai.FormatError
		if err := openai.CheckInput(x); errors.As(err, &fe) {
			return HallucinationItem{}, &fault.InputError{File: qPath, Line: q.line, Field: fe.Field, Msg: fe.Msg, Err: err}
		} else if err != nil {
			return HallucinationItem{}, err
		}
		res, err := hallucination.Estimate(ctx, c, d, x, opt)
		if err != nil {
			return HallucinationItem{}, err
		}
		it := newItem(q.id, res.PHR, res.StdErr, res.Total, res.Aleatoric, res.Epistemic)
		if q.hasY {
			y, err := phrText(qPath, q, "y", q.y)
			if err != nil {
				return HallucinationItem{}, err
			}
			it.ErrorRate = jsonnum.Num(hallucination.ErrorRate(res.Responses, strings.TrimSpace(y)))
		}
		return it, nil
	}, nil
}

func linearQueries(m bayeslin.Model, ctxPath, qPath string, ctxRows []phrRow) (phrQuery, error) {
	d := make([]bayeslin.Example, len(ctxRows))
	for i, r := range ctxRows {
		x, err := phrNumber(ctxPath, r, "x", r.x)
		if err != nil {
			return nil, err
		}
		y, err := phrNumber(ctxPath, r, "y", r.y)
		if err != nil {
			return nil, err
		}
		d[i] = bayeslin.Example{X: x, Y: y}
	}
	post, err := m.Posterior(d)
	if err != nil {
		return nil, &fault.InputError{File: ctxPath, Msg: err.Error(), Err: err}
	}
	return func(ctx context.Context, q phrRow, opt hallucination.Options) (HallucinationItem, error) {
		x, err := phrNumber(qPath, q, "x", q.x)
		if err != nil {
			return HallucinationItem{}, err
		}
		res, err := hallucination.Estimate(ctx, m, d, x, opt)
		if err != nil {
			return HallucinationItem{}, err
		}
		it := newItem(q.id, res.PHR, res.StdErr, res.Total, res.Aleatoric, res.Epistemic)
		exact := jsonnum.Num(post.ExactPHR(x, opt.Eps))
		it.ExactPHR = &exact
		return it, nil
	}, nil
}

func categoricalQueries(m categorical.Model, inputs, labels []string, ctxPath, qPath string, ctxRows []phrRow) (phrQuery, error) {
	d := make([]categorical.Example, len(ctxRows))
	for i, r := range ctxRows {
		x, err := phrName(ctxPath, r, "x", r.x, inputs)
		if err != nil {
			return nil, err
		}
		y, err := phrName(ctxPath, r, "y", r.y, labels)
		if err != nil {
			return nil, err
		}
		d[i] = categorical.Example{X: x, Y: y}
	}
	post, err := m.Posterior(d)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, q phrRow, opt hallucination.Options) (HallucinationItem, error) {
		x, err := phrName(qPath, q, "x", q.x, inputs)
		if err != nil {
			return HallucinationItem{}, err
		}
		res, err := hallucination.Estimate(ctx, m, d, x, opt)
		if err != nil {
			return HallucinationItem{}, err
		}
		it := newItem(q.id, res.PHR, res.StdErr, res.Total, res.Aleatoric, res.Epistemic)
		if q.hasY {
			y, err := phrName(qPath, q, "y", q.y, labels)
			if err != nil {
				return HallucinationItem{}, err
			}
			it.ErrorRate = jsonnum.Num(hallucination.ErrorRate(res.Responses, y))
		}
		exact := jsonnum.Num(post.ExactPHR(x, opt.Eps, opt.Seed))
		it.ExactPHR = &exact
		return it, nil
	}, nil
}

func newItem(id string, phr, se, total, aleatoric, epistemic float64) HallucinationItem {
	return HallucinationItem{ID: id, PHR: jsonnum.Num(phr), PHRStdErr: jsonnum.Num(se), Total: jsonnum.Num(total), Aleatoric: jsonnum.Num(aleatoric),
		Epistemic: jsonnum.Num(epistemic), ErrorRate: jsonnum.Num(math.NaN())}
}
