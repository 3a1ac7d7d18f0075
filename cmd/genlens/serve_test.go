package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/internal/store"
	"github.com/genlens/genlens/internal/testkit/dbtest"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/msejob"
	"github.com/genlens/genlens/network/features"
)

// These tests run the real binary: `go build` once, then `genlens serve`
// as child processes that the tests kill and restart.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// TestMain points genlens's cache at a temporary directory, so that the
// tests never read features a user's earlier runs cached, nor leave any,
// and removes the binary the serve tests built.
func TestMain(m *testing.M) {
	cache, err := os.MkdirTemp("", "genlens-cache-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv(features.CacheEnv, cache)
	code := m.Run()
	os.RemoveAll(cache)
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

func serveBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the genlens binary; skipped in -short mode")
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "genlens-serve-test")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "genlens")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

type serveProc struct {
	cmd    *exec.Cmd
	url    string
	stderr *bytes.Buffer
	mu     *sync.Mutex
}

var listening = regexp.MustCompile(`url=(http://\S+)`)

// startServe starts `genlens serve` on a free loopback port and waits
// until it listens.
func startServe(t *testing.T, args ...string) *serveProc {
	t.Helper()
	p, err := launchServe(t, serveBinary(t), args...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// launchServe is startServe for any goroutine: it reports instead of
// failing the test.
func launchServe(t *testing.T, bin string, args ...string) (*serveProc, error) {
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--token-env", "GENLENS_TEST_TOKEN"}, args...)...)
	cmd.Env = append(os.Environ(), "GENLENS_TEST_TOKEN=tok-tok-tok-tok-tok")
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &serveProc{cmd: cmd, stderr: &bytes.Buffer{}, mu: &sync.Mutex{}}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.stderr.WriteString(line + "\n")
			p.mu.Unlock()
			if m := listening.FindStringSubmatch(line); m != nil {
				urls <- m[1]
			}
		}
		close(urls)
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	select {
	case u, ok := <-urls:
		if !ok {
			cmd.Wait()
			return nil, fmt.Errorf("genlens serve exited before listening:\n%s", p.log())
		}
		p.url = u
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("genlens serve did not listen within 30 s:\n%s", p.log())
	}
	return p, nil
}

func (p *serveProc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

var client = &http.Client{Timeout: 30 * time.Second}

// post sends a JSON body; it returns the status, or an error when the
// request got no response (the server was killed).
func post(url string, body any, out any) (int, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	req, _ := http.NewRequest("POST", url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer tok-tok-tok-tok-tok")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s: %v", raw, err)
		}
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%d %s", resp.StatusCode, raw)
	}
	return resp.StatusCode, nil
}

func get(t *testing.T, url string, out any) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer tok-tok-tok-tok-tok")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("GET %s: %d %s", url, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode
}

var (
	modelOnce sync.Once
	modelData []byte
)

// serveModel is a check model fitted by msejob.Fit on a synthetic
// regression with features x0, x1.
func serveModel(t *testing.T) json.RawMessage {
	t.Helper()
	modelOnce.Do(func() {
		r := rand.New(rand.NewPCG(1, 2))
		var b strings.Builder
		b.WriteString("x0,x1,pred,y\n")
		for range 300 {
			x0, x1 := r.NormFloat64(), r.NormFloat64()
			u := 2*x0 + math.Sin(3*x1)
			fmt.Fprintf(&b, "%v,%v,%v,%v\n", x0, x1, u+0.3*x0, u+0.5*r.NormFloat64())
		}
		req := msejob.NewFitRequest()
		req.Train, req.Target, req.Prediction, req.Model, req.Epochs = "ref.csv", "y", "pred", "m.json", 50
		res, err := msejob.Fit(context.Background(), job.Env{FS: fstest.MapFS{"ref.csv": {Data: []byte(b.String())}}}, req)
		if err != nil {
			panic(err)
		}
		var out bytes.Buffer
		res.WriteModel(&out)
		modelData = out.Bytes()
	})
	return modelData
}

func batch(prefix string, n int, r *rand.Rand) map[string]any {
	rows := make([]map[string]any, n)
	for i := range rows {
		x0, x1 := r.NormFloat64(), r.NormFloat64()
		rows[i] = map[string]any{"id": fmt.Sprintf("%s-%d", prefix, i), "timestamp": time.Now().UTC().Format(time.RFC3339Nano),
			"features": map[string]float64{"x0": x0, "x1": x1}, "prediction": 2*x0 + 0.3*x0 + math.Sin(3*x1)}
	}
	return map[string]any{"rows": rows}
}

