package frechet

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestInceptionScore(t *testing.T) {
	uniform := mat.NewDense(20, 4, nil)
	for i := 0; i < 20; i++ {
		for j := 0; j < 4; j++ {
			uniform.Set(i, j, 0.25)
		}
	}
	oneHot := func(n int) *mat.Dense {
		x := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			x.Set(i, (i*7)%n, 1) // a permutation: n distinct classes
		}
		return x
	}
	// Rows 0-1 identical (split IS 1), rows 2-4 distinct one-hot (split
	// IS 3): with boundaries ⌊i n/splits⌋ the splits are rows 0-1 and 2-4,
	// so mean 2 and population std 1. np.array_split would give 0-2, 3-4.
	uneven := mat.NewDense(5, 3, []float64{
		0.2, 0.3, 0.5,
		0.2, 0.3, 0.5,
		1, 0, 0,
		0, 1, 0,
		0, 0, 1,
	})
	for _, tc := range []struct {
		name      string
		probs     *mat.Dense
		splits    int
		mean, std float64
	}{
		{"uniform rows, 1 split", uniform, 1, 1, 0},
		{"uniform rows, 10 splits", uniform, 10, 1, 0},
		{"10 distinct one-hot rows", oneHot(10), 1, 10, 0},
		{"1000 distinct one-hot rows", oneHot(1000), 1, 1000, 0},
		{"two classes by hand", mat.NewDense(2, 2, []float64{0.9, 0.1, 0.2, 0.8}), 1, 1.3170522760436802, 0},
		{"three classes by hand", mat.NewDense(3, 3, []float64{0.7, 0.2, 0.1, 0.1, 0.6, 0.3, 0.25, 0.25, 0.5}), 1, 1.2007011114232362, 0},
		{"uneven splits", uneven, 2, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mean, std, err := InceptionScore(tc.probs, tc.splits)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(mean-tc.mean) > 1e-12*tc.mean || math.Abs(std-tc.std) > 1e-12 {
				t.Errorf("IS = %.15g ± %.3g, want %.15g ± %.3g", mean, std, tc.mean, tc.std)
			}
		})
	}
}

func TestInceptionScoreErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		probs    *mat.Dense
		splits   int
		row, col int // 0: not a *RowError
	}{
		{"negative entry", mat.NewDense(3, 2, []float64{0.5, 0.5, 1.1, -0.1, 0, 1}), 1, 2, 2},
		{"row sums to 0.9", mat.NewDense(3, 2, []float64{0.5, 0.5, 0.5, 0.5, 0.4, 0.5}), 1, 3, 0},
		{"sum off by 2e-6", mat.NewDense(1, 2, []float64{0.5, 0.500002}), 1, 1, 0},
		{"NaN", mat.NewDense(1, 2, []float64{math.NaN(), 1}), 1, 1, 1},
		{"zero splits", mat.NewDense(1, 2, []float64{0.5, 0.5}), 0, 0, 0},
		{"more splits than rows", mat.NewDense(1, 2, []float64{0.5, 0.5}), 2, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := InceptionScore(tc.probs, tc.splits)
			if err == nil {
				t.Fatal("no error")
			}
			var re *RowError
			if tc.row == 0 {
				if errors.As(err, &re) {
					t.Errorf("unexpected *RowError %v", err)
				}
				return
			}
			if !errors.As(err, &re) || re.Row != tc.row || re.Col != tc.col {
				t.Errorf("error %v, want a *RowError at row %d, column %d", err, tc.row, tc.col)
			}
		})
	}
	// Within tolerance is accepted.
	if _, _, err := InceptionScore(mat.NewDense(1, 2, []float64{0.5, 0.5000005}), 1); err != nil {
		t.Errorf("sum off by 5e-7: %v", err)
	}
}

func TestCheckAndNormalizeProbs(t *testing.T) {
	tests := []struct {
		name    string
		rows    []float64 // 2 columns
		tol     float64
		wantRow int // 0: accepted
	}{
		{"exact", []float64{0.25, 0.75, 1, 0}, 1e-6, 0},
		{"within 1e-6", []float64{0.5, 0.5 + 9e-7, 1, 0}, 1e-6, 0},
		{"float32-like, default", []float64{0.5, 0.5, 0.5, 0.5 + 5e-6}, 1e-6, 2},
		{"float32-like, loose", []float64{0.5, 0.5, 0.5, 0.5 + 5e-6}, 1e-4, 0},
		{"negative", []float64{1.5, -0.5, 1, 0}, 1, 1},
		{"NaN", []float64{1, 0, math.NaN(), 1}, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mat.NewDense(len(tt.rows)/2, 2, append([]float64(nil), tt.rows...))
			err := CheckProbs(p, tt.tol)
			var re *RowError
			if tt.wantRow == 0 && err != nil || tt.wantRow > 0 && (!errors.As(err, &re) || re.Row != tt.wantRow) {
				t.Fatalf("CheckProbs: %v, want row %d", err, tt.wantRow)
			}
			err = NormalizeProbs(p, tt.tol)
			if tt.wantRow > 0 {
				for i, v := range p.RawMatrix().Data {
					if math.Float64bits(v) != math.Float64bits(tt.rows[i]) {
						t.Fatalf("NormalizeProbs changed value %d on error", i)
					}
				}
				if err == nil {
					t.Fatal("NormalizeProbs accepted an invalid row")
				}
				return
			}
			for i := 0; i < p.RawMatrix().Rows; i++ {
				if s := p.At(i, 0) + p.At(i, 1); math.Abs(s-1) > 1e-15 {
					t.Errorf("row %d sums to %.17g after NormalizeProbs", i+1, s)
				}
			}
		})
	}
}
