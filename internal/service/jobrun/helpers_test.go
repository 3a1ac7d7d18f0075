package jobrun

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/store/records"
)

// newTestService starts a Service on store (a new MemStore when nil) with
// a fresh data directory (unless cfg names one), fast heartbeats and
// polls, and closes it at the end of the test.
func newTestService(t *testing.T, store records.Store, cfg Config) *Service {
	t.Helper()
	if store == nil {
		store = NewMemStore()
	}
	cfg.Store = store
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = 50 * time.Millisecond
	}
	if cfg.Poll == 0 {
		cfg.Poll = 50 * time.Millisecond
	}
	if cfg.Lease == 0 {
		cfg.Lease = 30 * time.Second * slow
	}
	cfg.Logf = t.Logf
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// waitJob polls until the job reaches a terminal state, or fails the test
// after timeout.
func waitJob(t *testing.T, s *Service, id string, timeout time.Duration) records.Job {
	t.Helper()
	timeout *= slow
	deadline := time.Now().Add(timeout)
	for {
		j, err := s.Job(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status.Terminal() {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s (%s) still %s after %v (progress %d/%d)", id, j.Kind, j.Status, timeout, j.Done, j.Total)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitRunning polls until the job runs and has reported progress.
func waitRunning(t *testing.T, s *Service, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second * slow)
	for time.Now().Before(deadline) {
		j, _ := s.Job(context.Background(), id)
		if j.Status == records.StatusRunning && j.Done > 0 {
			return
		}
		if j.Status.Terminal() {
			t.Fatalf("job %s ended (%s: %s) before it could be cancelled", id, j.Status, j.Error)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("job %s never reported progress", id)
}

// upload stores data as an upload named name and returns its id.
func upload(t *testing.T, s *Service, name string, data []byte) string {
	t.Helper()
	u, err := s.SaveUpload(context.Background(), name, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// encoded returns what an encoder writes, in memory.
func encoded(t testing.TB, encode func(w io.Writer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := encode(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func npy(t testing.TB, shape []int, data []float64) []byte {
	return encoded(t, func(w io.Writer) error { return dataio.EncodeNPY(w, &dataio.Array{Shape: shape, Data: data}) })
}

// normal returns n·d draws of shift + scale·N(0, 1).
func normal(r *rand.Rand, n, d int, shift, scale float64) []float64 {
	v := make([]float64, n*d)
	for i := range v {
		v[i] = shift + scale*r.NormFloat64()
	}
	return v
}

// replaceIDs substitutes {{name}} in a request template with upload ids.
func replaceIDs(tmpl string, ids map[string]string) string {
	for name, id := range ids {
		tmpl = strings.ReplaceAll(tmpl, "{{"+name+"}}", id)
	}
	return tmpl
}
