package online

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
)

var allFID = []FIDRule{FIDUCB, FIDNaiveUCB, FIDGreedy}
var allIS = []ISRule{ISUCB, ISNaiveUCB, ISGreedy}

func TestSimulationDeterministic(t *testing.T) {
	fam := newGaussFamily(t, 8, func(i int) float64 { return 1 / float64(i+1) }, []float64{0.3, 0.8, 1.2, 1.7}, 60, 2)
	probs := classFamily(5, []float64{0.5, 1, 2, 4}, []float64{0.5, 0.8, 1, 1.5}, 60, 2)
	run := func(seed uint64, workers int) (*Result, *Result) {
		var calls []int
		s := Simulation{Steps: 120, Batch: 4, Trials: 7, Seed: seed, Workers: workers, Progress: func(done, total int) {
			if total != 7 {
				t.Errorf("progress total %d, want 7", total)
			}
			calls = append(calls, done)
		}}
		f, err := s.RunFID(context.Background(), fam.ref, fam.pools, allFID, DefaultFIDParams())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(calls, []int{1, 2, 3, 4, 5, 6, 7}) {
			t.Errorf("progress calls %v, want 1..7", calls)
		}
		i, err := s.RunIS(context.Background(), probs, allIS, DefaultISParams())
		if err != nil {
			t.Fatal(err)
		}
		return f, i
	}
	f1, i1 := run(42, 1)
	f2, i2 := run(42, 3)
	f3, i3 := run(42, 0)
	if !reflect.DeepEqual(f1, f2) || !reflect.DeepEqual(f1, f3) {
		t.Error("FID: same seed, different worker counts: results differ")
	}
	if !reflect.DeepEqual(i1, i2) || !reflect.DeepEqual(i1, i3) {
		t.Error("IS: same seed, different worker counts: results differ")
	}
	f4, i4 := run(43, 3)
	if reflect.DeepEqual(f1.Algorithms[0].Regret, f4.Algorithms[0].Regret) {
		t.Error("FID: seeds 42 and 43 give the same regret curve")
	}
	if reflect.DeepEqual(i1.Algorithms[0].Regret, i4.Algorithms[0].Regret) {
		t.Error("IS: seeds 42 and 43 give the same regret curve")
	}
	if !reflect.DeepEqual(f1.Scores, f4.Scores) {
		t.Error("true scores depend on the seed")
	}
}

func TestSimulationAccounting(t *testing.T) {
	fam := newGaussFamily(t, 6, func(i int) float64 { return 1 }, []float64{0.2, 1, 3}, 50, 4)
	s := Simulation{Steps: 60, Batch: 5, Trials: 5, Seed: 1}
	res, err := s.RunFID(context.Background(), fam.ref, fam.pools, allFID, DefaultFIDParams())
	if err != nil {
		t.Fatal(err)
	}
	if res.Metric != "fid" || res.Steps != 60 || res.Batch != 5 || res.Trials != 5 || len(res.Algorithms) != 3 {
		t.Fatalf("result header %+v", res)
	}
	for g, v := range res.Scores {
		if want, _ := fam.ref.Distance(fam.pools[g]); v != want {
			t.Errorf("score %d = %v, offline FID of the pool %v", g, v, want)
		}
		if v < res.Scores[res.Best] {
			t.Errorf("best %d (%v) is not the lowest FID (%d: %v)", res.Best, res.Scores[res.Best], g, v)
		}
	}
	for ai, a := range res.Algorithms {
		if a.Name != allFID[ai].String() {
			t.Errorf("algorithm %d named %q, want %q", ai, a.Name, allFID[ai])
		}
		// Final regret of each trial from its pick counts.
		var mean float64
		var picks float64
		for _, tp := range a.TrialPicks {
			var r float64
			n := 0
			for g, c := range tp {
				r += float64(c) * (res.Scores[g] - res.Scores[res.Best])
				n += c
			}
			if n != 60 {
				t.Errorf("%s: %d picks in a trial, want 60", a.Name, n)
			}
			mean += r / 5
			picks += float64(tp[res.Best]) / 5
		}
		if math.Abs(a.FinalRegret.Mean-mean) > 1e-9*math.Max(1, mean) {
			t.Errorf("%s: final regret %v, from pick counts %v", a.Name, a.FinalRegret.Mean, mean)
		}
		if math.Abs(a.FinalOptimalPickRatio.Mean-picks/60) > 1e-12 {
			t.Errorf("%s: final optimal-pick ratio %v, from pick counts %v", a.Name, a.FinalOptimalPickRatio.Mean, picks/60)
		}
		if got := a.AverageRegret.Mean[59] * 60; math.Abs(got-a.Regret.Mean[59]) > 1e-9*math.Max(1, got) {
			t.Errorf("%s: average regret × t = %v, regret %v", a.Name, got, a.Regret.Mean[59])
		}
		for tt := 1; tt < 60; tt++ {
			if a.Regret.Mean[tt] < a.Regret.Mean[tt-1] {
				t.Fatalf("%s: regret decreases at step %d", a.Name, tt+1)
			}
		}
		// Unvisited first: the first G steps visit every generator once.
		for _, tp := range a.TrialPicks {
			for g, c := range tp {
				if c < 1 {
					t.Errorf("%s: generator %d never picked", a.Name, g)
				}
			}
		}
	}
	// One generator: no regret, always optimal.
	one, err := s.RunFID(context.Background(), fam.ref, fam.pools[:1], []FIDRule{FIDUCB}, DefaultFIDParams())
	if err != nil {
		t.Fatal(err)
	}
	if a := one.Algorithms[0]; a.FinalRegret.Mean != 0 || a.FinalOptimalPickRatio.Mean != 1 {
		t.Errorf("one generator: regret %v, ratio %v", a.FinalRegret.Mean, a.FinalOptimalPickRatio.Mean)
	}
}

