package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/internal/service/monitorsvc"
	"github.com/genlens/genlens/internal/store"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/internal/tensor/membudget"
	"github.com/genlens/genlens/internal/testkit/dbtest"
	"github.com/genlens/genlens/internal/testkit/msejobtest"
	"github.com/genlens/genlens/job/msejob"
	"github.com/genlens/genlens/metric/monitor"
)

// pageServer is a server over a fresh store holding one monitor of n rows
// (chunked by size, or by day when period), a tenth of them labelled.
func pageServer(t *testing.T, dsn string, n, size int, period string) (*Server, records.Monitor) {
	return widePageServer(t, dsn, n, size, period, 1)
}

// widePageServer is pageServer with rows of d features.
func widePageServer(t testing.TB, dsn string, n, size int, period string, d int) (*Server, records.Monitor) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	s, err := New(ctx, Options{Store: db, Now: func() time.Time { return t0.AddDate(0, 0, 20) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(ctx); db.Close() })
	// A wide model is for what it costs to read, not for its fit.
	model := msejobtest.WideCheckModel(t, d, func(r *msejob.FitRequest) {
		if d > 1 {
			r.Epochs, r.Folds = 10, 0
		}
	})
	m := records.Monitor{Name: "m", Model: model, ChunkSize: size, Period: period}
	if err := s.monitors.CreateMonitor(ctx, &m); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, uint64(n)))
	// In batches: a wide monitor's rows all at once would take gigabytes.
	const batch = 500
	rows := make([]records.Row, 0, batch)
	var labels []records.Label
	for i := range n {
		x := r.NormFloat64() + float64(i)/float64(n)
		f := make([]float64, d)
		f[0] = x
		for j := 1; j < d; j++ {
			f[j] = r.NormFloat64()
		}
		row := records.Row{ID: fmt.Sprint(i), Features: f, Prediction: x, Estimate: r.ExpFloat64()}
		if i%3 != 0 || period != "" {
			// Out of order in time: the period chunks sort them.
			row.Time = t0.Add(time.Duration((i*7919)%n) * 19 * 24 * time.Hour / time.Duration(n))
		}
		if i%10 == 0 {
			labels = append(labels, records.Label{ID: row.ID, Target: x + r.NormFloat64()})
		}
		rows = append(rows, row)
		if len(rows) == batch || i == n-1 {
			if err := s.monitors.InsertRows(ctx, m.ID, rows); err != nil {
				t.Fatal(err)
			}
			rows = rows[:0]
		}
	}
	if err := s.monitors.SetLabels(ctx, m.ID, labels); err != nil {
		t.Fatal(err)
	}
	return s, m
}

// wholeChunksDoc is GET .../chunks as it was answered before pages were
// read alone: every chunk evaluated, the page cut out afterwards.
func wholeChunksDoc(m records.Monitor, v *monitorsvc.View, page chunkPage) chunksJSON {
	out := chunksJSON{Monitor: monitorJSON{ID: m.ID, Name: m.Name, ChunkSize: m.ChunkSize, Period: m.Period},
		Rows: v.Rows, LowerThreshold: jsonnum.Num(v.Th.Lower), UpperThreshold: jsonnum.Num(v.Th.Upper),
		ReferenceRows: v.RefRows, ReferenceCount: v.Th.Chunks, TotalChunks: len(v.Chunks), Chunks: []monitor.ChunkView{}}
	lo, hi, next := page.bounds(len(v.Chunks))
	if next >= 0 {
		out.NextBefore = &next
	}
	for i := lo; i < hi; i++ {
		out.Chunks = append(out.Chunks, chunkDoc(v, &v.Chunks[i], v.Complete[i]))
	}
	return out
}

