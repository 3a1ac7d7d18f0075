package imagejob

import (
	"runtime"
	"testing"

	"github.com/genlens/genlens/job"
)

// The workers a request asks for are capped at the CPUs: a service
// features job with {workers} 1024 decodes on as many goroutines as
// there are CPUs, not 1,024 (each holding a decoded image).
func TestExtractorWorkersCapped(t *testing.T) {
	c := runtime.GOMAXPROCS(0)
	for _, tc := range [][2]int{{0, 0}, {1, 1}, {c, c}, {c + 1, c}, {job.MaxWorkers, c}} {
		opt := NewImageOptions()
		opt.Workers = tc[0]
		x, err := newExtractor(job.Env{}, "features", "batch", opt)
		if err != nil {
			t.Fatal(err)
		}
		if x.opt.Workers != tc[1] || x.pipe.Workers != tc[1] {
			t.Errorf("{workers} %d: extractor %d, pipeline %d, want %d", tc[0], x.opt.Workers, x.pipe.Workers, tc[1])
		}
	}
}
