package llmproxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/service/llmproxy"
	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/llmjob"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

// polyQuestion is the caller's question, the last user message.
const polyQuestion = "What is the capital of France?"

// tok is a token with its top-K alternatives (the token first, as
// servers send them).
func tok(text string, lp float64, alts ...any) llm.TokenLogprob {
	t := llm.TokenLogprob{Token: text, Logprob: lp, Top: []llm.TokenChoice{{Token: text, Logprob: lp}}}
	for i := 0; i < len(alts); i += 2 {
		t.Top = append(t.Top, llm.TokenChoice{Token: alts[i].(string), Logprob: alts[i+1].(float64)})
	}
	return t
}

// polyAnswer is the upstream's answer to the caller, polySamples the
// proxy's samples: texts that are their tokens' concatenation.
var (
	polyAnswer = []llm.TokenLogprob{tok("The", -0.1, "It", -2.5), tok(" capital", -0.4, " city", -1.3), tok(" is", -0.05, " was", -3.0),
		tok(" Paris", -0.2, " Lyon", -1.9, " Nice", -2.8), tok(".", -0.01)}
	polySamples = [][]llm.TokenLogprob{
		{tok("Paris", -0.3, "Lyon", -1.5), tok(".", -0.02)},
		{tok("The", -0.7, "It", -0.9), tok(" capital", -0.5), tok(" is", -0.1), tok(" Paris", -0.3, " Lyon", -1.4)},
		{tok("Lyon", -1.2, "Paris", -0.5), tok(" is", -0.8), tok(" the", -0.3), tok(" capital", -0.6)},
		{tok("It", -0.9), tok(" is", -0.2), tok(" Paris", -0.4, " Marseille", -1.6), tok(".", -0.05)},
	}
)

func textOf(ts []llm.TokenLogprob) string {
	var b strings.Builder
	for _, t := range ts {
		b.WriteString(t.Token)
	}
	return b.String()
}

// polySampler draws polySamples, with their logprobs when asked.
type polySampler struct {
	mu   sync.Mutex
	reqs []llm.ChatRequest
}

func (s *polySampler) Sample(ctx context.Context, req llm.ChatRequest, n int) ([]llm.Choice, llm.Usage, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	out := make([]llm.Choice, n)
	for i := range out {
		ts := polySamples[i%len(polySamples)]
		out[i].Text = textOf(ts)
		if req.Logprobs {
			out[i].Tokens = ts
		}
	}
	return out, llm.Usage{}, nil
}

// polyUpstream answers the caller with polyAnswer, its logprobs and
// top_logprobs as asked, in the shape of OpenAI's chat completions.
func polyUpstream(t *testing.T) *llm.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Logprobs    bool `json:"logprobs"`
			TopLogprobs int  `json:"top_logprobs"`
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &req)
		type alt struct {
			Token   string  `json:"token"`
			Logprob float64 `json:"logprob"`
		}
		type content struct {
			alt
			Top []alt `json:"top_logprobs"`
		}
		var lps any
		if req.Logprobs {
			var cs []content
			for _, tk := range polyAnswer {
				c := content{alt: alt{tk.Token, tk.Logprob}, Top: []alt{}}
				for _, a := range tk.Top[:min(len(tk.Top), req.TopLogprobs)] {
					c.Top = append(c.Top, alt{a.Token, a.Logprob})
				}
				cs = append(cs, c)
			}
			lps = map[string]any{"content": cs}
		}
		out, _ := json.Marshal(map[string]any{"id": "x", "model": "tiny", "choices": []any{map[string]any{"index": 0,
			"message": map[string]any{"role": "assistant", "content": textOf(polyAnswer)}, "logprobs": lps, "finish_reason": "stop"}}})
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
	}))
	t.Cleanup(srv.Close)
	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wordJudge is a chat judge (as package chatnli asks) that answers
