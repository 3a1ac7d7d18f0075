package online

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/frechet"
)

// The 2024-code and 2025 bonuses against a hand computation of the
// authors' formulas (FID-eval.py of github yannxiaoyanhu/optimism-based-eval
// and algorithms/fd_ucb.py of github yannxiaoyanhu/dgm-online-eval)
// followed line by line on fixed statistics: Σ_r = diag(4, 1) (‖Σ_r‖₂ = 4,
// Tr Σ_r^{1/2} = 3; at truncation ratio 0.5 only the eigenvalue 4
// survives, so the 2024 code's Tr Σ_r^{1/2} is 2), n = 10, δ = 0.05.
func TestBonusFormsByHand(t *testing.T) {
	ref, err := NewFIDReference(frechet.Stats{Mu: []float64{0, 0}, Sigma: mat.NewSymDense(2, []float64{4, 0, 0, 1})})
	if err != nil {
		t.Fatal(err)
	}
	e := FIDEstimate{N: 10, FID: 40, MaxVar: 1.5, TruncAbsSum: 3, TruncTraceRef: 5, MeanDeviation: 1.2, MeanDistance: 0.7,
		ThreshNorm: 2, ThreshTraceSq: 5, ThreshTrace: 3}
	p := DefaultFIDParams()
	p.TruncationRatio = 0.5
	for _, tc := range []struct {
		form BonusForm
		want float64
	}{
		// L = √log 20; σ² = 1.5 + L/√20; m = min(√(6L/10), L√(σ²/10));
		// V = 20σ⁴√((20/σ² + L²)/10) + m²; B = 2(0.5 + m + 1.2)m + 5√0.8 L + 2√V.
		{BonusCode2024, 29.714118154317593},
		// L = log 20; Δμ = √((√(5L) + 2L)/10); ΔΣ = 2√((1.5 + L)/10) + Δμ²;
		// B = Δμ(Δμ + 0.7) + 3√ΔΣ + 3√(L/10) + 2L/10.
		{BonusFDUCB2025, 8.498979536028207},
	} {
		p.Form = tc.form
		got := e.FID - FIDUCB.Index(e, ref, p)
		if math.Abs(got-tc.want) > 1e-12*tc.want {
			t.Errorf("%v: bonus %.15g, want %.15g", tc.form, got, tc.want)
		}
		p.BonusScale = 0.5
		if got := e.FID - FIDUCB.Index(e, ref, p); math.Abs(got-tc.want/2) > 1e-12*tc.want {
			t.Errorf("%v at scale 0.5: bonus %v, want %v", tc.form, got, tc.want/2)
		}
		p.BonusScale = 1
	}
	for _, s := range []string{"paper", "code2024", "fducb2025"} {
		f, err := ParseBonusForm(s)
		if err != nil || f.String() != s {
			t.Errorf("ParseBonusForm(%q) = %v, %v", s, f, err)
		}
	}
	if _, err := ParseBonusForm("2023"); err == nil {
		t.Error("unknown form parsed")
	}
}

// The estimator fills the 2025 statistics from the thresholded sample
// covariance: with rows whose covariance is diagonal and large against
// the threshold, nothing is zeroed and they are the eigenvalues of Σ̂.
func TestThreshStats(t *testing.T) {
	cov := mat.NewSymDense(2, []float64{3, 0.001, 0.001, 1})
	var e FIDEstimate
	if err := threshStats(&e, cov, 1000); err != nil {
		t.Fatal(err)
	}
	// The off-diagonal 0.001 is below 2√(2·3·1·log 2/1000) = 0.129: zeroed.
	if e.ThreshNorm != 3 || e.ThreshTrace != 4 || e.ThreshTraceSq != 10 {
		t.Errorf("norm %v, trace %v, Σλ² %v; want 3, 4, 10", e.ThreshNorm, e.ThreshTrace, e.ThreshTraceSq)
	}
}

// Below 8 ln d rows the thresholding zeroes the whole covariance, and the
// 2025 bonus has no bound: the generator ranks first (as the authors'
// code, whose effective rank is 0/0 there, ranks it), whatever the scale.
// From 8 ln d rows on, a generator of zero variance has a finite index.
func TestFDUCB2025UnboundedBelowThreshold(t *testing.T) {
	d := 8 // 8 ln 8 = 16.6 rows
	ref, err := NewFIDReference(frechet.Stats{Mu: make([]float64, d), Sigma: identity(d)})
	if err != nil {
		t.Fatal(err)
	}
	p := DefaultFIDParams()
	p.Form = BonusFDUCB2025
	for _, tc := range []struct {
		n     int
		scale float64
		inf   bool
	}{
		{16, 1, true}, {16, 0, true}, {16, 1e-9, true},
		{17, 1, false}, {17, 0, false},
	} {
		p.BonusScale = tc.scale
		e := FIDEstimate{N: tc.n, FID: 3, MeanDistance: 1} // ThreshNorm 0: nothing survived
		idx := FIDUCB.Index(e, ref, p)
		if math.IsInf(idx, -1) != tc.inf || math.IsNaN(idx) {
			t.Errorf("n %d, scale %g: index %v, want -Inf %v", tc.n, tc.scale, idx, tc.inf)
		}
	}
}

func identity(d int) *mat.SymDense {
	s := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		s.SetSym(i, i, 1)
	}
	return s
}

// auto is fducb2025 up to AutoBonusMaxDim dimensions and paper above; a
// form's name is kept whatever d; anything else is an error listing the
// choices, auto among them.
func TestChooseBonusForm(t *testing.T) {
	for _, c := range []struct {
		s    string
		d    int
		want BonusForm
	}{
		{"auto", 1, BonusFDUCB2025},
		{"auto", AutoBonusMaxDim, BonusFDUCB2025},
		{"auto", AutoBonusMaxDim + 1, BonusPaper},
		{"auto", 2048, BonusPaper},
		{"paper", 2, BonusPaper},
		{"code2024", 2048, BonusCode2024},
		{"fducb2025", 2048, BonusFDUCB2025},
	} {
		if got, err := ChooseBonusForm(c.s, c.d); err != nil || got != c.want {
			t.Errorf("ChooseBonusForm(%q, %d) = %v, %v; want %v", c.s, c.d, got, err, c.want)
		}
	}
	for _, s := range []string{"", "Auto", "eq10"} {
		if _, err := ChooseBonusForm(s, 16); err == nil || !strings.Contains(err.Error(), BonusChoices) {
			t.Errorf("ChooseBonusForm(%q): %v, want an error listing %s", s, err, BonusChoices)
		}
	}
}