// A SIGKILL in the middle of ingestion loses no acknowledged row and
// stores none twice: after a restart on the same SQLite file, every row
// of every batch answered 200 is there, the one batch in flight is there
// whole or not at all, and nothing else.
func TestServeDurableUnderSIGKILL(t *testing.T) {
	db := filepath.Join(t.TempDir(), "genlens.db")
	p := startServe(t, "--db", db)
	var created struct{ ID int64 }
	if _, err := post(p.url+"/api/v1/monitors", map[string]any{"name": "m", "model": serveModel(t), "chunk_size": 500}, &created); err != nil {
		t.Fatal(err)
	}
	rowsURL := fmt.Sprintf("%s/api/v1/monitors/%d/rows", p.url, created.ID)

	// Four clients ingest batches of 50 until the server dies; a timer
	// kills it after some batches have been acknowledged.
	var mu sync.Mutex
	acked := map[string]int{}    // batch prefix → rows
	inflight := map[string]int{} // sent, no answer
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(c), 9))
			for i := 0; ; i++ {
				prefix := fmt.Sprintf("c%d-b%d", c, i)
				var acc struct{ Accepted int }
				code, err := post(rowsURL, batch(prefix, 50, r), &acc)
				mu.Lock()
				// No answer, or an answer cut short: not acknowledged.
				if err != nil && (code == 0 || code == 200) {
					inflight[prefix] = 50
					mu.Unlock()
					return // the server is gone
				}
				if code != 200 || acc.Accepted != 50 {
					mu.Unlock()
					t.Errorf("batch %s: %d %v", prefix, code, err)
					return
				}
				acked[prefix] = 50
				mu.Unlock()
			}
		})
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 40 {
			break
		}
		if time.Now().After(deadline) {
			p.cmd.Process.Kill()
			t.Fatalf("%d batches acknowledged in 60 s:\n%s", n, p.log())
		}
	}
	time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond) // land mid-request
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
	wg.Wait()

	// Restart on the same file; the API and the file agree.
	p2 := startServe(t, "--db", db)
	var m struct{ Rows int }
	get(t, fmt.Sprintf("%s/api/v1/monitors/%d", p2.url, created.ID), &m)
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stored, err := st.Rows(context.Background(), created.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	perBatch := map[string]int{}
	seen := map[string]bool{}
	for _, r := range stored {
		if seen[r.ID] {
			t.Errorf("row %s stored twice", r.ID)
		}
		seen[r.ID] = true
		perBatch[r.ID[:strings.LastIndex(r.ID, "-")]]++
	}
	for b, n := range acked {
		if perBatch[b] != n {
			t.Errorf("acknowledged batch %s: %d of %d rows after the restart", b, perBatch[b], n)
		}
	}
	extra := 0
	for b, n := range perBatch {
		if _, ok := acked[b]; ok {
			continue
		}
		if _, ok := inflight[b]; !ok || n != inflight[b] {
			t.Errorf("batch %s: %d rows stored, neither acknowledged nor a whole in-flight batch", b, n)
		}
		extra += n
	}
	if m.Rows != len(stored) {
		t.Errorf("API says %d rows, the file holds %d", m.Rows, len(stored))
	}
	t.Logf("%d batches acknowledged before SIGKILL, %d in flight (%d of their rows committed); %d rows after restart",
		len(acked), len(inflight), extra, len(stored))
	// The restarted server takes new rows.
	if _, err := post(fmt.Sprintf("%s/api/v1/monitors/%d/rows", p2.url, created.ID), batch("after", 10, rand.New(rand.NewPCG(5, 5))), nil); err != nil {
		t.Fatal(err)
	}
}

