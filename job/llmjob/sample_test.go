package llmjob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/internal/golden"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

// sampleServer serves the categorical test model (three inputs, labels
// sweet, sour, bitter) with key "sk-sample".
func sampleServer(t testing.TB, edit func(*llmtest.Config)) (*httptest.Server, *llmtest.Handler) {
	t.Helper()
	cfg := llmtest.Config{Model: categorical.Symmetric(3, 3, 0.5), Inputs: []string{"red apple", "banana", "cherry pie"},
		Labels: []string{"sweet", "sour", "bitter"}, APIKey: "sk-sample"}
	if edit != nil {
		edit(&cfg)
	}
	h, err := llmtest.NewHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, h
}

func sampleSecrets(name string) (string, bool) {
	if name == "SAMPLE_KEY" {
		return "sk-sample", true
	}
	return "", false
}

// promptsFile returns k prompt rows: "prompt" rows with a reference, every
// fifth a chat history, every seventh a numeric id.
func promptsFile(k int) []byte {
	var b bytes.Buffer
	inputs := []string{"red apple", "banana", "cherry pie"}
	for i := range k {
		x := inputs[i%3]
		id := fmt.Sprintf("%q", fmt.Sprintf("q%d", i))
		if i%7 == 6 {
			id = fmt.Sprint(1000 + i)
		}
		switch {
		case i%5 == 4:
			fmt.Fprintf(&b, `{"id": %s, "messages": [{"role": "system", "content": "Input: %s\nLabel: sour\n\n"}, {"role": "user", "content": "Input: %s\nLabel:"}], "topic": {"n": %d}}`+"\n", id, x, x, i)
		default:
			fmt.Fprintf(&b, `{"topic": "fruit %d", "id": %s, "prompt": "Input: %s\nLabel:", "reference": ["sweet", "sour"]}`+"\n", i, id, x)
		}
	}
	return b.Bytes()
}

func sampleReq(url string) SampleRequest {
	r := NewSampleRequest()
	r.Prompts, r.BaseURL, r.Model, r.APIKeyEnv = "p.jsonl", url+"/v1", "genlens-categorical", "SAMPLE_KEY"
	r.N, r.MaxTokens, r.Timeout = 4, 2, 5*time.Second
	seed := int64(11)
	r.Seed = &seed
	return r
}

type outRow struct {
	ID             json.RawMessage   `json:"id"`
	Samples        []string          `json:"samples"`
	Answer         *string           `json:"answer"`
	FinishReasons  []string          `json:"finish_reasons"`
	Usage          llm.Usage         `json:"usage"`
	Embeddings     [][]float64       `json:"embeddings"`
	Reference      json.RawMessage   `json:"reference"`
	Topic          json.RawMessage   `json:"topic"`
	Messages       []json.RawMessage `json:"messages"`
	AnswerFinished string            `json:"answer_finish_reason"`
}

func readOut(t *testing.T, data []byte) ([]outRow, []string) {
	t.Helper()
	var rows []outRow
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var r outRow
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("row %q: %v", l, err)
		}
		rows = append(rows, r)
		lines = append(lines, l)
	}
	return rows, lines
}

