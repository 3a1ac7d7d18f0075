package store_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/store"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/internal/store/storetest"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

// forEachBackend runs test against a fresh database of every backend
// (Postgres when GENLENS_TEST_POSTGRES names a reachable server).
func forEachBackend(t *testing.T, test func(t *testing.T, db *store.DB)) {
	for _, b := range dbtest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			db, err := store.Open(context.Background(), b.DSN(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			if db.Backend() != b.Name {
				t.Fatalf("backend %q, want %q", db.Backend(), b.Name)
			}
			test(t, db)
		})
	}
}

func newMonitor(t *testing.T, db *store.DB, name string) *records.Monitor {
	t.Helper()
	m := &records.Monitor{Name: name, Model: []byte(`{"format":"x"}`), ChunkSize: 3}
	if err := db.CreateMonitor(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return m
}

func rows(prefix string, n int, t0 time.Time) []records.Row {
	out := make([]records.Row, n)
	for i := range out {
		out[i] = records.Row{ID: fmt.Sprintf("%s%d", prefix, i), Features: []float64{float64(i), -0.5, math.Pi},
			Prediction: float64(i) / 2, Estimate: float64(i)}
		if !t0.IsZero() {
			out[i].Time = t0.Add(time.Duration(i) * time.Minute)
		}
	}
	return out
}

func TestMigrationsIdempotent(t *testing.T) {
	for _, b := range dbtest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			dsn := b.DSN(t)
			ctx := context.Background()
			for i := range 2 {
				db, err := store.Open(ctx, dsn)
				if err != nil {
					t.Fatalf("open %d: %v", i, err)
				}
				v, err := db.Version(ctx)
				if err != nil || v < 1 {
					t.Fatalf("open %d: version %d, %v", i, v, err)
				}
				if i == 0 {
					newMonitor(t, db, "kept")
				} else if ms, err := db.Monitors(ctx); err != nil || len(ms) != 1 {
					t.Fatalf("reopened: %d monitors, %v; want the one stored", len(ms), err)
				}
				db.Close()
			}
		})
	}
}

func TestMonitors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		a := newMonitor(t, db, "alpha")
		if a.ID == 0 || a.Created.IsZero() {
			t.Fatalf("created %+v: no id or time", a)
		}
		err := db.CreateMonitor(ctx, &records.Monitor{Name: "alpha", Model: []byte("{}"), Period: "day"})
		if !errors.Is(err, records.ErrConflict) {
			t.Fatalf("second monitor named alpha: %v, want ErrConflict", err)
		}
		b := &records.Monitor{Name: "beta", Model: []byte(`{"m":1}`), Period: "day"}
		if err := db.CreateMonitor(ctx, b); err != nil {
			t.Fatal(err)
		}
		got, err := db.Monitor(ctx, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "beta" || string(got.Model) != `{"m":1}` || got.Period != "day" || got.ChunkSize != 0 || got.Rows != 0 {
			t.Fatalf("read back %+v", got)
		}
		if _, err := db.Monitor(ctx, 9999); !errors.Is(err, records.ErrNotFound) {
			t.Fatalf("missing monitor: %v, want ErrNotFound", err)
		}
		ms, err := db.Monitors(ctx)
		if err != nil || len(ms) != 2 || ms[0].Name != "alpha" || ms[1].Name != "beta" {
			t.Fatalf("monitors %v, %v", ms, err)
		}
		// Deleting one takes its rows and frees its name.
		if err := db.InsertRows(ctx, a.ID, rows("r", 5, time.Time{})); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteMonitor(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteMonitor(ctx, a.ID); !errors.Is(err, records.ErrNotFound) {
			t.Fatalf("second delete: %v, want ErrNotFound", err)
		}
		if s, err := db.Series(ctx, a.ID, false); err != nil || len(s.Estimates) != 0 {
			t.Fatalf("rows of a deleted monitor: %d, %v", len(s.Estimates), err)
		}
		again := &records.Monitor{Name: "alpha", Model: []byte("{}"), ChunkSize: 2}
		if err := db.CreateMonitor(ctx, again); err != nil || again.ID == a.ID {
			t.Fatalf("name of a deleted monitor: %v (id %d, old %d)", err, again.ID, a.ID)
		}
	})
}

func TestInsertRowsAllOrNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		m := newMonitor(t, db, "m")
		other := newMonitor(t, db, "other")
		if err := db.InsertRows(ctx, m.ID, rows("r", 3, time.Time{})); err != nil {
			t.Fatal(err)
		}
		// The same ids in another monitor are fine.
		if err := db.InsertRows(ctx, other.ID, rows("r", 3, time.Time{})); err != nil {
			t.Fatalf("same ids, other monitor: %v", err)
		}
		// A batch larger than one INSERT statement whose duplicate is in
		// its second statement: nothing of it stored.
		batch := rows("b", 1200, time.Time{})
		batch[1100].ID = "r2"
		err := db.InsertRows(ctx, m.ID, batch)
		var de *records.DuplicateError
		if !errors.As(err, &de) || de.Index != 1100 || de.ID != "r2" {
			t.Fatalf("duplicate batch: %v, want DuplicateError at 1100 for r2", err)
		}
		got := counted(t, db, m.ID)
		if got.Rows != 3 {
			t.Fatalf("%d rows after a failed batch, want 3", got.Rows)
		}
		batch[1100].ID = "b1100"
		if err := db.InsertRows(ctx, m.ID, batch); err != nil {
			t.Fatal(err)
		}
		got = counted(t, db, m.ID)
		if got.Rows != 1203 {
			t.Fatalf("%d rows, want 1203", got.Rows)
		}
		stored, err := db.Rows(ctx, m.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range stored {
			want := batch[max(0, i-3)]
			if i < 3 {
				want = rows("r", 3, time.Time{})[i]
			}
			if r.ID != want.ID || r.Prediction != want.Prediction || r.Estimate != want.Estimate ||
				len(r.Features) != 3 || r.Features[2] != math.Pi || r.Features[0] != want.Features[0] || !math.IsNaN(r.Target) || !r.Time.IsZero() {
				t.Fatalf("row %d: %+v, want %+v unlabelled", i, r, want)
			}
		}
	})
}

func TestLabels(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		m := newMonitor(t, db, "m")
		if err := db.InsertRows(ctx, m.ID, rows("r", 4, time.Time{})); err != nil {
			t.Fatal(err)
		}
		// Predictions are i/2: r1 predicted 0.5, r3 1.5.
		if err := db.SetLabels(ctx, m.ID, []records.Label{{ID: "r1", Target: 2.5}, {ID: "r3", Target: 1}}); err != nil {
			t.Fatal(err)
		}
		err := db.SetLabels(ctx, m.ID, []records.Label{{ID: "r0", Target: 7}, {ID: "nope", Target: 1}})
		var ue *records.UnknownRowError
		if !errors.As(err, &ue) || ue.Index != 1 || ue.ID != "nope" {
			t.Fatalf("unknown id: %v, want UnknownRowError at 1", err)
		}
		s, err := db.Series(ctx, m.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		want := []float64{math.NaN(), 4, math.NaN(), 0.25} // (2.5-0.5)², (1-1.5)²; r0's label rolled back
		for i := range want {
			if s.Estimates[i] != float64(i) || !same(s.Realized[i], want[i]) {
				t.Fatalf("series %d: estimate %v realised %v, want %d, %v", i, s.Estimates[i], s.Realized[i], i, want[i])
			}
		}
		// A corrected label replaces the first.
		if err := db.SetLabels(ctx, m.ID, []records.Label{{ID: "r1", Target: 0.5}}); err != nil {
			t.Fatal(err)
		}
		s, _ = db.Series(ctx, m.ID, false)
		if s.Realized[1] != 0 {
			t.Fatalf("corrected label: realised %v, want 0", s.Realized[1])
		}
		got := counted(t, db, m.ID)
		if got.Labelled != 2 {
			t.Fatalf("labelled %d, want 2", got.Labelled)
		}
	})
}

