package server_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

// The ingestion benchmarks: batches of 1,000 rows (two features, a
// prediction, a timestamp) posted over loopback HTTP to a server on a
// SQLite file (or on Postgres with GENLENS_TEST_POSTGRES), each answered
// 200 only after its transaction committed with a synced WAL. Request
// bodies are encoded before the timer starts. Bounded: run with
// -benchtime=Nx, e.g.
//
//	go test -run '^$' -bench Ingest -benchtime 100x ./server/
//
// They report rows/s, and for 50 concurrent clients the p50 and p99
// latency of a request.

const benchBatch = 1000

func benchBodies(n int, prefix string) [][]byte {
	r := rand.New(rand.NewPCG(1, 1))
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	out := make([][]byte, n)
	for i := range out {
		var b bytes.Buffer
		b.WriteString(`{"rows":[`)
		for j := range benchBatch {
			if j > 0 {
				b.WriteByte(',')
			}
			x0, x1 := r.NormFloat64(), r.NormFloat64()
			fmt.Fprintf(&b, `{"id":"%s%d-%d","timestamp":"%s","features":{"x":%s,"noise_feature":%s},"prediction":%s}`,
				prefix, i, j, t0.Add(time.Duration(i*benchBatch+j)*time.Second).Format(time.RFC3339),
				strconv.FormatFloat(x0, 'g', -1, 64), strconv.FormatFloat(x1, 'g', -1, 64), strconv.FormatFloat(3*x0+5, 'g', -1, 64))
		}
		b.WriteString(`]}`)
		out[i] = b.Bytes()
	}
	return out
}

func benchServer(b *testing.B, backend string) (*testServer, string) {
	var dsn string
	switch backend {
	case "sqlite":
		dsn = dbtest.SQLite(b)
	case "postgres":
		dsn = dbtest.Postgres(b)
	}
	ts := newTestServer(b, dsn, server.Options{})
	id := ts.createMonitor(b, "bench", map[string]any{"chunk_size": 5000})
	return ts, fmt.Sprintf("%s/api/v1/monitors/%d/rows", ts.URL, id)
}

func postBody(c *http.Client, url string, body []byte) error {
	resp, err := c.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

func BenchmarkIngest(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			ts, url := benchServer(b, backend)
			bodies := benchBodies(b.N, "r")
			c := ts.Client()
			b.SetBytes(int64(len(bodies[0])))
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				if err := postBody(c, url, bodies[i]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*benchBatch)/time.Since(start).Seconds(), "rows/s")
		})
	}
}

func BenchmarkIngest50Clients(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			_, url := benchServer(b, backend)
			bodies := benchBodies(b.N, "r")
			tr := &http.Transport{MaxIdleConnsPerHost: 50, MaxConnsPerHost: 50}
			c := &http.Client{Transport: tr}
			defer tr.CloseIdleConnections()
			lat := make([]time.Duration, b.N)
			next := make(chan int)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var firstErr error
			b.ResetTimer()
			start := time.Now()
			for range 50 {
				wg.Go(func() {
					for i := range next {
						t := time.Now()
						err := postBody(c, url, bodies[i])
						lat[i] = time.Since(t)
						if err != nil {
							mu.Lock()
							firstErr = err
							mu.Unlock()
						}
					}
				})
			}
			for i := range b.N {
				next <- i
			}
			close(next)
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if firstErr != nil {
				b.Fatal(firstErr)
			}
			slices.Sort(lat)
			b.ReportMetric(float64(b.N*benchBatch)/elapsed.Seconds(), "rows/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
		})
	}
}

// BenchmarkRead measures what a monitor of 100,000 rows costs to read:
// GET .../chunks (every row, every chunk) and a /metrics scrape (the
// latest chunk only, for a chunk-size monitor).
func BenchmarkRead(b *testing.B) {
	ts, url := benchServer(b, "sqlite")
	for _, body := range benchBodies(100, "r") {
		if err := postBody(ts.Client(), url, body); err != nil {
			b.Fatal(err)
		}
	}
	chunksURL := strings.TrimSuffix(url, "/rows") + "/chunks"
	for _, c := range []struct{ name, url string }{{"chunks", chunksURL}, {"metrics", ts.URL + "/metrics"}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				resp, err := ts.Client().Get(c.url)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatal(resp.Status)
				}
			}
		})
	}
}
