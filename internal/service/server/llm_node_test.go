package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/service/server"
)

// EnvNPM names a directory holding node_modules/openai, the official
// OpenAI client for Node (.ci/run installs it there with npm).
const envNPM = "GENLENS_NPM_DIR"

// The official openai npm package parses the proxy's answers as it does
// OpenAI's: the answer, the added genlens key and header, a stream, an
// upstream error as an APIError with the upstream's status, and the
// genlens token as its API key.
func TestLLMProxyOpenAINode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed: the openai npm client test needs Node.js (Debian's nodejs)")
	}
	dir := os.Getenv(envNPM)
	if dir == "" {
		t.Skipf("%s is not set: the directory where `npm install openai` ran (.ci/run sets it)", envNPM)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai")); err != nil {
		t.Skipf("%s=%s holds no node_modules/openai: run `npm install --prefix %s openai`", envNPM, dir, dir)
	}
	ts, up, _ := newProxy(t, server.Options{Token: "genlens-token-for-tests"})
	up.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		var req struct {
			Model  string
			Stream bool
		}
		json.Unmarshal(body, &req)
		switch {
		case req.Model == "overloaded":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(503)
			io.WriteString(w, `{"error":{"message":"model overloaded","type":"server_error","param":null,"code":"overloaded"}}`)
		case req.Stream:
			w.Header().Set("Content-Type", "text/event-stream")
			for _, c := range []string{"Paris", " is", " the capital."} {
				io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"tiny","choices":[{"index":0,"delta":{"content":`+strconv.Quote(c)+`},"finish_reason":null}]}`+"\n\n")
				w.(http.Flusher).Flush()
			}
			io.WriteString(w, "data: [DONE]\n\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, upstreamAnswer)
		}
	})
	cmd := exec.Command(node, filepath.Join("testdata", "openai_client.cjs"), ts.URL+"/v1", "genlens-token-for-tests")
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var out struct {
		Content      string
		FinishReason string `json:"finish_reason"`
		Usage        struct {
			TotalTokens int `json:"total_tokens"`
		}
		Genlens struct {
			Uncertainty float64
			Score       string
			Samples     int
		}
		Header   string
		Streamed string
		Chunks   int
		Error    struct {
			Status        int
			Name, Message string
			Code          string
		}
		Unauthorized struct {
			Status int
			Name   string
			Code   string
		}
	}
	if err := json.Unmarshal(outb, &out); err != nil {
		t.Fatalf("%v: %s", err, outb)
	}
	want := kernelEntropyOf(t, tinySamples)
	if out.Content != "Paris is the capital." || out.FinishReason != "stop" || out.Usage.TotalTokens != 14 {
		t.Errorf("answer as parsed: %s", outb)
	}
	if out.Genlens.Uncertainty != want || out.Genlens.Score != "kernel-entropy" || out.Genlens.Samples != 5 || out.Header != strconv.FormatFloat(want, 'g', -1, 64) {
		t.Errorf("genlens key %+v and header %q, want uncertainty %v", out.Genlens, out.Header, want)
	}
	if out.Streamed != "Paris is the capital." || out.Chunks != 3 {
		t.Errorf("stream: %q in %d chunks", out.Streamed, out.Chunks)
	}
	if out.Error.Status != 503 || out.Error.Name != "InternalServerError" || out.Error.Code != "overloaded" || !strings.Contains(out.Error.Message, "model overloaded") {
		t.Errorf("upstream error as parsed: %+v", out.Error)
	}
	if out.Unauthorized.Status != 401 || out.Unauthorized.Name != "AuthenticationError" || out.Unauthorized.Code != "invalid_api_key" {
		t.Errorf("wrong token as parsed: %+v", out.Unauthorized)
	}
	t.Logf("openai npm client: %s", outb)
}
