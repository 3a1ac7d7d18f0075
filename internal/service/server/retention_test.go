package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/store"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

// TestRetention stores jobs and uploads of known ages in a database,
// starts a server with one-hour retention on it, and checks what its
// first sweep (at start) deleted.
func TestRetention(t *testing.T) {
	for _, be := range dbtest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) { testRetention(t, be.DSN(t)) })
	}
}

func testRetention(t *testing.T, dsn string) {
	ctx := context.Background()
	dataDir := t.TempDir()
	uploads := filepath.Join(dataDir, "uploads")
	if err := os.MkdirAll(uploads, 0o755); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	old := now.Add(-3 * time.Hour)

	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	id := func(c string) string { return strings.Repeat(c, 32) + ".npy" }
	// keptByRecent is named by a recent job, keptByRunning by a running
	// one, goneWithJob only by the old job, unnamed by none: all four
	// uploaded three hours ago.
	keptByRecent, keptByRunning, goneWithJob, unnamed := id("a"), id("b"), id("c"), id("d")
	for _, u := range []string{keptByRecent, keptByRunning, goneWithJob, unnamed} {
		if err := os.WriteFile(filepath.Join(uploads, u), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(uploads, u), old, old); err != nil {
			t.Fatal(err)
		}
		if err := db.PutUpload(ctx, records.Upload{ID: u, Name: "f.npy", Size: 1, SHA256: u[:32], Created: old}); err != nil {
			t.Fatal(err)
		}
	}
	// Jobs are claimed in the order they are created.
	add := func(id, upload string, finished time.Time) {
		t.Helper()
		j := records.Job{ID: id, Kind: "stats", Request: []byte(`{"in":"` + upload + `"}`), Status: records.StatusQueued, Created: old}
		if err := db.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.ClaimJob(ctx, "another-replica/0", old); err != nil {
			t.Fatal(err)
		}
		if finished.IsZero() { // still running, its worker beating
			if _, err := db.Touch(ctx, id, "another-replica/0", 1, 2, now); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := db.FinishJob(ctx, id, "another-replica/0", records.Outcome{Status: records.StatusSucceeded, Result: []byte(`{}`)}, finished); err != nil {
			t.Fatal(err)
		}
		if err := db.PutArtifact(ctx, records.Artifact{JobID: id, Name: "t.csv", ContentType: "text/csv", Data: []byte("a\n")}); err != nil {
			t.Fatal(err)
		}
	}
	add("old", goneWithJob, now.Add(-2*time.Hour))
	add("recent", keptByRecent, now.Add(-10*time.Minute))
	add("running", keptByRunning, time.Time{})
	db.Close()

	shared := false // the running job belongs to a live replica
	ts := newTestServer(t, dsn, server.Options{Jobs: server.JobOptions{DataDir: dataDir, Exclusive: &shared,
		RetainJobs: time.Hour, RetainUploads: time.Hour}})

	for _, tc := range []struct {
		path string
		want int
	}{
		{"/api/v1/jobs/old", 404},
		{"/api/v1/jobs/old/artifacts/t.csv", 404},
		{"/api/v1/jobs/recent", 200},
		{"/api/v1/jobs/recent/artifacts/t.csv", 200},
		{"/api/v1/jobs/running", 200},
		{"/api/v1/files/" + keptByRecent, 200},
		{"/api/v1/files/" + keptByRunning, 200},
		{"/api/v1/files/" + goneWithJob, 404},
		{"/api/v1/files/" + unnamed, 404},
	} {
		if code, raw := ts.call(t, "GET", tc.path, nil, nil); code != tc.want {
			t.Errorf("GET %s = %d %s, want %d", tc.path, code, raw, tc.want)
		}
	}
	var running map[string]any
	if ts.call(t, "GET", "/api/v1/jobs/running", nil, &running); running["status"] != "running" {
		t.Errorf("the running job is now %v", running["status"])
	}
	for u, want := range map[string]bool{keptByRecent: true, keptByRunning: true, goneWithJob: false, unnamed: false} {
		if _, err := os.Stat(filepath.Join(uploads, u)); (err == nil) != want {
			t.Errorf("file %s: exists %v, want %v", u, err == nil, want)
		}
	}
	_, raw := ts.call(t, "GET", "/metrics", nil, nil)
	for _, want := range []string{`genlens_retention_deleted_total{kind="job"} 1`, `genlens_retention_deleted_total{kind="upload"} 2`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestNoRetentionByDefault checks that nothing is deleted without the
// options, however old.
func TestNoRetentionByDefault(t *testing.T) {
	ctx := context.Background()
	dsn := dbtest.SQLite(t)
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-24 * 365 * time.Hour)
	if err := db.CreateJob(ctx, records.Job{ID: "ancient", Kind: "stats", Request: []byte(`{}`), Status: records.StatusQueued, Created: long}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CancelJob(ctx, "ancient", "canceled", long); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ts := newTestServer(t, dsn, server.Options{Jobs: server.JobOptions{DataDir: t.TempDir()}})
	if code, raw := ts.call(t, "GET", "/api/v1/jobs/ancient", nil, nil); code != 200 {
		t.Errorf("GET the year-old job = %d %s, want 200", code, raw)
	}
	_, raw := ts.call(t, "GET", "/metrics", nil, nil)
	if !strings.Contains(string(raw), `genlens_retention_deleted_total{kind="job"} 0`) {
		t.Errorf("/metrics lacks the zero retention counter")
	}
}
