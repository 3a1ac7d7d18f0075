package hub

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/testkit/hubtest"
)

// isolate points every cache and the home folder at a fresh temporary
// folder, so that no test reads or writes the user's caches.
func isolate(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	t.Setenv("HOME", d)
	for _, v := range []string{"HF_HOME", "HF_HUB_CACHE", "TORCH_HOME", "XDG_CACHE_HOME", "HF_ENDPOINT", OfflineEnv} {
		t.Setenv(v, "")
	}
	return d
}

func sha256hex(b []byte) string { return hubtest.SHA256(b) }

var bertWant = BERTFiles

func newFakeHub() *hubtest.Repo {
	return &hubtest.Repo{ID: "intfloat/e5-small-v2", Commit: strings.Repeat("ab", 20),
		Files: map[string][]byte{
			"config.json":       []byte(`{"hidden_size": 4}`),
			"vocab.txt":         []byte("[PAD]\n[UNK]\n"),
			"model.safetensors": bytes.Repeat([]byte("not really weights "), 3000),
		},
		LFS: map[string]bool{"model.safetensors": true}}
}

// TestSnapshot fetches a model folder from a fake hub: the files land in
// the hub's cache layout, and a second run (server closed, then
// HF_HUB_OFFLINE too) finds them without the network.
func TestSnapshot(t *testing.T) {
	home := isolate(t)
	hub := newFakeHub()
	srv := httptest.NewServer(&hubtest.Hub{Repos: []*hubtest.Repo{hub}})
	t.Setenv("HF_ENDPOINT", srv.URL)
	var last int64
	opt := Options{Progress: func(url string, done, total int64) { last = done }}
	dir, err := Snapshot(context.Background(), hub.ID, bertWant, opt)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(home, ".cache", "huggingface", "hub", "models--intfloat--e5-small-v2")
	if want := filepath.Join(root, "snapshots", hub.Commit); dir != want {
		t.Fatalf("snapshot %s, want %s", dir, want)
	}
	for name, b := range hub.Files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s: %d bytes, %v", name, len(got), err)
		}
	}
	model := hub.Files["model.safetensors"]
	if last != int64(len(model)) {
		t.Errorf("progress ended at %d, want %d", last, len(model))
	}
	if fi, err := os.Lstat(filepath.Join(dir, "model.safetensors")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("snapshot file is not a link to its blob: %v", err)
	}
	if !regular(filepath.Join(root, "blobs", sha256hex(model))) {
		t.Error("no blob named by the SHA-256")
	}
	if ref, _ := os.ReadFile(filepath.Join(root, "refs", "main")); string(ref) != hub.Commit {
		t.Errorf("refs/main %q", ref)
	}
	// The repository has no tokenizer.json (404) and no
	// tokenizer_config.json (optional): vocab.txt was taken.
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err == nil {
		t.Error("tokenizer.json appeared")
	}
	srv.Close()
	for _, offline := range []string{"", "1"} {
		t.Setenv(OfflineEnv, offline)
		if d2, err := Snapshot(context.Background(), hub.ID, bertWant, Options{}); err != nil || d2 != dir {
			t.Errorf("cached (HF_HUB_OFFLINE=%q): %s, %v", offline, d2, err)
		}
	}
	// A file the snapshot lacks, offline: said by name.
	_, err = Snapshot(context.Background(), hub.ID, append(bertWant, Want{Names: []string{"merges.txt"}}), Options{})
	if err == nil || !strings.Contains(err.Error(), "no merges.txt") || !strings.Contains(err.Error(), OfflineEnv) {
		t.Errorf("offline, file missing: %v", err)
	}
}

