package jobrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/llmjob"
	"github.com/genlens/genlens/job/reprjob"
)

const textAnswers = `{"id":"a","samples":["Paris","It is Paris.","Paris, France","Lyon"],"reference":"Paris"}
{"id":"b","samples":["blue","the sky is blue","green","a deep red"],"reference":"blue"}
{"id":"c","samples":["42","forty-two","42.","the answer is 42"],"reference":"42"}
`

// An entropy job runs a text embedder from a model directory the
// server allows, named by its base name: its scores are the command
// line's on the same rows with the directory's path.
func TestEntropyTextModel(t *testing.T) {
	e5, err := filepath.Abs("../../../network/bert/testdata/e5")
	if err != nil {
		t.Fatal(err)
	}
	fields := `"embedder":"e5-small-v2","kernel":"rbf","scores":"kernel-entropy,kle","similarity":"embedding"`
	jobs := entropyJobs(t, e5, `"weights":"e5",`+fields, `"weights":"server:e5",`+fields)
	req := llmjob.NewEntropyRequest()
	req.Embedder, req.Weights, req.Kernel, req.Scores, req.Similarity = "e5-small-v2", e5, "rbf", "kernel-entropy,kle", "embedding"
	for _, j := range jobs {
		sameItems(t, j, req, e5, `"kle"`)
	}
}

