package checkmodel

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
)

// nearestNeighbour returns the 1-NN regressor of (x, y) evaluated at the
// rows of q: it interpolates the training data exactly, the fully
// overfitting model of Remark 3.
func nearestNeighbour(x *mat.Dense, y []float64, q *mat.Dense) []float64 {
	d := nearestIndex(q, x)
	out := make([]float64, len(d))
	for i, j := range d {
		out[i] = y[j]
	}
	return out
}

func nearestIndex(q, ref *mat.Dense) []int {
	n, _ := q.Dims()
	m, _ := ref.Dims()
	out := make([]int, n)
	for i := 0; i < n; i++ {
		best := math.Inf(1)
		for j := 0; j < m; j++ {
			if d := sqDist(q.RawRowView(i), ref.RawRowView(j)); d < best {
				best, out[i] = d, j
			}
		}
	}
	return out
}

// remark3Data draws x ~ U(-2, 2), y = sin(2x) + σ ε with σ = 0.5, so that
// an interpolating model's MSE is about 2σ² = 0.5.
func remark3Data(r *rand.Rand, n int) (*mat.Dense, []float64) {
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range y {
		v := 4*r.Float64() - 2
		x.Set(i, 0, v)
		y[i] = math.Sin(2*v) + 0.5*r.NormFloat64()
	}
	return x, y
}

