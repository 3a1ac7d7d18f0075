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

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/internal/testkit/dbtest"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/msejob"
)

// oneFeatureModel is a check model of the single feature "x".
func oneFeatureModel(t *testing.T) []byte {
	t.Helper()
	fsys := fstest.MapFS{"ref.csv": {Data: csvOf(genRows(400, 0, 1, "ref", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), 400)}}
	req := msejob.NewFitRequest()
	req.Train, req.Target, req.Prediction, req.Features, req.Model = "ref.csv", "y", "pred", []string{"x"}, "check.json"
	res, err := msejob.Fit(context.Background(), job.Env{FS: fsys}, req)
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

// What one store cannot hold is refused on every store with the same
// 4xx naming the field (and the row), before anything is stored: chunk
// sizes over Postgres's 32-bit integer, NUL characters, text that is not
// UTF-8, timestamps outside the int64 nanoseconds the store keeps (2300
// came back as 1715, 0001-01-01 as no timestamp), numbers whose squares
// overflow. Afterwards the monitor's chunks and the dashboard answer.
func TestMonitorInputRefusedAlikeOnEveryStore(t *testing.T) {
	for _, b := range dbtest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b.DSN(t), server.Options{})
			model := json.RawMessage(checkModel(t))
			for _, c := range []struct {
				name  string
				body  any
				field string
			}{
				{"chunk_size 2^31", map[string]any{"name": "a", "model": model, "chunk_size": 1 << 31}, "chunk_size"},
				{"chunk_size 2^40", map[string]any{"name": "a", "model": model, "chunk_size": 1 << 40}, "chunk_size"},
				{"NUL in name", map[string]any{"name": "a\x00b", "model": model, "chunk_size": 10}, "name"},
				{"model reading a column twice", map[string]any{"name": "a", "chunk_size": 10, "model": json.RawMessage(strings.ReplaceAll(string(model), `"noise_feature"`, `"x"`))}, ""},
				{"model not UTF-8", []byte(`{"name":"a","chunk_size":10,"model":` + strings.Replace(string(model), `"pred"`, "\"pred\xff\"", 1) + `}`), "model"},
			} {
				var e struct{ Field string }
				want := 400 // a bad field
				if c.field == "" {
					want = 422 // a bad model file
				}
				if code, raw := ts.call(t, "POST", "/api/v1/monitors", c.body, &e); code != want || e.Field != c.field {
					t.Errorf("create, %s: %d %s; want %d naming %q", c.name, code, raw, want, c.field)
				}
			}
			id := ts.createMonitor(t, "m", map[string]any{"chunk_size": 10})
			daily := ts.createMonitor(t, "daily", map[string]any{"period": "day"})
			row := func(id, ts, x, pred string) string {
				if ts != "" {
					ts = `"timestamp":"` + ts + `",`
				}
				j, _ := json.Marshal(id)
				return fmt.Sprintf(`{"id":%s,%s"features":{"x":%s,"noise_feature":0},"prediction":%s}`, j, ts, x, pred)
			}
			good := row("g", "2026-11-26T10:00:00Z", "1", "2")
			for _, c := range []struct {
				name, row, field string
				monitor          int64
			}{
				{"NUL in id", row("a\x00b", "", "1", "2"), "id", id},
				{"feature 1e308", row("n", "", "1e308", "2"), "features.x", id},
				{"feature -1e200", row("n", "", "-1e200", "2"), "features.x", id},
				{"prediction 1e200", row("n", "", "1", "1e200"), "prediction", id},
				{"year 2300", row("n", "2300-01-01T00:00:00Z", "1", "2"), "timestamp", daily},
				{"year 1600", row("n", "1600-01-01T00:00:00Z", "1", "2"), "timestamp", daily},
				{"0001-01-01", row("n", "0001-01-01T00:00:00Z", "1", "2"), "timestamp", daily},
				{"0001-01-01 by size", row("n", "0001-01-01T00:00:00Z", "1", "2"), "timestamp", id},
				{"one ns after 2262-04-11T23:47:16.854775807Z", row("n", "2262-04-11T23:47:16.854775808Z", "1", "2"), "timestamp", daily},
			} {
				var e struct {
					Error string
					Field string
					Index *int
				}
				body := `{"rows":[` + strings.Replace(good, `"g"`, `"g-`+c.name+`"`, 1) + `,` + c.row + `]}`
				code, raw := ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", c.monitor), body, &e)
				if code != 422 || e.Field != c.field || e.Index == nil || *e.Index != 1 || !strings.Contains(e.Error, "rows[1]") {
					t.Errorf("rows, %s: %d %s; want 422 naming rows[1] and %s", c.name, code, raw, c.field)
				}
			}
			// The extreme times that are kept come back exactly.
			edge := `{"rows":[` + row("lo", "1677-09-21T00:12:43.145224192Z", "1", "2") + `,` + row("hi", "2262-04-11T23:47:16.854775807Z", "1", "2") + `]}`
			if code, raw := ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", daily), edge, nil); code != 200 {
				t.Fatalf("rows at the extreme times: %d %s", code, raw)
			}
			stored, err := ts.db.Rows(context.Background(), daily, 0, 0)
			if err != nil || len(stored) != 2 ||
				!stored[0].Time.Equal(time.Date(1677, 9, 21, 0, 12, 43, 145224192, time.UTC)) ||
				!stored[1].Time.Equal(time.Date(2262, 4, 11, 23, 47, 16, 854775807, time.UTC)) {
				t.Fatalf("stored %+v, %v", stored, err)
			}
			if code, raw := ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", id), `{"rows":[`+good+`]}`, nil); code != 200 {
				t.Fatalf("good row: %d %s", code, raw)
			}
			for _, c := range []struct{ name, label, field string }{
				{"target 1e200", `{"id":"g","target":1e200}`, "target"},
				{"target -1e308", `{"id":"g","target":-1e308}`, "target"},
				{"NUL in id", `{"id":"g\u0000","target":1}`, "id"},
			} {
				var e struct {
					Field string
					Index *int
				}
				code, raw := ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/labels", id), `{"labels":[{"id":"g","target":1},`+c.label+`]}`, &e)
				if code != 422 || e.Field != c.field || e.Index == nil || *e.Index != 1 {
					t.Errorf("labels, %s: %d %s; want 422 naming labels[1] and %s", c.name, code, raw, c.field)
				}
			}
			for _, path := range []string{fmt.Sprintf("/api/v1/monitors/%d/chunks", id), fmt.Sprintf("/api/v1/monitors/%d/chunks", daily), "/api/v1/monitors", "/"} {
				if code, raw := ts.call(t, "GET", path, nil, nil); code != 200 {
					t.Errorf("GET %s: %d %.300s", path, code, raw)
				}
			}
			var got chunks
			ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d/chunks", id), nil, &got)
			if got.Rows != 1 || len(got.Chunks) != 1 || got.Chunks[0].EstimatedMSE == nil || got.Chunks[0].RealizedMSE != nil {
				t.Fatalf("chunks after refused batches: %+v", got)
			}
			// The largest target kept gives a finite realised error.
			if code, raw := ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/labels", id), `{"labels":[{"id":"g","target":-1e100}]}`, nil); code != 200 {
				t.Fatalf("label -1e100: %d %s", code, raw)
			}
			ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d/chunks", id), nil, &got)
			if c := got.Chunks[0]; c.RealizedMSE == nil || *c.RealizedMSE != 1e200 || c.EstimatedMSE == nil {
				t.Fatalf("chunk with the target -1e100: %+v", c)
			}
		})
	}
}