// TestSnapshotCacheAndEnv: a cache made by another tool is used with no
// server at all; HF_HUB_CACHE wins over HF_HOME; HF_HUB_OFFLINE with
// nothing cached says what to do; a server that is not a hub is named.
func TestSnapshotCacheAndEnv(t *testing.T) {
	home := isolate(t)
	t.Setenv("HF_ENDPOINT", "http://127.0.0.1:1") // nothing listens
	hubCache := filepath.Join(home, "hubcache")
	t.Setenv("HF_HOME", filepath.Join(home, "hfhome"))
	t.Setenv("HF_HUB_CACHE", hubCache)
	commit := strings.Repeat("0c", 20)
	root := filepath.Join(hubCache, "models--BAAI--bge-small-en-v1.5")
	snap := filepath.Join(root, "snapshots", commit)
	for name, body := range map[string]string{"config.json": "{}", "tokenizer.json": "{}", "model.safetensors": "w", "refs/main": commit + "\n"} {
		p := filepath.Join(snap, name)
		if name == "refs/main" {
			p = filepath.Join(root, name)
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := Snapshot(context.Background(), "BAAI/bge-small-en-v1.5", bertWant, Options{}); err != nil || d != snap {
		t.Errorf("pre-existing cache: %s, %v", d, err)
	}
	t.Setenv(OfflineEnv, "1")
	_, err := Snapshot(context.Background(), "intfloat/e5-small-v2", bertWant, Options{})
	for _, s := range []string{"intfloat/e5-small-v2", "not in the Hugging Face cache " + hubCache, "$HF_HUB_OFFLINE is set"} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("offline, not cached: %v lacks %q", err, s)
		}
	}
	t.Setenv(OfflineEnv, "")
	_, err = Snapshot(context.Background(), "intfloat/e5-small-v2", bertWant, Options{Offline: "this server downloads no models"})
	if err == nil || !strings.Contains(err.Error(), "this server downloads no models") {
		t.Errorf("Options.Offline: %v", err)
	}
	plain := httptest.NewServer(http.FileServer(http.Dir(home)))
	defer plain.Close()
	t.Setenv("HF_ENDPOINT", plain.URL)
	os.MkdirAll(filepath.Join(home, "intfloat/e5-small-v2/resolve/main"), 0o755)
	os.WriteFile(filepath.Join(home, "intfloat/e5-small-v2/resolve/main/config.json"), []byte("{}"), 0o644)
	_, err = Snapshot(context.Background(), "intfloat/e5-small-v2", bertWant, Options{})
	if err == nil || !strings.Contains(err.Error(), "names no commit") {
		t.Errorf("not a hub: %v", err)
	}
}

// TestSnapshotCorrupt: a blob whose bytes are not its ETag's SHA-256 is
// refused and leaves neither blob, partial file nor snapshot entry.
func TestSnapshotCorrupt(t *testing.T) {
	home := isolate(t)
	hub := newFakeHub()
	hub.Etag = map[string]string{"model.safetensors": sha256hex([]byte("other bytes"))}
	srv := httptest.NewServer(&hubtest.Hub{Repos: []*hubtest.Repo{hub}})
	defer srv.Close()
	t.Setenv("HF_ENDPOINT", srv.URL)
	_, err := Snapshot(context.Background(), hub.ID, bertWant, Options{})
	var he *HashError
	if !errors.As(err, &he) {
		t.Fatalf("got %v, want a HashError", err)
	}
	root := filepath.Join(home, ".cache", "huggingface", "hub", "models--intfloat--e5-small-v2")
	blobs, _ := filepath.Glob(filepath.Join(root, "blobs", sha256hex([]byte("other bytes"))+"*"))
	if len(blobs) != 0 {
		t.Errorf("left %v", blobs)
	}
	if _, err := os.Stat(filepath.Join(root, "snapshots", hub.Commit, "model.safetensors")); err == nil {
		t.Error("the corrupted file is in the snapshot")
	}
	if _, err := os.Stat(filepath.Join(root, "refs", "main")); err == nil {
		t.Error("refs/main written for an incomplete snapshot")
	}
}

// TestDownloadResume continues a partial file with a Range request; a
// partial file that is not a prefix of the real one fails the hash and
// is removed, so the next attempt starts afresh.
func TestDownloadResume(t *testing.T) {
	isolate(t)
	body := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	var ranges []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ranges = append(ranges, r.Header.Get("Range"))
		mu.Unlock()
		http.ServeContent(w, r, "w.pth", time.Time{}, bytes.NewReader(body))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name    string
		partial []byte
		ok      bool
	}{
		{"prefix", body[:10000], true},
		{"garbage", bytes.Repeat([]byte("x"), 10000), false},
		{"none", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ranges = nil
			path := filepath.Join(t.TempDir(), "w.pth")
			if tc.partial != nil {
				os.WriteFile(path+Incomplete, tc.partial, 0o644)
			}
			var first, last int64 = -1, 0
			opt := Options{Progress: func(_ string, done, total int64) {
				if first < 0 {
					first = done
				}
				last = done
				if total != int64(len(body)) {
					t.Errorf("total %d", total)
				}
			}}
			err := Download(context.Background(), srv.URL+"/w.pth", path, sha256hex(body), opt)
			if _, serr := os.Stat(path + Incomplete); serr == nil {
				t.Error("partial file left behind")
			}
			if !tc.ok {
				var he *HashError
				if !errors.As(err, &he) || regular(path) {
					t.Fatalf("got %v, want a hash error and no file", err)
				}
				return
			}
			got, _ := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, body) || last != int64(len(body)) {
				t.Fatalf("%v: %d bytes, progress to %d", err, len(got), last)
			}
			wantRange := ""
			if tc.partial != nil {
				wantRange = "bytes=10000-"
				if first != 10000 {
					t.Errorf("progress began at %d, want 10000", first)
				}
			}
			if len(ranges) != 1 || ranges[0] != wantRange {
				t.Errorf("requests' ranges %q, want [%q]", ranges, wantRange)
			}
		})
	}
}

