package evalstat

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

const tol = 1e-12

func TestAUROC(t *testing.T) {
	const F, T = false, true
	for _, test := range []struct {
		name  string
		score []float64
		pos   []bool
		want  float64
	}{
		{
			// Pairs (pos, neg): (0.35,0.1)=1 (0.35,0.4)=0 (0.8,0.1)=1
			// (0.8,0.4)=1, so 3/4; the example of sklearn's docs.
			name:  "sklearn doc",
			score: []float64{0.1, 0.4, 0.35, 0.8},
			pos:   []bool{F, F, T, T},
			want:  0.75,
		},
		{name: "perfect", score: []float64{1, 2, 3, 4}, pos: []bool{F, F, T, T}, want: 1},
		{name: "reversed", score: []float64{4, 3, 2, 1}, pos: []bool{F, F, T, T}, want: 0},
		{name: "all tied", score: []float64{7, 7, 7, 7, 7}, pos: []bool{T, F, F, T, F}, want: 0.5},
		{
			// Average ranks: the two 1s share ranks 1,2 -> 1.5; the two
			// 2s share 3,4 -> 3.5; the 3 has rank 5. Positive ranks sum
			// to 1.5+3.5+5 = 10; P = 3, N = 2, so
			// U = 10 - 3*4/2 = 4 and AUC = 4/(3*2) = 2/3.
			// By pairs (pos, neg): (1,1)=1/2 (1,2)=0 (2,1)=1 (2,2)=1/2
			// (3,1)=1 (3,2)=1, total 4 of 6.
			name:  "ties across classes",
			score: []float64{1, 1, 2, 2, 3},
			pos:   []bool{F, T, F, T, T},
			want:  2.0 / 3,
		},
		{
			// Single pair tied: one half.
			name:  "one tied pair",
			score: []float64{0.3, 0.3},
			pos:   []bool{T, F},
			want:  0.5,
		},
		{
			// Infinite scores are ordered and therefore allowed.
			name:  "infinities",
			score: []float64{math.Inf(-1), 0, math.Inf(1)},
			pos:   []bool{F, T, T},
			want:  1,
		},
	} {
		got, err := AUROC(test.score, test.pos)
		if err != nil {
			t.Errorf("%s: unexpected error: %v", test.name, err)
			continue
		}
		if math.Abs(got-test.want) > tol {
			t.Errorf("%s: AUROC = %v, want %v", test.name, got, test.want)
		}
	}
}

func TestAUROCErrors(t *testing.T) {
	const F, T = false, true
	for _, test := range []struct {
		name  string
		score []float64
		pos   []bool
	}{
		{name: "empty", score: nil, pos: nil},
		{name: "no positive", score: []float64{1, 2}, pos: []bool{F, F}},
		{name: "no negative", score: []float64{1, 2}, pos: []bool{T, T}},
		{name: "length mismatch", score: []float64{1, 2, 3}, pos: []bool{T, F}},
		{name: "NaN", score: []float64{1, math.NaN(), 3}, pos: []bool{T, F, F}},
	} {
		got, err := AUROC(test.score, test.pos)
		if err == nil {
			t.Errorf("%s: expected error, got AUROC = %v", test.name, got)
		}
	}
}

// TestAUROCTrapezoid checks the rank formula against an independent
// implementation of scikit-learn's method: the trapezoidal area under the
// ROC curve whose vertices are taken only at distinct thresholds. Scores are
// drawn from a few values so that ties within and across classes are common.
func TestAUROCTrapezoid(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 500; trial++ {
		n := 2 + rnd.IntN(40)
		levels := 1 + rnd.IntN(8)
		score := make([]float64, n)
		pos := make([]bool, n)
		for i := range score {
			score[i] = float64(rnd.IntN(levels)) / 4
			pos[i] = rnd.IntN(3) == 0
		}
		pos[0], pos[1] = true, false
		got, err := AUROC(score, pos)
		if err != nil {
			t.Fatalf("trial %d: unexpected error: %v", trial, err)
		}
		if want := trapezoidAUC(score, pos); math.Abs(got-want) > 1e-12 {
			t.Errorf("trial %d: AUROC = %v, trapezoid = %v (score=%v pos=%v)", trial, got, want, score, pos)
		}
		if want := pairAUC(score, pos); math.Abs(got-want) > 1e-12 {
			t.Errorf("trial %d: AUROC = %v, pairwise = %v", trial, got, want)
		}
	}
}

// trapezoidAUC follows sklearn's roc_curve + auc: sweep thresholds from high
// to low, emitting a ROC vertex after each group of tied scores.
func trapezoidAUC(score []float64, pos []bool) float64 {
	idx := make([]int, len(score))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case score[a] > score[b]:
			return -1
		case score[a] < score[b]:
			return 1
		}
		return 0
	})
	var p, n float64
	for _, b := range pos {
		if b {
			p++
		} else {
			n++
		}
	}
	var tp, fp, area, prevTPR, prevFPR float64
	for k, i := range idx {
		if pos[i] {
			tp++
		} else {
			fp++
		}
		if k+1 < len(idx) && score[idx[k+1]] == score[i] {
			continue
		}
		tpr, fpr := tp/p, fp/n
		area += (fpr - prevFPR) * (tpr + prevTPR) / 2
		prevTPR, prevFPR = tpr, fpr
	}
	return area
}

// pairAUC is the O(PN) definition: P(pos > neg) + P(pos == neg)/2.
func pairAUC(score []float64, pos []bool) float64 {
	var sum, pairs float64
	for i := range score {
		if !pos[i] {
			continue
		}
		for j := range score {
			if pos[j] {
				continue
			}
			pairs++
			switch {
			case score[i] > score[j]:
				sum++
			case score[i] == score[j]:
				sum += 0.5
			}
		}
	}
	return sum / pairs
}

// TestAUROCLarge guards the O(n log n) cost: a quadratic implementation
// would take minutes here.
func TestAUROCLarge(t *testing.T) {
	const n = 1 << 20
	score := make([]float64, n)
	pos := make([]bool, n)
	for i := range score {
		score[i] = float64(i % 1000)
		pos[i] = i%1000 >= 500 // positives take the upper half of the levels
	}
	got, err := AUROC(score, pos)
	if err != nil {
		t.Fatal(err)
	}
	if got != 1 {
		t.Errorf("AUROC = %v, want 1", got)
	}
}