// A page read alone answers the bytes the whole monitor's evaluation cut
// to the page answered, chunked by size and by period, on every backend.
func TestChunksPageUnchanged(t *testing.T) {
	pages := []chunkPage{{before: -1}, {limit: 1, before: -1}, {limit: 5, before: -1}, {limit: 5, before: 3},
		{limit: 3, before: 9}, {limit: 2, before: 0}, {limit: 4, before: 1000}, {limit: 10000, before: -1}}
	for _, b := range dbtest.Backends(t) {
		for _, c := range []struct {
			name, period string
			n, size      int
		}{{"size", "", 103, 7}, {"size1", "", 20, 1}, {"day", "day", 150, 0}, {"empty", "", 0, 5}, {"empty-day", "day", 0, 0}} {
			t.Run(b.Name+"/"+c.name, func(t *testing.T) {
				s, m := pageServer(t, b.DSN(t), c.n, c.size, c.period)
				ctx := context.Background()
				if err := s.monitors.Counts(ctx, &m); err != nil {
					t.Fatal(err)
				}
				whole, err := s.monitors.Chunks(ctx, m, 0, 2)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range pages {
					want, err := json.Marshal(wholeChunksDoc(m, whole, p))
					if err != nil {
						t.Fatal(err)
					}
					v, err := s.monitors.Page(ctx, m, func(n int) (int, int) {
						lo, hi, _ := p.bounds(n)
						return lo, hi
					})
					if err != nil {
						t.Fatalf("%+v: %v", p, err)
					}
					got, err := json.Marshal(chunksDoc(m, v, p))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, want) {
						t.Errorf("page %+v:\n got %s\nwant %s", p, got, want)
					}
				}
			})
		}
	}
}

// getChunks serves path on s and returns the status, the body and the
// bytes allocated meanwhile.
func getChunks(t *testing.T, s *Server, path string) (int, []byte, uint64) {
	t.Helper()
	h, rec := s.Handler(), httptest.NewRecorder()
	alloc := allocated(func() { h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil)) })
	return rec.Code, rec.Body.Bytes(), alloc
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// wholeAlloc returns the bytes allocated evaluating every chunk of m.
func wholeAlloc(t *testing.T, s *Server, m records.Monitor) uint64 {
	t.Helper()
	var err error
	alloc := allocated(func() { _, err = s.monitors.Chunks(context.Background(), m, 0, 2) })
	if err != nil {
		t.Fatal(err)
	}
	return alloc
}

// A page of a monitor of many chunks costs what the page holds, not what
// the monitor holds: every row's features were read and every chunk's
// drift computed for a page of ten chunks.
func TestChunksPageReadsItsRows(t *testing.T) {
	s, m := pageServer(t, dbtest.SQLite(t), 20000, 1, "")
	path := fmt.Sprintf("/api/v1/monitors/%d/chunks?limit=10", m.ID)
	getChunks(t, s, path) // the model decoded and cached
	code, body, page := getChunks(t, s, path)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var doc chunksJSON
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.TotalChunks != 20000 || len(doc.Chunks) != 10 || doc.Chunks[9].Index != 19999 {
		t.Fatalf("total %d, %d chunks: %s", doc.TotalChunks, len(doc.Chunks), body)
	}
	whole := wholeAlloc(t, s, m)
	t.Logf("page of 10 chunks: %d bytes allocated; all 20000 chunks: %d", page, whole)
	// Relative, not absolute: the race detector's build allocates about
	// four times more than the plain one (2.6 MB against 0.69 MB for the
	// page), and the page is under 1/100 of the whole in both.
	if page*20 > whole {
		t.Errorf("a page of 10 of 20000 chunks allocated %d bytes (the whole monitor %d)", page, whole)
	}
}

// BenchmarkChunksPage4000x10500 times GET .../chunks?limit=100 on a
// monitor of 4,000 features and 10,500 chunks of one row: the page's
// 100 rows are read and evaluated, not the monitor's 10,500.
func BenchmarkChunksPage4000x10500(b *testing.B) {
	start := time.Now()
	s, m := widePageServer(b, dbtest.SQLite(b), 10500, 1, "", 4000)
	b.Logf("monitor built in %v", time.Since(start))
	h := s.Handler()
	path := fmt.Sprintf("/api/v1/monitors/%d/chunks?limit=100", m.ID)
	// The first request also decodes the monitor's model.
	start = time.Now()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != 200 {
		b.Fatalf("%d %s", rec.Code, rec.Body)
	}
	b.Logf("first page (model decoded): %v, %d bytes", time.Since(start), rec.Body.Len())
	// CPU seconds per page as well as wall time: on a shared machine the
	// wall time measures the load as much as the page.
	cpu, n := cpuTime(), 0
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
		n++
	}
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(n), "cpu-s/op")
}

