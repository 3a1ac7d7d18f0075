package monitor

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func normalRows(r *rand.Rand, n int, f func(z []float64) []float64) *mat.Dense {
	var x *mat.Dense
	for i := range n {
		row := f([]float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()})
		if x == nil {
			x = mat.NewDense(n, len(row), nil)
		}
		x.SetRow(i, row)
	}
	return x
}

// TestDriftTwoCorrelatedFeatures checks the reconstruction error against
// its closed form: for two standardised features with correlation ρ > 0.3
// the first principal axis (1, 1)/√2 explains (1+ρ)/2 ≥ 65% of the
// variance and is the only one kept, so a row's error is its distance to
// that axis, |z₀ - z₁|/√2.
func TestDriftTwoCorrelatedFeatures(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := normalRows(r, 2000, func(z []float64) []float64 { return []float64{10 + 2*z[0], -3 + 0.5*(0.8*z[0]+0.6*z[1])} })
	m, err := FitDrift(x, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Components) != 1 || m.Explained < 0.85 || m.Explained > 0.95 {
		t.Fatalf("%d components explaining %.3f; want 1 explaining about (1+0.8)/2", len(m.Components), m.Explained)
	}
	for _, row := range [][]float64{{10, -3}, {12, -2}, {7, -3.4}, {30, 5}} {
		z0, z1 := (row[0]-m.Mean[0])/m.Std[0], (row[1]-m.Mean[1])/m.Std[1]
		want := math.Abs(z0-z1) / math.Sqrt2
		if got := m.RowError(row); math.Abs(got-want) > 1e-9 {
			t.Errorf("RowError(%v) = %.12g, want %.12g", row, got, want)
		}
	}
	// Standardisation with ddof 0, as StandardScaler.
	col := mat.Col(nil, 0, x)
	var s, ss float64
	for _, v := range col {
		s += v
	}
	mean := s / float64(len(col))
	for _, v := range col {
		ss += (v - mean) * (v - mean)
	}
	if math.Abs(m.Mean[0]-mean) > 1e-12 || math.Abs(m.Std[0]-math.Sqrt(ss/float64(len(col)))) > 1e-12 {
		t.Errorf("mean %v std %v, want %v %v", m.Mean[0], m.Std[0], mean, math.Sqrt(ss/float64(len(col))))
	}
}

// TestDriftComponentCount: three independent features of equal variance
// need two axes for 65% (one explains about a third), two uncorrelated
// features both (one explains about half); two nearly equal features and
// an independent one need one (it explains 2/3), as do three nearly
// equal ones.
func TestDriftComponentCount(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		f    func(z []float64) []float64
		want int
	}{
		{func(z []float64) []float64 { return z }, 2},
		{func(z []float64) []float64 { return z[:2] }, 2},
		{func(z []float64) []float64 { return []float64{z[0], z[0] + 0.01*z[1], z[2]} }, 1},
		{func(z []float64) []float64 { return []float64{z[0], z[0] + 0.01*z[1], z[0] - 0.01*z[2]} }, 1},
	} {
		x := normalRows(r, 3000, tc.f)
		_, d := x.Dims()
		names := []string{"a", "b", "c"}[:d]
		m, err := FitDrift(x, names)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Components) != tc.want {
			t.Errorf("%d features: %d components (explained %.3f), want %d", d, len(m.Components), m.Explained, tc.want)
		}
	}
}