func TestRemark3OverfitModel(t *testing.T) {
	// f interpolates the training data (f(x) = y there), so the naive
	// check model sees zero errors and estimates 0, while the K*
	// objective reduces to 4 mean (h - y)⁴, h learns E[y|x] and the
	// estimate tends to 2 E[σ²] = 0.5, the MSE of the interpolator.
	r := rand.New(rand.NewPCG(31, 7))
	x, y := remark3Data(r, 400)
	xo, yo := remark3Data(r, 4000)
	fo := nearestNeighbour(x, y, xo)
	var realized float64
	for i := range yo {
		realized += (yo[i] - fo[i]) * (yo[i] - fo[i])
	}
	realized /= float64(len(yo))

	m, err := Fit(ctx, x, y, y, DefaultConfig(), 1)
	if err != nil {
		t.Fatal(err)
	}
	est, err := m.Estimate(xo, fo)
	if err != nil {
		t.Fatal(err)
	}
	naive, _ := NewMethod("naive", DefaultConfig())
	nv, err := naive.Estimate(ctx, Data{X: x, Y: y, F: y}, Data{X: xo, F: fo}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("interpolating f: realised MSE %.3f (2σ² = 0.5), K* estimate %.3f, naive %.3g", realized, est, nv)
	if math.Abs(est-0.5) > 0.1 || math.Abs(est-realized) > 0.1 {
		t.Errorf("K* estimate %.3f, want within 0.1 of 2σ² = 0.5 and of the realised %.3f", est, realized)
	}
	if math.Abs(nv) > 0.05 {
		t.Errorf("naive estimate %.3g, want about 0 (it regresses zeros)", nv)
	}
	// The check model learnt E[y|x] = sin(2x).
	h, _ := m.Check(mat.NewDense(3, 1, []float64{-1, 0, 1}))
	for i, v := range []float64{-1, 0, 1} {
		if math.Abs(h[i]-math.Sin(2*v)) > 0.2 {
			t.Errorf("h(%v) = %.3f, E[y|x] = %.3f", v, h[i], math.Sin(2*v))
		}
	}
}

func TestFitIsScaleEquivariant(t *testing.T) {
	// Targets and predictions are standardised with training statistics
	// and features per column, so rescaling y and f by c (and shifting
	// them) multiplies the estimate by c², and affine changes of the
	// features change nothing. A missing or doubled scale factor fails.
	r := rand.New(rand.NewPCG(5, 9))
	const n = 120
	x := mat.NewDense(n, 2, nil)
	y, f := make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		a, b := r.NormFloat64(), r.NormFloat64()
		x.Set(i, 0, a)
		x.Set(i, 1, b)
		y[i] = a + math.Sin(b) + 0.3*r.NormFloat64()
		f[i] = a + 0.8*math.Sin(b)
	}
	cfg := DefaultConfig()
	cfg.Train.Epochs = 60
	base, err := Fit(ctx, x, y, f, cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	e0, _ := base.Estimate(x, f)

	const c, shift = 7.5, -40.0
	y2, f2 := make([]float64, n), make([]float64, n)
	x2 := mat.NewDense(n, 2, nil)
	for i := range y {
		y2[i], f2[i] = c*y[i]+shift, c*f[i]+shift
		x2.Set(i, 0, 1000*x.At(i, 0)+5)
		x2.Set(i, 1, 0.01*x.At(i, 1)-2)
	}
	scaled, err := Fit(ctx, x2, y2, f2, cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	e1, _ := scaled.Estimate(x2, f2)
	if math.Abs(e1/(c*c)-e0) > 1e-6*e0 {
		t.Errorf("estimate %v after scaling y by %v, want %v · c² = %v", e1, c, e0, e0*c*c)
	}
	if math.Abs(scaled.Reference.RealizedMSE/(c*c)-base.Reference.RealizedMSE) > 1e-9 {
		t.Errorf("reference MSE not rescaled: %v vs %v", scaled.Reference.RealizedMSE, base.Reference.RealizedMSE)
	}
	// Rows estimates average to the estimate.
	rows, _ := base.RowEstimates(x, f)
	if math.Abs(mean(rows)-e0) > 1e-12 {
		t.Errorf("mean of row estimates %v, estimate %v", mean(rows), e0)
	}
}

func TestModelJSONRoundTripAndValidate(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	x, y := remark3Data(r, 50)
	f := make([]float64, len(y))
	for i := range f {
		f[i] = 0.9 * y[i]
	}
	cfg := DefaultConfig()
	cfg.Train.Epochs = 5
	m, err := Fit(ctx, x, y, f, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	m.Columns = Columns{Features: []string{"x"}, Prediction: "pred", Target: "y", Header: true, Count: 3}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Model
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Validate(); err != nil {
		t.Fatal(err)
	}
	e0, _ := m.Estimate(x, f)
	e1, _ := back.Estimate(x, f)
	if e0 != e1 {
		t.Errorf("estimate %v after a JSON round trip, %v before", e1, e0)
	}
	for _, tc := range []struct {
		name    string
		corrupt func(m *Model)
	}{
		{"format", func(m *Model) { m.Format = "other" }},
		{"objective", func(m *Model) { m.Objective = "x" }},
		{"no network", func(m *Model) { m.Net = nil }},
		{"feature names", func(m *Model) { m.Columns.Features = []string{"a", "b"} }},
		{"feature named as the prediction", func(m *Model) { m.Columns.Features = []string{"pred"} }},
		{"feature named as the target", func(m *Model) { m.Columns.Features = []string{"y"} }},
		{"prediction named as the target", func(m *Model) { m.Columns.Prediction = "y" }},
		{"zero scale", func(m *Model) { m.XScale[0] = 0 }},
		{"NaN target scale", func(m *Model) { m.YScale = math.NaN() }},
		{"two outputs", func(m *Model) { m.Net.Sizes[len(m.Net.Sizes)-1] = 2 }},
		{"negative reference error", func(m *Model) { m.Reference.SquaredErrors[0] = -1 }},
	} {
		var c Model
		_ = json.Unmarshal(b, &c)
		tc.corrupt(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: Validate accepted a broken model", tc.name)
		}
	}
	if _, err := m.Estimate(mat.NewDense(2, 2, nil), []float64{0, 0}); err == nil {
		t.Error("Estimate accepted data with the wrong number of features")
	}
}

func TestFitRejectsBadInput(t *testing.T) {
	x := mat.NewDense(3, 1, []float64{1, 2, 3})
	for _, tc := range []struct {
		name string
		y, f []float64
	}{
		{"short y", []float64{1, 2}, []float64{1, 2, 3}},
		{"NaN target", []float64{1, math.NaN(), 3}, []float64{1, 2, 3}},
		{"Inf prediction", []float64{1, 2, 3}, []float64{1, math.Inf(1), 3}},
	} {
		if _, err := Fit(ctx, x, tc.y, tc.f, DefaultConfig(), 1); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if _, err := Fit(ctx, mat.NewDense(1, 1, []float64{1}), []float64{1}, []float64{1}, DefaultConfig(), 1); err == nil {
		t.Error("one training row accepted")
	}
}

// TestDecodeModelAndInputs: a model file that does not parse or validate
// is an InputError on the file; applied to a table, a model finds its
// columns by name (in any order) or, fitted header-less, by position, and
// refuses tables that do not match.
func TestDecodeModelAndInputs(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	x, y := remark3Data(r, 30)
	cfg := DefaultConfig()
	cfg.Train.Epochs = 3
	m, err := Fit(ctx, x, y, y, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	m.Columns = Columns{Features: []string{"x"}, Prediction: "pred", Target: "y", Header: true, Count: 3}
	b, _ := json.Marshal(m)
	if _, err := DecodeModel("m.json", b); err != nil {
		t.Fatal(err)
	}
	m.Format = "other"
	broken, _ := json.Marshal(m)
	m.Format = FormatVersion
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"not JSON", []byte("x,y\n1,2\n"), "not a check model file"},
		{"format", broken, `format "other", want "genlens-checkmodel/1"`},
	} {
		var ie *fault.InputError
		if _, err := DecodeModel("m.json", tc.b); !errors.As(err, &ie) || ie.File != "m.json" || !strings.Contains(ie.Msg, tc.want) || strings.Contains(ie.Msg, "checkmodel:") {
			t.Errorf("%s: %v, want an InputError on m.json saying %q", tc.name, err, tc.want)
		}
	}

	fsys := fstest.MapFS{
		"swapped.csv": {Data: []byte("pred,y,x\n1,1,0.5\n2,2,-0.5\n")},
		"nohdr.csv":   {Data: []byte("1,1,0.5\n2,2,-0.5\n")},
		"other.csv":   {Data: []byte("pred,y,z\n1,1,0.5\n")},
	}
	read := func(name string, h dataio.Header) *dataio.Table {
		tb, err := dataio.ReadTableFS(fsys, name, h)
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	xs, f, err := m.Inputs(read("swapped.csv", dataio.HeaderAuto), "m.json")
	if err != nil || xs.At(0, 0) != 0.5 || xs.At(1, 0) != -0.5 || f[1] != 2 {
		t.Errorf("by name: %v, %v, %v", xs, f, err)
	}
	for _, tc := range []struct {
		name string
		tb   *dataio.Table
		want string
	}{
		{"no header", read("nohdr.csv", dataio.HeaderAbsent), "has no header row, but the check model m.json was fitted on a file with a header row"},
		{"missing feature", read("other.csv", dataio.HeaderAuto), `no column "x" (the feature of check model m.json); columns: pred, y, z`},
	} {
		var ie *fault.InputError
		if _, _, err := m.Inputs(tc.tb, "m.json"); !errors.As(err, &ie) || !strings.Contains(ie.Msg, tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	m.Columns = Columns{Features: []string{"2"}, Prediction: "0", Target: "1", Count: 3}
	if xs, f, err = m.Inputs(read("nohdr.csv", dataio.HeaderAbsent), "m.json"); err != nil || xs.At(1, 0) != -0.5 || f[0] != 1 {
		t.Errorf("by position: %v, %v, %v", xs, f, err)
	}
	m.Columns.Count = 4
	if _, _, err := m.Inputs(read("nohdr.csv", dataio.HeaderAbsent), "m.json"); err == nil || !strings.Contains(err.Error(), "has 3 columns, but the check model m.json was fitted on a header-less file with 4 columns") {
		t.Errorf("column count: %v", err)
	}
}

func TestReferenceDivergence(t *testing.T) {
	for _, tc := range []struct {
		est, real          float64
		diverged, doubtful bool
	}{
		{1.1, 1, false, false},
		{9, 1, false, false},
		{11, 1, false, true},
		{0.05, 1, false, true},
		{101, 1, true, true},
		{math.NaN(), 1, true, false},
		{math.Inf(1), 1, true, true},
		{5, 0, false, false}, // a perfect f: no ratio to judge
	} {
		r := Reference{EstimatedMSE: tc.est, RealizedMSE: tc.real}
		if r.Diverged() != tc.diverged || r.Doubtful() != tc.doubtful {
			t.Errorf("estimate %v, realised %v: diverged %v doubtful %v, want %v %v", tc.est, tc.real, r.Diverged(), r.Doubtful(), tc.diverged, tc.doubtful)
		}
	}
}
