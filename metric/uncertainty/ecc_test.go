package uncertainty

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestEcc(t *testing.T) {
	block := func(groups ...int) *mat.SymDense {
		var m int
		for _, g := range groups {
			m += g
		}
		w := mat.NewSymDense(m, nil)
		at := 0
		for _, g := range groups {
			for i := at; i < at+g; i++ {
				for j := i; j < at+g; j++ {
					w.SetSym(i, j, 1)
				}
			}
			at += g
		}
		return w
	}
	// Two answers alike at 0.5: L has eigenvalues 1 − (1 ± 0.5)/1.5 =
	// 0 and 2/3, both kept; V is orthogonal, so Ecc² = 2 − ‖Vᵀ1‖²/2 = 1.
	half := mat.NewSymDense(2, []float64{1, 0.5, 0.5, 1})
	for _, tc := range []struct {
		name string
		w    mat.Symmetric
		want float64
	}{
		{"identical", block(4), 0},
		{"all different", block(1, 1, 1, 1, 1), 2},
		{"two clusters", block(3, 2), 1},
		{"three clusters", block(2, 2, 1), math.Sqrt(2)},
		{"single", block(1), 0},
		{"partial", half, 1},
	} {
		if got := Ecc(tc.w, EccThreshold); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: Ecc = %.12g, want %.12g", tc.name, got, tc.want)
		}
	}
	// Answers all alike are 0 exactly, not rounding that differs from one
	// eigensolver to another (it printed 1.9e-16 in pure Go, 1.2e-16 with
	// OpenBLAS).
	for _, m := range []int{2, 3, 4, 7, 10} {
		if got := Ecc(block(m), EccThreshold); got != 0 {
			t.Errorf("%d identical answers: Ecc = %g, want exactly 0", m, got)
		}
	}
	if got := Ecc(mat.NewSymDense(2, nil), EccThreshold); !math.IsNaN(got) {
		t.Errorf("zero degree: Ecc = %v, want NaN", got)
	}
}