// Every prompt gets n samples drawn with its own seed (the same as the
// client draws directly), the greedy answer, finish reasons, usage and
// the server's embeddings; every other key comes back unchanged and in
// order; and entropy reads the file as it is.
func TestSampleRows(t *testing.T) {
	srv, _ := sampleServer(t, nil)
	req := sampleReq(srv.URL)
	req.Greedy, req.EmbedModel = true, "genlens-embedding"
	res, err := Sample(context.Background(), job.Env{FS: fstest.MapFS{"p.jsonl": {Data: promptsFile(10)}}, Secret: sampleSecrets}, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Prompts != 10 || res.Sampled != 10 || res.Samples != 50 || res.Requests != 30 || res.Retries != 0 || len(res.Rows()) != 10 {
		t.Errorf("result %+v", res)
	}
	var all bytes.Buffer
	for _, r := range res.Rows() {
		all.Write(r)
	}
	rows, lines := readOut(t, all.Bytes())
	c, _ := llm.New(llm.Config{BaseURL: req.BaseURL, APIKey: "sk-sample"})
	seen := map[string]bool{}
	total := 0
	for i, r := range rows {
		id, _ := idText(r.ID)
		seen[id] = true
		if len(r.Samples) != 4 || len(r.FinishReasons) != 4 || len(r.Embeddings) != 4 || r.Answer == nil || r.AnswerFinished == "" {
			t.Fatalf("row %s", lines[i])
		}
		for j, s := range r.Samples {
			if !slices.Equal(r.Embeddings[j], llmtest.Embedding(s, 32)) {
				t.Errorf("%s: embedding %d is not the server's", id, j)
			}
		}
		if r.Usage.CompletionTokens != 5 || !slices.Equal(r.FinishReasons, []string{"stop", "stop", "stop", "stop"}) {
			t.Errorf("%s: usage %+v, finish reasons %q: want 5 completion tokens (4 samples and the answer, each one label that ends it: max_tokens 2 leaves room)", id, r.Usage, r.FinishReasons)
		}
		total += r.Usage.TotalTokens
		// The same draws as the client makes with the prompt's seed.
		var msgs []llm.Message
		if r.Messages != nil {
			_ = json.Unmarshal([]byte("["+string(bytes.Join(rawBytes(r.Messages), []byte(",")))+"]"), &msgs)
		} else {
			var p struct{ Prompt string }
			_ = json.Unmarshal([]byte(lines[i]), &p)
			msgs = []llm.Message{{Role: "user", Content: p.Prompt}}
		}
		one, seed := 1.0, PromptSeed(11, id)
		want, _, err := c.Sample(context.Background(), llm.ChatRequest{Model: req.Model, Messages: msgs, N: 4, Temperature: &one, MaxTokens: 2, Seed: &seed}, 4)
		if err != nil {
			t.Fatal(err)
		}
		for j := range want {
			if want[j].Text != r.Samples[j] || want[j].FinishReason != r.FinishReasons[j] {
				t.Errorf("%s: sample %d %q/%s, the client draws %+v", id, j, r.Samples[j], r.FinishReasons[j], want[j])
			}
		}
	}
	if len(seen) != 10 || res.Tokens.TotalTokens != total {
		t.Errorf("%d ids, tokens %+v vs rows' %d", len(seen), res.Tokens, total)
	}
	// Keys carried unchanged, in order, after the id.
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, `{"id":"q0",`):
			if !strings.HasPrefix(l, `{"id":"q0","topic":"fruit 0","prompt":"Input: red apple\nLabel:","reference":["sweet","sour"],"samples":[`) {
				t.Errorf("row q0: %s", l)
			}
		case strings.HasPrefix(l, `{"id":1006,`):
			if !strings.HasPrefix(l, `{"id":1006,"topic":"fruit 6","prompt":"Input: red apple\nLabel:"`) {
				t.Errorf("row 1006: %s", l)
			}
		case strings.HasPrefix(l, `{"id":"q4",`):
			if !strings.HasPrefix(l, `{"id":"q4","messages":[{"role":"system","content":"Input: banana\nLabel: sour\n\n"},{"role":"user","content":"Input: banana\nLabel:"}],"topic":{"n":4},"samples":`) {
				t.Errorf("row q4: %s", l)
			}
		}
	}
	// entropy reads the output as it is, with the cs kernel and with the
	// embeddings.
	fsys := fstest.MapFS{"a.jsonl": {Data: all.Bytes()}}
	for _, kern := range []string{"cs", "rbf"} {
		er := NewEntropyRequest()
		er.In, er.Kernel = "a.jsonl", kern
		got, err := Entropy(context.Background(), job.Env{FS: fsys}, er)
		if err != nil || got.Summary.N != 10 || got.Summary.Labelled != 8 {
			t.Errorf("entropy --kernel %s on the output: %+v, %v", kern, got, err)
		}
	}
}

