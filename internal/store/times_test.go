package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/store"
	"github.com/genlens/genlens/internal/store/records"
)

// A time the store cannot hold exactly is refused, not wrapped around
// (int64 nanoseconds: 2300 came back as 1715); the extremes it can hold
// come back exactly.
func TestRowTimesStoredExactlyOrRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		m := newMonitor(t, db, "m")
		for _, ts := range []time.Time{
			time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC),
			records.MaxTime.Add(1),
			records.MinTime.Add(-1),
		} {
			r := rows("x", 2, time.Time{})
			r[1].Time = ts
			if err := db.InsertRows(ctx, m.ID, r); err == nil {
				t.Errorf("time %s stored", ts)
			}
		}
		r := rows("x", 2, time.Time{})
		r[0].Time, r[1].Time = records.MinTime, records.MaxTime
		if err := db.InsertRows(ctx, m.ID, r); err != nil {
			t.Fatal(err)
		}
		got, err := db.Rows(ctx, m.ID, 0, 0)
		if err != nil || len(got) != 2 || !got[0].Time.Equal(records.MinTime) || !got[1].Time.Equal(records.MaxTime) {
			t.Fatalf("stored %+v, %v; want the times %s and %s", got, err, records.MinTime, records.MaxTime)
		}
	})
}

// Rows without a timestamp come first in time order on every backend
// (Postgres sorts NULL last, SQLite first), so that a period monitor
// written before timestamps were checked chunks alike on both.
func TestSeriesRowsWithoutTimeFirst(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		m := newMonitor(t, db, "m")
		t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
		r := rows("x", 4, t0)
		r[1].Time, r[3].Time = time.Time{}, time.Time{}
		if err := db.InsertRows(ctx, m.ID, r); err != nil {
			t.Fatal(err)
		}
		s, err := db.Series(ctx, m.ID, true)
		if err != nil {
			t.Fatal(err)
		}
		// Rows 1 and 3 (no time), then 0 and 2; estimates are the row numbers.
		want := []float64{1, 3, 0, 2}
		for i, w := range want {
			if s.Estimates[i] != w || s.Features[i][0] != w || s.Times[i].IsZero() != (i < 2) || !s.Stamps[i].Equal(s.Times[i]) || s.Realized[i] == s.Realized[i] {
				t.Fatalf("row %d of the series: estimate %v, time %s; want the rows in order %v", i, s.Estimates[i], s.Times[i], want)
			}
		}
	})
}
