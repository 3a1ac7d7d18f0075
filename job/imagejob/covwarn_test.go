package imagejob

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/frechet"
)

// TestSingularCovarianceWarnings: every covariance-based result with no
// more rows than dimensions warns that the covariance is singular, that
// the value is dominated by it, and how many rows it needs (d + 1); with
// d + 1 rows nothing is said.
func TestSingularCovarianceWarnings(t *testing.T) {
	const d = 8
	r := rand.New(rand.NewPCG(41, 42))
	rows := func(n int) []float64 {
		v := make([]float64, n*d)
		for i := range v {
			v[i] = r.NormFloat64()
		}
		return v
	}
	few, enough := rows(5), rows(d+1)
	fsys := fstest.MapFS{
		"few.npy":       {Data: fidNPY(t, []int{5, d}, few)},
		"enough.npy":    {Data: fidNPY(t, []int{d + 1, d}, enough)},
		"big.npy":       {Data: fidNPY(t, []int{40, d}, rows(40))},
		"big2.npy":      {Data: fidNPY(t, []int{40, d}, rows(40))},
		"few_stats.npz": {Data: fidStatsNPZ(t, frechet.StatsOf(mat.NewDense(5, d, few), 1))},
	}
	const singular = "covariance is singular"
	for _, c := range []struct {
		name string
		run  func(job.Env) error
		want []string // words of the one warning; nil: no warning
	}{
		{"compare rows", func(env job.Env) error {
			req := NewCompareRequest()
			req.Real, req.Fake = "big.npy", "few.npy"
			_, err := Compare(context.Background(), env, req)
			return err
		}, []string{"compare: few.npy has 5 rows of 8 dimensions", singular, "rank at most 4 of 8", "Fréchet distance (FID) is dominated by that", "at least 9 rows"}},
		{"compare statistics with n", func(env job.Env) error {
			req := NewCompareRequest()
			req.Real, req.Fake = "few_stats.npz", "big.npy"
			_, err := Compare(context.Background(), env, req)
			return err
		}, []string{"few_stats.npz has 5 rows", singular}},
		{"compare d+1 rows", func(env job.Env) error {
			req := NewCompareRequest()
			req.Real, req.Fake = "big.npy", "enough.npy"
			_, err := Compare(context.Background(), env, req)
			return err
		}, nil},
		{"stats", func(env job.Env) error {
			_, err := Stats(context.Background(), env, statsOf("few.npy"))
			return err
		}, []string{"stats: few.npy has 5 rows", singular, "a Fréchet distance (FID) from these statistics is dominated", "at least 9 rows"}},
		{"stats d+1 rows", func(env job.Env) error {
			_, err := Stats(context.Background(), env, statsOf("enough.npy"))
			return err
		}, nil},
		{"select reference", func(env job.Env) error {
			req := NewSelectRequest()
			req.Ref, req.Pools, req.Steps, req.Trials, req.Algos = "few.npy", []string{"big.npy", "big2.npy"}, 5, 1, "greedy"
			_, err := Select(context.Background(), env, req)
			return err
		}, []string{"select: the reference few.npy has 5 rows", singular, "every FID against it"}},
		{"select pools", func(env job.Env) error {
			req := NewSelectRequest()
			req.Ref, req.Pools, req.Steps, req.Trials, req.Algos = "big.npy", []string{"few.npy", "enough.npy", "big2.npy"}, 5, 1, "greedy"
			_, err := Select(context.Background(), env, req)
			return err
		}, []string{"select: pool few.npy has 5 rows", singular, "the FID of a whole pool"}},
		{"select two pools", func(env job.Env) error {
			req := NewSelectRequest()
			req.Ref, req.Pools, req.Steps, req.Trials, req.Algos = "big.npy", []string{"few.npy", "few.npy"}, 5, 1, "greedy"
			_, err := Select(context.Background(), env, req)
			return err
		}, []string{"select: 2 pools have no more rows than their 8 dimensions: few.npy (5), few.npy (5)", "singular", "at least 9 rows"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var warns []string
			env := job.Env{FS: fsys, Warn: func(m string) {
				// A statistics file without provenance has its own note.
				if !strings.Contains(m, "records no provenance") {
					warns = append(warns, m)
				}
			}}
			if err := c.run(env); err != nil {
				t.Fatal(err)
			}
			if c.want == nil {
				if len(warns) != 0 {
					t.Errorf("warnings %q, want none", warns)
				}
				return
			}
			if len(warns) != 1 {
				t.Fatalf("warnings %q, want one", warns)
			}
			for _, w := range c.want {
				if !strings.Contains(warns[0], w) {
					t.Errorf("warning %q lacks %q", warns[0], w)
				}
			}
		})
	}
}
