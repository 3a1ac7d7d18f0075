package inception

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/hub"
)

// TestDownload serves a fake weights file from a local server (tests
// never touch the network): the right hash is stored, a wrong hash and a
// cut-off body leave nothing behind, and a server error or an
// unreachable host says which URL to fetch by hand and where to put it.
func TestDownload(t *testing.T) {
	body := []byte(strings.Repeat("not really weights ", 5000))
	sum := sha256.Sum256(body)
	good := hex.EncodeToString(sum[:])[:8]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok.pth":
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write(body)
		case "/cut.pth":
			// Promise the whole file, send half, then drop the connection.
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write(body[:len(body)/2])
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
				}
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	// A closed server gives a connection error, like being offline.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()

	for _, tc := range []struct {
		name, url, prefix string
		wantErr           []string // substrings; nil means success
	}{
		{"ok", srv.URL + "/ok.pth", good, nil},
		{"wrong hash", srv.URL + "/ok.pth", "00000000", []string{"SHA-256", "want 00000000", "by hand"}},
		// By default the whole published SHA-256, not the name's 6726825d.
		{"not the published file", srv.URL + "/ok.pth", "", []string{"want " + OfficialWeightsSHA256 + "…"}},
		{"cut off", srv.URL + "/cut.pth", good, []string{"cut off", "by hand"}},
		{"not found", srv.URL + "/missing.pth", good, []string{"HTTP 404", "by hand"}},
		{"offline", deadURL + "/x.pth", good, []string{"cannot download", deadURL + "/x.pth", "by hand"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			var last int64
			opt := FetchOptions{URL: tc.url, CacheDir: cache, HashPrefix: tc.prefix, Progress: func(done, total int64) { last = done }}
			t.Setenv(WeightsEnv, "")
			path, err := ResolveWeights(context.Background(), "", opt)
			want := filepath.Join(cache, WeightsFile)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				got, _ := os.ReadFile(path)
				if path != want || string(got) != string(body) || last != int64(len(body)) {
					t.Fatalf("path %s (want %s), %d bytes, progress %d", path, want, len(got), last)
				}
				// A second resolution uses the cache: no server needed.
				opt.URL = deadURL
				if p2, err := ResolveWeights(context.Background(), "", opt); err != nil || p2 != want {
					t.Fatalf("cached: %s, %v", p2, err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			for _, s := range append(tc.wantErr, want) {
				if !strings.Contains(msg, s) {
					t.Errorf("error %q lacks %q", msg, s)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			// Only a transfer cut off keeps its partial file (never
			// under the weights' name), for the next attempt to resume.
			left, _ := os.ReadDir(cache)
			for _, e := range left {
				if tc.name != "cut off" || e.Name() != WeightsFile+hub.Incomplete {
					t.Errorf("failed download left %s in the cache", e.Name())
				}
			}
		})
	}
}

func TestResolveWeightsOrder(t *testing.T) {
	dir := t.TempDir()
	explicit := filepath.Join(dir, "a.pth")
	env := filepath.Join(dir, "b.pth")
	for _, p := range []string{explicit, env} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	opt := FetchOptions{URL: "http://127.0.0.1:1/never", CacheDir: filepath.Join(dir, "cache")}
	t.Setenv(WeightsEnv, env)
	if p, err := ResolveWeights(ctx, explicit, opt); err != nil || p != explicit {
		t.Errorf("explicit: %s, %v", p, err)
	}
	if p, err := ResolveWeights(ctx, "", opt); err != nil || p != env {
		t.Errorf("env: %s, %v", p, err)
	}
	// A named file that does not exist is bad input, not a download.
	for _, tc := range []struct{ explicit, env, want string }{
		{filepath.Join(dir, "nope.pth"), env, "weights file not found"},
		{"", filepath.Join(dir, "nope.pth"), "$" + WeightsEnv},
		{dir, "", "not a regular file"},
	} {
		t.Setenv(WeightsEnv, tc.env)
		_, err := ResolveWeights(ctx, tc.explicit, opt)
		var ie *fault.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want an InputError with %q", tc, err, tc.want)
		}
	}
}
