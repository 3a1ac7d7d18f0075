package store_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/store"
	"github.com/genlens/genlens/internal/store/records"
)

func TestLLMRequests(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
		in := []records.LLMRequest{
			{Time: t0, Model: "m1", MessagesHash: "aa", Answer: "Paris", Status: 200, Score: "kernel-entropy", Uncertainty: -0.9, Samples: 5,
				UpstreamSeconds: 0.02, SampleSeconds: 0.03, TotalSeconds: 0.031},
			{Time: t0.Add(time.Minute), Model: "m1", MessagesHash: "bb", Answer: "", Status: 502, Score: "kernel-entropy",
				Uncertainty: math.NaN(), Samples: 5, Error: "upstream: connection refused"},
			{Time: t0.Add(2 * time.Minute), Model: "m2", MessagesHash: "cc", Answer: "Lyon, maybe ünïcode", Stream: true, Status: 200,
				Score: "kernel-entropy", Uncertainty: -0.25, Samples: 3, UpstreamSeconds: 1.5},
			{Time: t0.Add(3 * time.Minute), Model: "m2", MessagesHash: "dd", Answer: "x", Status: 200, Score: "kernel-entropy", Uncertainty: -0.5, Samples: 5},
		}
		for i := range in {
			if err := db.InsertLLMRequest(ctx, &in[i]); err != nil {
				t.Fatal(err)
			}
			if in[i].ID == 0 {
				t.Fatalf("request %d: no id", i)
			}
		}
		ids := func(rs []records.LLMRequest) []string {
			var out []string
			for _, r := range rs {
				out = append(out, r.MessagesHash)
			}
			return out
		}
		for _, tc := range []struct {
			name string
			q    records.LLMQuery
			want []string
		}{
			{"all newest first", records.LLMQuery{MinUncertainty: math.NaN()}, []string{"dd", "cc", "bb", "aa"}},
			{"since", records.LLMQuery{Since: t0.Add(time.Minute), MinUncertainty: math.NaN()}, []string{"dd", "cc", "bb"}},
			{"min uncertainty", records.LLMQuery{MinUncertainty: -0.5}, []string{"dd", "cc"}},
			{"min uncertainty excludes none", records.LLMQuery{MinUncertainty: -10}, []string{"dd", "cc", "aa"}},
			{"by uncertainty", records.LLMQuery{ByUncertainty: true, MinUncertainty: math.NaN()}, []string{"cc", "dd", "aa"}},
			{"limit", records.LLMQuery{Limit: 2, MinUncertainty: math.NaN()}, []string{"dd", "cc"}},
			{"since and min", records.LLMQuery{Since: t0.Add(3 * time.Minute), MinUncertainty: -0.3}, nil},
		} {
			got, err := db.LLMRequests(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if g := ids(got); !equalStrings(g, tc.want) {
				t.Errorf("%s: got %v, want %v", tc.name, g, tc.want)
			}
		}
		got, err := db.LLMRequests(ctx, records.LLMQuery{MinUncertainty: math.NaN()})
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range got {
			var w records.LLMRequest
			for _, r := range in {
				if r.ID == g.ID {
					w = r
				}
			}
			same := g.Time.Equal(w.Time) && g.Model == w.Model && g.Answer == w.Answer && g.Stream == w.Stream && g.Status == w.Status &&
				g.Score == w.Score && g.Samples == w.Samples && g.Error == w.Error && g.UpstreamSeconds == w.UpstreamSeconds &&
				g.SampleSeconds == w.SampleSeconds && g.TotalSeconds == w.TotalSeconds &&
				(g.Uncertainty == w.Uncertainty || math.IsNaN(g.Uncertainty) && math.IsNaN(w.Uncertainty))
			if !same {
				t.Errorf("stored %+v\nread   %+v", w, g)
			}
		}
	})
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A NUL or invalid UTF-8 in an answer, model or error is stored alike on
// every backend (as U+FFFD), and does not fail the batch it is in.
func TestLLMRequestTextStoredAlike(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		rs := []records.LLMRequest{
			{Model: "m", Answer: "fine", Score: "kernel-entropy", Status: 200, Uncertainty: math.NaN()},
			{Model: "m\x00", Answer: "a\x00b\xff", Error: "e\x00", Score: "kernel-entropy", Status: 200, Uncertainty: math.NaN()},
		}
		if err := db.InsertLLMRequests(ctx, rs); err != nil {
			t.Fatal(err)
		}
		got, err := db.LLMRequests(ctx, records.LLMQuery{MinUncertainty: math.NaN()})
		if err != nil || len(got) != 2 {
			t.Fatalf("%d requests, %v", len(got), err)
		}
		byID := map[int64]records.LLMRequest{got[0].ID: got[0], got[1].ID: got[1]}
		if g := byID[rs[1].ID]; g.Model != "m\uFFFD" || g.Answer != "a\uFFFDb\uFFFD" || g.Error != "e\uFFFD" {
			t.Fatalf("stored %q, %q, %q", g.Model, g.Answer, g.Error)
		}
	})
}

// A since beyond the times stored selects nothing (2300 in Unix
// nanoseconds would wrap around to 1715 and select everything); one
// before them selects everything.
func TestLLMRequestsSinceOutsideStoredTimes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if err := db.InsertLLMRequest(ctx, &records.LLMRequest{Model: "m", Score: "s", Status: 200, Uncertainty: math.NaN()}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			since time.Time
			want  int
		}{
			{time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), 0},
			{time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), 1},
		} {
			got, err := db.LLMRequests(ctx, records.LLMQuery{Since: c.since, MinUncertainty: math.NaN()})
			if err != nil || len(got) != c.want {
				t.Errorf("since %s: %d requests, %v; want %d", c.since, len(got), err, c.want)
			}
		}
	})
}
