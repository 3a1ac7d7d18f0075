package jobrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/job"
)

// longJob runs for minutes unless cancelled, reporting progress per trial.
const longJob = `{"dataset":"synthetic-a","trials":100000,"methods":["naive"]}`

func TestCancelRunningJobStopsWithinASecond(t *testing.T) {
	s := newTestService(t, nil, Config{})
	ctx := context.Background()
	j, err := s.Submit(ctx, "mse-bench", []byte(longJob))
	if err != nil {
		t.Fatal(err)
	}
	waitRunning(t, s, j.ID)
	start := time.Now()
	c, err := s.Cancel(ctx, j.ID)
	if err != nil || c.Status != records.StatusRunning || !c.CancelRequested {
		t.Fatalf("Cancel = %+v, %v", c, err)
	}
	j = waitJob(t, s, j.ID, 5*time.Second)
	took := time.Since(start)
	if j.Status != records.StatusCanceled || j.ErrorKind != "canceled" || j.Result != nil {
		t.Errorf("after cancel: %s %s %q", j.Status, j.ErrorKind, j.Error)
	}
	if took > 1500*time.Millisecond {
		t.Errorf("cancel took %v, want about a second at most", took)
	}
	t.Logf("canceled in %v", took)
	if s.Busy() != 0 {
		t.Errorf("Busy = %d after the job ended", s.Busy())
	}
}

