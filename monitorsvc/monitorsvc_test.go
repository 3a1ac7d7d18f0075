package monitorsvc_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/genlens/genlens/internal/dbtest"
	"github.com/genlens/genlens/job/msejob/msejobtest"
	"github.com/genlens/genlens/monitorsvc"
	"github.com/genlens/genlens/records"
	"github.com/genlens/genlens/store"
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
			if err := svc.CreateMonitor(ctx, &m); err != nil {
				t.Fatal(err)
			}
			rows := make([]records.Row, 25)
			for i := range rows {
				rows[i] = records.Row{ID: fmt.Sprint(i), Features: []float64{float64(i) / 25}, Prediction: 1, Estimate: float64(i % 3)}
			}
			if err := svc.InsertRows(ctx, m.ID, rows); err != nil {
				t.Fatal(err)
			}
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
