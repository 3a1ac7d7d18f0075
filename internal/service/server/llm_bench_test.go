package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/service/server"
	"github.com/genlens/genlens/internal/testkit/dbtest"
	"github.com/genlens/genlens/llm"
)

// The proxy's cost: a fake upstream answers every chat completion after
// a fixed 20 ms (with as many choices as n asks); callers post the same
// request to it directly and through the proxy (k = 5 samples drawn
// beside each by package llm's client from the same upstream, one
// request with n = 5; SQLite store), one at a time and 50 at once. Bounded: each
// iteration sends a fixed number of requests, so run with -benchtime=1x:
//
//	go test -run '^$' -bench LLMProxy -benchtime 1x ./server/
//
// It reports the p50 and p99 latency of both, the proxy's added latency
// (the difference of those quantiles) and requests/s.

const benchUpstreamLatency = 20 * time.Millisecond

func latencyUpstream(b *testing.B) *httptest.Server {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n := 1
		if i := strings.Index(string(body), `"n":`); i >= 0 {
			fmt.Sscan(string(body[i+4:]), &n)
		}
		time.Sleep(benchUpstreamLatency)
		var c strings.Builder
		for i := range max(n, 1) {
			if i > 0 {
				c.WriteByte(',')
			}
			fmt.Fprintf(&c, `{"index":%d,"message":{"role":"assistant","content":"Paris, answer %d."},"finish_reason":"stop"}`, i, i%3)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"x","object":"chat.completion","model":"tiny","choices":[%s],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`, c.String())
	}))
	b.Cleanup(up.Close)
	return up
}

func BenchmarkLLMProxy(b *testing.B) {
	for _, mode := range []struct {
		name            string
		callers, perRun int
	}{{"callers=1", 1, 200}, {"callers=50", 50, 2000}} {
		b.Run(mode.name, func(b *testing.B) {
			up := latencyUpstream(b)
			sampler, err := llm.New(llm.Config{BaseURL: up.URL + "/v1", Concurrency: 64})
			if err != nil {
				b.Fatal(err)
			}
			ts := newTestServer(b, dbtest.SQLite(b), server.Options{LLM: server.LLMOptions{Client: sampler}})
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * mode.callers, MaxIdleConns: 4 * mode.callers}}
			body := `{"model":"tiny","messages":[{"role":"user","content":"Capital of France?"}],"max_tokens":16}`
			run := func(url string) ([]time.Duration, time.Duration) {
				lat := make([]time.Duration, mode.perRun)
				var wg sync.WaitGroup
				next := make(chan int)
				start := time.Now()
				for range mode.callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range next {
							t := time.Now()
							resp, err := client.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
							if err != nil {
								b.Error(err)
								continue
							}
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
							if resp.StatusCode != 200 {
								b.Errorf("status %d", resp.StatusCode)
							}
							lat[i] = time.Since(t)
						}
					}()
				}
				for i := range mode.perRun {
					next <- i
				}
				close(next)
				wg.Wait()
				return lat, time.Since(start)
			}
			run(ts.URL + "/v1") // warm the connections
			var direct, proxied []time.Duration
			var directT, proxiedT time.Duration
			b.ResetTimer()
			for range b.N {
				d, dt := run(up.URL + "/v1")
				p, pt := run(ts.URL + "/v1")
				direct, proxied = append(direct, d...), append(proxied, p...)
				directT, proxiedT = directT+dt, proxiedT+pt
			}
			b.StopTimer()
			q := func(l []time.Duration, p float64) float64 {
				s := slices.Clone(l)
				slices.Sort(s)
				return s[int(p*float64(len(s)-1))].Seconds() * 1000
			}
			b.ReportMetric(q(direct, .5), "direct-p50-ms")
			b.ReportMetric(q(proxied, .5), "proxy-p50-ms")
			b.ReportMetric(q(proxied, .5)-q(direct, .5), "added-p50-ms")
			b.ReportMetric(q(proxied, .99)-q(direct, .99), "added-p99-ms")
			b.ReportMetric(float64(len(direct))/directT.Seconds(), "direct-req/s")
			b.ReportMetric(float64(len(proxied))/proxiedT.Seconds(), "proxy-req/s")
		})
	}
}
