package llmproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/entail"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/llm/chatnli"
	"github.com/genlens/genlens/metric/semantic"
	"github.com/genlens/genlens/metric/uncertainty"
	"github.com/genlens/genlens/network/nli"
)

// The scores beyond those of the samples' texts and logprobs: the
// caller's answer's own logprobs (msp, perplexity, mte), the samples
// clustered by an entailment judge (se, se-discrete, numsets, label-prob), and
// p(True) and the questions of ptrue-empirical, verbalized-1s,
// verbalized-2s and linguistic-1s, one more question to the upstream,
// and LM-Polygraph's estimators of the similarities and the judge's
// probabilities (polygraph.go). Each is computed as `genlens entropy`
// computes it, with the code of the method packages both call.

// SemanticScores lists the scores that need an entailment judge: its
// labels (clusters) or its label probabilities.
func SemanticScores() []string {
	var names []string
	for _, d := range uncertainty.Defs() {
		if d.Needs&judgeNeeds != 0 {
			names = append(names, d.Name)
		}
	}
	slices.Sort(names)
	return names
}

// Judge names the entailment judge of the SemanticScores: an
// in-process NLI model (NLI, one of entail.Models, from the model
// directory Weights) or an OpenAI-compatible chat model (Model at the
// API root BaseURL, with APIKey when it needs one), asked as package
// chatnli asks. Each request's pairs are judged once, and forgotten with
// the request.
type Judge struct {
	NLI, Weights           string
	BaseURL, Model, APIKey string
}

// NLIModels lists the in-process NLI models a Judge may name.
func NLIModels() []string { return slices.Clone(entail.Models) }

// judgeTimeout bounds one question to a chat judge.
const judgeTimeout = 60 * time.Second

// open returns a judge for each request, nil when j names none.
func (j Judge) open() (func() (nli.Model, *chatnli.Judge), error) {
	switch {
	case j.NLI != "":
		m, err := entail.OpenModel(j.NLI, j.Weights)
		if err != nil {
			return nil, err
		}
		return func() (nli.Model, *chatnli.Judge) { return nli.Cached(m), nil }, nil
	case j.BaseURL != "":
		c, err := llm.New(llm.Config{BaseURL: j.BaseURL, APIKey: j.APIKey, Name: "judge", Timeout: judgeTimeout,
			MaxRetries: 2, Concurrency: samplingSlots})
		if err != nil {
			return nil, err
		}
		return func() (nli.Model, *chatnli.Judge) { cj := chatnli.New(c, j.Model); return cj, cj }, nil
	}
	return nil, nil
}

// question is the text the samples answer, for the judge and p(True):
// the last user message's text (its text parts joined by a space).
func question(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != "user" {
			continue
		}
		if m.Content != "" {
			return m.Content
		}
		var v struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		json.Unmarshal(m.Raw, &v)
		var parts []string
		for _, c := range v.Content {
			if c.Type == "text" {
				parts = append(parts, c.Text)
			}
		}
		return strings.Join(parts, " ")
	}
	return ""
}

// semanticScore clusters the samples with a judge of the request's own
// and scores the clusters.
func (p *Proxy) semanticScore(ctx context.Context, req llm.ChatRequest, choices []llm.Choice, texts []string) (float64, error) {
	var in uncertainty.Input
	if p.def.Needs&uncertainty.NeedsSampleLogprobs != 0 {
		var err error
		if in.Logprobs, err = p.sampleLogprobs(choices); err != nil {
			return math.NaN(), err
		}
	}
	m, chat := p.judge()
	clusters, err := semantic.ClusterAnswers(ctx, m, question(req.Messages), texts)
	if err != nil {
		return math.NaN(), fmt.Errorf("entailment of the samples: %w", err)
	}
	p.warnRefused(chat)
	in.Clusters = clusters
	return p.def.Value(in)
}

// wantsAnswerLogprobs returns the caller's request asking the upstream
// for the logprobs of its answer (and top_logprobs alternatives, for
// mte), and whether the caller did not ask for them itself, so that they
// are blanked from its answer. A caller that asked for logprobs keeps
// its request as it is: without top_logprobs, its mte is unavailable.
func (p *Proxy) wantsAnswerLogprobs(body []byte, cr *chatRequest) ([]byte, bool) {
	if string(cr.Logprobs) == "true" {
		return body, false
	}
	kv := [][2]string{{"logprobs", "true"}}
	if p.topK > 0 {
		kv = append(kv, [2]string{"top_logprobs", strconv.Itoa(p.topK)})
	}
	b, err := setKeys(body, kv)
	if err != nil {
		return body, false // not an object: the upstream refuses it as it came
	}
	return b, true
}

