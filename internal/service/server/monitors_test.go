package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/msejob"
)

// agree reports whether a and b agree to 1e-9 relative (both absent
// counts as agreeing).
func agree(a *float64, b jsonnum.Num) bool {
	bv := float64(b)
	if a == nil {
		return math.IsNaN(bv)
	}
	return math.Abs(*a-bv) <= 1e-9*math.Max(1, math.Abs(bv))
}

// The service's chunks are those `genlens mse estimate --json` computes
// on the same rows and labels: every estimate, band, alert and realised
// MSE, chunked by size and by period, on every store backend.
func TestChunksMatchMSEEstimate(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	rows := genRows(230, 1.2, 2, "r", t0) // drifted: some chunks alert
	const labelled = 70
	fsys := fstest.MapFS{"check.json": {Data: checkModel(t)}, "op.csv": {Data: csvOf(rows, labelled)}}
	for _, b := range dbtest.Backends(t) {
		for _, mode := range []string{"size", "period"} {
			t.Run(b.Name+"/"+mode, func(t *testing.T) {
				ts := newTestServer(t, b.DSN(t), server.Options{Now: func() time.Time { return t0.AddDate(0, 1, 0) }})
				req := msejob.NewEstimateRequest()
				req.Model, req.Data, req.Target = "check.json", "op.csv", "y"
				extra := map[string]any{}
				if mode == "size" {
					req.ChunkSize, extra["chunk_size"] = 50, 50
				} else {
					req.Timestamp, req.Period, extra["period"] = "ts", "day", "day"
				}
				want, err := msejob.Estimate(context.Background(), job.Env{FS: fsys}, req)
				if err != nil {
					t.Fatal(err)
				}
				id := ts.createMonitor(t, "m", extra)
				// Rows in batches of 100, labels of the first rows after.
				for s := 0; s < len(rows); s += 100 {
					var acc map[string]int
					code, raw := ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", id), rowsBody(rows[s:min(s+100, len(rows))], mode == "period"), &acc)
					if code != 200 || acc["accepted"] != min(100, len(rows)-s) {
						t.Fatalf("rows: %d %s", code, raw)
					}
				}
				if code, raw := ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/labels", id), labelsBody(rows[:labelled]), nil); code != 200 {
					t.Fatalf("labels: %d %s", code, raw)
				}
				var got chunks
				code, raw := ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d/chunks", id), nil, &got)
				if code != 200 {
					t.Fatalf("chunks: %d %s", code, raw)
				}
				sameKeys(t, raw, want)
				if len(got.Chunks) != len(want.Chunks) || got.Rows != len(rows) {
					t.Fatalf("%d chunks of %d rows, want %d of %d", len(got.Chunks), got.Rows, len(want.Chunks), len(rows))
				}
				if !agree(got.LowerThreshold, want.LowerThreshold) || !agree(got.UpperThreshold, want.UpperThreshold) {
					t.Fatalf("thresholds [%v, %v], want [%v, %v]", *got.LowerThreshold, *got.UpperThreshold, want.LowerThreshold, want.UpperThreshold)
				}
				alerts, withRealized := 0, 0
				for i, g := range got.Chunks {
					w := want.Chunks[i]
					if g.Index != w.Index || g.Start != w.Start || g.End != w.End || g.N != w.Rows || g.Rows != w.Rows || g.Period != w.Period || g.Alert != w.Alert ||
						!agree(g.EstimatedMSE, w.EstimatedMSE) || !agree(g.SamplingError, w.SamplingError) || !agree(g.Lower, w.Lower) || !agree(g.Upper, w.Upper) || !agree(g.RealizedMSE, w.RealizedMSE) ||
						g.Labelled == nil || w.Labelled == nil || *g.Labelled != *w.Labelled {
						gj, _ := json.Marshal(g)
						wj, _ := json.Marshal(w)
						t.Fatalf("chunk %d:\n got %s\nwant %s", i, gj, wj)
					}
					// 230 rows by 50 leave an incomplete last chunk; the clock
					// is past the last day.
					wantComplete := mode == "period" || i < len(got.Chunks)-1
					if g.Complete == nil || *g.Complete != wantComplete {
						t.Fatalf("chunk %d: complete %v, want %v", i, g.Complete, wantComplete)
					}
					if g.Alert {
						alerts++
					}
					if g.RealizedMSE != nil {
						withRealized++
					}
				}
				// Guard against a vacuous comparison.
				if mode == "size" && (alerts == 0 || withRealized == 0 || withRealized == len(got.Chunks)) {
					t.Fatalf("%d alerts, %d chunks with labels of %d: the data no longer exercise alerts and partial labels", alerts, withRealized, len(got.Chunks))
				}
			})
		}
	}
}