func rawBytes(rs []json.RawMessage) [][]byte {
	out := make([][]byte, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	return out
}

// Each fault of the test server on some requests: the transient ones are
// retried and the run completes with n samples everywhere; a server that
// answers one choice is topped up; wrong JSON stops the run with an error
// naming the prompt, and a rerun completes it without repeating an id.
func TestSampleFaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault llmtest.Fault
		maxN  int
		fails bool
	}{
		{"fewer choices", llmtest.FewerChoices, 0, false},
		{"llama.cpp answers one", llmtest.NoFault, 1, false},
		{"429", llmtest.RateLimit, 0, false},
		{"500 then success", llmtest.ServerError, 0, false},
		{"hang", llmtest.Hang, 0, false},
		{"cut-off body", llmtest.CutBody, 0, false},
		{"wrong JSON", llmtest.WrongJSON, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := sampleServer(t, func(c *llmtest.Config) {
				c.MaxN, c.RetryAfter = tc.maxN, "0"
				c.Fault = func(n int64) llmtest.Fault {
					if n%5 == 3 {
						return tc.fault
					}
					return llmtest.NoFault
				}
			})
			req := sampleReq(srv.URL)
			req.Out = filepath.Join(t.TempDir(), "a.jsonl")
			req.Timeout, req.Concurrency = 300*time.Millisecond, 3
			env := job.Env{FS: fstest.MapFS{"p.jsonl": {Data: promptsFile(12)}}, Secret: sampleSecrets}
			res, err := Sample(context.Background(), env, req)
			if tc.fails {
				if err == nil || !strings.Contains(err.Error(), "malformed JSON") || !strings.Contains(err.Error(), "p.jsonl line") {
					t.Fatalf("error %v", err)
				}
				for err != nil && res.Sampled+res.Skipped < 12 {
					res, err = Sample(context.Background(), env, req)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.fault != llmtest.NoFault && tc.fault != llmtest.FewerChoices && tc.fault != llmtest.WrongJSON && res.Retries == 0 {
				t.Errorf("no retries: %+v", res)
			}
			data, _ := os.ReadFile(req.Out)
			rows, _ := readOut(t, data)
			ids := map[string]bool{}
			for _, r := range rows {
				id, _ := idText(r.ID)
				if ids[id] || len(r.Samples) != 4 || len(r.FinishReasons) != 4 {
					t.Errorf("row %s: twice %v, %d samples", id, ids[id], len(r.Samples))
				}
				ids[id] = true
			}
			if len(ids) != 12 {
				t.Errorf("%d ids, want 12", len(ids))
			}
		})
	}
}

