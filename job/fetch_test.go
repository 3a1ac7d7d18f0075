package job

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/hub"
	"github.com/genlens/genlens/internal/testkit/hubtest"
)

// TestModelFolder: how a text model's field resolves: an existing
// folder is itself, even when it reads as a model id; a path neither
// there nor a model id says it does not exist; a published name or a
// model id is fetched only by an Env with Fetch, into the hub's cache;
// hf: makes a model id of a value that is also a folder.
func TestModelFolder(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("HOME", dir)
	t.Setenv("HF_HOME", filepath.Join(dir, "hf"))
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HF_HUB_OFFLINE", "")
	repo := &hubtest.Repo{ID: "intfloat/e5-small-v2", Commit: strings.Repeat("e5", 20),
		Files: map[string][]byte{"config.json": []byte("{}"), "vocab.txt": []byte("[UNK]\n"), "model.safetensors": []byte("weights")},
		LFS:   map[string]bool{"model.safetensors": true}}
	srv := httptest.NewServer(&hubtest.Hub{Repos: []*hubtest.Repo{repo}})
	defer srv.Close()
	t.Setenv("HF_ENDPOINT", srv.URL)
	os.MkdirAll("intfloat/e5-small-v2", 0o755) // a folder that reads as a model id
	want := []hub.Want{{Names: []string{"config.json"}}, {Names: []string{"tokenizer.json", "vocab.txt"}}, {Names: []string{"model.safetensors"}}}
	snap := filepath.Join(dir, "hf", "hub", "models--intfloat--e5-small-v2", "snapshots", repo.Commit)
	cli := Env{Fetch: &hub.Options{}}
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		env       Env
		model, in string
		want      string // the folder, or the error's text
		fails     bool
	}{
		{"existing folder", Env{}, "e5-small-v2", "intfloat/e5-small-v2", "intfloat/e5-small-v2", false},
		{"missing path", cli, "e5-small-v2", "models/e5/", "models/e5/: does not exist", true},
		{"no published model", cli, "bert", "", "", false},
		{"published, no fetching", Env{}, "e5-small-v2", "", "intfloat/e5-small-v2: " + NoDownloads, true},
		{"model id, the operator's reason", Env{NoFetch: "not here"}, "bert", "hf:intfloat/e5-small-v2", "not here", true},
		{"published, fetched", cli, "e5-small-v2", "", snap, false},
		{"hf: prefix", cli, "bert", "hf:intfloat/e5-small-v2", snap, false},
		{"unknown model id", cli, "bert", "hf:intfloat/nope", "intfloat/nope", true},
	} {
		got, err := ModelFolder(ctx, tc.env, "weights", tc.model, tc.in, want)
		switch {
		case tc.fails && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %q, %v; want an error with %q", tc.name, got, err, tc.want)
		case tc.fails:
			var fe *fault.FieldError
			var ie *fault.InputError
			if !errors.As(err, &fe) && !errors.As(err, &ie) {
				t.Errorf("%s: %v is neither a field nor an input error", tc.name, err)
			}
		case err != nil || got != tc.want:
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}
