package store_test

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/store"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

// Ids are never reused: deleting the newest monitor must not hand its id
// to the next one, or rows a client still sends for the deleted monitor
// land in the new one.
func TestMonitorIDsNeverReused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		seen := map[int64]bool{}
		for i := range 4 {
			m := newMonitor(t, db, "m")
			if seen[m.ID] {
				t.Fatalf("round %d: monitor got id %d, which a deleted monitor had", i, m.ID)
			}
			seen[m.ID] = true
			if err := db.DeleteMonitor(ctx, m.ID); err != nil {
				t.Fatal(err)
			}
			// Rows sent for the deleted monitor find no monitor.
			if err := db.InsertRows(ctx, m.ID, rows("late", 2, time.Time{})); !errors.Is(err, records.ErrNotFound) {
				t.Fatalf("rows for deleted monitor %d: %v, want ErrNotFound", m.ID, err)
			}
			if err := db.SetLabels(ctx, m.ID, []records.Label{{ID: "r0", Target: 1}}); !errors.Is(err, records.ErrNotFound) {
				t.Fatalf("labels for deleted monitor %d: %v, want ErrNotFound", m.ID, err)
			}
		}
	})
}

// The same holds for the proxied LLM requests, whose ids the API lists.
func TestLLMRequestIDsNeverReused(t *testing.T) {
	for _, b := range dbtest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.DSN(t)
			db, err := store.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			r := records.LLMRequest{Model: "m", Score: "kernel-entropy", Status: 200}
			if err := db.InsertLLMRequest(ctx, &r); err != nil {
				t.Fatal(err)
			}
			first := r.ID
			raw := rawDB(t, b.Name, dsn)
			if _, err := raw.ExecContext(ctx, "DELETE FROM llm_requests"); err != nil {
				t.Fatal(err)
			}
			r = records.LLMRequest{Model: "m", Score: "kernel-entropy", Status: 200}
			if err := db.InsertLLMRequest(ctx, &r); err != nil {
				t.Fatal(err)
			}
			if r.ID <= first {
				t.Fatalf("request after deleting id %d got id %d", first, r.ID)
			}
		})
	}
}

// rawDB opens the database of dsn with database/sql directly, for what
// the store's API does not do (old schemas, direct deletes).
func rawDB(t *testing.T, backend, dsn string) *sql.DB {
	t.Helper()
	driver := "sqlite"
	if backend == "postgres" {
		driver = "pgx"
	} else {
		dsn = "file:" + dsn + "?_pragma=foreign_keys(1)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// A database made by the migrations up to 0005, where the newest monitor
// was deleted, is migrated keeping every monitor, row, label and LLM
// request with its id; after it, no id is reused, and the rows still
// belong to their monitor (deleting it takes them, rows for a missing
// monitor are refused).
func TestMigrationKeepsDataAndStopsIDReuse(t *testing.T) {
	for _, b := range dbtest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.DSN(t)
			raw := rawDB(t, b.Name, dsn)
			files, err := filepath.Glob(filepath.Join("migrations", b.Name, "*.sql"))
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(files)
			if _, err := raw.ExecContext(ctx, "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)"); err != nil {
				t.Fatal(err)
			}
			for i, f := range files {
				if i+1 > 5 {
					break
				}
				sqlText, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := raw.ExecContext(ctx, string(sqlText)); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if _, err := raw.ExecContext(ctx, ph(b.Name, "INSERT INTO schema_migrations VALUES (?, ?, 0)"), i+1, filepath.Base(f)); err != nil {
					t.Fatal(err)
				}
			}
			for _, q := range []string{
				"INSERT INTO monitors (name, model, chunk_size, period, created_at) VALUES ('a', '{}', 3, '', 1), ('b', '{}', 0, 'day', 2), ('c', '{}', 3, '', 3)",
				"INSERT INTO monitor_rows (monitor_id, row_id, ts, features, prediction, estimate, target, realized) SELECT id, 'r1', NULL, " + blob(b.Name) + ", 1, 2, 3, 4 FROM monitors",
				"INSERT INTO llm_requests (created_at, model, messages_hash, answer, status, score, samples, upstream_seconds, sample_seconds, total_seconds) VALUES (1, 'm', 'h', 'a', 200, 's', 5, 0, 0, 0)",
				"DELETE FROM monitors WHERE name = 'c'",
			} {
				if _, err := raw.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			var maxID int64
			if err := raw.QueryRowContext(ctx, "SELECT MAX(id) FROM monitors").Scan(&maxID); err != nil {
				t.Fatal(err)
			}
			raw.Close()

			db, err := store.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if v, err := db.Version(ctx); err != nil || v < 6 {
				t.Fatalf("version %d, %v", v, err)
			}
			ms, err := db.Monitors(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) != 2 || ms[0].Name != "a" || ms[1].Name != "b" || ms[1].ID != maxID || ms[1].Period != "day" {
				t.Fatalf("monitors after the migration: %+v", ms)
			}
			for _, m := range ms {
				got, err := db.Rows(ctx, m.ID, 0, 0)
				if err != nil || len(got) != 1 || got[0].ID != "r1" || got[0].Target != 3 || got[0].Realized != 4 || len(got[0].Features) != 1 {
					t.Fatalf("monitor %s's rows after the migration: %+v, %v", m.Name, got, err)
				}
			}
			if rs, err := db.LLMRequests(ctx, records.LLMQuery{MinUncertainty: math.NaN()}); err != nil || len(rs) != 1 || rs[0].Samples != 5 {
				t.Fatalf("llm requests after the migration: %+v, %v", rs, err)
			}
			// The newest monitor deleted, the next one takes a new id.
			if err := db.DeleteMonitor(ctx, ms[1].ID); err != nil {
				t.Fatal(err)
			}
			m := newMonitor(t, db, "d")
			if m.ID <= maxID {
				t.Fatalf("new monitor got id %d, at most the deleted %d", m.ID, maxID)
			}
			// The rows' reference still holds: rows for a missing
			// monitor are refused.
			if err := db.InsertRows(ctx, maxID, rows("x", 1, time.Time{})); !errors.Is(err, records.ErrNotFound) {
				t.Fatalf("rows for a deleted monitor after the migration: %v, want ErrNotFound", err)
			}
			if err := db.InsertRows(ctx, m.ID, rows("x", 1, time.Time{})); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// ph numbers ? placeholders for Postgres.
func ph(backend, q string) string {
	if backend != "postgres" {
		return q
	}
	for n := 1; strings.Contains(q, "?"); n++ {
		q = strings.Replace(q, "?", "$"+string(rune('0'+n)), 1)
	}
	return q
}

// blob is the SQL literal of one float64 0 of features.
func blob(backend string) string {
	if backend == "postgres" {
		return `'\x0000000000000000'::bytea`
	}
	return "x'0000000000000000'"
}