// A rerun skips the ids already in the output, removes a truncated last
// line, and never writes an id twice.
func TestSampleResume(t *testing.T) {
	srv, h := sampleServer(t, nil)
	req := sampleReq(srv.URL)
	req.Out = filepath.Join(t.TempDir(), "a.jsonl")
	env := job.Env{FS: fstest.MapFS{"p.jsonl": {Data: promptsFile(6)}}, Secret: sampleSecrets}
	// A first run over the first 3 prompts, then a crash mid-line.
	first := env
	first.FS = fstest.MapFS{"p.jsonl": {Data: promptsFile(3)}}
	if _, err := Sample(context.Background(), first, req); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(req.Out)
	f, _ := os.OpenFile(req.Out, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"id":"q3","samples":["a","b`)
	f.Close()
	var warned []string
	env.Warn = func(m string) { warned = append(warned, m) }
	before := h.Requests()
	res, err := Sample(context.Background(), env, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != 3 || res.Sampled != 3 || res.RepairedBytes != 28 || len(warned) != 1 || h.Requests()-before != 3 {
		t.Errorf("result %+v, warnings %q, %d requests", res, warned, h.Requests()-before)
	}
	after, _ := os.ReadFile(req.Out)
	if !bytes.HasPrefix(after, data) {
		t.Error("the first run's rows changed")
	}
	rows, _ := readOut(t, after)
	ids := map[string]int{}
	for _, r := range rows {
		id, _ := idText(r.ID)
		ids[id]++
	}
	if len(ids) != 6 || len(rows) != 6 {
		t.Errorf("ids %v", ids)
	}
	// A third run has nothing to do.
	res, err = Sample(context.Background(), env, req)
	if err != nil || res.Sampled != 0 || res.Skipped != 6 {
		t.Errorf("third run: %+v %v", res, err)
	}
	// An output file that is not sample's is refused, not appended to.
	os.WriteFile(req.Out, []byte("{\"x\": 1}\n"), 0o644)
	if _, err := Sample(context.Background(), env, req); !isInputErr(err, req.Out, 1, "") {
		t.Errorf("foreign output: %v", err)
	}
}

func isInputErr(err error, file string, line int, field string) bool {
	var ie *fault.InputError
	return errors.As(err, &ie) && ie.File == file && ie.Line == line && ie.Field == field && fault.Classify(err) == fault.KindInput
}

// Bad prompt rows are input errors naming the line and field.
func TestSamplePromptRowErrors(t *testing.T) {
	srv, _ := sampleServer(t, nil)
	for _, tc := range []struct {
		name, data string
		line       int
		field      string
		want       string
	}{
		{"duplicate id", `{"id": "a", "prompt": "x"}` + "\n\n" + `{"id": "a", "prompt": "y"}`, 3, "id", "duplicate id \"a\" (first on line 1)"},
		{"string and number ids", `{"id": 7, "prompt": "x"}` + "\n" + `{"id": "7", "prompt": "y"}`, 2, "id", "duplicate"},
		{"missing id", `{"prompt": "x"}`, 1, "id", "missing"},
		{"null id", `{"id": null, "prompt": "x"}`, 1, "id", "missing"},
		{"object id", `{"id": {}, "prompt": "x"}`, 1, "id", "string or a number"},
		{"no prompt", `{"id": 1}`, 1, "prompt", "exactly one"},
		{"both", `{"id": 1, "prompt": "x", "messages": [{"role": "user", "content": "x"}]}`, 1, "prompt", "exactly one"},
		{"empty prompt", `{"id": 1, "prompt": " "}`, 1, "prompt", "non-empty"},
		{"bad messages", `{"id": 1, "messages": [{"content": "x"}]}`, 1, "messages", "role"},
		{"empty messages", `{"id": 1, "messages": []}`, 1, "messages", "non-empty"},
		{"messages not a list", `{"id": 1, "messages": "hi"}`, 1, "messages", "want a list of messages, got a JSON string"},
		{"bad reference", `{"id": 1, "prompt": "x", "reference": 3}`, 1, "reference", "string or a list"},
		{"output key", `{"id": 1, "prompt": "x", "samples": []}`, 1, "samples", "sample writes"},
		{"repeated key", `{"id": 1, "prompt": "x", "k": 1, "k": 2}`, 1, "k", "twice"},
		{"not an object", `["id", 1]`, 1, "", "JSON object"},
		{"two values", `{"id": 1, "prompt": "x"} {}`, 1, "", "more than one"},
		{"empty file", "\n\n", 0, "", "no prompts"},
	} {
		req := sampleReq(srv.URL)
		_, err := Sample(context.Background(), job.Env{FS: fstest.MapFS{"p.jsonl": {Data: []byte(tc.data)}}, Secret: sampleSecrets}, req)
		var ie *fault.InputError
		if !isInputErr(err, "p.jsonl", tc.line, tc.field) || !errors.As(err, &ie) || !strings.Contains(ie.Msg, tc.want) {
			t.Errorf("%s: %v, want an input error on line %d field %q containing %q", tc.name, err, tc.line, tc.field, tc.want)
		}
	}
	req := sampleReq(srv.URL)
	req.API = "completions"
	_, err := Sample(context.Background(), job.Env{FS: fstest.MapFS{"p.jsonl": {Data: promptsFile(5)}}, Secret: sampleSecrets}, req)
	if !isInputErr(err, "p.jsonl", 5, "messages") {
		t.Errorf("messages with the completions API: %v", err)
	}
}

func TestSampleValidate(t *testing.T) {
	ok := sampleReq("http://127.0.0.1:1")
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	same := ok
	same.EmbedModel, same.EmbedBaseURL = "e", ok.BaseURL
	if err := same.Validate(); err != nil {
		t.Errorf("embeddings from the same server: %v", err)
	}
	neg, big := -0.5, 1.5
	for _, tc := range []struct {
		field string
		edit  func(*SampleRequest)
	}{
		{"prompts", func(r *SampleRequest) { r.Prompts = "" }},
		{"base_url", func(r *SampleRequest) { r.Model = "" }},
		{"base_url", func(r *SampleRequest) { r.BaseURL = "ftp://x" }},
		{"n", func(r *SampleRequest) { r.N = 0 }},
		{"n", func(r *SampleRequest) { r.N = MaxSampleN + 1 }},
		{"temperature", func(r *SampleRequest) { r.Temperature = -1 }},
		{"max_tokens", func(r *SampleRequest) { r.MaxTokens = 0 }},
		{"max_tokens", func(r *SampleRequest) { r.MaxTokens = llm.MaxMaxTokens + 1 }},
		{"top_p", func(r *SampleRequest) { r.TopP = &neg }},
		{"top_p", func(r *SampleRequest) { r.TopP = &big }},
		{"api", func(r *SampleRequest) { r.API = "responses" }},
		{"concurrency", func(r *SampleRequest) { r.Concurrency = 0 }},
		{"concurrency", func(r *SampleRequest) { r.Concurrency = MaxSampleConcurrency + 1 }},
		{"rpm", func(r *SampleRequest) { r.RPM = -1 }},
		{"retries", func(r *SampleRequest) { r.Retries = llm.MaxRetries + 1 }},
		{"timeout", func(r *SampleRequest) { r.Timeout = 0 }},
		{"timeout", func(r *SampleRequest) { r.Timeout = 2 * time.Hour }},
		{"embed_base_url", func(r *SampleRequest) { r.EmbedBaseURL = "http://127.0.0.1:2/v1" }},
		{"embed_base_url", func(r *SampleRequest) { r.EmbedModel, r.EmbedBaseURL = "e", "nope" }},
	} {
		r := ok
		tc.edit(&r)
		err := r.Validate()
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v", tc.field, err)
		}
	}
}

// The key comes from the named secret, and is never in an error; a named
// secret that is missing is a field error.
func TestSampleKey(t *testing.T) {
	srv, _ := sampleServer(t, nil)
	env := job.Env{FS: fstest.MapFS{"p.jsonl": {Data: promptsFile(2)}}, Secret: func(n string) (string, bool) { return "sk-wrong-key", n == "W" }}
	req := sampleReq(srv.URL)
	req.APIKeyEnv = "W"
	_, err := Sample(context.Background(), env, req)
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "sk-wrong-key") {
		t.Errorf("wrong key: %v", err)
	}
	req.APIKeyEnv = "MISSING"
	var fe *fault.FieldError
	if _, err := Sample(context.Background(), env, req); !errors.As(err, &fe) || fe.Field != "api_key_env" {
		t.Errorf("missing secret: %v", err)
	}
}

func FuzzPromptRow(f *testing.F) {
	for _, s := range []string{
		`{"id": "a", "prompt": "x"}`,
		`{"id": 1.5e3, "messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}], "reference": ["a"], "k": {"z": [1, null]}}`,
		`{"topic": "t", "id": -0, "prompt": "x\u2028y", "reference": "r"}`,
		`{"id": "a", "prompt": "x", "id": "b"}`,
		`{"id": "\ud800", "prompt": "x"}`,
		`{}`, `[]`, `{"id": 1, "prompt": "x"}}`, `nul`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		row, err := parsePromptRow(b)
		if err != nil {
			var re *rowError
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not a rowError", err)
			}
			return
		}
		if row.id == "" || (row.prompt == "") == (row.messages == nil) || len(row.keys) != len(row.values) {
			t.Fatalf("accepted row %+v", row)
		}
		// The output row is one line of JSON that keeps the id and every
		// key, and reads back as a prompt row with the same id.
		var buf bytes.Buffer
		if err := appendRow(&buf, row, []keyValue{{"samples", []string{"s"}}}); err != nil {
			t.Fatal(err)
		}
		line := buf.Bytes()
		if bytes.Count(line, []byte("\n")) != 1 || !json.Valid(line) {
			t.Fatalf("output %q", line)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil || len(m) != len(row.keys)+2 {
			t.Fatalf("output %q: %v", line, err)
		}
		id, err := idText(m["id"])
		if err != nil || id != row.id {
			t.Fatalf("id %q read back as %q (%v)", row.id, id, err)
		}
	})
}

