package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

const model = "genlens-categorical"

// serve starts the categorical test model with cfg's extras and returns
// a client for it.
func serve(t testing.TB, edit func(*llmtest.Config), cedit func(*llm.Config)) (*llm.Client, *llmtest.Handler) {
	t.Helper()
	cfg := llmtest.Config{Model: categorical.Symmetric(3, 3, 0.5), Inputs: []string{"red apple", "banana", "cherry pie"},
		Labels: []string{"sweet", "sour", "bitter"}, APIKey: "sk-test-key"}
	if edit != nil {
		edit(&cfg)
	}
	h, err := llmtest.NewHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	lc := llm.Config{BaseURL: srv.URL + "/v1", APIKey: "sk-test-key", Timeout: 5 * time.Second, MaxRetries: 3, RetryBase: time.Millisecond}
	if cedit != nil {
		cedit(&lc)
	}
	c, err := llm.New(lc)
	if err != nil {
		t.Fatal(err)
	}
	return c, h
}

func ptr[T any](v T) *T { return &v }

const prompt = "Input: banana\nLabel: sour\n\nInput: banana\nLabel:"

func chatReq(n int, seed int64) llm.ChatRequest {
	return llm.ChatRequest{Model: model, Messages: []llm.Message{{Role: "user", Content: prompt}}, N: n,
		Temperature: ptr(1.0), MaxTokens: 2, Seed: ptr(seed), Extra: map[string]json.RawMessage{"stop": json.RawMessage(`["\n"]`)}}
}

