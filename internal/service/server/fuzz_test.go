package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

// Whatever a client posts as a rows batch, the server answers 200, 400,
// 413 or 422 (never 500, never a panic), and stores exactly the rows it
// acknowledged.
func FuzzRows(f *testing.F) {
	for _, seed := range []string{
		`{"rows":[{"id":"a","features":{"x":1,"noise_feature":2},"prediction":3}]}`,
		`{"rows":[{"id":"b","timestamp":"2026-11-23T10:00:00Z","features":{"x":-1e308,"noise_feature":0},"prediction":1e-300}]}`,
		`{"rows":[{"id":"c","features":{"x":"NaN","noise_feature":2},"prediction":3}]}`,
		`{"rows":[{"id":"d","features":{"x":1,"noise_feature":2,"y":0},"prediction":3}]}`,
		`{"rows":[{"id":"e","features":{"x":1},"prediction":null}]}`,
		`{"rows":[{"id":"f","features":{"x":1,"noise_feature":2},"prediction":3},{"id":"f","features":{"x":1,"noise_feature":2},"prediction":3}]}`,
		`{"rows":[{"id":"g","features":{"x":true,"noise_feature":[]},"prediction":{}}]}`,
		`{"rows":{}}`, `[]`, `null`, `{"rows":[null]}`, `{"rows":[{"id":""}]}`,
	} {
		f.Add([]byte(seed))
	}
	db := dbtest.SQLite(f)
	ts := newTestServer(f, db, server.Options{MaxBody: int64(len(checkModel(f))) + 1<<12})
	id := ts.createMonitor(f, "fuzz", map[string]any{"chunk_size": 10})
	path := fmt.Sprintf("/api/v1/monitors/%d/rows", id)
	h := ts.srv.Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		rowsNow := func() int {
			var m struct{ Rows int }
			ts.call(t, "GET", fmt.Sprintf("/api/v1/monitors/%d", id), nil, &m)
			return m.Rows
		}
		before := rowsNow()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", path, bytes.NewReader(body)))
		after := rowsNow()
		switch rec.Code {
		case http.StatusOK:
			var acc struct{ Accepted int }
			if err := json.Unmarshal(rec.Body.Bytes(), &acc); err != nil || after-before != acc.Accepted || acc.Accepted < 1 {
				t.Fatalf("200 %s but %d rows stored", rec.Body, after-before)
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
			if after != before {
				t.Fatalf("%d %s but %d rows stored", rec.Code, rec.Body, after-before)
			}
			var e struct{ Error string }
			if json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error == "" {
				t.Fatalf("%d without an error message: %s", rec.Code, rec.Body)
			}
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	})
}