// The --json summary and the output rows are contracts: goldens, with the
// machine-dependent timing blanked.
func TestSampleGolden(t *testing.T) {
	srv, _ := sampleServer(t, func(c *llmtest.Config) { c.EmbeddingDim = 4 })
	req := sampleReq(srv.URL)
	req.Greedy, req.EmbedModel, req.Concurrency, req.N = true, "genlens-embedding", 1, 3
	res, err := Sample(context.Background(), job.Env{FS: fstest.MapFS{"p.jsonl": {Data: promptsFile(5)}}, Secret: sampleSecrets}, req)
	if err != nil {
		t.Fatal(err)
	}
	var rows []json.RawMessage
	for _, r := range res.Rows() {
		rows = append(rows, json.RawMessage(r))
	}
	res.Seconds, res.PromptsPerSecond, res.TokensPerSecond = 0, 0, 0
	golden.Check(t, "sample_summary", res)
	golden.Check(t, "sample_rows", rows)
}

// A prompt the server refuses (here one not in the model's format, a
// 400 that says what the format is) is reported and left out; the other
// prompts are sampled, and a rerun asks only for the refused one.
func TestSampleGoesPastRefusedPrompt(t *testing.T) {
	srv, h := sampleServer(t, nil)
	req := sampleReq(srv.URL)
	req.Out = filepath.Join(t.TempDir(), "a.jsonl")
	prompts := append(promptsFile(3), []byte(`{"id": "bad", "prompt": "Input: banana\nLabel: sour\nInput: banana\nLabel:"}`+"\n")...)
	prompts = append(prompts, promptsFile(6)[len(promptsFile(3)):]...)
	var warned []string
	env := job.Env{FS: fstest.MapFS{"p.jsonl": {Data: prompts}}, Secret: sampleSecrets, Warn: func(m string) { warned = append(warned, m) }}
	res, err := Sample(context.Background(), env, req)
	if err != nil {
		t.Fatalf("one refused prompt stopped the run: %v", err)
	}
	if res.Sampled != 6 || len(res.Failed) != 1 || res.Failed[0].ID != "bad" || res.Failed[0].Line != 4 ||
		!strings.Contains(res.Failed[0].Error, "the prompt format is") || len(warned) != 1 || !strings.Contains(warned[0], `"bad"`) {
		t.Fatalf("result %+v, warnings %q", res, warned)
	}
	data, _ := os.ReadFile(req.Out)
	if rows, _ := readOut(t, data); len(rows) != 6 {
		t.Errorf("%d rows written, want the 6 good prompts", len(rows))
	}
	before := h.Requests()
	res, err = Sample(context.Background(), env, req)
	if err != nil || res.Skipped != 6 || res.Sampled != 0 || len(res.Failed) != 1 || h.Requests()-before < 1 {
		t.Errorf("rerun: %+v %v", res, err)
	}
	// A server every prompt would fail on still stops the run.
	bad := sampleReq(srv.URL)
	bad.Model = "no-such-model"
	if _, err := Sample(context.Background(), env, bad); err == nil {
		t.Error("an unknown model (404) did not stop the run")
	}
}

