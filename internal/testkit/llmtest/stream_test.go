package llmtest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
)

// postRaw posts body to path and returns the status and the raw answer.
func postRaw(t *testing.T, url, path string, body any) (int, string, http.Header) {
	t.Helper()
	data, _ := json.Marshal(body)
	resp, err := http.Post(url+path, "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

type chatAnswer struct {
	Choices []struct {
		Index   int
		Message struct{ Content string }
		Delta   struct {
			Role    string
			Content string
		}
		Text         string
		FinishReason *string `json:"finish_reason"`
		Logprobs     *struct {
			Content []struct {
				Token       string
				Logprob     float64
				TopLogprobs []struct {
					Token   string
					Logprob float64
				} `json:"top_logprobs"`
			}
		}
	}
}

// A chat answer stops after the label, as a language model stops after
// its answer, however many tokens it may take; max_tokens still cuts.
func TestAnswerEndsByItself(t *testing.T) {
	s, _ := newServer(t)
	for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
		body := map[string]any{"model": "genlens-categorical", "max_tokens": 64, "n": 5, "seed": 3}
		if path == "/v1/chat/completions" {
			body["messages"] = []map[string]string{{"role": "user", "content": "Input: cat\nLabel: no\n\nInput: dog\n"}}
		} else {
			body["prompt"] = "Input: cat\nLabel: no\n\nInput: dog\n"
		}
		code, raw, _ := postRaw(t, s.URL, path, body)
		var a chatAnswer
		if err := json.Unmarshal([]byte(raw), &a); code != 200 || err != nil {
			t.Fatalf("%s: %d %s %v", path, code, raw, err)
		}
		for _, c := range a.Choices {
			text := c.Message.Content + c.Text
			if (text != "Label: yes" && text != "Label: no") || c.FinishReason == nil || *c.FinishReason != "stop" {
				t.Errorf("%s: choice %q, finish %v: want one label and stop", path, text, c.FinishReason)
			}
		}
	}
}

// stream: true answers server-sent events whose pieces put together are
// the answer of the same request without stream, with the chat API's
// log-probabilities on each piece.
func TestStreamMatchesWhole(t *testing.T) {
	s, _ := newServer(t)
	for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
		body := map[string]any{"model": "genlens-categorical", "max_tokens": 10, "n": 3, "seed": 9, "temperature": 1}
		if path == "/v1/chat/completions" {
			body["messages"] = []map[string]string{{"role": "user", "content": "Input: cat\nLabel: no\n\nInput: cat\nLabel:"}}
			body["logprobs"], body["top_logprobs"] = true, 2
		} else {
			body["prompt"] = "Input: cat\nLabel: no\n\nInput: cat\nLabel:"
		}
		code, raw, _ := postRaw(t, s.URL, path, body)
		var whole chatAnswer
		if err := json.Unmarshal([]byte(raw), &whole); code != 200 || err != nil {
			t.Fatalf("%s: %d %s", path, code, raw)
		}
		body["stream"] = true
		code, raw, hdr := postRaw(t, s.URL, path, body)
		if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("%s stream: %d %s %s", path, code, hdr.Get("Content-Type"), raw)
		}
		texts := map[int]string{}
		finish := map[int]string{}
		done := false
		sc := bufio.NewScanner(strings.NewReader(raw))
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				continue
			}
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || done {
				t.Fatalf("%s stream: line %q", path, line)
			}
			if data == "[DONE]" {
				done = true
				continue
			}
			var ev chatAnswer
			if err := json.Unmarshal([]byte(data), &ev); err != nil || len(ev.Choices) != 1 {
				t.Fatalf("%s stream: event %s: %v", path, data, err)
			}
			c := ev.Choices[0]
			texts[c.Index] += c.Delta.Content + c.Text
			if c.FinishReason != nil {
				finish[c.Index] = *c.FinishReason
			}
			if path == "/v1/chat/completions" && c.Delta.Content != "" {
				if c.Logprobs == nil || len(c.Logprobs.Content) != 1 || c.Logprobs.Content[0].Token != c.Delta.Content || len(c.Logprobs.Content[0].TopLogprobs) == 0 {
					t.Errorf("stream event without its token's logprobs: %s", data)
				}
			}
		}
		if !done {
			t.Errorf("%s stream: no data: [DONE]", path)
		}
		for _, c := range whole.Choices {
			if texts[c.Index] != c.Message.Content+c.Text || finish[c.Index] != *c.FinishReason {
				t.Errorf("%s choice %d: streamed %q (%s), whole %q (%s)", path, c.Index, texts[c.Index], finish[c.Index], c.Message.Content+c.Text, *c.FinishReason)
			}
		}
	}
}

// Chat logprobs have the chat API's shape: per token its log-probability
// and the top_logprobs alternatives, most likely first, which are the
// model's posterior predictive (after one "no" for cat, with prior
// Dirichlet(1, 3): yes 1/5, no 4/5).
func TestChatLogprobs(t *testing.T) {
	s, _ := newServer(t)
	code, raw, _ := postRaw(t, s.URL, "/v1/chat/completions", map[string]any{"model": "genlens-categorical", "max_tokens": 1, "temperature": 0, "logprobs": true, "top_logprobs": 2,
		"messages": []map[string]string{{"role": "user", "content": "Input: cat\nLabel: no\n\nInput: cat\nLabel:"}}})
	var a chatAnswer
	if err := json.Unmarshal([]byte(raw), &a); code != 200 || err != nil || len(a.Choices) != 1 || a.Choices[0].Logprobs == nil {
		t.Fatalf("%d %s %v", code, raw, err)
	}
	c := a.Choices[0].Logprobs.Content
	if len(c) != 1 || c[0].Token != " no" || math.Abs(c[0].Logprob-math.Log(0.8)) > 1e-12 || len(c[0].TopLogprobs) != 2 ||
		c[0].TopLogprobs[0].Token != " no" || c[0].TopLogprobs[1].Token != " yes" || math.Abs(c[0].TopLogprobs[1].Logprob-math.Log(0.2)) > 1e-12 {
		t.Errorf("logprobs %s", raw)
	}
	if !strings.Contains(raw, `"logprobs":{"content":[{"token":" no","logprob":`) {
		t.Errorf("not the chat shape: %s", raw)
	}
}