// sameKeys checks that the chunks of raw, an answer of GET .../chunks,
// have the keys of want's, `mse estimate --json`'s, and complete, which
// only a monitor's chunks have: both are monitor.ChunkView.
func sameKeys(t *testing.T, raw []byte, want *msejob.EstimateResult) {
	t.Helper()
	var got struct{ Chunks []map[string]json.RawMessage }
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var est struct{ Chunks []map[string]json.RawMessage }
	if err := json.Unmarshal(b, &est); err != nil {
		t.Fatal(err)
	}
	for i, g := range got.Chunks {
		keys := slices.Sorted(maps.Keys(est.Chunks[i]))
		if _, ok := est.Chunks[i]["complete"]; !ok {
			keys = append(keys, "complete")
			slices.Sort(keys)
		}
		if have := slices.Sorted(maps.Keys(g)); !slices.Equal(have, keys) {
			t.Fatalf("chunk %d: keys\n%v\nwant those of mse estimate --json and complete:\n%v", i, have, keys)
		}
	}
}

// The last chunk is listed while it fills, with "complete": false; its
// realised MSE is null until a label of it arrives.
func TestIncompleteLastChunk(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	rows := genRows(25, 0, 3, "r", t0)
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	id := ts.createMonitor(t, "sized", map[string]any{"chunk_size": 10})
	ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", id), rowsBody(rows, true), nil)
	var got chunks
	ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d/chunks", id), nil, &got)
	if len(got.Chunks) != 3 {
		t.Fatalf("%d chunks, want 3", len(got.Chunks))
	}
	last := got.Chunks[2]
	if last.N != 5 || last.Start != 20 || last.End != 25 || last.Complete == nil || *last.Complete || last.EstimatedMSE == nil || last.RealizedMSE != nil {
		t.Fatalf("last chunk %+v: want 5 rows, incomplete, estimated, realised null", last)
	}
	if !*got.Chunks[0].Complete || got.Chunks[0].RealizedMSE != nil {
		t.Fatalf("first chunk %+v: want complete, realised null", got.Chunks[0])
	}
	// A label of the last chunk fills its realised MSE: (y - f)².
	ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/labels", id), labelsBody(rows[22:23]), nil)
	ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d/chunks", id), nil, &got)
	r := rows[22]
	if want := (r.Y - r.Pred) * (r.Y - r.Pred); !agree(got.Chunks[2].RealizedMSE, jsonnum.Num(want)) {
		t.Fatalf("realised %v, want %v", got.Chunks[2].RealizedMSE, want)
	}

	// By period: the current day is incomplete while the clock is in it.
	now := t0.Add(14 * time.Hour) // 25 rows 37 min apart end at 24:48 (the next day)
	ts2 := newTestServer(t, dbtest.SQLite(t), server.Options{Now: func() time.Time { return now }})
	id = ts2.createMonitor(t, "daily", map[string]any{"period": "day"})
	ts2.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", id), rowsBody(rows, true), nil)
	ts2.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d/chunks", id), nil, &got)
	if len(got.Chunks) != 2 || got.Chunks[1].Period != "2026-11-24" || *got.Chunks[1].Complete || !*got.Chunks[0].Complete {
		t.Fatalf("daily chunks %+v: want 2026-11-23 complete, 2026-11-24 not", got.Chunks)
	}
}

