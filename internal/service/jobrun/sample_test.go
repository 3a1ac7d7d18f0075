package jobrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/llmjob"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

// The sample kind calls only allow-listed servers with keys the server
// holds, and returns the rows as the answers.jsonl artifact: the same
// rows as a direct call of llmjob.Sample.
func TestSampleKind(t *testing.T) {
	h, err := llmtest.NewHandler(llmtest.Config{Model: categorical.Symmetric(2, 2, 0.5), Inputs: []string{"cat", "dog"},
		Labels: []string{"yes", "no"}, APIKey: "sk-service"})
	if err != nil {
		t.Fatal(err)
	}
	llmSrv := httptest.NewServer(h)
	defer llmSrv.Close()
	secrets := func(name string) (string, bool) { return "sk-service", name == "LLM_KEY" }
	s := newTestService(t, nil, Config{AllowedBaseURLs: []string{llmSrv.URL + "/v1"}, Secret: secrets})
	ctx := context.Background()
	prompts := []byte(`{"id":"a","prompt":"Input: cat\nLabel:","reference":"yes"}
{"id":"b","messages":[{"role":"user","content":"Input: dog\nLabel:"}],"reference":["no"]}
`)
	pid := upload(t, s, "prompts.jsonl", prompts)
	body := `{"prompts":"` + pid + `","base_url":"` + llmSrv.URL + `/v1","model":"genlens-categorical","n":3,"max_tokens":1,"seed":4,"concurrency":1,"api_key_env":"LLM_KEY","embed_model":"genlens-embedding"}`
	j, err := s.Submit(ctx, "sample", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	j = waitJob(t, s, j.ID, 30*time.Second)
	if j.Status != records.StatusSucceeded {
		t.Fatalf("%s: %s", j.Status, j.Error)
	}
	var res llmjob.SampleResult
	if err := json.Unmarshal(j.Result, &res); err != nil || res.Sampled != 2 || res.Samples != 6 || res.Out != "" {
		t.Errorf("result %s: %v", j.Result, err)
	}
	if strings.Contains(string(j.Request)+string(j.Result), "sk-service") {
		t.Error("the key is in the stored job")
	}
	got, err := s.Artifact(ctx, j.ID, "answers.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	req := llmjob.NewSampleRequest()
	seed := int64(4)
	req.Prompts, req.BaseURL, req.Model, req.N, req.MaxTokens, req.Seed, req.Concurrency, req.APIKeyEnv, req.EmbedModel =
		pid, llmSrv.URL+"/v1", "genlens-categorical", 3, 1, &seed, 1, "LLM_KEY", "genlens-embedding"
	direct, err := llmjob.Sample(ctx, job.Env{FS: s.fsys, Secret: secrets}, req)
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Join(direct.Rows(), nil)
	if !bytes.Equal(got.Data, want) {
		t.Errorf("answers.jsonl:\n%s\nwant\n%s", got.Data, want)
	}
	if bytes.Count(got.Data, []byte(`"embeddings":[[`)) != 2 {
		t.Errorf("answers.jsonl without embeddings: %s", got.Data)
	}

	// Refused before they run: a server outside the allow-list (for
	// answers or embeddings), an output file on the server.
	for _, tc := range []struct{ body, field string }{
		{`{"prompts":"` + pid + `","base_url":"http://127.0.0.1:9/v1","model":"m"}`, "base_url"},
		{`{"prompts":"` + pid + `","base_url":"` + llmSrv.URL + `/v1","model":"m","embed_model":"e","embed_base_url":"http://169.254.169.254/v1"}`, "embed_base_url"},
		{`{"prompts":"` + pid + `","base_url":"` + llmSrv.URL + `/v1","model":"m","out":"/etc/x.jsonl"}`, "out"},
		{`{"prompts":"` + pid + `","base_url":"` + llmSrv.URL + `/v1","model":"m","n":100000}`, "n"},
	} {
		_, err := s.Submit(ctx, "sample", []byte(tc.body))
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v, want a field error on %s", tc.body, err, tc.field)
		}
	}
	// A key the server does not hold is refused at submit, as a bad field.
	_, err = s.Submit(ctx, "sample", []byte(`{"prompts":"`+pid+`","base_url":"`+llmSrv.URL+`/v1","model":"genlens-categorical","api_key_env":"HOME"}`))
	if fe := (*fault.FieldError)(nil); !errors.As(err, &fe) || fe.Field != "api_key_env" {
		t.Errorf("unknown secret: %v", err)
	}
}
