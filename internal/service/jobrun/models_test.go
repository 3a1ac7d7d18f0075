package jobrun

import (
	"context"
	"testing"
	"time"

	"github.com/genlens/genlens/job"
)

// Two services in one process each keep their own networks unless given
// the same cache: the jobs of one never see (nor pin the memory of) the
// other's, and every job of one service sees the same cache.
func TestServicesDoNotShareModelCache(t *testing.T) {
	shared := job.NewModelCache(1 << 20)
	cases := []struct {
		name       string
		cfg1, cfg2 Config
		same       bool
	}{
		{"default", Config{}, Config{}, false},
		{"given the same", Config{Models: shared}, Config{Models: shared}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			seen := func(cfg Config) []*job.ModelCache {
				s := newTestService(t, nil, cfg)
				var got []*job.ModelCache
				ran := make(chan *job.ModelCache, 2)
				s.run = func(ctx context.Context, tk *task, env job.Env) (any, []job.Artifact, error) {
					ran <- env.Models
					return struct{}{}, nil, nil
				}
				for i := 0; i < 2; i++ {
					j, err := s.Submit(context.Background(), "mse-bench", []byte(`{"dataset":"synthetic-a","trials":1,"methods":["naive"]}`))
					if err != nil {
						t.Fatal(err)
					}
					waitJob(t, s, j.ID, 10*time.Second)
					got = append(got, <-ran)
				}
				return got
			}
			a, b := seen(c.cfg1), seen(c.cfg2)
			for _, m := range append(a, b...) {
				if m == nil {
					t.Fatal("a job ran without a model cache")
				}
			}
			if a[0] != a[1] || b[0] != b[1] {
				t.Error("two jobs of one service saw different caches")
			}
			if (a[0] == b[0]) != c.same {
				t.Errorf("two services share a cache: %v, want %v", a[0] == b[0], c.same)
			}
		})
	}
}