// entailment when both answers end in the same word, contradiction when
// neither is "It" or "The" and they differ, and neutral otherwise: the
// three labels, so that CCP weighs alternatives both ways.
func wordJudge(t *testing.T) string {
	t.Helper()
	h, err := llmtest.NewHandler(llmtest.Config{Model: categorical.Symmetric(1, 3, 1), Inputs: []string{"cat"},
		Labels: []string{"yes", "no", "maybe"},
		Reply: func(prompt string) (llmtest.Reply, bool) {
			if !strings.HasPrefix(prompt, "We are evaluating answers") {
				return nil, false
			}
			last := func(from, to string) string {
				f := strings.Fields(prompt[strings.Index(prompt, from)+len(from) : strings.Index(prompt, to)])
				if len(f) == 0 {
					return ""
				}
				return strings.Trim(f[len(f)-1], ".")
			}
			a, b := last("Possible Answer 1: ", "\nPossible Answer 2: "), last("Possible Answer 2: ", "\nDoes Possible Answer 1")
			ans := "contradiction"
			switch {
			case a == b:
				ans = "entailment"
			case a == "It" || b == "It" || a == "The" || b == "The":
				ans = "neutral"
			}
			return llmtest.Reply{{Text: ans}}, true
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// entropyRow is the row of `genlens entropy` holding what the proxy
// scored: the question, the samples and their logprobs, and the caller's
// answer as the answer under test.
func entropyRow(samples [][]llm.TokenLogprob) []byte {
	type alt struct {
		Token   string  `json:"token"`
		Logprob float64 `json:"logprob"`
	}
	type token struct {
		alt
		Top []alt `json:"top,omitempty"`
	}
	conv := func(ts []llm.TokenLogprob) []token {
		out := make([]token, len(ts))
		for i, t := range ts {
			out[i] = token{alt: alt{t.Token, t.Logprob}}
			for _, a := range t.Top {
				out[i].Top = append(out[i].Top, alt{a.Token, a.Logprob})
			}
		}
		return out
	}
	var texts []string
	var lps [][]token
	for _, s := range samples {
		texts, lps = append(texts, textOf(s)), append(lps, conv(s))
	}
	b, _ := json.Marshal(map[string]any{"id": "q", "prompt": polyQuestion, "samples": texts, "logprobs": lps,
		"answer": textOf(polyAnswer), "answer_logprobs": conv(polyAnswer)})
	return append(b, '\n')
}

// Each LM-Polygraph score the proxy attaches to its answer is the number
// `genlens entropy --scores NAME` gives the same samples, logprobs and
// answer, with the same judge for those of the judge and the same
// similarity (rougel, or nli of the same judge).
func TestProxyPolygraphScoresAreEntropys(t *testing.T) {
	nliDir := filepath.Join("..", "..", "..", "network", "bert", "testdata", "nli")
	c := polyUpstream(t)
	chat := wordJudge(t)
	body := `{"model":"tiny","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"` + polyQuestion + `"}]}`
	for _, tc := range []struct {
		score   string
		judge   string // "bert" in process, "chat" wordJudge, "" none
		samples int    // drawn, 0 for a score of the answer alone
		nliSim  bool   // the similarity nli, of the judge
	}{
		{"cocoa-msp", "", 4, false}, {"cocoa-ppl", "", 4, false}, {"cocoa-mte", "", 4, false},
		{"sentence-sar", "", 4, false}, {"sar", "", 4, false}, {"token-sar", "", 0, false},
		{"semantic-density", "bert", 4, false}, {"luq", "bert", 4, false}, {"ccp", "bert", 0, false},
		{"semantic-density", "chat", 4, false}, {"luq", "chat", 4, false}, {"ccp", "chat", 0, false},
		{"cocoa-msp", "bert", 4, true}, {"cocoa-mte", "chat", 4, true}, {"sentence-sar", "bert", 4, true},
		{"sentence-sar", "chat", 4, true}, {"sar", "bert", 4, true}, {"token-sar", "bert", 0, true}, {"token-sar", "chat", 0, true},
	} {
		name := tc.score + "/" + tc.judge
		if tc.nliSim {
			name += "/nli"
		}
		t.Run(name, func(t *testing.T) {
			s := &polySampler{}
			o := llmproxy.Options{Client: c, Sampler: s, Samples: 4, Score: tc.score}
			req := llmjob.NewEntropyRequest()
			if tc.nliSim {
				o.Similarity, req.Similarity = "nli", "nli"
			}
			switch tc.judge {
			case "bert":
				o.Judge = llmproxy.Judge{NLI: "bert", Weights: nliDir}
			case "chat":
				o.Judge = llmproxy.Judge{BaseURL: chat, Model: "genlens-categorical"}
			}
			p, err := llmproxy.New(o)
			if err != nil {
				t.Fatal(err)
			}
			out := callProxy(t, p, body)
			p.Close(context.Background())
			if len(s.reqs) != min(tc.samples, 1) {
				t.Fatalf("samplings %d, want %d", len(s.reqs), min(tc.samples, 1))
			}
			if out.Genlens.Uncertainty == nil || out.Genlens.Samples != tc.samples || out.Genlens.Score != tc.score {
				t.Fatalf("%+v", out.Genlens)
			}
			req.In, req.Scores = "in.jsonl", tc.score
			switch tc.judge {
			case "bert":
				req.NLI, req.NLIWeights = "bert", nliDir
			case "chat":
				req.NLIBaseURL, req.NLIModel = chat, "genlens-categorical"
			}
			res, err := llmjob.Entropy(context.Background(), job.Env{FS: fstest.MapFS{"in.jsonl": {Data: entropyRow(polySamples)}}}, req)
			if err != nil {
				t.Fatal(err)
			}
			v := res.Items[0].Score(tc.score)
			if v == nil {
				t.Fatalf("entropy gave no %s: %+v", tc.score, res.Items[0])
			}
			t.Logf("%s: proxy %v, entropy %v", tc.score, *out.Genlens.Uncertainty, float64(*v))
			if want := float64(*v); *out.Genlens.Uncertainty != want {
				t.Errorf("the proxy's %s %v, entropy's %v", tc.score, *out.Genlens.Uncertainty, want)
			}
		})
	}
}

// An answer over MaxRelevanceTokens tokens leaves token-sar unavailable,
// saying why, rather than holding a CPU for its cube.
func TestProxyTokenSARBound(t *testing.T) {
	long := make([]llm.TokenLogprob, llmproxy.MaxRelevanceTokens+1)
	for i := range long {
		long[i] = tok(" w", -0.1)
	}
	saved := polyAnswer
	polyAnswer = long
	defer func() { polyAnswer = saved }()
	p, err := llmproxy.New(llmproxy.Options{Client: polyUpstream(t), Samples: 2, Score: "token-sar"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	out := callProxy(t, p, `{"model":"tiny","messages":[{"role":"user","content":"q"}]}`)
	if out.Genlens.Uncertainty != nil || !strings.Contains(out.Genlens.Error, "257 tokens, over the 256") {
		t.Errorf("%+v", out.Genlens)
	}
}

// The scores of the judge's probabilities need a judge, and the others
// take none; the alternatives apply to the scores that read them.
func TestValidatePolygraphScores(t *testing.T) {
	bert := llmproxy.Judge{NLI: "bert", Weights: "dir"}
	for _, tc := range []struct {
		o     llmproxy.Options
		field string
		msg   string // "": valid
	}{
		{llmproxy.Options{Score: "semantic-density"}, "score", "{score} semantic-density reads the entailment probabilities of the answer with the samples: give {nli} NAME"},
		{llmproxy.Options{Score: "luq"}, "score", "{score} luq reads the entailment probabilities of the pairs of samples: give {nli} NAME"},
		{llmproxy.Options{Score: "ccp"}, "score", "{score} ccp weighs the answer's tokens against their alternatives by entailment: give {nli} NAME"},
		{llmproxy.Options{Score: "sar", Judge: bert}, "score", "{score} \"sar\" takes no entailment judge"},
		{llmproxy.Options{Score: "cocoa-msp", Judge: bert}, "score", "{score} \"cocoa-msp\" takes no entailment judge"},
		{llmproxy.Options{Score: "cocoa-msp", TopLogprobs: 3}, "top_logprobs", "{top_logprobs} applies only to {score} mte, cocoa-mte, ccp"},
		{llmproxy.Options{Score: "ccp", Judge: bert, TopLogprobs: 21}, "top_logprobs", "{top_logprobs} 21: want 1 to 20"},
		{llmproxy.Options{Score: "lexsim"}, "score", `{score} "lexsim"`},
		{llmproxy.Options{Score: "ccp", Judge: bert}, "", ""},
		{llmproxy.Options{Score: "luq", Judge: llmproxy.Judge{BaseURL: "http://judge/v1", Model: "m"}}, "", ""},
		{llmproxy.Options{Score: "cocoa-mte", TopLogprobs: 5}, "", ""},
		{llmproxy.Options{Score: "sar"}, "", ""},
		{llmproxy.Options{Score: "token-sar"}, "", ""},
		{llmproxy.Options{Score: "sentence-sar"}, "", ""},
		{llmproxy.Options{Score: "sar", Similarity: "nli"}, "similarity", "{similarity} nli is the entailment judge's probability: give {nli} NAME"},
		{llmproxy.Options{Score: "luq", Judge: bert, Similarity: "nli"}, "similarity", "{similarity} applies only to {score} cocoa-msp, cocoa-mte, cocoa-ppl, sar, sentence-sar, token-sar"},
		{llmproxy.Options{Score: "kle", Similarity: "rougel"}, "similarity", "{similarity} applies only to {score}"},
		{llmproxy.Options{Score: "sar", Similarity: "embedding"}, "similarity", `{similarity} "embedding": want rougel or nli`},
		{llmproxy.Options{Score: "sar", Judge: bert, Similarity: "nli"}, "", ""},
		{llmproxy.Options{Score: "token-sar", Similarity: "rougel"}, "", ""},
	} {
		tc.o.EnsureDefaults()
		err := tc.o.Validate()
		var fe *fault.FieldError
		switch {
		case tc.msg == "" && err != nil:
			t.Errorf("%+v: %v", tc.o, err)
		case tc.msg == "":
		case !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.msg) || strings.Contains(fe.Msg, "\n"):
			t.Errorf("%+v: %v, want {%s} %q", tc.o, err, tc.field, tc.msg)
		}
	}
}

// A stream passes through as the caller asked it, without logprobs: the
// scores of the caller's answer with the samples draw none for it, and
// its record says why it has no score.
func TestProxyAnswerWithSamplesStream(t *testing.T) {
	s := &polySampler{}
	rec := &memRecorder{}
	p, err := llmproxy.New(llmproxy.Options{Client: polyUpstream(t), Sampler: s, Samples: 4, Score: "cocoa-msp", Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(p)
	resp, err := http.Post(ts.URL, "application/json", strings.NewReader(`{"model":"tiny","stream":true,"messages":[{"role":"user","content":"q"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	ts.Close()
	p.Close(context.Background())
	if len(s.reqs) != 0 || len(rec.rs) != 1 {
		t.Fatalf("samplings %d, records %+v", len(s.reqs), rec.rs)
	}
	if r := rec.rs[0]; r.Samples != 0 || !math.IsNaN(r.Uncertainty) || !strings.Contains(r.Error, "a stream passes through as the caller asked it") {
		t.Errorf("record %+v", r)
	}
}
