package llmtest_test

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

func newServer(t *testing.T) (*httptest.Server, categorical.Model) {
	m := categorical.Model{Groups: 2, Alpha: []float64{1, 3}}
	h, err := llmtest.NewHandler(llmtest.Config{Model: m, Inputs: []string{"cat", "dog"}, Labels: []string{"yes", "no"}})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s, m
}

func post(t *testing.T, url string, body any) (int, llm.CompletionResponse, string) {
	t.Helper()
	data, _ := json.Marshal(body)
	resp, err := http.Post(url+"/v1/completions", "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	var out llm.CompletionResponse
	_ = json.Unmarshal(buf.Bytes(), &out)
	return resp.StatusCode, out, buf.String()
}

// The echoed prompt carries the model's true log-probabilities: certain
// format tokens 0, inputs log(1/2), labels the Pólya urn given the
// examples before them.
func TestEchoLogprobsByHand(t *testing.T) {
	s, _ := newServer(t)
	prompt := "Input: cat\nLabel: no\n\nInput: cat\nLabel: no"
	code, resp, body := post(t, s.URL, map[string]any{"model": "genlens-categorical", "prompt": prompt, "max_tokens": 0, "echo": true, "logprobs": 1})
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	ch := resp.Choices[0]
	if ch.Text != prompt {
		t.Errorf("echo %q", ch.Text)
	}
	lp := ch.Logprobs
	wantTokens := []string{"Input:", " cat", "\n", "Label:", " no", "\n", "\n", "Input:", " cat", "\n", "Label:", " no"}
	// First "no": (3 + 0)/(4 + 0); second: (3 + 1)/(4 + 1).
	want := []float64{math.NaN(), math.Log(0.5), 0, 0, math.Log(0.75), 0, 0, 0, math.Log(0.5), 0, 0, math.Log(0.8)}
	if len(lp.Tokens) != len(wantTokens) {
		t.Fatalf("tokens %q", lp.Tokens)
	}
	off := 0
	for i, tok := range lp.Tokens {
		if tok != wantTokens[i] || lp.TextOffset[i] != off {
			t.Errorf("token %d = %q at %d, want %q at %d", i, tok, lp.TextOffset[i], wantTokens[i], off)
		}
		off += len(tok)
		if i == 0 {
			if lp.TokenLogprobs[0] != nil {
				t.Error("first token has a log-probability")
			}
			continue
		}
		if math.Abs(*lp.TokenLogprobs[i]-want[i]) > 1e-15 {
			t.Errorf("token %d %q: log p %v, want %v", i, tok, *lp.TokenLogprobs[i], want[i])
		}
	}
	if top := lp.TopLogprobs[4]; len(top) != 1 || top[" no"] != math.Log(0.75) {
		t.Errorf("top logprobs of token 4: %v", top)
	}
}

// Generation continues the grammar, stops at stop sequences, follows the
// seeding convention, and reports offsets after the prompt.
func TestGeneration(t *testing.T) {
	s, m := newServer(t)
	prompt := "Input: dog\nLabel: yes\n\nInput:"
	code, resp, body := post(t, s.URL, map[string]any{"model": "genlens-categorical", "prompt": prompt, "max_tokens": 50, "stop": []string{"\n\n"}, "seed": 42, "logprobs": 0})
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	ch := resp.Choices[0]
	post0, _ := m.Posterior([]categorical.Example{{X: 1, Y: 0}})
	st := categorical.NewStream(42)
	x := categorical.Pick(categorical.Uniform(2), st.Float64())
	y := categorical.Pick(post0.Predictive(x), st.Float64())
	want := " " + []string{"cat", "dog"}[x] + "\nLabel: " + []string{"yes", "no"}[y]
	if ch.Text != want || ch.FinishReason != "stop" {
		t.Errorf("generated %q (%s), want %q", ch.Text, ch.FinishReason, want)
	}
	if n := len(ch.Logprobs.Tokens); n != 4 || ch.Logprobs.TextOffset[0] != len(prompt) || ch.Logprobs.TopLogprobs != nil {
		t.Errorf("logprobs %+v", ch.Logprobs)
	}
	// max_tokens cuts, n gives several choices from one stream, and
	// temperature 0 is greedy: "no" has 3/4 under the prior.
	_, resp, _ = post(t, s.URL, map[string]any{"model": "genlens-categorical", "prompt": "Input: cat\nLabel:", "max_tokens": 1, "n": 3, "temperature": 0})
	if len(resp.Choices) != 3 {
		t.Fatalf("%d choices", len(resp.Choices))
	}
	for _, c := range resp.Choices {
		if c.Text != " no" || c.FinishReason != "length" || c.Logprobs != nil {
			t.Errorf("greedy choice %+v", c)
		}
	}
	// top_p = 0.5 keeps only the most likely label.
	for seed := range 20 {
		_, resp, _ = post(t, s.URL, map[string]any{"model": "genlens-categorical", "prompt": "Input: cat\nLabel:", "max_tokens": 1, "top_p": 0.5, "seed": seed})
		if resp.Choices[0].Text != " no" {
			t.Fatalf("top_p 0.5 generated %q", resp.Choices[0].Text)
		}
	}
}

func TestRequestErrors(t *testing.T) {
	s, _ := newServer(t)
	for _, tc := range []struct {
		body any
		code int
		want string
	}{
		{map[string]any{"model": "other", "prompt": "x"}, 404, "not found"},
		{map[string]any{"model": "genlens-categorical", "prompt": []string{"a", "b"}}, 400, "one string"},
		{map[string]any{"model": "genlens-categorical", "prompt": "Input: horse\nLabel:"}, 400, `unknown input "horse"`},
		{map[string]any{"model": "genlens-categorical", "prompt": "Input: cat\nLabel: maybe"}, 400, `unknown label "maybe"`},
		{map[string]any{"model": "genlens-categorical", "prompt": "Inp"}, 400, "ends inside"},
		{map[string]any{"model": "genlens-categorical", "prompt": "Hello"}, 400, `want "Input:"`},
		{map[string]any{"model": "genlens-categorical", "prompt": "x", "stream": true}, 400, "the prompt format is"},
		{map[string]any{"model": "genlens-categorical", "prompt": "Input: cat\nLabel: yes\nInput: dog\nLabel:"}, 400, `blank line`},
		{map[string]any{"model": "genlens-categorical", "prompt": "Input: cat\nLabel:", "stream": true, "echo": true}, 400, "echo is not supported with stream"},
		{map[string]any{"model": "genlens-categorical", "prompt": "", "top_p": 0}, 400, "top_p"},
		{map[string]any{"model": "genlens-categorical", "prompt": "", "n": 1000}, 400, "n 1000"},
		{"{not json", 400, "malformed"},
	} {
		code, _, body := post(t, s.URL, tc.body)
		if body = strings.ReplaceAll(body, `\"`, `"`); code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%v: %d %s, want %d mentioning %q", tc.body, code, body, tc.code, tc.want)
		}
	}
	resp, err := http.Get(s.URL + "/v1/models")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("models: %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestAPIKeyAndConfig(t *testing.T) {
	m := categorical.Symmetric(1, 2, 1)
	h, err := llmtest.NewHandler(llmtest.Config{Model: m, Inputs: []string{"a"}, Labels: []string{"y", "n"}, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	defer s.Close()
	code, _, _ := post(t, s.URL, map[string]any{"model": "genlens-categorical", "prompt": ""})
	if code != 401 {
		t.Errorf("no key: %d", code)
	}
	for _, cfg := range []llmtest.Config{
		{Model: m, Inputs: []string{"a", "b"}, Labels: []string{"y", "n"}},
		{Model: m, Inputs: []string{"a"}, Labels: []string{"y", "y"}},
		{Model: m, Inputs: []string{" a"}, Labels: []string{"y", "n"}},
		{Model: categorical.Model{Groups: 1, Alpha: []float64{1}}, Inputs: []string{"a"}, Labels: []string{"y"}},
	} {
		if _, err := llmtest.NewHandler(cfg); err == nil {
			t.Errorf("config %+v: no error", cfg)
		}
	}
}

// The chat endpoint answers the concatenated messages as completions
// answers the same prompt, in the chat format; embeddings are unit
// vectors, equal for equal texts.
func TestChatAndEmbeddings(t *testing.T) {
	s, _ := newServer(t)
	do := func(path string, body any) (int, map[string]any) {
		data, _ := json.Marshal(body)
		resp, err := http.Post(s.URL+path, "application/json", bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	code, chat := do("/v1/chat/completions", map[string]any{"model": "genlens-categorical", "max_tokens": 1, "n": 3, "seed": 5,
		"messages": []map[string]string{{"role": "system", "content": "Input: cat\nLabel: no\n\n"}, {"role": "user", "content": "Input: cat\nLabel:"}}})
	_, comp, _ := post(t, s.URL, map[string]any{"model": "genlens-categorical", "max_tokens": 1, "n": 3, "seed": 5, "prompt": "Input: cat\nLabel: no\n\nInput: cat\nLabel:"})
	if code != 200 || chat["object"] != "chat.completion" {
		t.Fatalf("%d %v", code, chat)
	}
	choices := chat["choices"].([]any)
	for i, c := range choices {
		msg := c.(map[string]any)["message"].(map[string]any)
		if msg["role"] != "assistant" || msg["content"] != comp.Choices[i].Text {
			t.Errorf("choice %d: %v, completions %q", i, msg, comp.Choices[i].Text)
		}
	}
	for _, bad := range []map[string]any{
		{"model": "genlens-categorical", "prompt": "Input: cat\nLabel:"},
		{"model": "genlens-categorical", "messages": []map[string]string{{"role": "robot", "content": "Input: cat\nLabel:"}}},
		{"model": "genlens-categorical", "messages": []map[string]string{{"role": "user", "content": "Input: cat\nLabel:"}}, "logprobs": 3},
		{"model": "genlens-categorical", "messages": []map[string]string{{"role": "user", "content": "Input: cat\nLabel:"}}, "top_logprobs": 2},
		{"model": "genlens-categorical", "messages": []map[string]string{{"role": "user", "content": "Input: cat\nLabel:"}}, "echo": true},
	} {
		if code, _ := do("/v1/chat/completions", bad); code != 400 {
			t.Errorf("%v: status %d, want 400", bad, code)
		}
	}
	code, emb := do("/v1/embeddings", map[string]any{"model": "genlens-embedding", "input": []string{"yes no", "yes no", "cat"}})
	if code != 200 {
		t.Fatalf("%d %v", code, emb)
	}
	data := emb["data"].([]any)
	vec := func(i int) []any { return data[i].(map[string]any)["embedding"].([]any) }
	norm, same := 0.0, true
	for j, x := range vec(0) {
		norm += x.(float64) * x.(float64)
		same = same && x == vec(1)[j]
	}
	if len(vec(0)) != 32 || math.Abs(norm-1) > 1e-12 || !same {
		t.Errorf("embedding of %d values, squared norm %v, equal texts equal: %v", len(vec(0)), norm, same)
	}
	if code, _ := do("/v1/embeddings", map[string]any{"model": "genlens-categorical", "input": "x"}); code != 404 {
		t.Errorf("wrong embedding model: %d", code)
	}
}