// A DELETE that reaches another replica stops the job through the
// Store: the running worker learns of it with its next heartbeat.
func TestCancelFromAnotherReplica(t *testing.T) {
	store := NewMemStore()
	dir := t.TempDir()
	a := newTestService(t, store, Config{DataDir: dir, Replica: "a"})
	b := newTestService(t, store, Config{DataDir: dir, Replica: "b", Workers: 1})
	b.Close() // b only answers HTTP here: no workers of its own
	ctx := context.Background()
	j, err := a.Submit(ctx, "mse-bench", []byte(longJob))
	if err != nil {
		t.Fatal(err)
	}
	waitRunning(t, a, j.ID)
	start := time.Now()
	if _, err := b.Cancel(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	j = waitJob(t, a, j.ID, 5*time.Second)
	if j.Status != records.StatusCanceled || !strings.HasPrefix(j.ClaimedBy, "a/") {
		t.Errorf("job %s claimed by %s, want canceled on a", j.Status, j.ClaimedBy)
	}
	took := time.Since(start)
	if took > 1500*time.Millisecond {
		t.Errorf("cancel through the store took %v", took)
	}
	t.Logf("canceled through the store in %v (heartbeat %v)", took, a.cfg.Heartbeat)
}

func TestCancelQueuedJob(t *testing.T) {
	s := newTestService(t, nil, Config{Workers: 1})
	ctx := context.Background()
	first, _ := s.Submit(ctx, "mse-bench", []byte(longJob))
	waitRunning(t, s, first.ID)
	second, err := s.Submit(ctx, "mse-bench", []byte(`{"dataset":"synthetic-a","trials":1,"methods":["naive"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := s.QueueDepth(ctx); n != 1 {
		t.Errorf("QueueDepth = %d, want 1", n)
	}
	c, err := s.Cancel(ctx, second.ID)
	if err != nil || c.Status != records.StatusCanceled || c.ErrorKind != "canceled" {
		t.Errorf("Cancel(queued) = %+v, %v", c, err)
	}
	if n, _ := s.QueueDepth(ctx); n != 0 {
		t.Errorf("QueueDepth = %d after cancel, want 0", n)
	}
	s.Cancel(ctx, first.ID)
	waitJob(t, s, first.ID, 5*time.Second)
	if j, _ := s.Job(ctx, second.ID); j.Status != records.StatusCanceled || !j.Started.IsZero() {
		t.Errorf("canceled queued job ran: %+v", j)
	}
	if _, err := s.Cancel(ctx, "nope"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Cancel(missing): %v", err)
	}
}

// A job that panics fails with an internal error; the worker survives
// and runs the next job.
func TestPanicBecomesFailedJob(t *testing.T) {
	s := newTestService(t, nil, Config{Workers: 1})
	real := s.run
	s.run = func(ctx context.Context, tk *task, env job.Env) (any, []job.Artifact, error) {
		if env.Secret == nil { // the first job only, see below
			var m map[string]int
			//lint:ignore SA5000 a nil-map write: a runtime panic, as a bug would raise
			m["boom"]++
		}
		return real(ctx, tk, env)
	}
	ctx := context.Background()
	j, err := s.Submit(ctx, "mse-bench", []byte(`{"dataset":"synthetic-a","trials":1,"methods":["naive"]}`))
	if err != nil {
		t.Fatal(err)
	}
	j = waitJob(t, s, j.ID, 10*time.Second)
	if j.Status != records.StatusFailed || j.ErrorKind != "internal" || !strings.Contains(j.Error, "assignment to entry in nil map") {
		t.Errorf("panicking job: %s %s %q", j.Status, j.ErrorKind, j.Error)
	}
	s.cfg.Secret = func(string) (string, bool) { return "", false }
	j2, _ := s.Submit(ctx, "mse-bench", []byte(`{"dataset":"synthetic-a","trials":1,"methods":["naive"]}`))
	if j2 = waitJob(t, s, j2.ID, 30*time.Second); j2.Status != records.StatusSucceeded {
		t.Errorf("the next job: %s %q", j2.Status, j2.Error)
	}
}

// Jobs a dead process left running are failed at start: all of them for
// a store only this process uses, only those whose heartbeat lapsed for
// a shared one (the others belong to live replicas).
func TestRestartFailsInterruptedJobs(t *testing.T) {
	ctx := context.Background()
	for _, exclusive := range []bool{true, false} {
		store := NewMemStore()
		now := time.Now().UTC()
		for i, id := range []string{"dead", "alive", "queued"} { // claimed in this order
			store.CreateJob(ctx, records.Job{ID: id, Kind: "mse-bench", Request: []byte(`{"dataset":"synthetic-a","trials":1,"methods":["naive"]}`), Status: records.StatusQueued, Created: now.Add(time.Duration(i-60) * time.Minute)})
		}
		store.ClaimJob(ctx, "old/0", now.Add(-time.Minute)) // dead: heartbeat a minute ago
		store.ClaimJob(ctx, "other/0", now)                 // alive: heartbeat now
		s, err := New(Config{Store: store, DataDir: t.TempDir(), Exclusive: exclusive, Lease: 30 * time.Second, Logf: t.Logf, Poll: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		s.Start(ctx)
		dead, _ := store.GetJob(ctx, "dead")
		alive, _ := store.GetJob(ctx, "alive")
		if dead.Status != records.StatusFailed || dead.ErrorKind != "internal" || !strings.Contains(dead.Error, "interrupted") {
			t.Errorf("exclusive=%v: dead job %s %q", exclusive, dead.Status, dead.Error)
		}
		wantAlive := records.StatusRunning
		if exclusive {
			wantAlive = records.StatusFailed
		}
		if alive.Status != wantAlive {
			t.Errorf("exclusive=%v: job with a fresh heartbeat is %s, want %s", exclusive, alive.Status, wantAlive)
		}
		q := waitJob(t, s, "queued", 30*time.Second)
		if q.Status != records.StatusSucceeded {
			t.Errorf("exclusive=%v: queued job after restart: %s %q", exclusive, q.Status, q.Error)
		}
		s.Close()
	}
}

// A shared store's reaper fails a job whose replica stopped sending
// heartbeats, and the worker that lost it does not record an outcome.
func TestReaperFailsLapsedJobs(t *testing.T) {
	store := NewMemStore()
	s := newTestService(t, store, Config{Lease: 200 * time.Millisecond, Heartbeat: 50 * time.Millisecond})
	ctx := context.Background()
	now := time.Now().UTC()
	store.CreateJob(ctx, records.Job{ID: "orphan", Kind: "stats", Request: []byte(`{}`), Status: records.StatusQueued, Created: now})
	store.ClaimJob(ctx, "gone/0", now)
	j := waitJob(t, s, "orphan", 5*time.Second)
	if j.Status != records.StatusFailed || !strings.Contains(j.Error, "interrupted") {
		t.Errorf("orphan: %s %q", j.Status, j.Error)
	}
}

func TestSubmitErrors(t *testing.T) {
	s := newTestService(t, nil, Config{AllowedBaseURLs: []string{"http://127.0.0.1:9/v1"}})
	ctx := context.Background()
	real := upload(t, s, "real.npy", npy(t, []int{3, 2}, []float64{1, 2, 3, 4, 5, 7}))
	for _, c := range []struct {
		name, kind, body, field string
	}{
		{"unknown field", "stats", `{"in":"` + real + `","out":"x.npz"}`, "out"},
		{"wrong type", "is", `{"probs":"` + real + `","splits":"ten"}`, "splits"},
		{"validate", "is", `{"probs":"` + real + `","splits":0}`, "splits"},
		{"not JSON", "stats", `{"in":`, "body"},
		{"two objects", "stats", `{"in":"` + real + `"} {}`, "body"},
		{"array body", "stats", `[1]`, "body"},
		{"empty", "stats", ``, "body"},
		{"path instead of id", "stats", `{"in":"/etc/passwd"}`, "in"},
		{"traversal", "stats", `{"in":"../../` + real + `"}`, "in"},
		{"id in a folder", "stats", `{"in":"uploads/` + real + `"}`, "in"},
		{"unknown upload", "stats", `{"in":"0123456789abcdef0123456789abcdef.npy"}`, "in"},
		{"list element", "decompose", `{"models":["` + real + `","x.npy"]}`, "models[1]"},
		{"required", "stats", `{}`, "in"},
		{"huge simulation", "hallucination-simulate", `{"model":"categorical","groups":100000000}`, "groups"},
		{"model artifact name", "mse-fit", `{"train":"` + real + `","target":"y","prediction":"p","model":"../m.json"}`, "model"},
		{"base url not allowed", "hallucination-run", `{"backend":"openai","base_url":"http://169.254.169.254/v1","model":"m","context":"` + real + `","queries":"` + real + `"}`, "base_url"},
		{"base url other port", "hallucination-run", `{"backend":"openai","base_url":"http://127.0.0.1:8080/v1","model":"m","context":"` + real + `","queries":"` + real + `"}`, "base_url"},
		{"secret not held", "sample", `{"prompts":"` + real + `","base_url":"http://127.0.0.1:9/v1","model":"m","api_key_env":"HOME"}`, "api_key_env"},
		{"base url user info", "hallucination-run", `{"backend":"openai","base_url":"http://x@127.0.0.1:9/v1","model":"m","context":"` + real + `","queries":"` + real + `"}`, "base_url"},
	} {
		_, err := s.Submit(ctx, c.kind, []byte(c.body))
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || fault.Classify(err).HTTPStatus() != 400 {
			t.Errorf("%s: err = %v (%T), want a field error naming %q", c.name, err, err, c.field)
		}
	}
	if _, err := s.Submit(ctx, "mse-estimate-now", []byte(`{}`)); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("unknown kind: %v", err)
	}
	if jobs, _ := s.Jobs(ctx, 0); len(jobs) != 0 {
		t.Errorf("refused requests stored %d jobs", len(jobs))
	}
	// An allowed base URL passes the check (the job then fails to
	// connect: port 9 is discard, and nothing listens).
	_, err := s.Submit(ctx, "hallucination-run", []byte(`{"backend":"openai","base_url":"http://127.0.0.1:9/v1/","model":"m","context":"`+real+`","queries":"`+real+`"}`))
	if err != nil {
		t.Errorf("allowed base URL refused: %v", err)
	}
}

func TestAllowedURL(t *testing.T) {
	allow := []string{"https://api.example.com/v1", "http://127.0.0.1:8000"}
	for _, c := range []struct {
		url string
		ok  bool
	}{
		{"https://api.example.com/v1", true},
		{"https://API.example.com:443/v1/", true},
		{"https://api.example.com/v1/sub", true},
		{"https://api.example.com/v2", false},
		{"https://api.example.com/v1/../v2", false},
		{"https://api.example.com/v10", false},
		{"http://api.example.com/v1", false},
		{"https://api.example.com.evil.net/v1", false},
		{"https://user:pw@api.example.com/v1", false},
		{"http://127.0.0.1:8000/anything", true},
		{"http://127.0.0.1:8001/", false},
		{"http://localhost:8000/", false},
		{"file:///etc/passwd", false},
		{"not a url", false},
	} {
		if got := allowedURL(c.url, allow); got != c.ok {
			t.Errorf("allowedURL(%q) = %v, want %v", c.url, got, c.ok)
		}
	}
	if allowedURL("https://api.example.com/v1", nil) {
		t.Error("an empty allow-list allowed a URL")
	}
}

// The API key a hallucination run needs comes from the server's
// configuration through Env.Secret, by the name the request gives.
func TestSecretsComeFromTheServer(t *testing.T) {
	var asked []string
	s := newTestService(t, nil, Config{Secret: func(name string) (string, bool) { asked = append(asked, name); return "", false }})
	var seen func(string) (string, bool)
	s.run = func(ctx context.Context, tk *task, env job.Env) (any, []job.Artifact, error) {
		seen = env.Secret
		return map[string]int{}, nil, nil
	}
	ctx := context.Background()
	j, _ := s.Submit(ctx, "mse-bench", []byte(`{"dataset":"synthetic-a","trials":1,"methods":["naive"]}`))
	waitJob(t, s, j.ID, 5*time.Second)
	if seen == nil {
		t.Fatal("the job's Env has no Secret")
	}
	seen("OPENAI_API_KEY")
	if len(asked) != 1 || asked[0] != "OPENAI_API_KEY" {
		t.Errorf("secrets asked of the server: %v", asked)
	}
}

func TestUploads(t *testing.T) {
	s := newTestService(t, nil, Config{MaxUploadBytes: 100})
	ctx := context.Background()
	u, err := s.SaveUpload(ctx, `C:\data\Real Features.NPY`, strings.NewReader("abc"))
	if err != nil {
		t.Fatal(err)
	}
	// sha256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
	if u.ID != "ba7816bf8f01cfea414140de5dae2223.npy" || u.SHA256 != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" || u.Size != 3 || u.Name != "Real Features.NPY" {
		t.Errorf("upload = %+v", u)
	}
	b, err := os.ReadFile(filepath.Join(s.cfg.DataDir, "uploads", u.ID))
	if err != nil || string(b) != "abc" {
		t.Errorf("stored bytes %q, %v", b, err)
	}
	again, err := s.SaveUpload(ctx, "other.npy", strings.NewReader("abc"))
	if err != nil || again.ID != u.ID || again.Name != "other.npy" {
		t.Errorf("same bytes again = %+v, %v; want the first id under the name given", again, err)
	}
	gz, err := s.SaveUpload(ctx, "rows.csv.gz", strings.NewReader("abc"))
	if err != nil || !strings.HasSuffix(gz.ID, ".csv.gz") {
		t.Errorf("gzipped upload = %+v, %v", gz, err)
	}
	if _, err := s.SaveUpload(ctx, "big.npy", bytes.NewReader(make([]byte, 101))); !errors.Is(err, ErrTooLarge) {
		t.Errorf("101 bytes over a 100-byte limit: %v", err)
	}
	if _, err := s.SaveUpload(ctx, "exactly.npy", bytes.NewReader(make([]byte, 100))); err != nil {
		t.Errorf("100 bytes: %v", err)
	}
	for _, name := range []string{"x.exe", "noext", "x.npz.gz", "x.gz", ""} {
		var fe *fault.FieldError
		if _, err := s.SaveUpload(ctx, name, strings.NewReader("x")); !errors.As(err, &fe) || fe.Field != "file" {
			t.Errorf("SaveUpload(%q): %v, want a field error", name, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(s.cfg.DataDir, "uploads"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".upload-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
	if len(entries) != 3 {
		t.Errorf("%d files in uploads, want 3", len(entries))
	}
	if _, err := s.Upload(ctx, "../x"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("Upload(../x): %v", err)
	}
}

// A job's file system is the uploads folder and nothing else: even a
// request that reached the job with a path outside it (the checks at
// Submit bypassed) cannot read it.
func TestJobFSStaysInUploads(t *testing.T) {
	s := newTestService(t, nil, Config{})
	secret := filepath.Join(s.cfg.DataDir, "secret.npy")
	os.WriteFile(secret, npy(t, []int{2, 2}, []float64{1, 2, 3, 4}), 0o644)
	os.Symlink(secret, filepath.Join(s.cfg.DataDir, "uploads", "link.npy"))
	for _, p := range []string{"../secret.npy", secret, "link.npy"} {
		tk, err := prepare("stats", []byte(`{"in":"`+p+`"}`), s.prepEnv())
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = tk.run(context.Background(), job.Env{FS: newJobFS(s.fsys)})
		if err == nil || fault.Classify(err) != fault.KindInput {
			t.Errorf("reading %s: %v, want an input error", p, err)
		}
	}
}

func TestMaxRuntime(t *testing.T) {
	s := newTestService(t, nil, Config{MaxRuntime: 300 * time.Millisecond})
	j, err := s.Submit(context.Background(), "mse-bench", []byte(longJob))
	if err != nil {
		t.Fatal(err)
	}
	j = waitJob(t, s, j.ID, 10*time.Second)
	if j.Status != records.StatusFailed || j.ErrorKind != "canceled" || !strings.Contains(j.Error, "longer than the server allows") {
		t.Errorf("job past its runtime: %s %s %q", j.Status, j.ErrorKind, j.Error)
	}
	if d := j.Finished.Sub(j.Started); d > 1500*time.Millisecond {
		t.Errorf("stopped after %v, limit 300ms", d)
	}
}

func TestStaleUploadTempsRemoved(t *testing.T) {
	dir := t.TempDir()
	up := filepath.Join(dir, "uploads")
	os.MkdirAll(up, 0o755)
	old, fresh := filepath.Join(up, ".upload-1"), filepath.Join(up, ".upload-2")
	os.WriteFile(old, []byte("x"), 0o644)
	os.WriteFile(fresh, []byte("x"), 0o644)
	os.Chtimes(old, time.Now().Add(-25*time.Hour), time.Now().Add(-25*time.Hour))
	newTestService(t, nil, Config{DataDir: dir})
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("a day-old temporary upload is still there: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh temporary upload was removed: %v", err)
	}
}

// Close (a graceful shutdown) stops a running job within a second and
// records it as failed, saying why; queued jobs stay queued for the next
// start.
func TestCloseStopsRunningJobs(t *testing.T) {
	store := NewMemStore()
	s, err := New(Config{Store: store, DataDir: t.TempDir(), Heartbeat: 50 * time.Millisecond, Poll: 50 * time.Millisecond, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	s.Start(context.Background())
	ctx := context.Background()
	running, _ := s.Submit(ctx, "mse-bench", []byte(longJob))
	waitRunning(t, s, running.ID)
	queued, _ := s.Submit(ctx, "mse-bench", []byte(longJob))
	start := time.Now()
	s.Close()
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("Close took %v", took)
	}
	j, _ := store.GetJob(ctx, running.ID)
	if j.Status != records.StatusFailed || !strings.Contains(j.Error, "server stopped") {
		t.Errorf("running job after Close: %s %q", j.Status, j.Error)
	}
	if j, _ := store.GetJob(ctx, queued.ID); j.Status != records.StatusQueued {
		t.Errorf("queued job after Close: %s", j.Status)
	}
}

// An allowed LLM server that redirects elsewhere does not take the job
// with it: the redirect to an address outside the allow-list is refused,
// and the other address never hears from the service.
func TestOutboundRedirectRefused(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/completions", http.StatusTemporaryRedirect)
	}))
	defer allowed.Close()
	s := newTestService(t, nil, Config{AllowedBaseURLs: []string{allowed.URL + "/v1"}})
	ctx := context.Background()
	c := upload(t, s, "ctx.jsonl", []byte(`{"x":"cat","y":"yes"}`+"\n"))
	q := upload(t, s, "q.jsonl", []byte(`{"id":"q1","x":"cat"}`+"\n"))
	j, err := s.Submit(ctx, "hallucination-run", []byte(`{"backend":"openai","base_url":"`+allowed.URL+`/v1","model":"m","retries":0,"context":"`+c+`","queries":"`+q+`","M":2,"K":2}`))
	if err != nil {
		t.Fatal(err)
	}
	j = waitJob(t, s, j.ID, 30*time.Second)
	if j.Status != records.StatusFailed || !strings.Contains(j.Error, "redirect") {
		t.Errorf("job: %s %q", j.Status, j.Error)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the address outside the allow-list got %d requests", n)
	}
}

func TestQueueFull(t *testing.T) {
	s := newTestService(t, nil, Config{Workers: 1, MaxQueued: 2})
	ctx := context.Background()
	first, _ := s.Submit(ctx, "mse-bench", []byte(longJob))
	waitRunning(t, s, first.ID)
	for i := range 3 {
		_, err := s.Submit(ctx, "mse-bench", []byte(longJob))
		if (i < 2) != (err == nil) || (i == 2 && !errors.Is(err, ErrQueueFull)) {
			t.Errorf("submit %d with %d queued: %v", i+1, i, err)
		}
	}
	jobs, _ := s.Jobs(ctx, 0)
	for _, j := range jobs {
		s.Cancel(ctx, j.ID)
	}
	waitJob(t, s, first.ID, 5*time.Second)
}

// mse-fit names its model artifact model.json unless the request names
// it; the artifact is what POST /api/v1/monitors takes as "model".
func TestMSEFitDefaultModelName(t *testing.T) {
	s := newTestService(t, nil, Config{})
	ctx := context.Background()
	train := upload(t, s, "ref.csv", mseTable(60, 0, 1, 60))
	j, err := s.Submit(ctx, "mse-fit", []byte(`{"train":"`+train+`","target":"y","prediction":"pred","features":["x"],"epochs":5}`))
	if err != nil {
		t.Fatal(err)
	}
	if j = waitJob(t, s, j.ID, 30*time.Second); j.Status != records.StatusSucceeded {
		t.Fatalf("%s %s", j.Status, j.Error)
	}
	a, err := s.Artifact(ctx, j.ID, "model.json")
	if err != nil || !json.Valid(a.Data) || a.ContentType != "application/json" {
		t.Errorf("model.json: %q, %v", a.Data, err)
	}
}

// The allow-list is checked again when the job runs: a job queued under
// a wider list fails if the server restarted with a narrower one.
func TestAllowListCheckedWhenRunning(t *testing.T) {
	store := NewMemStore()
	dir := t.TempDir()
	ctx := context.Background()
	wide, err := New(Config{Store: store, DataDir: dir, AllowedBaseURLs: []string{"http://127.0.0.1:9/v1"}, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	c := upload(t, wide, "ctx.jsonl", []byte(`{"x":"cat","y":"yes"}`+"\n"))
	j, err := wide.Submit(ctx, "hallucination-run", []byte(`{"backend":"openai","base_url":"http://127.0.0.1:9/v1","model":"m","retries":0,"context":"`+c+`","queries":"`+c+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	wide.Close() // never started: the job stays queued
	narrow := newTestService(t, store, Config{DataDir: dir})
	j = waitJob(t, narrow, j.ID, 10*time.Second)
	if j.Status != records.StatusFailed || j.ErrorKind != "field" || !strings.Contains(j.Error, "base_url") {
		t.Errorf("job under the narrower list: %s %s %q", j.Status, j.ErrorKind, j.Error)
	}
}

func TestArtifactLimit(t *testing.T) {
	s := newTestService(t, nil, Config{MaxArtifactBytes: 100})
	j, _ := s.Submit(context.Background(), "mse-bench", []byte(`{"dataset":"synthetic-a","trials":1,"methods":["naive"]}`))
	j = waitJob(t, s, j.ID, 30*time.Second)
	if j.Status != records.StatusFailed || j.ErrorKind != "internal" || !strings.Contains(j.Error, "artifact limit") {
		t.Errorf("job with artifacts over the limit: %s %s %q", j.Status, j.ErrorKind, j.Error)
	}
}