// counted reads a monitor with its row counts.
func counted(t *testing.T, db *store.DB, id int64) *records.Monitor {
	t.Helper()
	m, err := db.Monitor(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows != 0 || m.Labelled != 0 {
		t.Fatalf("Monitor counted rows: %+v", m)
	}
	if err := db.Counts(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return m
}

func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

func TestSeriesByTime(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		m := newMonitor(t, db, "m")
		t0 := time.Date(2026, 11, 23, 10, 0, 0, 123456789, time.UTC)
		late := rows("late", 2, t0.Add(-time.Hour)) // arrives second, happened first
		if err := db.InsertRows(ctx, m.ID, rows("r", 2, t0)); err != nil {
			t.Fatal(err)
		}
		if err := db.InsertRows(ctx, m.ID, late); err != nil {
			t.Fatal(err)
		}
		s, err := db.Series(ctx, m.ID, true)
		if err != nil {
			t.Fatal(err)
		}
		want := []time.Time{t0.Add(-time.Hour), t0.Add(-time.Hour + time.Minute), t0, t0.Add(time.Minute)}
		for i, w := range want {
			if !s.Times[i].Equal(w) {
				t.Fatalf("time %d: %v, want %v", i, s.Times[i], w)
			}
		}
		if s2, _ := db.Series(ctx, m.ID, false); s2.Times != nil || len(s2.Estimates) != 4 {
			t.Fatalf("arrival order carries times %v", s2.Times)
		}
	})
}

// Concurrent batches from many clients are all stored, each once.
func TestConcurrentInserts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		m := newMonitor(t, db, "m")
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for c := range 16 {
			wg.Go(func() {
				for b := range 5 {
					if err := db.InsertRows(ctx, m.ID, rows(fmt.Sprintf("c%d-b%d-", c, b), 50, time.Time{})); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		got := counted(t, db, m.ID)
		if got.Rows != 16*5*50 {
			t.Fatalf("%d rows, want %d", got.Rows, 16*5*50)
		}
	})
}

// The job runner's contract (records/storetest) on both backends.
func TestJobStore(t *testing.T) {
	for _, b := range dbtest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) records.Store {
				db, err := store.Open(context.Background(), b.DSN(t))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return db
			})
		})
	}
}

func TestLastChunk(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		m := newMonitor(t, db, "m")
		if n, s, err := db.LastChunk(ctx, m.ID, 3); err != nil || n != 0 || len(s.Estimates) != 0 {
			t.Fatalf("empty monitor: %d rows, %v, %v", n, s, err)
		}
		if err := db.InsertRows(ctx, m.ID, rows("r", 7, time.Time{})); err != nil { // estimates 0..6
			t.Fatal(err)
		}
		db.SetLabels(ctx, m.ID, []records.Label{{ID: "r6", Target: 4}}) // prediction 3
		for _, c := range []struct{ size, first, k int }{{3, 6, 1}, {7, 0, 7}, {2, 6, 1}, {4, 4, 3}, {100, 0, 7}} {
			n, s, err := db.LastChunk(ctx, m.ID, c.size)
			if err != nil || n != 7 || len(s.Estimates) != c.k || s.Estimates[0] != float64(c.first) || s.Realized[c.k-1] != 1 {
				t.Errorf("size %d: %d rows, last chunk %v %v, %v; want %d rows from estimate %d, realised 1 last", c.size, n, s.Estimates, s.Realized, err, c.k, c.first)
			}
		}
	})
}

// LastChunks reads the rows of the last k chunks in order, the features
// of the last withFeatures chunks only.
func TestLastChunks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		m := newMonitor(t, db, "m")
		if err := db.InsertRows(ctx, m.ID, rows("r", 11, time.Time{})); err != nil { // estimates 0..10
			t.Fatal(err)
		}
		full, err := db.Series(ctx, m.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ size, k, feat, first, featFrom int }{
			{3, 3, 2, 3, 6},  // chunks 1-3 (rows 3-10), features of chunks 2-3 (rows 6-10)
			{3, 10, 1, 0, 9}, // every chunk, features of the last (rows 9-10)
			{4, 2, 2, 4, 4},  // chunks 1-2 (rows 4-10), all with features
			{11, 5, 2, 0, 0}, // one chunk
			{5, 2, 5, 5, 5},  // more chunks with features than read
		} {
			n, s, err := db.LastChunks(ctx, m.ID, c.size, c.k, c.feat)
			if err != nil || n != 11 || len(s.Estimates) != 11-c.first || len(s.Features) != len(s.Estimates) {
				t.Fatalf("%+v: %d rows, %d estimates, %d feature rows, %v", c, n, len(s.Estimates), len(s.Features), err)
			}
			for i := range s.Estimates {
				row := c.first + i
				if s.Estimates[i] != full.Estimates[row] {
					t.Errorf("%+v: estimate %d is %v, want %v", c, i, s.Estimates[i], full.Estimates[row])
				}
				if has := s.Features[i] != nil; has != (row >= c.featFrom) {
					t.Errorf("%+v: row %d has features %v", c, row, s.Features[i])
				}
			}
		}
	})
}
