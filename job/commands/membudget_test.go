package commands

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/tensor/membudget"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/imagejob"
	"github.com/genlens/genlens/job/reprjob"
)

// randomNPY returns the bytes of an .npy of rows × cols normal values.
func randomNPY(t *testing.T, rows, cols int, seed uint64) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	a := &dataio.Array{Shape: []int{rows, cols}, Data: make([]float64, rows*cols)}
	for i := range a.Data {
		a.Data[i] = r.NormFloat64()
	}
	var b bytes.Buffer
	if err := dataio.EncodeNPY(&b, a); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Every matrix whose side an input's shape decides goes through the
// memory budget: under a 1 MiB budget, inputs of a few kilobytes whose
// covariance, Gram or kernel matrices would take megabytes are refused as
// bad input, naming the budget's field, before the allocation.
func TestMatrixBudget(t *testing.T) {
	defer membudget.SetLimit(membudget.SetLimit(1 << 20))
	fsys := fstest.MapFS{
		"wide.npy":  {Data: randomNPY(t, 3, 600, 1)}, // 600² covariance: 2.7 MiB
		"wide2.npy": {Data: randomNPY(t, 3, 600, 2)}, //
		"tall.npy":  {Data: randomNPY(t, 600, 1, 3)}, // 600² Gram matrices
		"tall2.npy": {Data: randomNPY(t, 600, 1, 4)}, //
		"rows.npy":  {Data: randomNPY(t, 400, 2, 5)}, // 400 × 800 kernel values: 2.4 MiB
		"rows2.npy": {Data: randomNPY(t, 400, 2, 6)}, //
		"mid.npy":   {Data: randomNPY(t, 3, 300, 9)}, // 300² covariance: 0.7 MiB, the distance's four: 2.7 MiB
		"mid2.npy":  {Data: randomNPY(t, 3, 300, 10)},
		"ok.npy":    {Data: randomNPY(t, 50, 4, 7)}, // fits
		"ok2.npy":   {Data: randomNPY(t, 50, 4, 8)}, //
	}
	env := job.Env{FS: fsys}
	ctx := context.Background()
	stats := func(in string) error {
		r := imagejob.NewStatsRequest()
		r.In = in
		_, err := imagejob.Stats(ctx, env, r)
		return err
	}
	compare := func(metrics, real, fake string) error {
		r := imagejob.NewCompareRequest()
		r.Real, r.Fake, r.Metrics = real, fake, metrics
		r.KIDSubsetSize = 400 // the rows of rows.npy: one subset of all of them
		_, err := imagejob.Compare(ctx, env, r)
		return err
	}
	cka := func(x, y string) error {
		r := reprjob.NewCKARequest()
		r.X, r.Y = x, y
		_, err := reprjob.CKA(ctx, env, r)
		return err
	}
	for _, c := range []struct {
		name string
		run  func() error
		what string // "" when it fits
	}{
		{"stats", func() error { return stats("wide.npy") }, "the covariance of the features: a 600 × 600 matrix takes 2.7 MiB"},
		{"compare fid", func() error { return compare("fid", "wide.npy", "wide2.npy") }, "the Fréchet distance: 4 matrices of 600 × 600 take 11 MiB"},
		// Each covariance fits; the distance's work on both does not.
		{"compare fid, the distance's matrices", func() error { return compare("fid", "mid.npy", "mid2.npy") }, "the Fréchet distance: 4 matrices of 300 × 300 take 2.7 MiB"},
		{"stats of the distance's input fits", func() error { return stats("mid.npy") }, ""},
		{"cka", func() error { return cka("tall.npy", "tall2.npy") }, "CKA's Gram matrices of the examples: 4 matrices of 600 × 600"},
		{"compare mmd", func() error { return compare("mmd", "rows.npy", "rows2.npy") }, "the kernel values between the samples: a 400 × 800 matrix"},
		{"compare kid", func() error { return compare("kid", "rows.npy", "rows2.npy") }, "the kernel values between the samples: a 400 × 800 matrix"},
		{"stats fits", func() error { return stats("ok.npy") }, ""},
		{"cka fits", func() error { return cka("ok.npy", "ok2.npy") }, ""},
		{"compare fits", func() error { return compare("fid,mmd", "ok.npy", "ok2.npy") }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if c.what == "" {
				if err != nil {
					t.Fatalf("err = %v, want none under the budget", err)
				}
				return
			}
			var be *membudget.Error
			if !errors.As(err, &be) {
				t.Fatalf("err = %v, want a *membudget.Error", err)
			}
			if fault.Classify(err) != fault.KindInput {
				t.Errorf("Classify = %v, want input (exit 2, 422)", fault.Classify(err))
			}
			if msg := err.Error(); !strings.Contains(msg, c.what) || !strings.Contains(msg, "raise matrix_budget_mb") {
				t.Errorf("err = %q, want it to say %q and name matrix_budget_mb", msg, c.what)
			}
		})
	}
}
