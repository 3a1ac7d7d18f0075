package evalstat

import (
	"math"
	"testing"
)

func TestAUARC(t *testing.T) {
	for _, tc := range []struct {
		name    string
		u       []float64
		correct []bool
		want    float64
	}{
		// Surest first: c, c, w. Keep 3: 2/3, keep 2: 1, keep 1: 1.
		{"perfect", []float64{0.1, 0.2, 0.9}, []bool{true, true, false}, (2.0/3 + 1 + 1) / 3},
		// Surest first: w, c, c. Keep 3: 2/3, 2: 1/2, 1: 0.
		{"reversed", []float64{0.9, 0.2, 0.1}, []bool{true, true, false}, (2.0/3 + 0.5 + 0) / 3},
		// All tied: every kept set has the expected accuracy 2/3.
		{"ties", []float64{1, 1, 1}, []bool{true, false, true}, 2.0 / 3},
		// Tie of a correct and a wrong answer after a sure correct one:
		// keep 3: 2/3, keep 2: (1 + 1/2)/2, keep 1: 1.
		{"partial tie", []float64{0, 5, 5}, []bool{true, true, false}, (2.0/3 + 0.75 + 1) / 3},
		{"one", []float64{3}, []bool{false}, 0},
	} {
		got, err := AUARC(tc.u, tc.correct)
		if err != nil || math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%s: AUARC = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	if _, err := AUARC([]float64{math.NaN()}, []bool{true}); err == nil {
		t.Error("NaN: no error")
	}
	if _, err := AUARC(nil, nil); err == nil {
		t.Error("empty: no error")
	}
	r, a, err := AccuracyRejection([]float64{0.1, 0.2, 0.9}, []bool{true, true, false})
	if err != nil || len(r) != 3 || r[0] != 0 || math.Abs(r[2]-2.0/3) > 1e-15 || a[2] != 1 {
		t.Errorf("curve %v %v %v", r, a, err)
	}
}