// entropyJobs runs an entropy job on textAnswers for each of fields (a
// request's JSON fields but "in"), one after the other, on a service that
// allows the model directory dir, and returns them, each succeeded.
func entropyJobs(t *testing.T, dir string, fields ...string) []records.Job {
	t.Helper()
	s := newTestService(t, nil, Config{ModelDirs: []string{dir}})
	in := upload(t, s, "answers.jsonl", []byte(textAnswers))
	var jobs []records.Job
	for _, f := range fields {
		j, err := s.Submit(context.Background(), "entropy", []byte(`{"in":"`+in+`",`+f+`}`))
		if err != nil {
			t.Fatal(err)
		}
		if j = waitJob(t, s, j.ID, time.Minute); j.Status != records.StatusSucceeded {
			t.Fatalf("%s: %s: %s", f, j.Status, j.Error)
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// sameItems checks that the entropy job j's items are those of req run
// as the command line runs it (on textAnswers in a local file), that
// they hold want, and that j's result does not name the server's
// directory dir.
func sameItems(t *testing.T, j records.Job, req llmjob.EntropyRequest, dir, want string) {
	t.Helper()
	req.In = filepath.Join(t.TempDir(), "answers.jsonl")
	if err := os.WriteFile(req.In, []byte(textAnswers), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := llmjob.Entropy(context.Background(), job.CLIEnv(nil, nil), req)
	if err != nil {
		t.Fatal(err)
	}
	var got, cli struct{ Items json.RawMessage }
	if err := json.Unmarshal(j.Result, &got); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if err := json.Unmarshal(b, &cli); err != nil {
		t.Fatal(err)
	}
	if string(got.Items) != string(cli.Items) || !strings.Contains(string(cli.Items), want) {
		t.Errorf("the job's items %s, the command line's %s (want %s in them)", got.Items, cli.Items, want)
	}
	if strings.Contains(string(j.Result), dir) {
		t.Errorf("the result names the server's path: %s", j.Result)
	}
}

// Weights name only a directory the server allows: never a path of the
// server, an upload, nor anything when it allows none.
func TestTextModelRefused(t *testing.T) {
	e5, _ := filepath.Abs("../../../network/bert/testdata/e5")
	allowed := newTestService(t, nil, Config{ModelDirs: []string{e5}})
	none := newTestService(t, nil, Config{})
	ctx := context.Background()
	for _, c := range []struct {
		s       *Service
		weights string
	}{
		{allowed, e5},
		{allowed, "../../../network/bert/testdata/e5"},
		{allowed, "minilm"},
		{allowed, "server:../e5"},
		{none, "e5"},
	} {
		in := upload(t, c.s, "answers.jsonl", []byte(textAnswers))
		for _, kind := range []string{"entropy", "sample", "embed"} {
			body := `{"in":"` + in + `","kernel":"rbf","embedder":"e5-small-v2","weights":"` + c.weights + `"}`
			switch kind {
			case "sample":
				body = `{"prompts":"` + in + `","base_url":"http://127.0.0.1:1/v1","model":"m","embedder":"e5-small-v2","weights":"` + c.weights + `"}`
			case "embed":
				body = `{"in":"` + in + `","field":"reference","embedder":"e5-small-v2","weights":"` + c.weights + `"}`
			}
			_, err := c.s.Submit(ctx, kind, []byte(body))
			var fe *fault.FieldError
			if !errors.As(err, &fe) || fe.Field != "weights" {
				t.Errorf("%s %s: %v, want a field error on weights", kind, c.weights, err)
			}
		}
	}
	// An NLI model's directory follows the same rule, refused on its own
	// field.
	in := upload(t, allowed, "answers.jsonl", []byte(textAnswers))
	_, err := allowed.Submit(ctx, "entropy", []byte(`{"in":"`+in+`","scores":"numsets","nli":"bert","nli_weights":"../../../network/bert/testdata/nli"}`))
	var fe *fault.FieldError
	if !errors.As(err, &fe) || fe.Field != "nli_weights" {
		t.Errorf("nli_weights: %v, want a field error on nli_weights", err)
	}
	if _, err := New(Config{Store: NewMemStore(), DataDir: t.TempDir(), ModelDirs: []string{e5, t.TempDir() + "/e5"}}); err == nil {
		t.Error("two model directories of one name accepted")
	}
}

// An embed job runs a text embedder from a model directory the server
// allows: its result is the command line's --json document, and its
// artifact embeddings.npy the vectors `embed --out` writes, those of a
// direct run on the same texts with the directory's path.
func TestEmbedKind(t *testing.T) {
	dir, err := filepath.Abs("../../../network/bert/testdata/bge")
	if err != nil {
		t.Fatal(err)
	}
	s := newTestService(t, nil, Config{ModelDirs: []string{dir}})
	in := upload(t, s, "answers.jsonl", []byte(textAnswers))
	j, err := s.Submit(context.Background(), "embed", []byte(`{"in":"`+in+`","field":"reference","embedder":"bge-small-en-v1.5","weights":"bge","no_cache":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if j = waitJob(t, s, j.ID, time.Minute); j.Status != records.StatusSucceeded {
		t.Fatalf("%s: %s", j.Status, j.Error)
	}
	req := reprjob.NewEmbedRequest()
	req.In, req.Field, req.Embedder, req.Weights, req.NoCache = filepath.Join(t.TempDir(), "answers.jsonl"), "reference", "bge-small-en-v1.5", dir, true
	if err := os.WriteFile(req.In, []byte(textAnswers), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := reprjob.Embed(context.Background(), job.CLIEnv(nil, nil), req)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := json.Marshal(res); string(j.Result) != string(want) || res.Texts != 3 || res.Dim == 0 {
		t.Errorf("result %s, the command line's %s", j.Result, want)
	}
	var want bytes.Buffer
	if err := res.WriteNPY(&want); err != nil {
		t.Fatal(err)
	}
	a, err := s.Artifact(context.Background(), j.ID, "embeddings.npy")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Data, want.Bytes()) {
		t.Errorf("embeddings.npy: %d bytes, want the %d of the command line's", len(a.Data), want.Len())
	}
	if arr, err := dataio.DecodeNPY(bytes.NewReader(a.Data), "embeddings.npy"); err != nil || !slices.Equal(arr.Shape, []int{3, res.Dim}) {
		t.Errorf("embeddings.npy: %v; want shape [3 %d]", err, res.Dim)
	}
	if strings.Contains(string(j.Result), dir) {
		t.Errorf("the result names the server's path: %s", j.Result)
	}
}

// Semantic entropy's clusters from a BERT cross-encoder in a directory
// the server allows: the job's items are the command line's.
func TestEntropyNLIModel(t *testing.T) {
	dir, err := filepath.Abs("../../../network/bert/testdata/nli")
	if err != nil {
		t.Fatal(err)
	}
	jobs := entropyJobs(t, dir, `"scores":"numsets,se-discrete","nli":"bert","nli_weights":"nli"`)
	req := llmjob.NewEntropyRequest()
	req.Scores, req.NLI, req.NLIWeights = "numsets,se-discrete", "bert", dir
	sameItems(t, jobs[0], req, dir, `"numsets"`)
}

// A model directory the server allows that holds bad files fails the
// job with an error naming the file by the directory's name, not by the
// server's path, as the documentation promises.
func TestBadTextModelErrorHidesServerPath(t *testing.T) {
	src, err := filepath.Abs("../../../network/bert/testdata/e5")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "models", "e5")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "config.json" {
			b = []byte("{not json")
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := newTestService(t, nil, Config{ModelDirs: []string{dir}})
	in := upload(t, s, "answers.jsonl", []byte(textAnswers))
	j, err := s.Submit(context.Background(), "entropy", []byte(`{"in":"`+in+`","embedder":"e5-small-v2","weights":"e5","kernel":"rbf","scores":"kernel-entropy"}`))
	if err != nil {
		t.Fatal(err)
	}
	j = waitJob(t, s, j.ID, time.Minute)
	if j.Status != records.StatusFailed || !strings.Contains(j.Error, "config.json") {
		t.Fatalf("%s: %s, want a failure naming config.json", j.Status, j.Error)
	}
	if strings.Contains(j.Error, filepath.Dir(dir)) || !strings.Contains(j.Error, "server:e5") {
		t.Errorf("error %q names the server's path %s, want server:e5", j.Error, dir)
	}
}
