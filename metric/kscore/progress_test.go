package kscore

import (
	"context"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/kernel"
)

// TestProgress: the long computations report monotone progress that ends
// complete, once per instance when there are several, and the numbers do
// not depend on whether anyone watches.
func TestProgress(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	set := func(m int) *mat.Dense {
		x := mat.NewDense(m, 3, nil)
		for i := 0; i < m; i++ {
			for j := 0; j < 3; j++ {
				x.Set(i, j, r.NormFloat64())
			}
		}
		return x
	}
	k := kernel.RBF{Gamma: 0.5}
	type call struct{ done, total int }
	watch := func() (context.Context, *[]call) {
		var calls []call
		return WithProgress(context.Background(), func(d, n int) { calls = append(calls, call{d, n}) }), &calls
	}
	check := func(name string, calls []call, total int) {
		t.Helper()
		if len(calls) < 2 || calls[len(calls)-1] != (call{total, total}) {
			t.Fatalf("%s: calls %v, want to end at (%d, %d)", name, calls, total, total)
		}
		for i := 1; i < len(calls); i++ {
			if calls[i].total != total || calls[i].done < calls[i-1].done {
				t.Fatalf("%s: calls %v not monotone over one total", name, calls)
			}
		}
	}
	// 3 epochs x 2 members x 300 samples: several panels.
	epochs := [][]*mat.Dense{{set(300), set(300)}, {set(300), set(300)}, {set(300), set(300)}}
	ctx, calls := watch()
	cov, _, err := CovarianceMatrix(ctx, k, epochs)
	if err != nil {
		t.Fatal(err)
	}
	check("CovarianceMatrix", *calls, 1000)
	plain, _, _ := CovarianceMatrix(context.Background(), k, epochs)
	if !mat.Equal(cov, plain) {
		t.Error("CovarianceMatrix differs when watched")
	}
	// 2 models x 4 instances: progress counts instances.
	models := [][]*mat.Dense{{set(5), set(5), set(5), set(5)}, {set(5), set(5), set(5), set(5)}}
	ctx, calls = watch()
	if _, _, err := DecomposeConditional(ctx, k, models, nil); err != nil {
		t.Fatal(err)
	}
	check("DecomposeConditional", *calls, 4)
	if len(*calls) != 5 {
		t.Errorf("DecomposeConditional: %d calls %v, want 5 (0..4 instances)", len(*calls), *calls)
	}
}
