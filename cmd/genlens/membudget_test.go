package main

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/tensor/membudget"
)

// The inputs of a hostile run: two rows of 30,000 features (480 KB) ask
// stats for a 7.2 GB covariance, 60,000 × 1 arrays ask cka for 28.8 GB
// Gram matrices. Each is exit 2 with a message naming the budget's flag,
// not an out-of-memory crash; the flag raises the budget.
func TestMatrixBudgetRefusesHostileShapes(t *testing.T) {
	t.Cleanup(func() { membudget.SetLimit(0) }) // the flag sets it for the process
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	vals := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = r.NormFloat64()
		}
		return v
	}
	wide := writeArray(t, dir, "wide.npy", []int{2, 30000}, vals(60000))
	tall := writeArray(t, dir, "tall.npy", []int{60000, 1}, vals(60000))
	tall2 := writeArray(t, dir, "tall2.npy", []int{60000, 1}, vals(60000))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"stats", "--in", wide, "--out", dir + "/s.npz"}, "the covariance of the features: a 30000 × 30000 matrix takes 6.7 GiB"},
		{[]string{"compare", "--real", wide, "--fake", wide}, "the Fréchet distance: 4 matrices of 30000 × 30000 take 26.8 GiB"},
		{[]string{"cka", "--x", tall, "--y", tall2}, "CKA's Gram matrices of the examples: 4 matrices of 60000 × 60000 take 107.3 GiB"},
		{[]string{"cka", "--x", tall, "--y", tall2, "--matrix-budget-mb", "1000"}, "over the matrix memory budget of 1000 MiB"},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, &out, &errb)
		if code != 2 {
			t.Errorf("genlens %s: exit %d, want 2; stderr %s", strings.Join(tc.args, " "), code, errb.String())
			continue
		}
		if msg := errb.String(); !strings.Contains(msg, tc.want) || !strings.Contains(msg, "raise --matrix-budget-mb (MiB)") {
			t.Errorf("genlens %s: stderr %q, want %q and the flag", tc.args[0], msg, tc.want)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"cka", "--x", tall, "--y", tall2, "--matrix-budget-mb", "-1"}, &out, &errb); code != 2 {
		t.Errorf("--matrix-budget-mb -1: exit %d, want 2", code)
	}
}
