package semantic

import (
	"math"
	"slices"
	"testing"
)

// byLabel entails within equal labels only.
func byLabel(labels ...string) func(i, j int) (bool, error) {
	return func(i, j int) (bool, error) { return labels[i] == labels[j], nil }
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }

func TestClustersAndScores(t *testing.T) {
	ln := math.Log
	for _, tc := range []struct {
		name         string
		labels       []string
		logp         []float64
		clusters     []int
		se, disc, mc float64
	}{
		{"identical", []string{"a", "a", "a"}, []float64{-1, -2, -3}, []int{0, 0, 0}, 0, 0,
			-ln(math.Exp(-1) + math.Exp(-2) + math.Exp(-3))},
		{"all different, equal probability", []string{"a", "b", "c", "d"}, []float64{-2, -2, -2, -2}, []int{0, 1, 2, 3}, ln(4), ln(4), 2},
		// p ∝ (0.1+0.3, 0.6) = (0.4, 0.6); frequencies (2/3, 1/3).
		{"two clusters", []string{"x", "y", "x"}, []float64{ln(0.1), ln(0.6), ln(0.3)}, []int{0, 1, 0},
			-(0.4*ln(0.4) + 0.6*ln(0.6)), -(2.0/3*ln(2.0/3) + 1.0/3*ln(1.0/3)), -(2*ln(0.4) + ln(0.6)) / 3},
		{"single sample", []string{"a"}, []float64{-0.7}, []int{0}, 0, 0, 0.7},
	} {
		cl, err := Clusters(len(tc.labels), byLabel(tc.labels...))
		if err != nil || !slices.Equal(cl, tc.clusters) {
			t.Fatalf("%s: clusters %v %v, want %v", tc.name, cl, err, tc.clusters)
		}
		if g := NumSets(cl); g != NumSets(tc.clusters) || g != len(slices.Compact(slices.Sorted(slices.Values(tc.labels)))) {
			t.Errorf("%s: numsets %d", tc.name, g)
		}
		se, err := SE(cl, tc.logp)
		if err != nil || !near(se, tc.se) {
			t.Errorf("%s: SE %.12g %v, want %.12g", tc.name, se, err, tc.se)
		}
		d, _ := SEDiscrete(cl)
		if !near(d, tc.disc) {
			t.Errorf("%s: SEDiscrete %.12g, want %.12g", tc.name, d, tc.disc)
		}
		mc, _ := SEMonteCarlo(cl, tc.logp)
		if !near(mc, tc.mc) {
			t.Errorf("%s: SEMonteCarlo %.12g, want %.12g", tc.name, mc, tc.mc)
		}
	}
}

// One-way entailment does not merge: "Paris" entails "a city in France"
// but not back.
func TestClustersBidirectional(t *testing.T) {
	cl, err := Clusters(2, func(i, j int) (bool, error) { return i == j || i == 0 && j == 1, nil })
	if err != nil || !slices.Equal(cl, []int{0, 1}) {
		t.Errorf("clusters %v %v, want [0 1]", cl, err)
	}
}

func TestSERejects(t *testing.T) {
	if _, err := SE([]int{0, 1}, []float64{-1}); err == nil {
		t.Error("length mismatch accepted")
	}
	if _, err := SE([]int{0}, []float64{math.NaN()}); err == nil {
		t.Error("NaN accepted")
	}
	if _, err := SEDiscrete(nil); err == nil {
		t.Error("no samples accepted")
	}
}
