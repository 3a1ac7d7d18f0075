package jobrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/store/records"
)

func TestSweepEvery(t *testing.T) {
	for _, tc := range []struct {
		retain []time.Duration
		want   time.Duration
	}{
		{[]time.Duration{0, 0}, time.Hour},
		{[]time.Duration{30 * time.Minute, 0}, 3 * time.Minute},
		{[]time.Duration{0, 24 * time.Hour}, time.Hour}, // a tenth is 2.4h: capped
		{[]time.Duration{10 * time.Hour, 50 * time.Minute}, 5 * time.Minute},
		{[]time.Duration{5 * time.Millisecond}, time.Millisecond},
	} {
		if got := sweepEvery(tc.retain...); got != tc.want {
			t.Errorf("sweepEvery(%v) = %v, want %v", tc.retain, got, tc.want)
		}
	}
}

// fakeClock is a Config.Now that tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func TestSweepUploads(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{now: time.Now()}
	var mu sync.Mutex
	deleted := map[string]int{}
	st := NewMemStore()
	s := newTestService(t, st, Config{Now: clock.Now, RetainJobs: time.Hour, RetainUploads: time.Hour,
		OnDelete: func(kind string, n int) { mu.Lock(); deleted[kind] += n; mu.Unlock() }})
	dir := filepath.Join(s.cfg.DataDir, "uploads")

	old := upload(t, s, "old.npy", npy(t, []int{2}, []float64{1, 2}))
	named := upload(t, s, "named.npy", npy(t, []int{2}, []float64{3, 4}))
	refreshed := upload(t, s, "refreshed.npy", npy(t, []int{2}, []float64{5, 6}))
	// A queued job naming `named` (stored directly: it never runs).
	if err := st.CreateJob(ctx, records.Job{ID: "q", Kind: "stats", Request: []byte(`{"real":"` + named + `"}`), Status: records.StatusQueued, Created: clock.Now()}); err != nil {
		t.Fatal(err)
	}
	// Files without records: one left by a crashed sweep (old), one
	// being uploaded right now (its record not written yet), and a
	// temporary that is not an upload at all.
	orphan := strings.Repeat("c", 32) + ".csv"
	fresh := strings.Repeat("d", 32) + ".csv"
	for _, name := range []string{orphan, fresh, ".upload-123"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if j, u, err := s.Sweep(ctx); err != nil || j != 0 || u != 0 {
		t.Fatalf("sweep with nothing old: %d jobs, %d uploads, %v", j, u, err)
	}
	if _, err := os.Stat(filepath.Join(dir, orphan)); err != nil {
		t.Fatalf("a recent file without a record was removed: %v", err)
	}

	clock.Add(2 * time.Hour)
	// The same bytes uploaded again just now: retention counts from
	// this upload, so the client's id stays good.
	if again := upload(t, s, "refreshed-again.npy", npy(t, []int{2}, []float64{5, 6})); again != refreshed {
		t.Fatalf("upload again: id %s, want %s", again, refreshed)
	}
	future := clock.Now().Add(-time.Minute) // younger than the cutoff
	if err := os.Chtimes(filepath.Join(dir, fresh), future, future); err != nil {
		t.Fatal(err)
	}
	j, u, err := s.Sweep(ctx)
	if err != nil || j != 0 || u != 1 {
		t.Fatalf("Sweep = %d jobs, %d uploads, %v; want 0, 1", j, u, err)
	}
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(dir, name)); return err == nil }
	if _, err := s.Upload(ctx, old); err == nil || exists(old) {
		t.Errorf("the old unnamed upload is still there (record error %v, file %v)", err, exists(old))
	}
	if _, err := s.Upload(ctx, named); err != nil || !exists(named) {
		t.Errorf("the upload a queued job names was deleted (record error %v, file %v)", err, exists(named))
	}
	if _, err := s.Upload(ctx, refreshed); err != nil || !exists(refreshed) {
		t.Errorf("the upload made again before the sweep was deleted (record error %v, file %v)", err, exists(refreshed))
	}
	if exists(orphan) {
		t.Errorf("the old file without a record was kept")
	}
	if !exists(fresh) || !exists(".upload-123") {
		t.Errorf("fresh file kept %v, temporary kept %v; want both", exists(fresh), exists(".upload-123"))
	}
	if err := s.checkUpload(ctx, "real", named); err != nil {
		t.Errorf("checkUpload(named) after the sweep: %v", err)
	}
	mu.Lock()
	if deleted["upload"] != 1 || deleted["job"] != 0 {
		t.Errorf("OnDelete counted %v; want 1 upload", deleted)
	}
	mu.Unlock()

	// The same bytes uploaded again are a new upload, file and record.
	again := upload(t, s, "old-again.npy", npy(t, []int{2}, []float64{1, 2}))
	if again != old || !exists(old) {
		t.Fatalf("upload again: id %s (want %s), file %v", again, old, exists(old))
	}
	if err := s.checkUpload(ctx, "real", old); err != nil {
		t.Errorf("checkUpload after uploading again: %v", err)
	}
	// A second sweep at once finds nothing more.
	if j, u, err := s.Sweep(ctx); err != nil || j != 0 || u != 0 {
		t.Errorf("second sweep: %d jobs, %d uploads, %v", j, u, err)
	}
}

func TestNegativeRetention(t *testing.T) {
	_, err := New(Config{Store: NewMemStore(), DataDir: t.TempDir(), RetainJobs: -time.Second})
	if err == nil {
		t.Fatal("New with a negative retention period: no error")
	}
}
