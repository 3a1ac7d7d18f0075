package jobrun

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/internal/testkit/hubtest"
)

// TestModelsByName: a service fetches no model by name unless its
// operator allows it: a model id is refused at submission and a job
// needing a published model fails, both with the operator's reason and
// the text models' alternative (its folders, never an upload);
// allowed, the same requests fetch the model from the hub (a fake one)
// into the server's cache, and run.
func TestModelsByName(t *testing.T) {
	dir := hubtest.Isolate(t)
	repo := hubtest.BGE(t)
	hub := &hubtest.Hub{Repos: []*hubtest.Repo{repo}}
	srv := httptest.NewServer(hub)
	defer srv.Close()
	t.Setenv("HF_ENDPOINT", srv.URL)
	ctx := context.Background()
	const why = "no models by name on this test server"
	body := func(s *Service, weights string) []byte {
		in := upload(t, s, "answers.jsonl", []byte(textAnswers))
		return []byte(`{"in":"` + in + `","field":"reference","embedder":"bge-small-en-v1.5","weights":"` + weights + `","no_cache":true}`)
	}

	off := newTestService(t, nil, Config{NoDownloads: why})
	_, err := off.Submit(ctx, "embed", body(off, repo.ID))
	var fe *fault.FieldError
	if !errors.As(err, &fe) || fe.Field != "weights" || !strings.Contains(err.Error(), why+"; "+textModelsInstead) || strings.Contains(err.Error(), "upload") {
		t.Errorf("model id, no downloads: %v", err)
	}
	j, err := off.Submit(ctx, "embed", body(off, ""))
	if err != nil {
		t.Fatal(err)
	}
	if j = waitJob(t, off, j.ID, time.Minute); j.Status != records.StatusFailed || !strings.Contains(j.Error, why+"; "+textModelsInstead) {
		t.Errorf("published model, no downloads: %s: %s", j.Status, j.Error)
	}
	if n := len(hub.Requests()); n != 0 {
		t.Errorf("the hub was asked %d times", n)
	}

	on := newTestService(t, nil, Config{Downloads: true})
	for _, weights := range []string{repo.ID, ""} {
		j, err := on.Submit(ctx, "embed", body(on, weights))
		if err != nil {
			t.Fatal(err)
		}
		if j = waitJob(t, on, j.ID, time.Minute); j.Status != records.StatusSucceeded || !strings.Contains(string(j.Result), hubtest.SHA256(repo.Files["model.safetensors"])) {
			t.Errorf("weights %q, downloads allowed: %s: %s %s", weights, j.Status, j.Error, j.Result)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "hf", "hub", "models--BAAI--bge-small-en-v1.5", "refs", "main")); err != nil {
		t.Errorf("not in the server's cache: %v", err)
	}
	// A failure names the cache without the server's path.
	t.Setenv("HF_HUB_OFFLINE", "1")
	j, err = on.Submit(ctx, "embed", body(on, "BAAI/bge-base-en-v1.5"))
	if err != nil {
		t.Fatal(err)
	}
	if j = waitJob(t, on, j.ID, time.Minute); j.Status != records.StatusFailed || !strings.Contains(j.Error, "<hub cache>") || strings.Contains(j.Error, dir) {
		t.Errorf("offline, not cached: %s: %s", j.Status, j.Error)
	}
}
