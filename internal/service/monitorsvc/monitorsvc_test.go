package monitorsvc_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/service/monitorsvc"
	"github.com/genlens/genlens/internal/store"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/internal/tensor/membudget"
	"github.com/genlens/genlens/internal/testkit/dbtest"
	"github.com/genlens/genlens/internal/testkit/msejobtest"
)

// Chunks cuts a size monitor's rows into chunks, the last incomplete
// while it fills, read whole or only its last chunks alike.
func TestChunks(t *testing.T) {
	model := msejobtest.CheckModel(t)
	for _, b := range dbtest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			db, err := store.Open(ctx, b.DSN(t))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			svc := monitorsvc.New(db, nil)
			m := records.Monitor{Name: "m", Model: model, ChunkSize: 10}
			addMonitor(t, svc, &m, toyRows(25))
			all, err := svc.Chunks(ctx, m, 0, 2)
			if err != nil {
				t.Fatal(err)
			}
			if all.Rows != 25 || all.Total != 3 || len(all.Chunks) != 3 || fmt.Sprint(all.Complete) != "[true true false]" {
				t.Fatalf("whole: rows %d, total %d, complete %v", all.Rows, all.Total, all.Complete)
			}
			last, err := svc.Chunks(ctx, m, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			if last.Rows != 25 || last.Total != 3 || len(last.Chunks) < 1 || last.Chunks[len(last.Chunks)-1].Chunk != all.Chunks[2].Chunk || last.Chunks[len(last.Chunks)-1].Estimate != all.Chunks[2].Estimate {
				t.Errorf("last: %+v, want the whole view's last chunk", last)
			}
			sum := all.Summary()
			if sum.Latest != &all.Chunks[1] || sum.Incomplete != &all.Chunks[2] || sum.Recent != 2 {
				t.Errorf("summary %+v", sum)
			}
			bad := records.Monitor{Name: "bad", Model: []byte(`{"format":"other"}`), ChunkSize: 10}
			if err := svc.CreateMonitor(ctx, &bad); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Chunks(ctx, bad, 0, 2); !errors.Is(err, monitorsvc.ErrStoredModel) {
				t.Errorf("a model that does not decode: %v", err)
			}
		})
	}
}

// The features of the latest chunks are priced against the memory
// budget: where fewer chunks fit than asked for, fewer are read, each
// with its drift (an alert depends on it), and when not one fits the
// error says so instead of reading them anyway.
func TestChunksPriceDrift(t *testing.T) {
	model := msejobtest.CheckModel(t)
	ctx := context.Background()
	db, err := store.Open(ctx, dbtest.Backends(t)[0].DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := monitorsvc.New(db, nil)
	m := records.Monitor{Name: "m", Model: model, ChunkSize: 10}
	rows := toyRows(55)
	addMonitor(t, svc, &m, rows)
	all, err := svc.Chunks(ctx, m, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	// rows × features × 8 bytes, and each feature's drift answered
	const perChunk = 10*1*8 + 1*monitorsvc.ChunkFeatureBytes
	for _, c := range []struct {
		limit int64
		want  int // chunks evaluated
	}{{perChunk * 10, 6}, {perChunk * 3, 3}, {perChunk, 1}} {
		prev := membudget.SetLimit(c.limit)
		v, err := svc.Chunks(ctx, m, 6, 6)
		membudget.SetLimit(prev)
		if err != nil {
			t.Fatalf("limit %d: %v", c.limit, err)
		}
		if len(v.Chunks) != c.want {
			t.Errorf("limit %d bytes: %d chunks evaluated, want %d", c.limit, len(v.Chunks), c.want)
			continue
		}
		for i, ch := range v.Chunks {
			w := all.Chunks[len(all.Chunks)-c.want+i]
			if ch.Drift == nil || ch.Index != w.Index || ch.Alert != w.Alert || ch.Drift.Extrapolating != w.Drift.Extrapolating {
				t.Errorf("limit %d bytes, chunk %d: %+v, want the whole view's %+v", c.limit, ch.Index, ch, w)
			}
		}
	}
	// By period: six days of 10 rows, the last one still open.
	p := records.Monitor{Name: "p", Model: model, Period: "day"}
	day0 := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -5)
	for i := range rows {
		rows[i].Time = day0.Add(time.Duration(i/10)*24*time.Hour + time.Duration(i%10)*time.Minute)
	}
	addMonitor(t, svc, &p, rows)
	allP, err := svc.Chunks(ctx, p, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	prev := membudget.SetLimit(perChunk * 3)
	v, err := svc.Chunks(ctx, p, 6, 6)
	membudget.SetLimit(prev)
	if err != nil || len(v.Chunks) != 3 || v.Total != len(allP.Chunks) {
		t.Fatalf("by period, 3 chunks' budget: %v, %d chunks of %d, want 3 of %d", err, len(v.Chunks), v.Total, len(allP.Chunks))
	}
	for i, ch := range v.Chunks {
		w := allP.Chunks[len(allP.Chunks)-3+i]
		if ch.Drift == nil || ch.Index != w.Index || ch.Estimate != w.Estimate || ch.Alert != w.Alert {
			t.Errorf("by period, chunk %d: %+v, want the whole view's %+v", ch.Index, ch, w)
		}
	}

	var over *membudget.Error
	for _, c := range []struct {
		mon   records.Monitor
		limit int64
	}{{m, perChunk - 1}, {p, 5*8 + monitorsvc.ChunkFeatureBytes - 1}} { // p's open day holds 5 rows
		prev := membudget.SetLimit(c.limit)
		_, err := svc.Chunks(ctx, c.mon, 6, 6)
		membudget.SetLimit(prev)
		if !errors.As(err, &over) {
			t.Errorf("%s: a budget below the latest chunk's features: %v, want a *membudget.Error", c.mon.Name, err)
		}
	}
}

// toyRows returns n rows of the toy check model's one feature.
func toyRows(n int) []records.Row {
	rows := make([]records.Row, n)
	for i := range rows {
		rows[i] = records.Row{ID: fmt.Sprint(i), Features: []float64{float64(i) / 25}, Prediction: 1, Estimate: float64(i % 3)}
	}
	return rows
}

// addMonitor creates m and inserts rows into it.
func addMonitor(t *testing.T, svc *monitorsvc.Service, m *records.Monitor, rows []records.Row) {
	t.Helper()
	ctx := context.Background()
	if err := svc.CreateMonitor(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := svc.InsertRows(ctx, m.ID, rows); err != nil {
		t.Fatal(err)
	}
}