// With logprobs asked, every sample and the greedy answer keep their
// tokens' log-probabilities and K alternatives; without, the row has none.
func TestSampleLogprobs(t *testing.T) {
	for _, ask := range []bool{false, true} {
		srv, _ := sampleServer(t, nil)
		req := sampleReq(srv.URL)
		req.Greedy, req.Logprobs = true, ask
		if ask {
			req.TopLogprobs = 2
		}
		res, err := Sample(context.Background(), job.Env{FS: fstest.MapFS{"p.jsonl": {Data: promptsFile(2)}}, Secret: sampleSecrets}, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range res.Rows() {
			var r struct {
				Samples        []string
				Logprobs       [][]llm.TokenLogprob `json:"logprobs"`
				AnswerLogprobs []llm.TokenLogprob   `json:"answer_logprobs"`
			}
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatal(err)
			}
			if !ask {
				if r.Logprobs != nil || r.AnswerLogprobs != nil {
					t.Errorf("logprobs not asked, row %s", line)
				}
				continue
			}
			if len(r.Logprobs) != len(r.Samples) || len(r.AnswerLogprobs) == 0 {
				t.Fatalf("row %s: want logprobs of every sample and the answer", line)
			}
			for _, toks := range append(r.Logprobs, r.AnswerLogprobs) {
				for _, tok := range toks {
					if tok.Logprob > 0 || len(tok.Top) != 2 {
						t.Errorf("row %s: token %+v", line, tok)
					}
				}
			}
		}
	}
}