// A page whose rows' features and chunks' drift are over the memory
// budget is refused with 422 naming limit, before they are read; a
// smaller page is answered.
func TestChunksPagePriced(t *testing.T) {
	s, m := pageServer(t, dbtest.SQLite(t), 500, 1, "")
	defer membudget.SetLimit(membudget.SetLimit(100 * (8 + monitorsvc.ChunkFeatureBytes)))
	code, body, _ := getChunks(t, s, fmt.Sprintf("/api/v1/monitors/%d/chunks?limit=101", m.ID))
	var e errorBody
	if err := json.Unmarshal(body, &e); err != nil || code != 422 || e.Field != "limit" || !strings.Contains(e.Error, "101 chunks") || !strings.Contains(e.Error, "100.8 KiB") {
		t.Errorf("over the budget: %d %s", code, body)
	}
	if code, body, _ := getChunks(t, s, fmt.Sprintf("/api/v1/monitors/%d/chunks", m.ID)); code != 422 {
		t.Errorf("every chunk, over the budget: %d %s", code, body)
	}
	if code, body, _ := getChunks(t, s, fmt.Sprintf("/api/v1/monitors/%d/chunks?limit=100", m.ID)); code != 200 {
		t.Errorf("within the budget: %d %s", code, body)
	}
}

// A wide monitor's page is priced at what answering it holds for each
// feature of each chunk, not only at its rows' features: ?limit=10000 of
// a monitor of 4,000 features passed a price of rows × features × 8
// bytes and killed the service building the answer (820-1,060 bytes a
// chunk's feature allocated). Here, with 50 features, a budget that the
// rows' features alone of 400 chunks fit refuses the page of 400, and
// answers the page that fits at the full price.
func TestWideChunksPagePricedPerFeature(t *testing.T) {
	const d = 50
	s, m := widePageServer(t, dbtest.SQLite(t), 400, 1, "", d)
	rowsOnly := int64(400 * d * 8)
	perChunk := int64(d * (8 + monitorsvc.ChunkFeatureBytes))
	defer membudget.SetLimit(membudget.SetLimit(max(rowsOnly, 100*perChunk)))
	code, body, _ := getChunks(t, s, fmt.Sprintf("/api/v1/monitors/%d/chunks?limit=400", m.ID))
	var e errorBody
	if err := json.Unmarshal(body, &e); err != nil || code != 422 || e.Field != "limit" || !strings.Contains(e.Error, "400 chunks") {
		t.Errorf("400 chunks of %d features: %d %s", d, code, body)
	}
	if code, body, _ := getChunks(t, s, fmt.Sprintf("/api/v1/monitors/%d/chunks?limit=100", m.ID)); code != 200 {
		t.Errorf("100 chunks, within the budget: %d %s", code, body)
	}
}

// A page that fits the budget but not beside the work the process holds
// is refused with 503 and Retry-After, not evaluated into the memory's
// end.
func TestChunksPageBusy(t *testing.T) {
	s, m := pageServer(t, dbtest.SQLite(t), 50, 1, "")
	defer membudget.SetProcessLimit(membudget.SetProcessLimit(1))
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, fmt.Sprintf("/api/v1/monitors/%d/chunks?limit=10", m.ID), nil))
	if rec.Code != 503 || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "memory bound of") {
		t.Errorf("%d %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
}

// A dashboard monitor page other than the newest reads its own chunks'
// rows (and the latest chunks' for the summary), not every row's: the
// pages past the first evaluated the whole monitor.
func TestMonitorPageReadsItsRows(t *testing.T) {
	s, m := pageServer(t, dbtest.SQLite(t), 20000, 1, "")
	for _, page := range []int{2, 40} {
		path := fmt.Sprintf("/monitors/%d?page=%d", m.ID, page)
		getChunks(t, s, path) // the model decoded and cached
		code, body, alloc := getChunks(t, s, path)
		if code != 200 || !bytes.Contains(body, fmt.Appendf(nil, "chunks %d to %d of 20000", 20000-page*250, 20000-(page-1)*250-1)) {
			t.Fatalf("page %d: %d %.300s", page, code, body)
		}
		whole := wholeAlloc(t, s, m)
		t.Logf("page %d of 250 chunks: %d bytes allocated; all 20000 chunks evaluated: %d", page, alloc, whole)
		// Relative, as in TestChunksPageReadsItsRows.
		if alloc*5 > whole {
			t.Errorf("page %d of 250 of 20000 chunks allocated %d bytes (the whole monitor's evaluation %d)", page, alloc, whole)
		}
	}
}
