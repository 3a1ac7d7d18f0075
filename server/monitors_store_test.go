package server_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"genlens/internal/dbtest"
	"genlens/job"
	"genlens/server"
)

// oneFeatureModel is a check model of the single feature "x".
func oneFeatureModel(t *testing.T) []byte {
	t.Helper()
	fsys := fstest.MapFS{"ref.csv": {Data: csvOf(genRows(400, 0, 1, "ref", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), 400)}}
	req := job.NewMSEFitRequest()
	req.Train, req.Target, req.Prediction, req.Features, req.Model = "ref.csv", "y", "pred", []string{"x"}, "check.json"
	res, err := job.MSEFit(context.Background(), job.Env{FS: fsys}, req)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := res.WriteModel(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A replica caches a monitor's check model; another replica deletes the
// monitor. Should the id come back (a database that reused ids before
// its migration), the first replica must read the new monitor's model,
// not its cached one.
func TestModelCacheNotStaleAfterIDReuse(t *testing.T) {
	for _, b := range dbtest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			dsn := b.DSN(t)
			a := newTestServer(t, dsn, server.Options{})
			other := newTestServer(t, dsn, server.Options{})
			id := a.createMonitor(t, "m", map[string]any{"chunk_size": 10})
			var v struct{ Features []string }
			if code, raw := a.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d", id), nil, &v); code != 200 || len(v.Features) != 2 {
				t.Fatalf("get: %d %s", code, raw)
			}
			if code, raw := other.call(t, "DELETE", fmt.Sprintf("/api/v1/monitors/%d", id), nil, nil); code != 204 {
				t.Fatalf("delete: %d %s", code, raw)
			}
			// A monitor under the same id, with another model.
			driver, override, conn := "sqlite", "", "file:"+dsn
			if b.Name == "postgres" {
				driver, override, conn = "pgx", "OVERRIDING SYSTEM VALUE", dsn
			}
			raw, err := sql.Open(driver, conn)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			q := fmt.Sprintf("INSERT INTO monitors (id, name, model, chunk_size, period, created_at) %s VALUES (%d, 'm', '%s', 10, '', %d)",
				override, id, strings.ReplaceAll(string(oneFeatureModel(t)), "'", "''"), time.Now().UnixNano())
			if _, err := raw.Exec(q); err != nil {
				t.Fatal(err)
			}
			if code, raw := a.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d", id), nil, &v); code != 200 || len(v.Features) != 1 {
				t.Fatalf("get after the id came back: %d %s; want the new model's one feature", code, raw)
			}
			// Rows of the new model's shape are accepted.
			body := map[string]any{"rows": []map[string]any{{"id": "r", "features": map[string]float64{"x": 1}, "prediction": 2}}}
			if code, raw := a.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", id), body, nil); code != 200 {
				t.Fatalf("rows: %d %s", code, raw)
			}
		})
	}
}

// Rows and labels sent while the monitor is being deleted get 200 or 404,
// never a 500 from the store's foreign key; nothing lands elsewhere.
func TestIngestDuringDelete(t *testing.T) {
	for _, b := range dbtest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b.DSN(t), server.Options{})
			for round := range 6 {
				id := ts.createMonitor(t, "m", map[string]any{"chunk_size": 10})
				var wg sync.WaitGroup
				codes := make(chan string, 64)
				for g := range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for k := range 8 {
							rows := genRows(300, 0, uint64(g*100+k), fmt.Sprintf("g%dk%d-", g, k), time.Time{})
							code, raw := ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", id), rowsBody(rows, false), nil)
							if code != 200 && code != 404 {
								codes <- fmt.Sprintf("rows: %d %s", code, raw)
							}
							code, raw = ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/labels", id), labelsBody(rows[:50]), nil)
							if code != 200 && code != 404 {
								codes <- fmt.Sprintf("labels: %d %s", code, raw)
							}
							if code == 404 {
								return
							}
						}
					}()
				}
				time.Sleep(time.Duration(5+10*round) * time.Millisecond)
				if code, raw := ts.call(t, "DELETE", fmt.Sprintf("/api/v1/monitors/%d", id), nil, nil); code != 204 {
					t.Fatalf("delete: %d %s", code, raw)
				}
				wg.Wait()
				close(codes)
				for c := range codes {
					t.Errorf("round %d: %s", round, c)
				}
				var list struct {
					Monitors []json.RawMessage `json:"monitors"`
				}
				if code, raw := ts.call(t, "GET", "/api/v1/monitors", nil, &list); code != 200 || len(list.Monitors) != 0 {
					t.Fatalf("monitors after delete: %d %s", code, raw)
				}
			}
		})
	}
}
