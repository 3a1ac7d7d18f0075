package llmproxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/genlens/genlens/internal/entail"
	"github.com/genlens/genlens/internal/service/llmproxy"
	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/metric/hallucination/categorical"
	"github.com/genlens/genlens/metric/semantic"
	"github.com/genlens/genlens/metric/uncertainty"
)

// capturing draws the samples through the client and keeps them.
type capturing struct {
	c  *llm.Client
	mu sync.Mutex
	ch [][]llm.Choice
}

func (s *capturing) Sample(ctx context.Context, req llm.ChatRequest, n int) ([]llm.Choice, llm.Usage, error) {
	ch, u, err := s.c.Sample(ctx, req, n)
	s.mu.Lock()
	s.ch = append(s.ch, ch)
	s.mu.Unlock()
	return ch, u, err
}

// ptrueLogprobs are the first token's alternatives the scripted model
// answers p(True)'s question with: p(True) = 0.7 + 0.05 (" True" and
// "True" are the same answer).
var ptrueLogprobs = map[string]float64{" True": math.Log(0.7), " False": math.Log(0.2), "True": math.Log(0.05)}

// scoresUpstream is the fake server's categorical model (one example
// "yes" seen: the label is yes with probability 1/2, no and maybe 1/4),
// with an entailment judge (an answer entails another when their last
// words agree) and p(True)'s question scripted; prompts collects the
// scripted prompts.
func scoresUpstream(t *testing.T, prompts *[]string, mu *sync.Mutex) *llm.Client {
	t.Helper()
	h, err := llmtest.NewHandler(llmtest.Config{Model: categorical.Symmetric(1, 3, 1), Inputs: []string{"cat"},
		Labels: []string{"yes", "no", "maybe"},
		Reply: func(prompt string) (llmtest.Reply, bool) {
			switch {
			case strings.HasPrefix(prompt, "We are evaluating answers"):
				last := func(from, to string) string {
					f := strings.Fields(prompt[strings.Index(prompt, from)+len(from) : strings.Index(prompt, to)])
					return f[len(f)-1]
				}
				ans := "neutral"
				if last("Possible Answer 1: ", "\nPossible Answer 2: ") == last("Possible Answer 2: ", "\nDoes Possible Answer 1") {
					ans = "entailment"
				}
				return llmtest.Reply{{Text: ans}}, true
			case strings.HasPrefix(prompt, "Question:"):
				mu.Lock()
				*prompts = append(*prompts, prompt)
				mu.Unlock()
				return llmtest.Reply{{Text: " True", Logprob: ptrueLogprobs[" True"], Top: ptrueLogprobs}}, true
			}
			return nil, false
		}})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(h)
	t.Cleanup(up.Close)
	c, err := llm.New(llm.Config{BaseURL: up.URL + "/v1", MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type proxied struct {
	Choices []struct {
		Message  struct{ Content string }
		Logprobs json.RawMessage
	}
	Genlens struct {
		Uncertainty *float64
		Score       string
		Samples     int
		Error       string
	}
	header string
}

func callProxy(t *testing.T, p *llmproxy.Proxy, body string) proxied {
	t.Helper()
	ts := httptest.NewServer(p)
	defer ts.Close()
	resp, err := http.Post(ts.URL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var out proxied
	if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != 200 || len(out.Choices) != 1 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	out.header = resp.Header.Get("X-Genlens-Uncertainty")
	return out
}

const catPrompt = `"messages":[{"role":"user","content":"Input: cat\nLabel: yes\n\nInput: cat\nLabel:"}]`

// entropyOf is −Σ p log p of the weights w normalised.
func entropyOf(w []float64) float64 {
	var z, h float64
	for _, x := range w {
		z += x
	}
	for _, x := range w {
		if x > 0 {
			h -= x / z * math.Log(x/z)
		}
	}
	return h
}

// msp, perplexity and mte come from the logprobs of the answer the
// caller receives: asked of the upstream with its request, and blanked
// from its answer when it did not ask for them itself.
func TestProxyAnswerScores(t *testing.T) {
	var mu sync.Mutex
	var prompts []string
	c := scoresUpstream(t, &prompts, &mu)
	// The greedy answer " yes": log p = log 1/2, its alternatives 1/2, 1/4, 1/4.
	want := map[string]float64{
		"msp":        0.5,
		"perplexity": 2,
		"mte":        -(0.5*math.Log(0.5) + 2*0.25*math.Log(0.25)),
	}
	for score, w := range want {
		for _, asked := range []string{"", `"logprobs":true,"top_logprobs":3,`} {
			p, err := llmproxy.New(llmproxy.Options{Client: c, Samples: 2, Score: score})
			if err != nil {
				t.Fatal(err)
			}
			out := callProxy(t, p, `{"model":"genlens-categorical",`+asked+catPrompt+`,"max_tokens":1,"temperature":0}`)
			p.Close(context.Background())
			h, _ := strconv.ParseFloat(out.header, 64)
			if out.Genlens.Uncertainty == nil || math.Abs(*out.Genlens.Uncertainty-w) > 1e-9 || math.Abs(h-w) > 1e-9 ||
				out.Genlens.Samples != 0 || out.Genlens.Score != score {
				t.Errorf("%s (caller asked %q): %+v, header %q; want %v", score, asked, out.Genlens, out.header, w)
			}
			if got := string(out.Choices[0].Logprobs); (asked == "") != (got == "null") {
				t.Errorf("%s (caller asked %q): the caller got logprobs %s", score, asked, got)
			}
		}
	}
	// A caller asking logprobs without alternatives keeps its request:
	// mte is unavailable, not 0.
	p, err := llmproxy.New(llmproxy.Options{Client: c, Samples: 2, Score: "mte"})
	if err != nil {
		t.Fatal(err)
	}
	out := callProxy(t, p, `{"model":"genlens-categorical","logprobs":true,`+catPrompt+`,"max_tokens":1,"temperature":0}`)
	p.Close(context.Background())
	if out.Genlens.Uncertainty != nil || !strings.Contains(out.Genlens.Error, "top-K") || out.header != "" ||
		!strings.Contains(string(out.Choices[0].Logprobs), `"top_logprobs":[]`) {
		t.Errorf("mte without alternatives: %+v, header %q, logprobs %s", out.Genlens, out.header, out.Choices[0].Logprobs)
	}
}

// An upstream that ignores "logprobs" leaves the answer's scores
// unavailable, with the reason.
func TestProxyAnswerScoresWithoutLogprobs(t *testing.T) {
	p, up := newTestProxy(t, llmproxy.Options{Score: "mte", TopLogprobs: 4})
	out := callProxy(t, p, `{"model":"tiny", "messages":[{"role":"user","content":"Capital of France?"}] }`)
	if out.Genlens.Uncertainty != nil || !strings.Contains(out.Genlens.Error, "sent no logprobs with the answer, and mte needs them") || out.header != "" {
		t.Errorf("%+v, header %q", out.Genlens, out.header)
	}
	want := `{"model":"tiny", "messages":[{"role":"user","content":"Capital of France?"}] ,"logprobs":true,"top_logprobs":4}`
	if bodies, _, _ := up.got(); !slices.Equal(bodies, []string{want}) {
		t.Errorf("the upstream got\n%q\nwant\n%s", bodies, want)
	}
}

// se, se-discrete, numsets and label-prob cluster the proxy's samples with the
// entailment judge; ptrue asks the upstream about the caller's answer.
func TestProxySemanticAndPTrue(t *testing.T) {
	var mu sync.Mutex
	var prompts []string
	c := scoresUpstream(t, &prompts, &mu)
	body := `{"model":"genlens-categorical",` + catPrompt + `,"max_tokens":1,"temperature":0}`
	for _, score := range []string{"se", "se-discrete", "numsets", "label-prob", "ptrue"} {
		s := &capturing{c: c}
		o := llmproxy.Options{Client: c, Sampler: s, Samples: 8, Score: score}
		if score != "ptrue" {
			o.Judge = llmproxy.Judge{BaseURL: c.BaseURL(), Model: "genlens-categorical"}
		}
		p, err := llmproxy.New(o)
		if err != nil {
			t.Fatal(err)
		}
		out := callProxy(t, p, body)
		p.Close(context.Background())
		if len(s.ch) != 1 || len(s.ch[0]) != 8 {
			t.Fatalf("%s: samples %+v", score, s.ch)
		}
		// By hand: the samples' clusters are their labels.
		mass, count := map[string]float64{}, map[string]float64{}
		var texts []string
		for _, ch := range s.ch[0] {
			if score == "se" && len(ch.Tokens) == 0 {
				t.Fatalf("se's samples came without logprobs: %+v", ch)
			}
			var lp float64
			for _, tok := range ch.Tokens {
				lp += tok.Logprob
			}
			mass[ch.Text] += math.Exp(lp)
			count[ch.Text]++
			texts = append(texts, ch.Text)
		}
		var ws, cs []float64
		for k := range mass {
			ws, cs = append(ws, mass[k]), append(cs, count[k])
		}
		largest := 0.0
		for _, n := range cs {
			largest = max(largest, n)
		}
		want := map[string]float64{"se": entropyOf(ws), "se-discrete": entropyOf(cs), "numsets": float64(len(mass)), "ptrue": 0.25,
			"label-prob": 1 - largest/8}[score]
		if out.Genlens.Uncertainty == nil || math.Abs(*out.Genlens.Uncertainty-want) > 1e-9 || out.Genlens.Samples != 8 {
			t.Errorf("%s: %+v; want %v of the samples %q", score, out.Genlens, want, texts)
		}
		if h, _ := strconv.ParseFloat(out.header, 64); math.Abs(h-want) > 1e-9 {
			t.Errorf("%s: header %q, want %v", score, out.header, want)
		}
	}
	if len(prompts) != 1 || !strings.Contains(prompts[0], "Proposed Answer:  yes\n") || !strings.Contains(prompts[0], "Question: Input: cat\nLabel: yes") {
		t.Errorf("p(True) asked %q", prompts)
	}
}

// ecc, the eccentricity of the samples' similarity graph, is served as
// the other graph scores are: what package uncertainty gives the samples.
func TestProxyEcc(t *testing.T) {
	samples := fixedSampler{"Paris is the capital", "Lyon", "Paris", "the capital is Paris"}
	p, _ := newTestProxy(t, llmproxy.Options{Sampler: samples, Samples: 4, Score: "ecc"})
	out := callProxy(t, p, `{"model":"tiny","messages":[{"role":"user","content":"Capital of France?"}]}`)
	sc, err := uncertainty.NewScorer(uncertainty.Options{Sequence: uncertainty.DefaultSequence,
		Scores: []uncertainty.Score{uncertainty.ScoreEcc}, Similarity: uncertainty.SimilarityRougeL, KLETime: uncertainty.DefaultKLETime})
	if err != nil {
		t.Fatal(err)
	}
	res, err := sc.Evaluate(uncertainty.Prompt{ID: "x", Samples: samples})
	if err != nil {
		t.Fatal(err)
	}
	if want := res.Ecc; out.Genlens.Uncertainty == nil || *out.Genlens.Uncertainty != want || want <= 0 {
		t.Errorf("ecc %+v, want %v", out.Genlens, want)
	}
}

// The in-process NLI judge clusters the samples as the entropy job's
// judge does, each sample after the question.
func TestProxyNLIModelJudge(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "network", "bert", "testdata", "nli")
	samples := fixedSampler{"The capital is Paris.", "Paris.", "It is Lyon, not Paris.", "A dog runs in the park."}
	p, _ := newTestProxy(t, llmproxy.Options{Sampler: samples, Samples: 4, Score: "numsets", Judge: llmproxy.Judge{NLI: "bert", Weights: dir}})
	out := callProxy(t, p, `{"model":"tiny","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"Capital of"},{"type":"text","text":"France?"}]}]}`)
	m, err := entail.Open("bert", dir)
	if err != nil {
		t.Fatal(err)
	}
	clusters, err := semantic.ClusterAnswers(context.Background(), m, "Capital of France?", samples)
	if err != nil {
		t.Fatal(err)
	}
	if want := float64(semantic.NumSets(clusters)); out.Genlens.Uncertainty == nil || *out.Genlens.Uncertainty != want {
		t.Errorf("numsets %+v, want %v (clusters %v)", out.Genlens, want, clusters)
	}
}

// se without the samples' logprobs is unavailable, with the reason; a
// stream's answer gets its p(True) in the record.
func TestProxyUnavailableAndStreams(t *testing.T) {
	var mu sync.Mutex
	var prompts []string
	c := scoresUpstream(t, &prompts, &mu)
	p, err := llmproxy.New(llmproxy.Options{Client: c, Sampler: &tokenSampler{}, Samples: 3, Score: "se",
		Judge: llmproxy.Judge{BaseURL: c.BaseURL(), Model: "genlens-categorical"}})
	if err != nil {
		t.Fatal(err)
	}
	out := callProxy(t, p, `{"model":"genlens-categorical",`+catPrompt+`,"max_tokens":1}`)
	p.Close(context.Background())
	if out.Genlens.Uncertainty != nil || out.Genlens.Error != "scoring: the upstream sent no logprobs with its samples, and se needs them" || out.header != "" {
		t.Errorf("se without logprobs: %+v, header %q", out.Genlens, out.header)
	}
	for score, want := range map[string]string{"ptrue": "", "msp": "a stream passes through as the caller asked it"} {
		rec := &memRecorder{}
		p, err = llmproxy.New(llmproxy.Options{Client: c, Samples: 3, Score: score, Recorder: rec})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(p)
		resp, err := http.Post(ts.URL, "application/json", strings.NewReader(`{"model":"genlens-categorical","stream":true,`+catPrompt+`,"max_tokens":1,"temperature":0}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ts.Close()
		p.Close(context.Background())
		if strings.Contains(string(b), `"logprobs":{`) {
			t.Errorf("%s: the stream gained logprobs: %s", score, b)
		}
		if len(rec.rs) != 1 {
			t.Fatalf("%s: records %+v", score, rec.rs)
		}
		r := rec.rs[0]
		if want == "" && (math.Abs(r.Uncertainty-0.25) > 1e-9 || r.Error != "") || want != "" && (!math.IsNaN(r.Uncertainty) || !strings.Contains(r.Error, want)) {
			t.Errorf("%s: recorded uncertainty %v, error %q", score, r.Uncertainty, r.Error)
		}
	}
}

// ptrue-empirical, verbalized-1s, verbalized-2s and linguistic-1s ask the
// upstream their own question about the caller's question and answer, as
// `genlens entropy` asks it, and score its replies; no sample is drawn.
func TestProxyQuestionScores(t *testing.T) {
	var mu sync.Mutex
	asked := map[string][]string{}
	h, err := llmtest.NewHandler(llmtest.Config{Model: categorical.Symmetric(1, 3, 1), Inputs: []string{"cat"},
		Labels: []string{"yes", "no", "maybe"},
		Reply: func(prompt string) (llmtest.Reply, bool) {
			var score, reply string
			switch {
			case strings.Contains(prompt, "Is the proposed answer true or false?"):
				score, reply = "ptrue-empirical", " True"
			case strings.Contains(prompt, "Probability: <a number between 0.0 and 1.0>") && strings.Contains(prompt, "Guess:"):
				score, reply = "verbalized-1s", "Guess: yes\nProbability: 0.8"
			case strings.Contains(prompt, "that your answer is correct?"):
				score, reply = "verbalized-2s", "Probability: 0.35"
			case strings.Contains(prompt, "Confidence: <one of the expressions>"):
				score, reply = "linguistic-1s", "Guess: yes\nConfidence: Highly Likely"
			default:
				return nil, false
			}
			mu.Lock()
			asked[score] = append(asked[score], prompt)
			mu.Unlock()
			return llmtest.Reply{{Text: reply}}, true
		}})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(h)
	defer up.Close()
	c, err := llm.New(llm.Config{BaseURL: up.URL + "/v1", MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	body := `{"model":"genlens-categorical",` + catPrompt + `,"max_tokens":1,"temperature":0}`
	for score, want := range map[string]float64{"ptrue-empirical": 0, "verbalized-1s": 1 - 0.8, "verbalized-2s": 1 - 0.35, "linguistic-1s": 1 - 0.9} {
		s := &capturing{c: c}
		p, err := llmproxy.New(llmproxy.Options{Client: c, Sampler: s, Samples: 8, Score: score})
		if err != nil {
			t.Fatal(err)
		}
		out := callProxy(t, p, body)
		p.Close(context.Background())
		if len(s.ch) != 0 {
			t.Errorf("%s: samples drawn: %+v", score, s.ch)
		}
		if out.Genlens.Uncertainty == nil || math.Abs(*out.Genlens.Uncertainty-want) > 1e-12 || out.Genlens.Score != score || out.Genlens.Samples != 0 {
			t.Errorf("%s: %+v; want %v", score, out.Genlens, want)
		}
		if h, _ := strconv.ParseFloat(out.header, 64); math.Abs(h-want) > 1e-12 {
			t.Errorf("%s: header %q, want %v", score, out.header, want)
		}
		mu.Lock()
		prompts := asked[score]
		mu.Unlock()
		if len(prompts) != 1 || !strings.Contains(prompts[0], "Input: cat\nLabel: yes") {
			t.Errorf("%s asked %q", score, prompts)
		}
		if (score == "ptrue-empirical" || score == "verbalized-2s") && !strings.Contains(prompts[0], out.Choices[0].Message.Content) {
			t.Errorf("%s: the question %q holds not the answer %q", score, prompts[0], out.Choices[0].Message.Content)
		}
	}
}

// A model that refuses the question gives no score, saying so.
func TestProxyQuestionRefused(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), "Probability:") {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"not a chat model"}}`)
			return
		}
		fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"yes"},"finish_reason":"stop"}]}`)
	}))
	defer up.Close()
	c, err := llm.New(llm.Config{BaseURL: up.URL + "/v1", MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := llmproxy.New(llmproxy.Options{Client: c, Samples: 2, Score: "verbalized-1s"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	out := callProxy(t, p, `{"model":"m","messages":[{"role":"user","content":"Capital of France?"}]}`)
	if out.Genlens.Uncertainty != nil || !strings.Contains(out.Genlens.Error, "verbalized-1s: the model refused the question") {
		t.Errorf("%+v", out.Genlens)
	}
}
