package server_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
)

// The memory of concurrent request bodies: 8 clients post a rows batch of
// about 8 MB each at once (the body limit set to 8 MB), to a server with
// the default bound on bodies in flight (two of the largest size) and to
// one without. It reports the peak heap in use, sampled every 2 ms, and
// how many posts were answered 503 (none when the waits fit in BodyWait). Run it once per setting:
//
//	go test -run '^$' -bench ConcurrentBodies -benchtime 1x ./server/
func BenchmarkConcurrentBodies(b *testing.B) {
	const clients, limit = 8, 8 << 20
	bodies := make([][]byte, clients)
	r := rand.New(rand.NewPCG(2, 2))
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	for i := range bodies {
		var buf bytes.Buffer
		buf.WriteString(`{"rows":[`)
		for j := 0; buf.Len() < limit-300; j++ {
			if j > 0 {
				buf.WriteByte(',')
			}
			x0, x1 := r.NormFloat64(), r.NormFloat64()
			fmt.Fprintf(&buf, `{"id":"c%d-%d","timestamp":"%s","features":{"x":%s,"noise_feature":%s},"prediction":%s}`,
				i, j, t0.Add(time.Duration(j)*time.Second).Format(time.RFC3339),
				strconv.FormatFloat(x0, 'g', -1, 64), strconv.FormatFloat(x1, 'g', -1, 64), strconv.FormatFloat(3*x0+5, 'g', -1, 64))
		}
		buf.WriteString(`]}`)
		bodies[i] = buf.Bytes()
	}
	for _, c := range []struct {
		name     string
		inFlight int64
	}{{"bounded", 0}, {"unbounded", 1 << 40}} {
		b.Run(c.name, func(b *testing.B) {
			var peak uint64
			var refused atomic.Int64
			for range b.N {
				ts := newTestServer(b, dbtest.SQLite(b), server.Options{MaxBody: limit, MaxBodiesInFlight: c.inFlight})
				id := ts.createMonitor(b, "bench", map[string]any{"chunk_size": 5000})
				url := fmt.Sprintf("%s/api/v1/monitors/%d/rows", ts.URL, id)
				runtime.GC()
				stop := make(chan struct{})
				sampled := make(chan uint64)
				go func() {
					var ms runtime.MemStats
					var p uint64
					tick := time.NewTicker(2 * time.Millisecond)
					defer tick.Stop()
					for {
						select {
						case <-stop:
							sampled <- p
							return
						case <-tick.C:
							runtime.ReadMemStats(&ms)
							p = max(p, ms.HeapInuse)
						}
					}
				}()
				var wg sync.WaitGroup
				for i := range clients {
					wg.Go(func() {
						resp, err := ts.Client().Post(url, "application/json", bytes.NewReader(bodies[i]))
						if err != nil {
							b.Error(err)
							return
						}
						resp.Body.Close()
						switch resp.StatusCode {
						case http.StatusOK:
						case http.StatusServiceUnavailable:
							refused.Add(1)
						default:
							b.Errorf("status %d", resp.StatusCode)
						}
					})
				}
				wg.Wait()
				close(stop)
				peak = max(peak, <-sampled)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(refused.Load())/float64(b.N), "503s/op")
		})
	}
}
