package llmjob

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/job"
)

// BenchmarkSample measures sample's throughput against the test server
// with 20 ms of latency a request (a small model's time for a few tokens)
// and n = 10 answers a prompt in one request, at 1, 8 and 32 requests in
// flight, keeping the rows in memory, and at 8 with every row appended to
// a file and synced; 64 prompts an iteration. Run with
//
//	go test ./job/llmjob -run '^$' -bench BenchmarkSample -benchtime 3x -count 3
func BenchmarkSample(b *testing.B) {
	srv, _ := sampleServer(b, func(c *llmtest.Config) { c.Latency = 20 * time.Millisecond })
	fsys := fstest.MapFS{"p.jsonl": {Data: promptsFile(64)}}
	for _, tc := range []struct {
		conc int
		out  bool
	}{{1, false}, {8, false}, {32, false}, {8, true}} {
		name := fmt.Sprintf("concurrency=%d", tc.conc)
		if tc.out {
			name += "/out+fsync"
		}
		b.Run(name, func(b *testing.B) {
			req := sampleReq(srv.URL)
			req.N, req.MaxTokens, req.Concurrency = 10, 8, tc.conc
			var prompts int
			start := time.Now()
			for b.Loop() {
				if tc.out {
					req.Out = filepath.Join(b.TempDir(), "a.jsonl")
				}
				res, err := Sample(context.Background(), job.Env{FS: fsys, Secret: sampleSecrets}, req)
				if err != nil {
					b.Fatal(err)
				}
				prompts += res.Sampled
			}
			b.ReportMetric(float64(prompts)/time.Since(start).Seconds(), "prompts/s")
		})
	}
}
