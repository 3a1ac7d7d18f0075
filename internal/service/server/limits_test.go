package server_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/store"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

// /healthz, which needs no token, says "unavailable" and nothing of the
// store's error (which names users, hosts and databases); the log has it.
func TestHealthzHidesTheStoreError(t *testing.T) {
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer // the job workers log too
	srv, err := server.New(context.Background(), server.Options{Store: db, Token: "0123456789abcdef",
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	db.Close() // every ping now fails
	rec := httptestRecorder(srv.Handler(), "GET", "/healthz", nil)
	body := strings.TrimSpace(rec.Body.String())
	if rec.Code != 503 || body != `{"status":"unavailable","store":"unavailable"}` {
		t.Errorf("healthz on a closed store: %d %s", rec.Code, body)
	}
	if !strings.Contains(logs.String(), "closed") {
		t.Errorf("the store's error is not logged: %s", logs.String())
	}
}

// A token with fewer than 16 characters other than spaces is refused at
// startup, saying what is needed.
func TestTokenMinimumLength(t *testing.T) {
	for _, c := range []struct {
		tok string
		ok  bool
	}{{" ", false}, {"                    ", false}, {"s3cret", false}, {"0123456789abcde", false},
		{" 0123456789abcde ", false}, {"0123456789abcdef", true}} {
		db := dbtest.SQLite(t)
		st, err := store.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := server.New(context.Background(), server.Options{Store: st, Token: c.tok})
		switch {
		case c.ok && err != nil:
			t.Errorf("token %q: %v", c.tok, err)
		case !c.ok && (err == nil || !strings.Contains(err.Error(), "at least 16")):
			t.Errorf("token %q: %v, want a refusal saying at least 16", c.tok, err)
		}
		if srv != nil {
			srv.Close(context.Background())
		}
		st.Close()
	}
}

// Sign-in attempts are limited per client address: after 10 at once the
// form answers 429 with Retry-After, and one more is allowed every 6 s.
func TestLoginRateLimit(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{Token: "0123456789abcdef", Now: clock})
	post := func(tok string) *http.Response {
		resp, err := noRedirect(ts).PostForm(ts.URL+"/login", url.Values{"token": {tok}})
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for i := range 10 {
		if resp := post("wrong"); resp.StatusCode != 401 {
			t.Fatalf("attempt %d: %d, want 401", i+1, resp.StatusCode)
		}
	}
	resp := post("0123456789abcdef") // even the right token waits
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "6" {
		t.Fatalf("attempt 11: %d, Retry-After %q; want 429 and 6", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	mu.Lock()
	now = now.Add(6 * time.Second)
	mu.Unlock()
	if resp := post("0123456789abcdef"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after 6 s: %d, want 303", resp.StatusCode)
	}
	if resp := post("0123456789abcdef"); resp.StatusCode != 429 {
		t.Errorf("the bucket refilled by more than one: %d", resp.StatusCode)
	}
}

func noRedirect(ts *testServer) *http.Client {
	c := *ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// The bytes of request bodies read at once are bounded over all handlers:
// while one body of the limit's size is being received, a second is
// answered 503 with Retry-After (8 batches of 32 MB at once once held
// 5.8 GB); small bodies and uploads pass beside it while room is left.
func TestBodiesInFlightAreBounded(t *testing.T) {
	const limit = 1 << 20
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{MaxBody: limit, MaxBodiesInFlight: limit + 4096, BodyWait: time.Second})
	pr, pw := io.Pipe()
	slow, err := http.NewRequest("POST", ts.URL+"/api/v1/monitors", pr)
	if err != nil {
		t.Fatal(err)
	}
	slow.ContentLength = limit
	slow.Header.Set("Content-Type", "application/json")
	done := make(chan int)
	go func() {
		resp, err := ts.Client().Do(slow)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	pw.Write([]byte(`{"name":"`)) // the handler is reading it now
	time.Sleep(200 * time.Millisecond)

	if code, body := ts.call(t, "POST", "/api/v1/monitors", `{"name":"small"}`, nil); code == 503 {
		t.Errorf("a small body beside the large one: %d %s", code, body)
	}
	big, _ := http.NewRequest("POST", ts.URL+"/api/v1/monitors", bytes.NewReader(make([]byte, limit/2)))
	big.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(big)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a second large body while one is read: %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	pw.CloseWithError(io.ErrUnexpectedEOF)
	<-done
	// Room again once the first is done.
	big, _ = http.NewRequest("POST", ts.URL+"/api/v1/monitors", bytes.NewReader(make([]byte, limit/2)))
	resp, err = ts.Client().Do(big)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == 503 {
		t.Errorf("after the first body: still 503")
	}
}

// A monitor id that is not one says which noun it looked for.
func TestNotFoundNamesTheNoun(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	for _, p := range []string{"/api/v1/monitors/0", "/api/v1/monitors/x"} {
		code, body := ts.call(t, "GET", p, nil, nil)
		if code != 404 || !strings.Contains(string(body), `no monitor \"`) {
			t.Errorf("GET %s: %d %s", p, code, body)
		}
	}
}

// Identical bytes uploaded under another name share the content id, and
// the answer names the file as this upload gave it.
func TestIdenticalUploadsKeepTheirNames(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	data := []byte("a,b\n1,2\n")
	_, first := ts.uploadFile(t, "first.csv", data)
	code, second := ts.uploadFile(t, "second.csv", data)
	if code != 201 || second["id"] != first["id"] || second["name"] != "second.csv" {
		t.Errorf("second upload of the same bytes: %d %v (first %v)", code, second, first)
	}
}

func httptestRecorder(h http.Handler, method, path string, body io.Reader) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, body))
	return rec
}

// /livez, the liveness probe, answers 200 without a token while the
// process serves HTTP, even when /healthz (readiness) says 503 because
// the store is down or the disk full: restarting the process mends
// neither, and a liveness probe on /healthz would restart it in a loop.
func TestLivezIgnoresStoreAndDisk(t *testing.T) {
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(context.Background(), server.Options{Store: db, Token: "0123456789abcdef", MinFreeDisk: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	probe := func(path string) (int, string) {
		rec := httptestRecorder(srv.Handler(), "GET", path, nil)
		return rec.Code, strings.TrimSpace(rec.Body.String())
	}
	// The disk: less free space than any disk has (where the server can
	// tell the free space).
	diskKnown := runtime.GOOS == "linux" || runtime.GOOS == "darwin" || runtime.GOOS == "freebsd"
	if code, body := probe("/healthz"); diskKnown && (code != 503 || !strings.Contains(body, `"disk":"full"`)) {
		t.Errorf("healthz with the disk full: %d %s", code, body)
	}
	if code, body := probe("/livez"); code != 200 || body != `{"status":"ok"}` {
		t.Errorf("livez with the disk full: %d %s; want 200", code, body)
	}
	db.Close() // the store: every ping now fails
	if code, body := probe("/healthz"); code != 503 {
		t.Errorf("healthz on a closed store: %d %s", code, body)
	}
	if code, body := probe("/livez"); code != 200 || body != `{"status":"ok"}` {
		t.Errorf("livez on a closed store: %d %s; want 200", code, body)
	}
}

// A token with a trailing newline, as a Kubernetes secret often holds,
// matches the caller's token without it.
func TestTokenTrimmedAtStart(t *testing.T) {
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv, err := server.New(context.Background(), server.Options{Store: db, Token: "0123456789abcdef\n"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	req := httptest.NewRequest("GET", "/api/v1/jobs", nil)
	req.Header.Set("Authorization", "Bearer 0123456789abcdef")
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Errorf("the token without its newline: %d %s", rec.Code, rec.Body)
	}
}