func TestStreamWithoutReplacement(t *testing.T) {
	for _, c := range []struct{ rows, b int }{{10, 5}, {7, 5}, {5, 5}, {9, 1}} {
		pool := mat.NewDense(c.rows, 1, nil)
		for i := 0; i < c.rows; i++ {
			pool.Set(i, 0, float64(i))
		}
		st := newStream(pool, 3, 1, 2)
		perPass := c.rows / c.b
		for pass := 0; pass < 4; pass++ {
			seen := make(map[float64]bool)
			for k := 0; k < perPass; k++ {
				bt := st.next(c.b)
				for i := 0; i < c.b; i++ {
					v := bt.At(i, 0)
					if seen[v] {
						t.Fatalf("rows %d, batch %d: row %v drawn twice in one pass", c.rows, c.b, v)
					}
					seen[v] = true
				}
			}
			if c.rows%c.b == 0 && len(seen) != c.rows {
				t.Errorf("rows %d, batch %d: a pass drew %d distinct rows", c.rows, c.b, len(seen))
			}
		}
	}
}

func TestSimulationErrors(t *testing.T) {
	fam := newGaussFamily(t, 4, func(i int) float64 { return 1 }, []float64{0.5, 1}, 10, 1)
	good := Simulation{Steps: 10, Batch: 5, Trials: 2}
	probs := classFamily(3, []float64{1, 2}, []float64{1, 1}, 10, 1)
	bad := mat.NewDense(10, 3, nil) // rows sum to 0
	short := mat.NewDense(4, 4, nil)
	wide := mat.NewDense(10, 5, nil)
	nanPool := mat.NewDense(10, 4, nil)
	nanPool.Set(3, 2, math.NaN())
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"zero steps", func() error {
			_, err := Simulation{Batch: 5, Trials: 1}.RunFID(context.Background(), fam.ref, fam.pools, allFID, DefaultFIDParams())
			return err
		}},
		{"zero trials", func() error {
			_, err := Simulation{Steps: 5, Batch: 5}.RunIS(context.Background(), probs, allIS, DefaultISParams())
			return err
		}},
		{"pool smaller than a batch", func() error {
			_, err := good.RunFID(context.Background(), fam.ref, []*mat.Dense{fam.pools[0], short}, allFID, DefaultFIDParams())
			return err
		}},
		{"pool of another dimension", func() error {
			_, err := good.RunFID(context.Background(), fam.ref, []*mat.Dense{fam.pools[0], wide}, allFID, DefaultFIDParams())
			return err
		}},
		{"pool with NaN", func() error {
			_, err := good.RunFID(context.Background(), fam.ref, []*mat.Dense{nanPool}, allFID, DefaultFIDParams())
			return err
		}},
		{"no pools", func() error {
			_, err := good.RunFID(context.Background(), fam.ref, nil, allFID, DefaultFIDParams())
			return err
		}},
		{"no algorithms", func() error {
			_, err := good.RunFID(context.Background(), fam.ref, fam.pools, nil, DefaultFIDParams())
			return err
		}},
		{"duplicate algorithm", func() error {
			_, err := good.RunFID(context.Background(), fam.ref, fam.pools, []FIDRule{FIDUCB, FIDUCB}, DefaultFIDParams())
			return err
		}},
		{"nil reference", func() error {
			_, err := good.RunFID(context.Background(), nil, fam.pools, allFID, DefaultFIDParams())
			return err
		}},
		{"bad delta", func() error {
			_, err := good.RunFID(context.Background(), fam.ref, fam.pools, allFID, FIDParams{Delta: 1, BonusScale: 1})
			return err
		}},
		{"rows that are not distributions", func() error {
			_, err := good.RunIS(context.Background(), []*mat.Dense{probs[0], bad}, allIS, DefaultISParams())
			return err
		}},
		{"zero IS bonus scale", func() error {
			_, err := good.RunIS(context.Background(), probs, allIS, ISParams{Delta: 0.05})
			return err
		}},
	} {
		if err := c.run(); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// TestSimulationCancel: cancelling the context stops a long simulation
// within a second and returns context.Canceled, not a partial result.
func TestSimulationCancel(t *testing.T) {
	fam := newGaussFamily(t, 8, func(i int) float64 { return 1 }, []float64{0.3, 1, 2}, 200, 6)
	s := Simulation{Steps: 1_000_000, Batch: 5, Trials: 4, Seed: 1}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	res, err := s.RunFID(ctx, fam.ref, fam.pools, allFID, DefaultFIDParams())
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("got %v, %v; want context.Canceled and no result", res, err)
	}
	if d := time.Since(start); d > 1100*time.Millisecond {
		t.Errorf("cancel took %v after 100ms, want under a second", d-100*time.Millisecond)
	}
}