// The binary refuses a non-loopback address without a token: exit 2 and
// one line that names --token-env.
func TestServeRefusesOpenAddress(t *testing.T) {
	cmd := exec.Command(serveBinary(t), "serve", "--addr", "0.0.0.0:0", "--db", filepath.Join(t.TempDir(), "x.db"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if !ok || ee.ExitCode() != 2 || len(lines) != 1 || !strings.Contains(lines[0], "--token-env") {
		t.Fatalf("exit %v, stderr %q; want exit 2 and one line naming --token-env", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(cmd.Args[len(cmd.Args)-1]), "x.db")); err == nil {
		t.Error("the refused server created its database")
	}
}

// A token of fewer than 16 characters other than spaces is refused at
// startup: exit 2 and one line saying what is needed.
func TestServeRefusesShortToken(t *testing.T) {
	for _, tok := range []string{" ", "short-token"} {
		cmd := exec.Command(serveBinary(t), "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "x.db"), "--token-env", "GENLENS_TEST_TOKEN")
		cmd.Env = append(os.Environ(), "GENLENS_TEST_TOKEN="+tok)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if !ok || ee.ExitCode() != 2 || len(lines) != 1 || !strings.Contains(lines[0], "at least 16") {
			t.Errorf("token %q: exit %v, stderr %q; want exit 2 and one line saying at least 16", tok, err, stderr.String())
		}
	}
}

// Two replicas on one Postgres hold no state of their own: they start
// together (migrations serialised), a monitor name taken on one is taken
// on the other, rows posted to either in parallel all land once, both
// report the same chunks and metrics, and jobs submitted to either run
// once each, on whichever replica claims them.
func TestServeTwoReplicasOnePostgres(t *testing.T) {
	dsn := dbtest.Postgres(t)
	bin := serveBinary(t)
	var a, b *serveProc
	var errA, errB error
	var wg sync.WaitGroup
	data := t.TempDir() // uploads: replicas share the directory as they share the database
	wg.Go(func() { a, errA = launchServe(t, bin, "--db", dsn, "--data-dir", data) })
	wg.Go(func() { b, errB = launchServe(t, bin, "--db", dsn, "--data-dir", data) })
	wg.Wait()
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	replicas := []*serveProc{a, b}

	// The same name created on both at once: one 201, one 409.
	codes := make([]int, 2)
	ids := make([]int64, 2)
	for i, p := range replicas {
		wg.Go(func() {
			var out struct{ ID int64 }
			codes[i], _ = post(p.url+"/api/v1/monitors", map[string]any{"name": "shared", "model": serveModel(t), "chunk_size": 200}, &out)
			ids[i] = out.ID
		})
	}
	wg.Wait()
	if codes[0]+codes[1] != 201+409 {
		t.Fatalf("creating one name on both replicas: %v, want one 201 and one 409", codes)
	}
	id := max(ids[0], ids[1])

	var mu sync.Mutex
	var ids2 []string
	for c := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(c), 3))
			for i := range 10 {
				p := replicas[(c+i)%2]
				prefix := fmt.Sprintf("c%d-b%d", c, i)
				body := batch(prefix, 50, r)
				if _, err := post(fmt.Sprintf("%s/api/v1/monitors/%d/rows", p.url, id), body, nil); err != nil {
					t.Errorf("batch %s on replica %d: %v", prefix, (c+i)%2, err)
					return
				}
				mu.Lock()
				for _, row := range body["rows"].([]map[string]any) {
					ids2 = append(ids2, row["id"].(string))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// Labels for a third of the rows, through replica b.
	var labels []map[string]any
	for i, rid := range ids2 {
		if i%3 == 0 {
			labels = append(labels, map[string]any{"id": rid, "target": 1.5})
		}
	}
	if _, err := post(fmt.Sprintf("%s/api/v1/monitors/%d/labels", b.url, id), map[string]any{"labels": labels}, nil); err != nil {
		t.Fatal(err)
	}
	var ca, cb json.RawMessage
	get(t, fmt.Sprintf("%s/api/v1/monitors/%d/chunks", a.url, id), &ca)
	get(t, fmt.Sprintf("%s/api/v1/monitors/%d/chunks", b.url, id), &cb)
	if !bytes.Equal(ca, cb) {
		t.Fatalf("replicas disagree on the chunks:\n%s\n%s", ca, cb)
	}
	var doc struct {
		Rows   int
		Chunks []struct {
			N           int      `json:"n"`
			RealizedMSE *float64 `json:"realized_mse"`
		}
	}
	json.Unmarshal(ca, &doc)
	if doc.Rows != 4*10*50 || len(doc.Chunks) != 10 || doc.Chunks[0].RealizedMSE == nil {
		t.Fatalf("%d rows in %d chunks (first realised %v), want 2000 in 10 with labels", doc.Rows, len(doc.Chunks), doc.Chunks[0].RealizedMSE)
	}
	metric := regexp.MustCompile(`(?m)^genlens_monitor_estimated_mse\{monitor="shared"\} \S+$`)
	var lines []string
	for _, p := range replicas {
		req, _ := http.NewRequest("GET", p.url+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer tok-tok-tok-tok-tok")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		lines = append(lines, metric.FindString(string(raw)))
	}
	if lines[0] == "" || lines[0] != lines[1] {
		t.Fatalf("metrics of the replicas: %q and %q, want the same line", lines[0], lines[1])
	}

	// Jobs: submitted to both, each claimed by one replica and run once.
	var jobIDs []string
	for i := range 8 {
		var sub struct{ ID string }
		code, err := post(replicas[i%2].url+"/api/v1/jobs/mse-bench", map[string]any{"dataset": "synthetic-a", "trials": 2, "methods": []string{"naive"}, "seed": i + 1}, &sub)
		if code != 202 || sub.ID == "" {
			t.Fatalf("submit job %d: %d %v", i, code, err)
		}
		jobIDs = append(jobIDs, sub.ID)
	}
	deadline := time.Now().Add(90 * time.Second)
	for i, jid := range jobIDs {
		for {
			var j struct {
				Status string
				Result json.RawMessage
			}
			get(t, replicas[(i+1)%2].url+"/api/v1/jobs/"+jid, &j)
			if j.Status == "succeeded" && len(j.Result) > 2 {
				break
			}
			if j.Status == "failed" || j.Status == "canceled" || time.Now().After(deadline) {
				t.Fatalf("job %s: %s", jid, j.Status)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	byReplica := map[string]int{}
	for _, jid := range jobIDs {
		j, err := st.GetJob(context.Background(), jid)
		if err != nil || j.ClaimedBy == "" {
			t.Fatalf("job %s: claimed by %q, %v", jid, j.ClaimedBy, err)
		}
		byReplica[j.ClaimedBy[:strings.LastIndex(j.ClaimedBy, "/")]]++
	}
	t.Logf("8 jobs ran on replicas %v", byReplica)
}

// SIGTERM stops the server gracefully: a request under way is answered,
// the process exits 0 and its database reopens with every row.
func TestServeGracefulShutdown(t *testing.T) {
	db := filepath.Join(t.TempDir(), "genlens.db")
	p := startServe(t, "--db", db)
	var created struct{ ID int64 }
	if _, err := post(p.url+"/api/v1/monitors", map[string]any{"name": "m", "model": serveModel(t), "chunk_size": 10}, &created); err != nil {
		t.Fatal(err)
	}
	rowsURL := fmt.Sprintf("%s/api/v1/monitors/%d/rows", p.url, created.ID)
	done := make(chan error, 1)
	go func() {
		_, err := post(rowsURL, batch("big", 5000, rand.New(rand.NewPCG(1, 1))), nil)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // the batch is on its way
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := p.cmd.Wait()
	if err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.log())
	}
	reqErr := <-done
	if !strings.Contains(p.log(), "msg=stopped") {
		t.Errorf("no clean stop in the log:\n%s", p.log())
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, _ := st.Monitor(context.Background(), created.ID)
	st.Counts(context.Background(), m)
	t.Logf("request during shutdown: err %v, %d rows stored", reqErr, m.Rows)
	// Answered: all 5,000 stored. Refused before it was read (the
	// listener closed first): none.
	if (reqErr == nil && m.Rows != 5000) || (reqErr != nil && m.Rows != 0) {
		t.Errorf("request error %v, %d rows stored", reqErr, m.Rows)
	}
}

// Bad queue, runtime, retention, memory and disk bounds are refused at
// start: exit 2 and one line naming the flag.
func TestServeRefusesBadBounds(t *testing.T) {
	bin := serveBinary(t)
	for _, tc := range []struct{ flag, value string }{{"--max-queued", "0"}, {"--max-queued", "2000000"}, {"--max-job-runtime", "-1s"},
		{"--retain-jobs", "-1h"}, {"--retain-uploads", "-1m"}, {"--retain-jobs", "soon"},
		{"--max-bodies-mb", "1"}, {"--body-wait", "0s"}, {"--min-free-disk-mb", "0"}, {"--model-cache-mb", "0"}} {
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "x.db"), tc.flag, tc.value)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), tc.flag) || strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
			t.Errorf("%s %s: exit %v, stderr %q; want exit 2 naming %s", tc.flag, tc.value, err, stderr.String(), tc.flag)
		}
	}
}

// Every flag the Kubernetes Deployment passes to serve is one serve has,
// with a value it accepts.
func TestKubernetesServeFlags(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "kubernetes", "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, line := range strings.Split(string(b), "\n") {
		if arg, ok := strings.CutPrefix(strings.TrimSpace(line), "- --"); ok {
			flags = append(flags, "--"+arg)
		}
	}
	if len(flags) < 5 {
		t.Fatalf("found only %v in deployment.yaml", flags)
	}
	cmd := newServeCmd()
	if err := cmd.ParseFlags(flags); err != nil {
		t.Errorf("serve refuses the Deployment's flags %v: %v", flags, err)
	}
}