// A period monitor holding a row without a timestamp (0001-01-01 was
// stored as none before timestamps were checked) still answers its
// chunks and the dashboard on every store; Postgres answered 500 until
// the monitor was deleted.
func TestPeriodMonitorWithRowWithoutTime(t *testing.T) {
	for _, b := range dbtest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			ts := newTestServer(t, b.DSN(t), server.Options{Now: func() time.Time { return time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) }})
			id := ts.createMonitor(t, "daily", map[string]any{"period": "day"})
			rows := genRows(60, 0, 5, "r", time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC))
			if code, raw := ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", id), rowsBody(rows, true), nil); code != 200 {
				t.Fatalf("rows: %d %s", code, raw)
			}
			if err := ts.db.InsertRows(context.Background(), id, []records.Row{{ID: "old", Features: []float64{0, 0}, Prediction: 1, Estimate: 1}}); err != nil {
				t.Fatal(err)
			}
			var got chunks
			if code, raw := ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d/chunks", id), nil, &got); code != 200 || got.Rows != 61 || got.Chunks[0].N != 1 {
				t.Fatalf("chunks: %d %.300s", code, raw)
			}
			for _, p := range []string{"/", fmt.Sprintf("/monitors/%d", id), "/api/v1/monitors"} {
				if code, raw := ts.call(t, "GET", p, nil, nil); code != 200 {
					t.Errorf("GET %s: %d %.300s", p, code, raw)
				}
			}
		})
	}
}

// A monitor stored before its model file was refused (a model reading one
// column twice) fails its own requests with the reason, and shows in the
// list and on the dashboard with the reason as a note, beside the others.
func TestMonitorWithRefusedStoredModel(t *testing.T) {
	for _, b := range dbtest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			dsn := b.DSN(t)
			ts := newTestServer(t, dsn, server.Options{})
			ts.createMonitor(t, "good", map[string]any{"chunk_size": 10})
			driver, conn := "sqlite", "file:"+dsn
			if b.Name == "postgres" {
				driver, conn = "pgx", dsn
			}
			raw, err := sql.Open(driver, conn)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			bad := strings.ReplaceAll(string(checkModel(t)), `"noise_feature"`, `"x"`)
			q := fmt.Sprintf("INSERT INTO monitors (name, model, chunk_size, period, created_at) VALUES ('old', '%s', 10, '', %d)",
				strings.ReplaceAll(bad, "'", "''"), time.Now().UnixNano())
			if _, err := raw.Exec(q); err != nil {
				t.Fatal(err)
			}
			var list struct {
				Monitors []struct {
					Name, Note string
					Features   []string
				}
			}
			if code, body := ts.call(t, "GET", "/api/v1/monitors", nil, &list); code != 200 || len(list.Monitors) != 2 ||
				len(list.Monitors[0].Features) != 2 || !strings.Contains(list.Monitors[1].Note, "read twice") {
				t.Fatalf("list: %d %.400s", code, body)
			}
			if code, body := ts.call(t, "GET", "/", nil, nil); code != 200 || !strings.Contains(string(body), "read twice") || !strings.Contains(string(body), `id="monitor-1"`) {
				t.Fatalf("dashboard: %d %.300s", code, body)
			}
			var e struct{ Error string }
			if code, body := ts.call(t, "GET", "/api/v1/monitors/2/chunks", nil, &e); code != 422 || !strings.Contains(e.Error, "read twice") {
				t.Fatalf("chunks: %d %.300s", code, body)
			}
		})
	}
}
