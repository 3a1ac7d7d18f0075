package exactmmd

import (
	"testing"

	"gonum.org/v1/gonum/mat"
)

// By hand, in one dimension with x = {0, 2} and y = {1, 3}. Linear
// kernel a·b: within x (distinct pairs) 0, within y 3, across
// (0 + 0 + 2 + 6)/4 = 2, so MMD² = 0 + 3 − 2·2 = −1.
func TestPolyByHand(t *testing.T) {
	x := mat.NewDense(2, 1, []float64{0, 2})
	y := mat.NewDense(2, 1, []float64{1, 3})
	if got := Poly(x, y, 1, 0, 1); got != -1 {
		t.Errorf("linear: %v, want -1", got)
	}
	// (a·b + 1)²: within x: (1)² twice → 1; within y: (4)² → 16;
	// across: (1, 1, 9, 49) → 15. 1 + 16 − 30 = −13.
	if got := Poly(x, y, 1, 1, 2); got != -13 {
		t.Errorf("quadratic: %v, want -13", got)
	}
}