// A request whose answers could exceed the bytes allowed in flight is
// refused before it starts, naming the bound; an answer longer than its
// price is not read past it.
func TestSampleAnswerBytes(t *testing.T) {
	big := NewSampleRequest()
	big.Prompts, big.BaseURL, big.Model = "p.jsonl", "http://127.0.0.1:1/v1", "m"
	big.N, big.MaxTokens, big.Concurrency = MaxSampleN, llm.MaxMaxTokens, 1
	err := big.Validate()
	var fe *fault.FieldError
	if !errors.As(err, &fe) || fe.Field != "concurrency" || !strings.Contains(err.Error(), "512 MiB") {
		t.Errorf("n %d × max_tokens %d: %v", big.N, big.MaxTokens, err)
	}
	huge := strings.Repeat("word ", 6<<20) // 30 MiB a choice
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, huge)
	}))
	defer srv.Close()
	req := sampleReq(srv.URL)
	req.Out, req.N, req.Retries = filepath.Join(t.TempDir(), "a.jsonl"), 1, 0
	env := job.Env{FS: fstest.MapFS{"p.jsonl": {Data: promptsFile(1)}}, Secret: sampleSecrets}
	_, err = Sample(context.Background(), env, req)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a 30 MiB choice: %v", err)
	}
}