func TestDriftChunk(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	x := normalRows(r, 500, func(z []float64) []float64 { return z[:2] })
	m, err := FitDrift(x, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	// 100 rows of which exactly 6 lie above a's maximum and 1 below b's
	// minimum (the same row as one of those): 6% > 5%.
	rows := make([][]float64, 100)
	for i := range rows {
		rows[i] = []float64{m.Min[0] + (m.Max[0]-m.Min[0])*float64(i)/100, 0}
	}
	for i := range 6 {
		rows[i][0] = m.Max[0] + 1
	}
	rows[0][1] = m.Min[1] - 1
	th := Thresholds{Lower: 0, Upper: 10}
	c, err := m.Chunk(rows, DefaultMaxOutOfReference, th)
	if err != nil {
		t.Fatal(err)
	}
	if c.OutOfReference != 0.06 || !c.Extrapolating || c.Above[0] != 6 || c.Below[1] != 1 || c.Below[0]+c.Above[1] != 0 {
		t.Errorf("out %v extrapolating %v below %v above %v; want 0.06 true [0 1] [6 0]", c.OutOfReference, c.Extrapolating, c.Below, c.Above)
	}
	// Exactly at the limit is not beyond it.
	// Exactly at the limit is not beyond it: only the density signal
	// (these rows are spread evenly over a's range, thinly at its ends)
	// may make the chunk extrapolating.
	c, _ = m.Chunk(rows[1:], 5.0/99, th)
	if c.Extrapolating != (c.ThinSupport > c.ThinLimit) {
		t.Errorf("5 of 99 rows outside with a limit of 5/99: extrapolating %v, thin support %v of limit %v", c.Extrapolating, c.ThinSupport, c.ThinLimit)
	}
	var want float64
	for _, row := range rows {
		want += m.RowError(row)
	}
	c, _ = m.Chunk(rows, 0.05, th)
	if math.Abs(c.ReconstructionError-want/100) > 1e-12 || c.ReconstructionAlert {
		t.Errorf("reconstruction error %v (alert %v), want %v inside [0, 10]", c.ReconstructionError, c.ReconstructionAlert, want/100)
	}
	// a is uniform over its range and b constant, neither normal: the
	// KS test sees it, Bonferroni-adjusted over the two features.
	if !c.KSAlert || !c.DriftAlert || c.KSAdjustedP != 2*math.Min(c.Features[0].P, c.Features[1].P) {
		t.Errorf("KS alert %v, drift alert %v, adjusted p %v (a's p %v)", c.KSAlert, c.DriftAlert, c.KSAdjustedP, c.Features[0].P)
	}
	if len(c.Features) != 2 || c.Features[0].Name != "a" || !(c.Features[0].P < 0.05) || c.Features[0].KS != KSStatistic(m.sorted[0], sortedCol(rows, 0)) {
		t.Errorf("features %+v", c.Features)
	}
}

func sortedCol(rows [][]float64, j int) []float64 {
	v := make([]float64, len(rows))
	for i, r := range rows {
		v[i] = r[j]
	}
	s := append([]float64(nil), v...)
	for i := 1; i < len(s); i++ {
		for k := i; k > 0 && s[k] < s[k-1]; k-- {
			s[k], s[k-1] = s[k-1], s[k]
		}
	}
	return s
}

// TestRunDrift: the pipeline's drift thresholds are mean ± 3 std of the
// reference rows' reconstruction errors averaged over reference chunks
// of the operational size, and a drift model survives its JSON.
func TestRunDrift(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	ref := normalRows(r, 400, func(z []float64) []float64 { return z })
	m, err := FitDrift(ref, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(m)
	var m2 DriftModel
	if err := json.Unmarshal(b, &m2); err != nil {
		t.Fatal(err)
	}
	if err := m2.Validate([]string{"a", "b", "c"}); err != nil {
		t.Fatal(err)
	}
	feats := make([][]float64, 300)
	for i := range feats {
		shift := 0.0
		if i >= 200 {
			shift = 3
		}
		feats[i] = []float64{r.NormFloat64() + shift, r.NormFloat64() - shift, r.NormFloat64()}
	}
	est := make([]float64, 300)
	chunks, _ := BySize(300, 100)
	refLoss := make([]float64, 400)
	rep, err := Run(Input{Chunks: chunks, Estimates: est, Reference: refLoss, Drift: &m2, Features: feats, NonNegative: true})
	if err != nil {
		t.Fatal(err)
	}
	want := resampledThresholds(m2.cappedReferenceErrors(), 100, DefaultWidth, true)
	if rep.DriftThresholds != want {
		t.Errorf("drift thresholds %+v, want %+v", rep.DriftThresholds, want)
	}
	for i, c := range rep.Results {
		d := c.Drift
		shifted := i == 2
		if d.Extrapolating != shifted || d.DriftAlert != shifted {
			t.Errorf("chunk %d: out %.2f extrapolating %v, reconstruction %.3f alert %v", i, d.OutOfReference, d.Extrapolating, d.ReconstructionError, d.DriftAlert)
		}
	}
}

// TestDriftThresholdsFalseAlarms: chunks of 250 rows drawn like a
// reference of 1,000 rows (three features, two of them correlated, so
// that the reconstruction error is not 0) raise the reconstruction alert
// about as often as ±3 standard deviations allow (0.3%), not the 10% or
// so that thresholds from four consecutive reference chunks raised.
func TestDriftThresholdsFalseAlarms(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 1))
	row := func(z []float64) []float64 { return []float64{z[0], 0.8*z[0] + 0.6*z[1], z[2]} }
	const refs, chunks, size = 40, 10, 250
	alerts := 0
	for range refs {
		m, err := FitDrift(normalRows(r, 1000, row), []string{"a", "b", "c"})
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Components) == 3 {
			t.Fatal("every principal axis kept: the reconstruction error would be 0")
		}
		feats := make([][]float64, chunks*size)
		x := normalRows(r, chunks*size, row)
		for i := range feats {
			feats[i] = x.RawRowView(i)
		}
		cs, _ := BySize(chunks*size, size)
		rep, err := Run(Input{Chunks: cs, Estimates: make([]float64, chunks*size), Reference: make([]float64, 1000), Drift: m, Features: feats, NonNegative: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rep.Results {
			alerts += b2i(c.Drift.ReconstructionAlert)
		}
	}
	if alerts > refs*chunks*2/100 {
		t.Errorf("reconstruction alert on %d of %d chunks drawn like the reference", alerts, refs*chunks)
	}
}

// TestResampledThresholds checks the spread of a chunk mean against its
// closed form and that a reference too small for it has none.
func TestResampledThresholds(t *testing.T) {
	ref := []float64{1, 2, 3, 4, 5, 6, 7, 8, math.NaN()}
	th := resampledThresholds(ref, 4, 3, true)
	sd := math.Sqrt(42.0 / 8)
	want := sd * math.Sqrt(1.0/4+1.0/8)
	if th.Mean != 4.5 || math.Abs(th.Std-want) > 1e-12 || math.Abs(th.Lower-(4.5-3*want)) > 1e-12 || math.Abs(th.Upper-(4.5+3*want)) > 1e-12 {
		t.Errorf("thresholds %+v, want mean 4.5 and std %v", th, want)
	}
	if th := resampledThresholds([]float64{1}, 4, 3, true); th.Available() {
		t.Errorf("thresholds %+v from one reference row", th)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestReferenceErrorsHeldOut: the principal axes fitted on the reference
// reconstruct its own rows better than fresh ones (60 rows of 6
// correlated features: 5% lower in sample); the cross-fitted errors the
// thresholds come from match those of fresh rows.
func TestReferenceErrorsHeldOut(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const d, n, fresh, refs = 6, 60, 5000, 20
	rows := func(k int) *mat.Dense {
		x := mat.NewDense(k, d, nil)
		for i := range k {
			z := r.NormFloat64()
			for j := range d {
				x.Set(i, j, 0.8*z+0.6*r.NormFloat64())
			}
		}
		return x
	}
	var ref, out float64
	for range refs {
		m, err := FitDrift(rows(n), []string{"a", "b", "c", "d", "e", "f"})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range m.referenceErrors() {
			ref += e / n
		}
		x := rows(fresh)
		for i := range fresh {
			out += m.RowError(x.RawRowView(i)) / fresh
		}
	}
	if math.Abs(ref/out-1) > 0.02 {
		t.Errorf("mean reference reconstruction error %.4f, fresh rows' %.4f", ref/refs, out/refs)
	}
}

// TestRangeLimitFalseAlarms: with 300 reference rows of 8 independent
// features, about 5% of fresh rows fall outside some reference range, and
// a fixed limit of 5% flags about half of the chunks of 250 rows drawn
// like the reference; the range limit keeps them at about
// RangeFalseAlarm, while a chunk whose rows really left the ranges is
// still extrapolating.
func TestRangeLimitFalseAlarms(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 4))
	const d, n, rows, draws = 8, 300, 250, 200
	row := func() []float64 {
		x := make([]float64, d)
		for j := range x {
			x[j] = r.NormFloat64()
		}
		return x
	}
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	over := 0
	for range draws {
		x := mat.NewDense(n, d, nil)
		for i := range n {
			x.SetRow(i, row())
		}
		m, err := FitDrift(x, names)
		if err != nil {
			t.Fatal(err)
		}
		chunk := make([][]float64, rows)
		for i := range chunk {
			chunk[i] = row()
		}
		c, err := m.Chunk(chunk, DefaultMaxOutOfReference, Thresholds{})
		if err != nil {
			t.Fatal(err)
		}
		over += b2i(c.OutOfReference > c.RangeLimit)
		if c.RangeLimit < DefaultMaxOutOfReference || c.Extrapolating != (c.OutOfReference > c.RangeLimit || c.ThinSupport > c.ThinLimit) {
			t.Fatalf("range limit %v (caller's %v), extrapolating %v", c.RangeLimit, DefaultMaxOutOfReference, c.Extrapolating)
		}
		for i := range 50 {
			chunk[i][0] = m.Max[0] + 1
		}
		if c, _ := m.Chunk(chunk, DefaultMaxOutOfReference, Thresholds{}); !c.Extrapolating {
			t.Fatalf("a chunk with 20%% more rows beyond a's range is not extrapolating (%.1f%% out, limit %.1f%%)", 100*c.OutOfReference, 100*c.RangeLimit)
		}
	}
	if over > draws*2/100 {
		t.Errorf("%d of %d chunks drawn like the reference over the range limit", over, draws)
	}
}

// TestReconstructionCapFalseAlarms: when one row in 500 is a gross
// outlier of the features' correlation, a chunk of 250 rows holding one
// moved the mean reconstruction error beyond thresholds from a reference
// of 1,000 rows drawn the same way; with every error capped at the
// reference's ReconstructionCap quantile, such chunks alert about as
// rarely as ±3 standard errors allow, and a chunk whose bulk drifted
// still alerts.
func TestReconstructionCapFalseAlarms(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 5))
	row := func(z []float64) []float64 {
		x := []float64{z[0], 0.8*z[0] + 0.6*z[1], z[2]}
		if r.IntN(500) == 0 {
			x[1] -= 12 * z[0] * z[0]
		}
		return x
	}
	const refs, chunks, size = 40, 10, 250
	alerts, drifted := 0, 0
	for range refs {
		m, err := FitDrift(normalRows(r, 1000, row), []string{"a", "b", "c"})
		if err != nil {
			t.Fatal(err)
		}
		x := normalRows(r, (chunks+1)*size, row)
		feats := make([][]float64, (chunks+1)*size)
		for i := range feats {
			feats[i] = x.RawRowView(i)
		}
		// The last chunk's correlation is gone.
		for i := chunks * size; i < len(feats); i++ {
			feats[i][1] = r.NormFloat64()
		}
		cs, _ := BySize(len(feats), size)
		rep, err := Run(Input{Chunks: cs, Estimates: make([]float64, len(feats)), Reference: make([]float64, 1000), Drift: m, Features: feats, NonNegative: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rep.Results[:chunks] {
			alerts += b2i(c.Drift.ReconstructionAlert)
		}
		drifted += b2i(rep.Results[chunks].Drift.ReconstructionAlert)
	}
	if alerts > refs*chunks*2/100 || drifted != refs {
		t.Errorf("reconstruction alert on %d of %d chunks drawn like the reference and %d of %d drifted", alerts, refs*chunks, drifted, refs)
	}
}
