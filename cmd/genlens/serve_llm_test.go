package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

// genlens serve --llm-upstream in front of the OpenAI-compatible test
// server: the answer comes back with its uncertainty, the upstream sees
// its own key (the test server refuses any other), and the request is
// listed.
func TestServeLLMProxy(t *testing.T) {
	h, err := llmtest.NewHandler(llmtest.Config{Model: categorical.Symmetric(1, 3, 1), Inputs: []string{"cat"},
		Labels: []string{"yes", "no", "maybe"}, APIKey: "sk-upstream"})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(h)
	defer up.Close()
	t.Setenv("GENLENS_TEST_LLM_KEY", "sk-upstream")
	p := startServe(t, "--db", filepath.Join(t.TempDir(), "g.db"), "--llm-upstream", up.URL+"/v1",
		"--llm-api-key-env", "GENLENS_TEST_LLM_KEY", "--llm-samples", "4", "--llm-timeout", "10s")
	body := `{"model":"genlens-categorical","messages":[{"role":"user","content":"Input: cat\nLabel:"}],"max_tokens":1}`
	req, _ := http.NewRequest("POST", p.url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok-tok-tok-tok-tok")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var a struct {
		Choices []struct{ Message struct{ Content string } }
		Genlens struct {
			Uncertainty *float64
			Score       string
			Samples     int
			Error       string
		}
	}
	if err := json.Unmarshal(b, &a); err != nil || resp.StatusCode != 200 || len(a.Choices) != 1 {
		t.Fatalf("%d %s (%v)\n%s", resp.StatusCode, b, err, p.log())
	}
	if g := a.Genlens; g.Uncertainty == nil || *g.Uncertainty < -1 || *g.Uncertainty > 0 || g.Score != "kernel-entropy" || g.Samples != 4 ||
		resp.Header.Get("X-Genlens-Uncertainty") == "" {
		t.Errorf("genlens key %+v from %s", g, b)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var list struct{ Requests []struct{ Model string } }
		req, _ := http.NewRequest("GET", p.url+"/api/v1/llm/requests", nil)
		req.Header.Set("Authorization", "Bearer tok-tok-tok-tok-tok")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if len(list.Requests) == 1 && list.Requests[0].Model == "genlens-categorical" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("listed %+v", list)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if strings.Contains(p.log(), "sk-upstream") {
		t.Errorf("the upstream key in the log:\n%s", p.log())
	}
}

func TestServeLLMFlagsRefused(t *testing.T) {
	bin := serveBinary(t)
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--llm-upstream", "http://127.0.0.1:9/v1", "--llm-samples", "1"}, "--llm-samples"},
		{[]string{"--llm-upstream", "http://127.0.0.1:9/v1", "--llm-score", "lexical-similarity"}, "--llm-score"},
		{[]string{"--llm-upstream", "http://127.0.0.1:9/v1", "--llm-score", "se"}, "--llm-score"},
		{[]string{"--llm-upstream", "http://127.0.0.1:9/v1", "--llm-score", "se", "--llm-nli", "gpt", "--llm-nli-weights", "/m"}, "--llm-nli"},
		{[]string{"--llm-upstream", "http://127.0.0.1:9/v1", "--llm-score", "se", "--llm-nli-base-url", "http://127.0.0.1:9/v1"}, "--llm-nli-model"},
		{[]string{"--llm-upstream", "http://127.0.0.1:9/v1", "--llm-score", "msp", "--llm-top-logprobs", "3"}, "--llm-top-logprobs"},
		{[]string{"--llm-upstream", "http://127.0.0.1:9/v1", "--llm-score", "mte", "--llm-top-logprobs", "21"}, "--llm-top-logprobs"},
		{[]string{"--llm-upstream", "http://127.0.0.1:9/v1", "--llm-ptrue-prompt", "p.txt"}, "--llm-ptrue-prompt"},
		{[]string{"--llm-upstream", "http://127.0.0.1:9/v1", "--llm-score", "luq"}, "--llm-score"},
		{[]string{"--llm-upstream", "http://127.0.0.1:9/v1", "--llm-score", "sar", "--llm-similarity", "nli"}, "--llm-similarity"},
		{[]string{"--llm-upstream", "http://127.0.0.1:9/v1", "--llm-score", "kle", "--llm-similarity", "rougel"}, "--llm-similarity"},
		{[]string{"--llm-similarity", "nli"}, "--llm-upstream"},
		{[]string{"--llm-nli", "bert"}, "--llm-upstream"},
		{[]string{"--llm-upstream", "http://127.0.0.1:9/v1", "--llm-timeout", "-1s"}, "--llm-timeout"},
		{[]string{"--llm-upstream", "http://127.0.0.1:9/v1", "--llm-api-key-env", "GENLENS_SURELY_UNSET_VARIABLE"}, "--llm-api-key-env"},
		{[]string{"--llm-upstream", "ftp://x"}, "--llm-upstream"},
		{[]string{"--llm-samples", "7"}, "--llm-upstream"},
		{[]string{"--llm-upstream", "http://127.0.0.1:9/v1", "--llm-prefix", "none"}, "--llm-prefix"},
		{[]string{"--llm-upstream", "http://127.0.0.1:9/v1", "--llm-embedder", "e5-small-v2", "--llm-weights", "/m", "--llm-prefix", "doc"}, "--llm-prefix"},
	} {
		cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "x.db")}, tc.args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if !ok || ee.ExitCode() != 2 || len(lines) != 1 || !strings.Contains(lines[0], tc.flag) {
			t.Errorf("%v: exit %v, stderr %q; want exit 2 and one line naming %s", tc.args, err, stderr.String(), tc.flag)
		}
	}
}
