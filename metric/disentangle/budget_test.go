package disentangle

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/membudget"
)

// The median rule's distances between the CKA images grow with the
// square of their number, which the training file decides: they go
// through the memory budget like the pixel matrices.
func TestMedianRuleOverBudget(t *testing.T) {
	defer membudget.SetLimit(membudget.SetLimit(1 << 20))
	r := rand.New(rand.NewPCG(1, 1))
	const n = 400 // 2 × 400² float64 = 2.4 MiB
	x := mat.NewDense(n, 4, nil)
	for i := range n {
		for j := range 4 {
			x.Set(i, j, r.Float64())
		}
	}
	_, err := Analyze(context.Background(), x, x, []*mat.Dense{x}, Grid{2, 2, 1}, Options{CKAImages: n, CKABatch: 50, Clusters: 2})
	var be *membudget.Error
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "the distances between the CKA images") {
		t.Fatalf("err = %v, want the budget's error", err)
	}
	// With gamma given there is no median to take.
	if _, err := Analyze(context.Background(), x, x, []*mat.Dense{x}, Grid{2, 2, 1}, Options{CKAImages: n, CKABatch: 50, Clusters: 2, Gamma: 1}); err != nil {
		t.Errorf("with gamma: %v", err)
	}
}
