package jobrun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/job"
)

// BenchmarkJobRoundTrip measures the queue's own cost: submit, claim,
// run a job that does nothing, record the outcome, observe it, through
// the in-memory store.
func BenchmarkJobRoundTrip(b *testing.B) {
	s := newBenchService(b, NewMemStore())
	s.run = func(context.Context, *task, job.Env) (any, []job.Artifact, error) {
		return map[string]int{"n": 1}, nil, nil
	}
	ctx := context.Background()
	body := []byte(`{"dataset":"synthetic-a","trials":1}`)
	b.ResetTimer()
	for b.Loop() {
		j, err := s.Submit(ctx, "mse-bench", body)
		if err != nil {
			b.Fatal(err)
		}
		for {
			j, _ = s.Job(ctx, j.ID)
			if j.Status.Terminal() {
				break
			}
			time.Sleep(20 * time.Microsecond)
		}
	}
}

func newBenchService(b *testing.B, st records.Store) *Service {
	s, err := New(Config{Store: st, DataDir: b.TempDir(), Logf: b.Logf})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkAddSamples measures one POST .../samples of 8 feature rows:
// decoding, checks, the store append and the FID-UCB update, at feature
// dimensions d (the reference of 4d rows is prepared once, outside the
// timing).
func BenchmarkAddSamples(b *testing.B) {
	for _, d := range []int{64, 512} {
		b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
			s := newBenchService(b, NewMemStore())
			r := rand.New(rand.NewPCG(1, 2))
			u, err := s.SaveUpload(context.Background(), "ref.npy", bytes.NewReader(npy(b, []int{4 * d, d}, normal(r, 4*d, d, 0, 1))))
			if err != nil {
				b.Fatal(err)
			}
			cfg, _ := json.Marshal(map[string]any{"generators": []string{"a", "b", "c"}, "ref": u.ID})
			sel, err := s.CreateSelection(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			bodies := make([][]byte, 64)
			for i := range bodies {
				rows := make([][]float64, 8)
				for k := range rows {
					rows[k] = normal(r, 1, d, 0, 1)
				}
				bodies[i], _ = json.Marshal(SamplesRequest{Generator: []string{"a", "b", "c"}[i%3], Features: rows})
			}
			b.ResetTimer()
			i := 0
			for b.Loop() {
				if _, err := s.AddSamples(context.Background(), sel.ID, bodies[i%len(bodies)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkUpload measures storing a 64 MiB upload: hashing, writing,
// syncing and renaming.
func BenchmarkUpload(b *testing.B) {
	s := newBenchService(b, NewMemStore())
	data := make([]byte, 64<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	b.SetBytes(int64(len(data)))
	i := 0
	for b.Loop() {
		data[0] = byte(i) // a new content id each time
		data[1] = byte(i >> 8)
		i++
		if _, err := s.SaveUpload(context.Background(), "x.npy", bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