// TestDownloadCutOff keeps what arrived of a transfer cut off, and the
// next attempt asks only for the rest.
func TestDownloadCutOff(t *testing.T) {
	body := bytes.Repeat([]byte("abcdefgh"), 8192)
	cut := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cut {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write(body[:len(body)/2])
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
				}
			}
			return
		}
		if r.Header.Get("Range") == "" {
			t.Error("second attempt without Range")
		}
		http.ServeContent(w, r, "w", time.Time{}, bytes.NewReader(body))
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "w.pth")
	err := Download(context.Background(), srv.URL, path, "", Options{})
	if err == nil || !strings.Contains(err.Error(), "cut off") || regular(path) {
		t.Fatalf("cut off: %v", err)
	}
	if st, err := os.Stat(path + Incomplete); err != nil || st.Size() == 0 {
		t.Fatalf("nothing kept to resume: %v", err)
	}
	cut = false
	if err := Download(context.Background(), srv.URL, path, sha256hex(body), Options{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, body) {
		t.Error("resumed file differs")
	}
}

// TestModelFetch fetches single-file models into torch hub's and
// clip.load's folders: the second run needs no server, a CLIP file whose
// bytes are not the SHA-256 of its URL is refused and not cached, and
// HF_HUB_OFFLINE says which file is missing.
func TestModelFetch(t *testing.T) {
	home := isolate(t)
	dino := []byte("dinov2 state dict, or so")
	clip := []byte("clip torchscript, or so")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "_pretrain.pth"):
			w.Write(dino)
		case strings.HasSuffix(r.URL.Path, ".pt"):
			w.Write(clip)
		default:
			http.NotFound(w, r)
		}
	}))
	torch := filepath.Join(home, "torch")
	t.Setenv("TORCH_HOME", torch)
	d, _ := Lookup("dinov2-vits14")
	c, _ := Lookup("clip-vitb32")
	d.URL = srv.URL + "/dinov2/dinov2_vits14/dinov2_vits14_pretrain.pth"
	good := c
	good.SHA256 = sha256hex(clip)
	good.URL = srv.URL + "/clip/models/" + good.SHA256 + "/ViT-B-32.pt"
	bad := c
	bad.URL = srv.URL + "/clip/models/" + c.SHA256 + "/ViT-B-32.pt"
	ctx := context.Background()

	if _, err := bad.Fetch(ctx, Options{}); err == nil || !strings.Contains(err.Error(), "want "+c.SHA256) {
		t.Errorf("corrupt CLIP: %v", err)
	}
	if left, _ := os.ReadDir(filepath.Join(home, ".cache", "clip")); len(left) != 0 {
		t.Errorf("corrupt CLIP left %d files", len(left))
	}
	for _, tc := range []struct {
		m    Model
		want string
		body []byte
	}{
		{d, filepath.Join(torch, "hub", "checkpoints", "dinov2_vits14_pretrain.pth"), dino},
		{good, filepath.Join(home, ".cache", "clip", "ViT-B-32.pt"), clip},
	} {
		p, err := tc.m.Fetch(ctx, Options{})
		if got, _ := os.ReadFile(p); err != nil || p != tc.want || !bytes.Equal(got, tc.body) {
			t.Errorf("%s: %s, %v (want %s)", tc.m.Name, p, err, tc.want)
		}
	}
	srv.Close()
	t.Setenv(OfflineEnv, "1")
	for _, m := range []Model{d, good} {
		if _, err := m.Fetch(ctx, Options{}); err != nil {
			t.Errorf("%s cached, offline: %v", m.Name, err)
		}
	}
	l, _ := Lookup("dinov2-vitl14")
	_, err := l.Fetch(ctx, Options{})
	for _, s := range []string{"dinov2_vitl14_pretrain.pth is not in the cache", "$HF_HUB_OFFLINE", l.URL} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("offline, not cached: %v lacks %q", err, s)
		}
	}
}

