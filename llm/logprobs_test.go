package llm_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/llm"
)

// rawServer answers every POST with body and records the last request.
func rawServer(t *testing.T, body string, got *map[string]any) *llm.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if got != nil {
			*got = map[string]any{}
			_ = json.Unmarshal(b, got)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Timeout: 5 * time.Second, MaxRetries: 0, RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLogprobsShapes(t *testing.T) {
	chatBody := `{"choices":[{"index":0,"message":{"role":"assistant","content":"Paris."},"finish_reason":"stop",
	 "logprobs":{"content":[{"token":"Paris","logprob":-0.25,"bytes":[80],"top_logprobs":[{"token":"Paris","logprob":-0.25},{"token":"Lyon","logprob":-2}]},
	 {"token":".","logprob":-0.5,"top_logprobs":[{"token":".","logprob":-0.5},{"token":"!","logprob":-1.5}]}]}}]}`
	complBody := `{"choices":[{"index":0,"text":"Paris.","finish_reason":"stop",
	 "logprobs":{"tokens":["Paris","."],"token_logprobs":[-0.25,-0.5],"top_logprobs":[{"Lyon":-2,"Paris":-0.25},{"!":-1.5,".":-0.5}],"text_offset":[0,5]}}]}`
	want := []llm.TokenLogprob{
		{Token: "Paris", Logprob: -0.25, Top: []llm.TokenChoice{{Token: "Paris", Logprob: -0.25}, {Token: "Lyon", Logprob: -2}}},
		{Token: ".", Logprob: -0.5, Top: []llm.TokenChoice{{Token: ".", Logprob: -0.5}, {Token: "!", Logprob: -1.5}}},
	}
	ctx := context.Background()
	var sent map[string]any
	c := rawServer(t, chatBody, &sent)
	ch, _, err := c.Chat(ctx, llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: "user", Content: "q"}}, Logprobs: true, TopLogprobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if sent["logprobs"] != true || sent["top_logprobs"] != 2.0 {
		t.Errorf("chat request asked logprobs %v top_logprobs %v", sent["logprobs"], sent["top_logprobs"])
	}
	if g, w := jsonOf(t, ch[0].Tokens), jsonOf(t, want); g != w {
		t.Errorf("chat tokens\n got %s\nwant %s", g, w)
	}
	c = rawServer(t, complBody, &sent)
	ch, _, err = c.Complete(ctx, llm.CompletionRequest{Model: "m", Prompt: "q", Logprobs: true, TopLogprobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if sent["logprobs"] != 2.0 {
		t.Errorf("completions request asked logprobs %v", sent["logprobs"])
	}
	if g, w := jsonOf(t, ch[0].Tokens), jsonOf(t, want); g != w {
		t.Errorf("completion tokens\n got %s\nwant %s", g, w)
	}
	// A server that ignores the request: no tokens, no error.
	c = rawServer(t, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Paris."},"finish_reason":"stop"}]}`, &sent)
	ch, _, err = c.Chat(ctx, llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: "user", Content: "q"}}, Logprobs: true})
	if err != nil || ch[0].Tokens != nil {
		t.Errorf("ignored logprobs: tokens %v, err %v", ch[0].Tokens, err)
	}
	if _, ok := sent["top_logprobs"]; ok {
		t.Errorf("top_logprobs sent without being asked")
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLogprobsStrict(t *testing.T) {
	for _, tc := range []struct {
		name, logprobs string
		chat           bool
		want           string
	}{
		{"positive", `{"content":[{"token":"a","logprob":0.5}]}`, true, "content[0].logprob"},
		{"nan string", `{"content":[{"token":"a","logprob":"NaN"}]}`, true, "want a number"},
		{"null", `{"content":[{"token":"a","logprob":null}]}`, true, "missing"},
		{"top positive", `{"content":[{"token":"a","logprob":-1,"top_logprobs":[{"token":"b","logprob":1}]}]}`, true, "top_logprobs[0]"},
		{"lengths", `{"tokens":["a","b"],"token_logprobs":[-1]}`, false, "2 tokens but 1 token_logprobs"},
		{"top lengths", `{"tokens":["a"],"token_logprobs":[-1],"top_logprobs":[{},{}]}`, false, "1 tokens but 2 top_logprobs"},
		{"completion null", `{"tokens":["a"],"token_logprobs":[null]}`, false, "token_logprobs[0]: missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.chat {
				c := rawServer(t, `{"choices":[{"index":0,"message":{"role":"assistant","content":"a"},"logprobs":`+tc.logprobs+`}]}`, nil)
				_, _, err = c.Chat(context.Background(), llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: "user", Content: "q"}}, Logprobs: true})
			} else {
				c := rawServer(t, `{"choices":[{"index":0,"text":"a","logprobs":`+tc.logprobs+`}]}`, nil)
				_, _, err = c.Complete(context.Background(), llm.CompletionRequest{Model: "m", Prompt: "q", Logprobs: true})
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want one containing %q", err, tc.want)
			}
		})
	}
	c := rawServer(t, `{}`, nil)
	if _, _, err := c.Chat(context.Background(), llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: "user", Content: "q"}}, TopLogprobs: 3}); err == nil {
		t.Error("top_logprobs without logprobs accepted")
	}
}
