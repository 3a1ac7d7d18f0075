package server

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/store"
)

// A write that fails for want of space is a 507 with Retry-After, not a
// 500, and /healthz reports the disk full for a minute after it.
func TestDiskFull(t *testing.T) {
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := New(context.Background(), Options{Store: db, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	health := func() (int, string) {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		return rec.Code, strings.TrimSpace(rec.Body.String())
	}
	if code, body := health(); code != 200 {
		t.Fatalf("healthz before: %d %s", code, body)
	}
	for _, e := range []error{fmt.Errorf("saving upload: %w", syscall.ENOSPC),
		fmt.Errorf("storing rows: %s", "database or disk is full (13)"),
		fmt.Errorf("storing rows: %s", "ERROR: could not extend file: No space left on device (SQLSTATE 53100)")} {
		rec := httptest.NewRecorder()
		s.writeError(rec, httptest.NewRequest("POST", "/api/v1/files", nil), e)
		if rec.Code != 507 || rec.Header().Get("Retry-After") == "" || strings.Contains(rec.Body.String(), "saving") {
			t.Errorf("%v: %d %q %s; want 507 with Retry-After and no detail", e, rec.Code, rec.Header().Get("Retry-After"), rec.Body)
		}
	}
	if code, body := health(); code != 503 || !strings.Contains(body, `"disk":"full"`) {
		t.Errorf("healthz after a full disk: %d %s", code, body)
	}
	now = now.Add(2 * time.Minute)
	if code, body := health(); code != 200 {
		t.Errorf("healthz two minutes later: %d %s", code, body)
	}
	// Free space below the minimum reports the disk full too.
	s.opts.MinFreeDisk = 1 << 62
	if _, ok := freeBytes(s.dataDir); ok {
		if code, body := health(); code != 503 || !strings.Contains(body, `"disk":"full"`) {
			t.Errorf("healthz with less free space than asked: %d %s", code, body)
		}
	}
}