// A bad row fails its whole batch with a 422 naming the row and field,
// and nothing of the batch is stored.
func TestRowsRefused(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	id := ts.createMonitor(t, "m", map[string]any{"chunk_size": 10})
	daily := ts.createMonitor(t, "daily", map[string]any{"period": "day"})
	path := fmt.Sprintf("/api/v1/monitors/%d/rows", id)
	rows := genRows(5, 0, 4, "r", time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	if code, raw := ts.call(t, "POST", path, rowsBody(rows[:2], false), nil); code != 200 {
		t.Fatalf("first batch: %d %s", code, raw)
	}
	good := `{"id":"n1","features":{"x":1,"noise_feature":0},"prediction":2}`
	for _, c := range []struct {
		name, path, row  string
		code, index      int
		field, id, inMsg string
	}{
		{"missing column", path, `{"id":"n2","features":{"x":1},"prediction":2}`, 422, 1, "features.noise_feature", "n2", "missing"},
		{"extra column", path, `{"id":"n2","features":{"x":1,"noise_feature":0,"z":3},"prediction":2}`, 422, 1, "features.z", "n2", "not a feature"},
		{"NaN feature", path, `{"id":"n2","features":{"x":"NaN","noise_feature":0},"prediction":2}`, 422, 1, "features.x", "n2", "not a finite number"},
		{"null prediction", path, `{"id":"n2","features":{"x":1,"noise_feature":0},"prediction":null}`, 422, 1, "prediction", "n2", "not a finite number"},
		{"missing prediction", path, `{"id":"n2","features":{"x":1,"noise_feature":0}}`, 422, 1, "prediction", "n2", "missing"},
		{"huge number", path, `{"id":"n2","features":{"x":1e999,"noise_feature":0},"prediction":1}`, 422, 1, "features.x", "n2", "not a finite number"},
		{"duplicate in batch", path, `{"id":"n1","features":{"x":1,"noise_feature":0},"prediction":2}`, 422, 1, "id", "n1", "repeats rows[0]"},
		{"duplicate of a stored row", path, `{"id":"r1","features":{"x":1,"noise_feature":0},"prediction":2}`, 422, 1, "id", "r1", "stored already"},
		{"missing id", path, `{"features":{"x":1,"noise_feature":0},"prediction":2}`, 422, 1, "id", "", "missing"},
		{"bad timestamp", path, `{"id":"n2","timestamp":"yesterday","features":{"x":1,"noise_feature":0},"prediction":2}`, 422, 1, "timestamp", "n2", "RFC 3339"},
		{"no timestamp by period", fmt.Sprintf("/api/v1/monitors/%d/rows", daily), `{"id":"n2","features":{"x":1,"noise_feature":0},"prediction":2}`, 422, 0, "timestamp", "n1", "missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var e struct {
				Error string `json:"error"`
				Field string `json:"field"`
				Index *int   `json:"index"`
				ID    string `json:"id"`
			}
			code, raw := ts.call(t, "POST", c.path, `{"rows":[`+good+`,`+c.row+`]}`, &e)
			if code != c.code || e.Index == nil || *e.Index != c.index || e.Field != c.field || e.ID != c.id || !strings.Contains(e.Error, c.inMsg) {
				t.Fatalf("got %d %s; want %d naming rows[%d] field %s id %q, message with %q", code, raw, c.code, c.index, c.field, c.id, c.inMsg)
			}
		})
	}
	var m struct{ Rows int }
	ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d", id), nil, &m)
	if m.Rows != 2 {
		t.Fatalf("%d rows stored after refused batches, want 2", m.Rows)
	}
	var dm struct{ Rows int }
	ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d", daily), nil, &dm)
	if dm.Rows != 0 {
		t.Fatalf("%d rows stored in the daily monitor, want 0", dm.Rows)
	}
	// Malformed documents are the request's fault: 400.
	for _, body := range []string{`{"rows":[`, `{"rows":[], "extra":1}`, `{"rows":[]}`, `{"rows":[{"id":"a","features":{"x":1,"noise_feature":0},"prediction":1,"target":3}]}`, `{"rows":[]} {}`} {
		if code, raw := ts.call(t, "POST", path, body, nil); code != 400 {
			t.Errorf("%s: %d %s, want 400", body, code, raw)
		}
	}
}

func TestLabelsRefused(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	id := ts.createMonitor(t, "m", map[string]any{"chunk_size": 10})
	rows := genRows(3, 0, 4, "r", time.Time{})
	ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", id), rowsBody(rows, false), nil)
	path := fmt.Sprintf("/api/v1/monitors/%d/labels", id)
	for _, c := range []struct{ body, field, id string }{
		{`{"labels":[{"id":"r0","target":1},{"id":"zz","target":1}]}`, "id", "zz"},
		{`{"labels":[{"id":"r0","target":1},{"id":"r1","target":"NaN"}]}`, "target", "r1"},
		{`{"labels":[{"id":"r0","target":1},{"id":"r0","target":2}]}`, "id", "r0"},
		{`{"labels":[{"id":"r0","target":1},{"id":"r1"}]}`, "target", "r1"},
	} {
		var e struct {
			Field string `json:"field"`
			ID    string `json:"id"`
			Index *int   `json:"index"`
		}
		if code, raw := ts.call(t, "POST", path, c.body, &e); code != 422 || e.Field != c.field || e.ID != c.id || e.Index == nil || *e.Index != 1 {
			t.Errorf("%s: %d %s, want 422 naming labels[1] field %s id %s", c.body, code, raw, c.field, c.id)
		}
	}
	var m struct{ Labelled int }
	ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d", id), nil, &m)
	if m.Labelled != 0 {
		t.Fatalf("%d labels stored after refused batches, want 0", m.Labelled)
	}
}