// TestDefaults: the caches' default folders, as torch, clip.load and the
// hub's client choose them.
func TestDefaults(t *testing.T) {
	home := isolate(t)
	d, _ := Lookup("dinov2-vitg14")
	c, _ := Lookup("clip-vitl14-336")
	check := func(what string, got string, err error, want string) {
		t.Helper()
		if err != nil || got != want {
			t.Errorf("%s: %s, %v; want %s", what, got, err, want)
		}
	}
	p, err := d.Where()
	check("torch", p, err, filepath.Join(home, ".cache/torch/hub/checkpoints/dinov2_vitg14_pretrain.pth"))
	p, err = c.Where()
	check("clip", p, err, filepath.Join(home, ".cache/clip/ViT-L-14-336px.pt"))
	p, err = HFCache()
	check("hf", p, err, filepath.Join(home, ".cache/huggingface/hub"))
	t.Setenv("XDG_CACHE_HOME", "/x")
	p, err = d.Where()
	check("torch, XDG", p, err, "/x/torch/hub/checkpoints/dinov2_vitg14_pretrain.pth")
	p, err = HFCache()
	check("hf, XDG", p, err, "/x/huggingface/hub")
	t.Setenv("HF_HOME", "/h")
	p, err = HFCache()
	check("HF_HOME", p, err, "/h/hub")
	if e := HFEndpoint(); e != "https://huggingface.co" {
		t.Errorf("endpoint %s", e)
	}
	t.Setenv("HF_ENDPOINT", "https://mirror.example/")
	if e := HFEndpoint(); e != "https://mirror.example" {
		t.Errorf("endpoint %s", e)
	}
	if !strings.HasSuffix(c.URL, "/"+c.SHA256+"/ViT-L-14-336px.pt") {
		t.Errorf("CLIP URL %s does not carry its SHA-256", c.URL)
	}
}

func TestIsRepoID(t *testing.T) {
	for s, want := range map[string]bool{
		"intfloat/e5-small-v2": true, "BAAI/bge-small-en-v1.5": true, "sentence-transformers/all-MiniLM-L6-v2": true,
		"e5": false, "./e5": false, "../x": false, "/abs/path": false, "a/b/c": false, "a/": false, "a b/c": false, "models/e5/": false,
	} {
		if got := IsRepoID(s); got != want {
			t.Errorf("IsRepoID(%q) = %v", s, got)
		}
	}
}

// TestSnapshotRenamedRepo follows the hub's relative redirect of a
// renamed repository (no X-Repo-Commit on it) to the file's answer.
func TestSnapshotRenamedRepo(t *testing.T) {
	home := isolate(t)
	repo := newFakeHub()
	h := &hubtest.Hub{Repos: []*hubtest.Repo{repo}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/old-org/e5/"); ok {
			http.Redirect(w, r, "/"+repo.ID+"/"+rest, http.StatusTemporaryRedirect)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	t.Setenv("HF_ENDPOINT", srv.URL)
	dir, err := Snapshot(context.Background(), "old-org/e5", bertWant, Options{})
	if want := filepath.Join(home, ".cache/huggingface/hub/models--old-org--e5/snapshots", repo.Commit); err != nil || dir != want {
		t.Fatalf("%s, %v; want %s", dir, err, want)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "model.safetensors")); !bytes.Equal(got, repo.Files["model.safetensors"]) {
		t.Error("wrong weights")
	}
}

// TestDownloadRangeRefused starts over when the server refuses the
// partial file's range (416: the partial file is longer than the file).
func TestDownloadRangeRefused(t *testing.T) {
	body := []byte("short file")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "w", time.Time{}, bytes.NewReader(body))
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "w")
	os.WriteFile(path+Incomplete, bytes.Repeat([]byte("x"), 100), 0o644)
	if err := Download(context.Background(), srv.URL, path, sha256hex(body), Options{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, body) {
		t.Errorf("got %q", got)
	}
}

// TestDownloadConcurrent: jobs of one process needing one file at once
// download it once.
func TestDownloadConcurrent(t *testing.T) {
	body := bytes.Repeat([]byte("weights "), 50000)
	var mu sync.Mutex
	gets := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gets++
		mu.Unlock()
		http.ServeContent(w, r, "w", time.Time{}, bytes.NewReader(body))
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "w")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = Download(context.Background(), srv.URL, path, sha256hex(body), Options{}) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(path); gets != 1 || !bytes.Equal(got, body) {
		t.Errorf("%d downloads, %d bytes", gets, len(got))
	}
}