// scoreAnswer computes the scores of the caller's answer b (the
// upstream's answer, a chat completion), and blanks its logprobs when
// the caller did not ask for them; sc is the outcome of the samples.
func (p *Proxy) scoreAnswer(ctx context.Context, req llm.ChatRequest, sc scored, b []byte, blank bool) ([]byte, scored) {
	if !p.answerFn && !p.ptrue && !p.questionFn {
		return b, sc
	}
	choices, perr := llm.ChatChoices(b)
	if blank {
		if nb, err := blankLogprobs(b); err == nil {
			b = nb
		}
	}
	switch {
	case sc.err != nil:
		return b, sc
	case perr != nil:
		return b, scored{uncertainty: math.NaN(), err: fmt.Errorf("scoring: %w", perr)}
	case p.answerFn:
		return b, p.answerScore(ctx, req, sc, choices[0])
	case p.questionFn:
		return b, p.askQuestion(ctx, req, sc, choices[0].Text)
	}
	return b, p.askPTrue(ctx, req, sc, choices[0].Text)
}

// askPTrue asks the upstream p(True) of the caller's answer, with the
// samples as the brainstormed ideas; the score is 1 − p(True).
func (p *Proxy) askPTrue(ctx context.Context, req llm.ChatRequest, sc scored, answer string) scored {
	if sc.err != nil {
		return sc
	}
	start := time.Now()
	text := llm.PTrueText(p.ptruePrompt, question(req.Messages), sc.samples, answer)
	toks, err := llm.AskPTrue(ctx, p.client, req.Model, false, text)
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		return scored{uncertainty: math.NaN(), err: p.cutErr(), seconds: sc.seconds}
	}
	if err != nil {
		return scored{uncertainty: math.NaN(), err: fmt.Errorf("p(True): %w", err), seconds: sc.seconds}
	}
	pt, err := llm.PTrueOf(toks)
	if err != nil {
		return scored{uncertainty: math.NaN(), err: fmt.Errorf("p(True): %w", err), seconds: sc.seconds}
	}
	return scored{uncertainty: 1 - pt, seconds: sc.seconds + time.Since(start).Seconds()}
}

// askQuestion asks the upstream the score's own question (llm.Questions,
// its default template) about the caller's question and answer, as
// `genlens entropy` asks it, and scores the replies. A model that
// refuses the question (400, 422) gives no score, saying so.
func (p *Proxy) askQuestion(ctx context.Context, req llm.ChatRequest, sc scored, answer string) scored {
	if sc.err != nil {
		return sc
	}
	start := time.Now()
	q := question(req.Messages)
	if q == "" && (p.question.FollowUp || strings.Contains(p.question.Template, "{question}")) {
		return scored{uncertainty: math.NaN(), err: fmt.Errorf("%s: the request has no user message to ask about", p.score)}
	}
	replies, err := p.question.Ask(ctx, p.client, req.Model, false, p.question.Template, q, answer)
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		return scored{uncertainty: math.NaN(), err: p.cutErr()}
	}
	if why := llm.Refusal(err); why != nil {
		return scored{uncertainty: math.NaN(), err: fmt.Errorf("%s: %w", p.score, why)}
	}
	if err != nil {
		return scored{uncertainty: math.NaN(), err: fmt.Errorf("%s: %w", p.score, err)}
	}
	u, err := p.def.Value(uncertainty.Input{Replies: replies})
	if err != nil {
		return scored{uncertainty: math.NaN(), err: fmt.Errorf("%s: %w", p.score, err)}
	}
	return scored{uncertainty: u, seconds: time.Since(start).Seconds()}
}

// configure sets what the score needs beyond its name, checked by
// Options.Validate: the judge of the semantic scores, mte's alternatives,
// p(True)'s template.
func (p *Proxy) configure(o Options) error {
	p.topK, p.ptruePrompt = o.TopLogprobs, o.PTruePrompt
	judge, err := o.Judge.open()
	switch {
	case err != nil:
		return err
	}
	p.judge = judge
	if o.Judge.APIKey != "" {
		p.secrets = append(p.secrets, o.Judge.APIKey)
	}
	return nil
}

// samplesDrawn is k, or 0 for a score of the answer alone.
func (p *Proxy) samplesDrawn() int {
	if p.answerFn && !p.withSamples || p.questionFn {
		return 0
	}
	return p.k
}

// ReadPTruePrompt reads the template of ptrue's question from the file at
// path (Kadavath et al.'s when path is ""), refusing, as the entropy
// command does, a template with no place for the proposed answer.
func ReadPTruePrompt(path string) (string, error) {
	return llm.ReadPTruePrompt(dataio.HostFS, path)
}