// A server answering one choice a request, each longer than {max_tokens}
// allows, is topped up only while the answers of the prompt fit in their
// price: the run stops with a message naming the price and the fields
// that set it, after a few requests rather than {n}. Before, every
// top-up was priced at {n} choices and every choice kept, so {n} 500 ×
// {max_tokens} 32000 read 500 answers of 30 MB.
func TestSampleTopUpsPricedTogether(t *testing.T) {
	choice := strings.Repeat("word ", 40<<10) // 200 KiB a choice
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"length"}]}`, choice)
	}))
	defer srv.Close()
	req := sampleReq(srv.URL)
	req.N, req.MaxTokens, req.Retries, req.Concurrency = 50, 100, 0, 1
	res, err := Sample(context.Background(), job.Env{FS: fstest.MapFS{"p.jsonl": {Data: promptsFile(1)}}, Secret: sampleSecrets}, req)
	var fe *fault.FieldError
	if !errors.As(err, &fe) || fe.Field != "max_tokens" {
		t.Fatalf("50 choices of 200 KiB priced at 100 tokens: %v (%+v)", err, res)
	}
	price := llm.AnswerBytes(50, 100, false, 0)
	for _, want := range []string{fmt.Sprint(price), "for 5 of 50 choices", "larger {max_tokens}"} {
		if !strings.Contains(fe.Msg, want) {
			t.Errorf("message %q: want %q", fe.Msg, want)
		}
	}
	if n := requests.Load(); n != 6 {
		t.Errorf("%d requests: want the 5 that fit in %d bytes and the one that did not", n, price)
	}
}

// An honest server's logprobs in OpenAI's shape (every token with its
// bytes and 20 alternatives, about 1.3 KB a token) fit the price of an
// answer: {n} 10 × {max_tokens} 1024 with {top_logprobs} 20 is served.
// Before, a token was priced at 32 bytes whatever logprobs were asked,
// and even {n} 1 was refused as a response larger than 1081344 bytes.
func TestSampleHonestTopLogprobs(t *testing.T) {
	const maxTokens, top = 1024, 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			N int `json:"n"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Error(err)
		}
		type alt struct {
			Token   string  `json:"token"`
			Logprob float64 `json:"logprob"`
			Bytes   []int   `json:"bytes"`
		}
		type entry struct {
			alt
			Top []alt `json:"top_logprobs"`
		}
		mk := func(tok string, lp float64) alt {
			b := make([]int, len(tok))
			for i := range tok {
				b[i] = int(tok[i])
			}
			return alt{tok, lp, b}
		}
		type choice struct {
			Index        int             `json:"index"`
			Message      map[string]any  `json:"message"`
			Logprobs     map[string]any  `json:"logprobs"`
			FinishReason string          `json:"finish_reason"`
			Extra        json.RawMessage `json:"extra,omitempty"`
		}
		var choices []choice
		for c := range body.N {
			var text strings.Builder
			content := make([]entry, maxTokens)
			for i := range content {
				tok := fmt.Sprintf(" w%04d", (i*7+c)%10000)
				text.WriteString(tok)
				content[i].alt = mk(tok, -0.31725305)
				for k := range top {
					content[i].Top = append(content[i].Top, mk(fmt.Sprintf(" a%04d", k), -1.2345678-float64(k)))
				}
			}
			choices = append(choices, choice{Index: c, Message: map[string]any{"role": "assistant", "content": text.String()},
				Logprobs: map[string]any{"content": content}, FinishReason: "length"})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "m", "choices": choices,
			"usage": map[string]int{"prompt_tokens": 5, "completion_tokens": maxTokens * body.N, "total_tokens": 5 + maxTokens*body.N}})
	}))
	defer srv.Close()
	req := sampleReq(srv.URL)
	req.N, req.MaxTokens, req.Logprobs, req.TopLogprobs, req.Retries, req.Concurrency = 10, maxTokens, true, top, 0, 1
	res, err := Sample(context.Background(), job.Env{FS: fstest.MapFS{"p.jsonl": {Data: promptsFile(1)}}, Secret: sampleSecrets}, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Samples != 10 {
		t.Errorf("%d samples, want 10", res.Samples)
	}
}