func TestCreateMonitorRefused(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	ts.createMonitor(t, "taken", map[string]any{"chunk_size": 10})
	model := json.RawMessage(checkModel(t))
	for _, c := range []struct {
		body  any
		code  int
		field string
	}{
		{map[string]any{"name": "taken", "model": model, "chunk_size": 5}, 409, ""},
		{map[string]any{"name": "a", "model": model}, 400, "chunk_size"},
		{map[string]any{"name": "a", "model": model, "chunk_size": 5, "period": "day"}, 400, "chunk_size"},
		{map[string]any{"name": "a", "model": model, "period": "fortnight"}, 400, "period"},
		{map[string]any{"name": "a", "model": model, "chunk_size": -1}, 400, "chunk_size"},
		{map[string]any{"name": "", "model": model, "chunk_size": 5}, 400, "name"},
		{map[string]any{"name": "a", "chunk_size": 5}, 400, "model"},
		{map[string]any{"name": "a", "model": map[string]any{"format": "other"}, "chunk_size": 5}, 422, ""},
		{map[string]any{"name": "a", "model": model, "chunk_size": 5, "chunksize": 5}, 400, "chunksize"},
	} {
		var e struct {
			Error string `json:"error"`
			Field string `json:"field"`
		}
		if code, raw := ts.call(t, "POST", "/api/v1/monitors", c.body, &e); code != c.code || e.Field != c.field || e.Error == "" {
			t.Errorf("%v: %d %s, want %d field %q", c.body, code, raw, c.code, c.field)
		}
	}
	for _, p := range []string{"/api/v1/monitors/99", "/api/v1/monitors/x/chunks", "/api/v1/monitors/0/rows"} {
		method := "GET"
		if strings.HasSuffix(p, "rows") {
			method = "POST"
		}
		if code, raw := ts.call(t, method, p, `{"rows":[]}`, nil); code != 404 {
			t.Errorf("%s %s: %d %s, want 404", method, p, code, raw)
		}
	}
}

func TestDeleteMonitor(t *testing.T) {
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	id := ts.createMonitor(t, "gone", map[string]any{"chunk_size": 10})
	ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", id), rowsBody(genRows(15, 0, 1, "r", time.Time{}), false), nil)
	if code, raw := ts.call(t, "DELETE", fmt.Sprintf("/api/v1/monitors/%d", id), nil, nil); code != 204 {
		t.Fatalf("delete: %d %s", code, raw)
	}
	for _, p := range []string{"", "/chunks"} {
		if code, _ := ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d%s", id, p), nil, nil); code != 404 {
			t.Errorf("GET %s after delete: %d, want 404", p, code)
		}
	}
	if code, _ := ts.call(t, "DELETE", fmt.Sprintf("/api/v1/monitors/%d", id), nil, nil); code != 404 {
		t.Errorf("second delete: %d, want 404", code)
	}
	if _, raw := ts.call(t, "GET", "/metrics", nil, nil); strings.Contains(string(raw), `monitor="gone"`) {
		t.Errorf("metrics still report the deleted monitor")
	}
	ts.createMonitor(t, "gone", map[string]any{"chunk_size": 10}) // the name is free again
}

// A monitor created from a model file written before the drift model
// existed works as before: chunks without the drift keys, no drift
// metrics, and a note that says why.
func TestMonitorOldModelFile(t *testing.T) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(checkModel(t), &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "drift")
	old, _ := json.Marshal(doc)
	ts := newTestServer(t, dbtest.SQLite(t), server.Options{})
	var created struct{ ID int64 }
	if code, raw := ts.call(t, "POST", "/api/v1/monitors", map[string]any{"name": "old", "chunk_size": 40, "model": json.RawMessage(old)}, &created); code != 201 {
		t.Fatalf("create: %d %s", code, raw)
	}
	rows := genRows(100, 0, 4, "r", time.Time{})
	ts.call(t, "POST", fmt.Sprintf("/api/v1/monitors/%d/rows", created.ID), rowsBody(rows, false), nil)
	_, raw := ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d/chunks", created.ID), nil, nil)
	if strings.Contains(string(raw), "out_of_reference") || !strings.Contains(string(raw), "estimated_mse") {
		t.Errorf("chunks of an old model: %s", raw)
	}
	var m struct{ Note string }
	ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d", created.ID), nil, &m)
	if !strings.Contains(m.Note, "mse fit") {
		t.Errorf("note %q: want one saying to fit the model again", m.Note)
	}
	_, metrics := ts.call(t, "GET", "/metrics", nil, nil)
	if strings.Contains(string(metrics), `genlens_monitor_out_of_reference{monitor="old"}`) || !strings.Contains(string(metrics), `genlens_monitor_estimated_mse{monitor="old"}`) {
		t.Errorf("metrics of an old model's monitor:\n%s", metrics)
	}
}