// Chat and completions of the same prompt and seed draw the same answers
// from the test model: the chat body, its messages and the response's
// message contents are read and written correctly.
func TestChatMatchesCompletions(t *testing.T) {
	c, _ := serve(t, nil, nil)
	ctx := context.Background()
	chat, u, err := c.Chat(ctx, chatReq(10, 42))
	if err != nil {
		t.Fatal(err)
	}
	comp, u2, err := c.Complete(ctx, llm.CompletionRequest{Model: model, Prompt: prompt, N: 10, Temperature: ptr(1.0), MaxTokens: 2, Seed: ptr(int64(42)),
		Extra: map[string]json.RawMessage{"stop": json.RawMessage(`"\n"`)}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(chat, comp) || u != u2 {
		t.Errorf("chat %v %v\ncompletions %v %v", chat, u, comp, u2)
	}
	if len(chat) != 10 {
		t.Fatalf("%d choices, want 10", len(chat))
	}
	distinct := map[string]bool{}
	for _, ch := range chat {
		if ch.FinishReason != "stop" || !slices.Contains([]string{" sweet", " sour", " bitter"}, ch.Text) {
			t.Errorf("choice %+v", ch)
		}
		distinct[ch.Text] = true
	}
	if len(distinct) < 2 {
		t.Errorf("10 samples at temperature 1 all %v", distinct)
	}
	// Greedy decoding gives the posterior mode: "sour" was seen once.
	greedy, _, err := c.Chat(ctx, llm.ChatRequest{Model: model, Messages: []llm.Message{{Role: "user", Content: prompt}}, Temperature: ptr(0.0), MaxTokens: 1})
	if err != nil || len(greedy) != 1 || greedy[0].Text != " sour" || greedy[0].FinishReason != "length" {
		t.Errorf("greedy %v, %v", greedy, err)
	}
	if u.PromptTokens != 11 || u.CompletionTokens != 10 || u.TotalTokens != 21 {
		t.Errorf("usage %+v, want the 11 prompt tokens once and one token per answer", u)
	}
}

// A server that answers one choice a request (llama.cpp) is asked again
// until there are n, each top-up with its own seed: the samples are
// exactly those of n single requests with seeds TopUpSeed(seed, 0..n-1).
func TestSampleTopsUp(t *testing.T) {
	c, h := serve(t, func(cfg *llmtest.Config) { cfg.MaxN = 1 }, nil)
	ctx := context.Background()
	got, u, err := c.Sample(ctx, chatReq(5, 7), 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || h.Requests() != 5 {
		t.Fatalf("%d choices from %d requests, want 5 from 5", len(got), h.Requests())
	}
	if u.CompletionTokens != 5 || u.PromptTokens != 5*11 {
		t.Errorf("usage %+v: want the sum over the 5 requests", u)
	}
	for k := range 5 {
		one, _, err := c.Chat(ctx, chatReq(1, llm.TopUpSeed(7, k)))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(one[0], got[k]) {
			t.Errorf("sample %d = %+v, want %+v (seed TopUpSeed(7, %d))", k, got[k], one[0], k)
		}
	}
	// A server that honours n answers in one request; asking for fewer
	// than it sends keeps n.
	c2, h2 := serve(t, nil, nil)
	all, _, err := c2.Sample(ctx, chatReq(8, 7), 8)
	if err != nil || len(all) != 8 || h2.Requests() != 1 {
		t.Errorf("%d choices, %d requests, %v", len(all), h2.Requests(), err)
	}
	// Half the choices on the first request: one top-up for the rest.
	c3, h3 := serve(t, func(cfg *llmtest.Config) {
		cfg.Fault = func(n int64) llmtest.Fault {
			if n == 1 {
				return llmtest.FewerChoices
			}
			return llmtest.NoFault
		}
	}, nil)
	all, _, err = c3.SampleCompletions(ctx, llm.CompletionRequest{Model: model, Prompt: prompt, MaxTokens: 1, Seed: ptr(int64(3))}, 8)
	if err != nil || len(all) != 8 || h3.Requests() != 2 {
		t.Errorf("fewer choices: %d choices, %d requests, %v", len(all), h3.Requests(), err)
	}
	if _, _, err := c.Sample(ctx, chatReq(1, 1), 0); err == nil {
		t.Error("n = 0 accepted")
	}
}

func TestTopUpSeed(t *testing.T) {
	seen := map[int64]bool{}
	for _, s := range []int64{0, 1, 2, 1 << 40} {
		if llm.TopUpSeed(s, 0) != s {
			t.Errorf("round 0 of seed %d changed it", s)
		}
		for r := 1; r < 50; r++ {
			v := llm.TopUpSeed(s, r)
			if v < 0 || seen[v] || v == s {
				t.Errorf("TopUpSeed(%d, %d) = %d: negative or repeated", s, r, v)
			}
			seen[v] = true
		}
	}
}

// Every fault mode of the test server against the client: transient ones
// are retried to success, a wrong JSON body is an error without retries.
func TestFaults(t *testing.T) {
	for _, tc := range []struct {
		fault    llmtest.Fault
		requests int64
		retries  int64
		err      string
		minWait  time.Duration
	}{
		{llmtest.RateLimit, 2, 1, "", 900 * time.Millisecond},
		{llmtest.ServerError, 2, 1, "", 0},
		{llmtest.Hang, 2, 1, "", 200 * time.Millisecond},
		{llmtest.CutBody, 2, 1, "", 0},
		{llmtest.WrongJSON, 1, 0, "malformed JSON", 0},
	} {
		for _, api := range []string{"chat", "embeddings"} {
			t.Run(fmt.Sprintf("%d/%s", tc.fault, api), func(t *testing.T) {
				c, h := serve(t, func(cfg *llmtest.Config) {
					cfg.Fault = func(n int64) llmtest.Fault {
						if n == 1 {
							return tc.fault
						}
						return llmtest.NoFault
					}
				}, func(cfg *llm.Config) { cfg.Timeout = 200 * time.Millisecond })
				start := time.Now()
				var err error
				if api == "chat" {
					var ch []llm.Choice
					ch, _, err = c.Chat(context.Background(), chatReq(3, 1))
					if err == nil && len(ch) != 3 {
						t.Errorf("%d choices", len(ch))
					}
				} else {
					var v [][]float64
					v, err = c.Embed(context.Background(), "genlens-embedding", []string{"a b", "c"})
					if err == nil && len(v) != 2 {
						t.Errorf("%d vectors", len(v))
					}
				}
				if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
					t.Errorf("error %v, want %q", err, tc.err)
				}
				if req, ret := c.Stats(); req != tc.requests || ret != tc.retries || h.Requests() != tc.requests {
					t.Errorf("stats %d requests %d retries (server %d), want %d, %d", req, ret, h.Requests(), tc.requests, tc.retries)
				}
				if el := time.Since(start); el < tc.minWait {
					t.Errorf("succeeded after %v, want at least %v", el, tc.minWait)
				}
			})
		}
	}
}

// Retries stop at MaxRetries, the error says how many attempts were made
// and never shows the key; 4xx other than 408 and 429 are not retried.
func TestGiveUpAndKey(t *testing.T) {
	c, h := serve(t, func(cfg *llmtest.Config) {
		cfg.Fault = func(int64) llmtest.Fault { return llmtest.ServerError }
	}, nil)
	_, _, err := c.Chat(context.Background(), chatReq(1, 1))
	var se *llm.StatusError
	if err == nil || !strings.Contains(err.Error(), "gave up after 4 attempts") || !errors.As(err, &se) || se.StatusCode != 500 || h.Requests() != 4 {
		t.Errorf("error %v after %d requests", err, h.Requests())
	}
	c, h = serve(t, nil, func(cfg *llm.Config) { cfg.APIKey = "sk-wrong-secret" })
	_, _, err = c.Chat(context.Background(), chatReq(1, 1))
	if err == nil || !errors.As(err, &se) || se.StatusCode != 401 || strings.Contains(err.Error(), "sk-wrong-secret") || h.Requests() != 0 {
		t.Errorf("401: %v", err)
	}
	c, _ = serve(t, nil, nil)
	_, _, err = c.Chat(context.Background(), llm.ChatRequest{Model: "other", Messages: []llm.Message{{Role: "user", Content: prompt}}})
	if err == nil || !errors.As(err, &se) || se.StatusCode != 404 || !strings.Contains(err.Error(), `model "other" not found`) {
		t.Errorf("404: %v", err)
	}
	if _, err := llm.New(llm.Config{BaseURL: "http://user:pw@127.0.0.1/v1"}); err == nil || strings.Contains(err.Error(), "pw") {
		t.Errorf("credentials in the URL: %v", err)
	}
}

// RPM spaces attempts evenly: 5 requests at 600 a minute take at least
// 4 intervals of 100 ms.
func TestRPM(t *testing.T) {
	c, _ := serve(t, nil, func(cfg *llm.Config) { cfg.RPM = 600 })
	start := time.Now()
	for range 5 {
		if _, _, err := c.Chat(context.Background(), chatReq(1, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el < 400*time.Millisecond {
		t.Errorf("5 requests at 600 rpm in %v", el)
	}
}

// Embeddings come back in the order of the inputs, whatever order the
// server lists them in, and are the server's vectors.
func TestEmbed(t *testing.T) {
	c, _ := serve(t, nil, nil)
	in := []string{"sweet", "sour taste", "sweet"}
	v, err := c.Embed(context.Background(), "genlens-embedding", in)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range in {
		if !slices.Equal(v[i], llmtest.Embedding(s, 32)) {
			t.Errorf("embedding %d differs from the server's", i)
		}
	}
	for _, tc := range []struct{ body, want string }{
		{`{"data":[{"index":1,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]}`, ""},
		{`{"data":[{"index":0,"embedding":[1,2]}]}`, "1 embeddings for 2 inputs"},
		{`{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]}`, "given twice"},
		{`{"data":[{"index":0,"embedding":[1,2]},{"index":5,"embedding":[3,4]}]}`, "out of range"},
		{`{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[3]}]}`, "dimensions"},
		{`{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[3]}]}`, "empty"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, tc.body) }))
		c, _ := llm.New(llm.Config{BaseURL: srv.URL})
		v, err := c.Embed(context.Background(), "e", []string{"a", "b"})
		srv.Close()
		if tc.want == "" {
			if err != nil || !slices.Equal(v[0], []float64{3, 4}) || !slices.Equal(v[1], []float64{1, 2}) {
				t.Errorf("reordered: %v, %v", v, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.body, err, tc.want)
		}
	}
}

// Messages read from JSON go to the server byte for byte (content parts,
// names); messages built in code as {"role", "content"}. Extra keys are
// sent, and may not repeat a field.
func TestMessagesAndExtra(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]json.RawMessage
		_ = json.NewDecoder(r.Body).Decode(&body)
		got.Store(body)
		fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	}))
	defer srv.Close()
	c, _ := llm.New(llm.Config{BaseURL: srv.URL})
	raw := `{"role":"user","content":[{"type":"text","text":"hi"}],"name":"ann"}`
	var m llm.Message
	if err := json.Unmarshal([]byte(raw), &m); err != nil || m.Role != "user" || m.Content != "" {
		t.Fatalf("%+v %v", m, err)
	}
	ch, u, err := c.Chat(context.Background(), llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: "system", Content: "be brief"}, m},
		Extra: map[string]json.RawMessage{"stop": json.RawMessage(`["x"]`)}})
	if err != nil || len(ch) != 1 || !reflect.DeepEqual(ch[0], llm.Choice{FinishReason: "tool_calls"}) || u.TotalTokens != 4 {
		t.Fatalf("%v %v %v", ch, u, err)
	}
	body := got.Load().(map[string]json.RawMessage)
	if want := `[{"role":"system","content":"be brief"},` + raw + `]`; string(body["messages"]) != want {
		t.Errorf("messages %s\nwant %s", body["messages"], want)
	}
	if string(body["stop"]) != `["x"]` || body["n"] != nil || body["temperature"] != nil || string(body["model"]) != `"m"` {
		t.Errorf("body %v", body)
	}
	if _, _, err := c.Chat(context.Background(), llm.ChatRequest{Model: "m", Messages: []llm.Message{m}, Extra: map[string]json.RawMessage{"model": json.RawMessage(`"x"`)}}); err == nil {
		t.Error("Extra overriding model accepted")
	}
	for _, bad := range []string{`{"content":"x"}`, `"x"`, `{"role":""}`} {
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("message %s accepted", bad)
		}
	}
}

// A cancelled context stops retries and waits at once.
func TestCancel(t *testing.T) {
	c, _ := serve(t, func(cfg *llmtest.Config) {
		cfg.Fault = func(int64) llmtest.Fault { return llmtest.Hang }
	}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, _, err := c.Chat(ctx, chatReq(1, 1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v", el)
	}
}

// Without retries, each transient fault surfaces with a message that
// names it.
func TestFaultMessages(t *testing.T) {
	for fault, want := range map[llmtest.Fault]string{
		llmtest.CutBody:     "response cut off before its end",
		llmtest.Hang:        "no complete response within 100ms",
		llmtest.RateLimit:   "429 Too Many Requests: rate limit reached",
		llmtest.ServerError: "500 Internal Server Error: the model worker died",
	} {
		c, _ := serve(t, func(cfg *llmtest.Config) {
			cfg.Fault = func(int64) llmtest.Fault { return fault }
		}, func(cfg *llm.Config) { cfg.MaxRetries, cfg.Timeout = 0, 100*time.Millisecond })
		if _, _, err := c.Chat(context.Background(), chatReq(1, 1)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("fault %d: error %v, want %q", fault, err, want)
		}
	}
}
