package monitor

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func spans(cs []Chunk) string {
	s := ""
	for _, c := range cs {
		s += fmt.Sprintf("[%d,%d)", c.Start, c.End)
	}
	return s
}

func TestBySizeAndCount(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  func() ([]Chunk, error)
		want string
	}{
		{"size divides", func() ([]Chunk, error) { return BySize(6, 3) }, "[0,3)[3,6)"},
		{"size keeps the remainder", func() ([]Chunk, error) { return BySize(7, 3) }, "[0,3)[3,6)[6,7)"},
		{"size above n", func() ([]Chunk, error) { return BySize(2, 5) }, "[0,2)"},
		{"count as array_split", func() ([]Chunk, error) { return ByCount(10, 3) }, "[0,4)[4,7)[7,10)"},
		{"count equal to n", func() ([]Chunk, error) { return ByCount(3, 3) }, "[0,1)[1,2)[2,3)"},
	} {
		cs, err := tc.got()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := spans(cs); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
		for i, c := range cs {
			if c.Index != i {
				t.Errorf("%s: chunk %d has index %d", tc.name, i, c.Index)
			}
		}
	}
	for name, f := range map[string]func() ([]Chunk, error){
		"size 0":         func() ([]Chunk, error) { return BySize(5, 0) },
		"no rows":        func() ([]Chunk, error) { return BySize(0, 2) },
		"count 0":        func() ([]Chunk, error) { return ByCount(5, 0) },
		"empty chunks":   func() ([]Chunk, error) { return ByCount(2, 3) },
		"no timestamps":  func() ([]Chunk, error) { return ByPeriod(nil, Day) },
		"unknown period": func() ([]Chunk, error) { return ByPeriod([]time.Time{time.Now()}, "fortnight") },
	} {
		if _, err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestByPeriod(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	times := []time.Time{
		at("2024-12-30T10:00:00Z"), // Monday of ISO week 2025-W01
		at("2024-12-31T23:59:59Z"),
		at("2025-01-01T00:00:00Z"),
		at("2025-01-01T08:00:00Z"),
		at("2025-01-06T00:00:00Z"), // next Monday: 2025-W02
		at("2025-04-01T00:00:00Z"),
	}
	for _, tc := range []struct {
		p      Period
		spans  string
		labels string
	}{
		{Day, "[0,1)[1,2)[2,4)[4,5)[5,6)", "2024-12-30 2024-12-31 2025-01-01 2025-01-06 2025-04-01"},
		{Week, "[0,4)[4,5)[5,6)", "2025-W01 2025-W02 2025-W14"},
		{Month, "[0,2)[2,5)[5,6)", "2024-12 2025-01 2025-04"},
		{Quarter, "[0,2)[2,5)[5,6)", "2024-Q4 2025-Q1 2025-Q2"},
		{Year, "[0,2)[2,6)", "2024 2025"},
	} {
		cs, err := ByPeriod(times, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		labels := ""
		for i, c := range cs {
			if i > 0 {
				labels += " "
			}
			labels += c.Period
		}
		if spans(cs) != tc.spans || labels != tc.labels {
			t.Errorf("%s: %s %q, want %s %q", tc.p, spans(cs), labels, tc.spans, tc.labels)
		}
	}
	cs, _ := ByPeriod(times, Day)
	if !cs[2].From.Equal(times[2]) || !cs[2].To.Equal(times[3]) {
		t.Errorf("day chunk 2 spans %v to %v", cs[2].From, cs[2].To)
	}
	// Out of order: the error names the row.
	bad := []time.Time{times[0], times[2], times[1]}
	_, err := ByPeriod(bad, Day)
	var re *RowError
	if !errors.As(err, &re) || re.Row != 2 {
		t.Errorf("out-of-order timestamps: %v", err)
	}
	for in, want := range map[string]Period{"D": Day, " week ": Week, "q": Quarter, "hour": Hour} {
		if p, err := ParsePeriod(in); err != nil || p != want {
			t.Errorf("ParsePeriod(%q) = %q, %v", in, p, err)
		}
	}
}

func TestReferenceThresholds(t *testing.T) {
	// Values 1, 2, 3, 6: mean 3, population sd sqrt((4+1+0+9)/4) = sqrt(3.5).
	th := ReferenceThresholds([]float64{1, 2, math.NaN(), 3, 6}, 3, true)
	sd := math.Sqrt(3.5)
	if th.Chunks != 4 || th.Mean != 3 || math.Abs(th.Std-sd) > 1e-15 {
		t.Errorf("%+v", th)
	}
	if th.Lower != 0 || math.Abs(th.Upper-(3+3*sd)) > 1e-12 {
		t.Errorf("thresholds %v %v, want 0 (clipped from %v) and %v", th.Lower, th.Upper, 3-3*sd, 3+3*sd)
	}
	if th := ReferenceThresholds([]float64{1, 2, 3, 6}, 1, false); math.Abs(th.Lower-(3-sd)) > 1e-12 {
		t.Errorf("unclipped lower %v, want %v", th.Lower, 3-sd)
	}
	if th := ReferenceThresholds([]float64{2}, 3, true); th.Available() || th.Mean != 2 {
		t.Errorf("one chunk: %+v, want unavailable thresholds", th)
	}
	if got := ChunkMeans([]float64{1, 3, math.NaN(), math.NaN(), 5}, []Chunk{{Start: 0, End: 2}, {Start: 2, End: 4}, {Start: 3, End: 5}}); got[0] != 2 || !math.IsNaN(got[1]) || got[2] != 5 {
		t.Errorf("ChunkMeans = %v", got)
	}
}

func TestEvaluate(t *testing.T) {
	est := []float64{1, 3, 2, 2, 10}
	realized := []float64{2, math.NaN(), math.NaN(), math.NaN(), 7}
	chunks := []Chunk{{Index: 0, Start: 0, End: 2}, {Index: 1, Start: 2, End: 4}, {Index: 2, Start: 4, End: 5}}
	th := Thresholds{Lower: 1.5, Upper: 5}
	res, err := Evaluate(chunks, est, realized, Options{Thresholds: th, NonNegative: true})
	if err != nil {
		t.Fatal(err)
	}
	// Chunk 0: mean 2, sd (ddof 1) sqrt(2), SE = sqrt(2)/sqrt(2) = 1:
	// band [0 (clipped from -1), 5]; realised over its one label: 2.
	r := res[0]
	if r.Estimate != 2 || math.Abs(r.SamplingError-1) > 1e-15 || r.Lower != 0 || math.Abs(r.Upper-5) > 1e-15 ||
		r.Realized != 2 || r.Labelled != 1 || r.Alert {
		t.Errorf("chunk 0: %+v", r)
	}
	// Chunk 1: constant rows: SE 0, band [2, 2]; no labels; in range.
	if r := res[1]; r.Estimate != 2 || r.SamplingError != 0 || !math.IsNaN(r.Realized) || r.Labelled != 0 || r.Alert {
		t.Errorf("chunk 1: %+v", r)
	}
	// Chunk 2: one row: no sampling error; 10 > 5 alerts.
	if r := res[2]; r.Estimate != 10 || !math.IsNaN(r.SamplingError) || !math.IsNaN(r.Upper) || !r.Alert || r.Realized != 7 {
		t.Errorf("chunk 2: %+v", r)
	}
	// Below the lower threshold alerts too; unavailable thresholds never do.
	res, _ = Evaluate(chunks[:1], []float64{1, 1}, nil, Options{Thresholds: th})
	if !res[0].Alert {
		t.Error("estimate 1 below threshold 1.5 did not alert")
	}
	res, _ = Evaluate(chunks, est, nil, Options{Thresholds: ReferenceThresholds(nil, 3, true)})
	for _, r := range res {
		if r.Alert {
			t.Error("alert without thresholds")
		}
	}
	// Band width option: 2 SE.
	res, _ = Evaluate(chunks[:1], est, nil, Options{Width: 2})
	if math.Abs(res[0].Upper-4) > 1e-15 || math.Abs(res[0].Lower-0) > 1e-15 {
		t.Errorf("width 2: band [%v, %v], want [0, 4]", res[0].Lower, res[0].Upper)
	}
	if _, err := Evaluate([]Chunk{{Start: 2, End: 2}}, est, nil, Options{}); err == nil {
		t.Error("empty chunk accepted")
	}
	if _, err := Evaluate([]Chunk{{Start: 3, End: 9}}, est, nil, Options{}); err == nil {
		t.Error("chunk beyond the rows accepted")
	}
	if _, err := Evaluate(chunks, est, []float64{1}, Options{}); err == nil {
		t.Error("realised of the wrong length accepted")
	}
}

func TestBandCoverage(t *testing.T) {
	// The ±3 SE band of a chunk mean covers the population mean about
	// 99.7% of the time for well-behaved rows; check it is not off by a
	// factor (a band of ±3 SD/n or ±3 SD would fail one way or the other).
	var covered, total int
	state := uint64(1)
	next := func() float64 { // a small LCG: uniform(0, 1)
		state = state*6364136223846793005 + 1442695040888963407
		return float64(state>>11) / (1 << 53)
	}
	for rep := 0; rep < 2000; rep++ {
		v := make([]float64, 50)
		for i := range v {
			v[i] = next() // mean 0.5
		}
		res, _ := Evaluate([]Chunk{{Start: 0, End: 50}}, v, nil, Options{Width: 2})
		total++
		if res[0].Lower <= 0.5 && 0.5 <= res[0].Upper {
			covered++
		}
	}
	rate := float64(covered) / float64(total)
	// ±2 SE: 95.4% nominal.
	if rate < 0.93 || rate > 0.975 {
		t.Errorf("±2 SE band covered the mean in %.3f of chunks, want about 0.954", rate)
	}
}

// TestMatchedThresholds: reference rows are cut into chunks of the median
// operational chunk size, the incomplete last one dropped; too little
// reference data gives no thresholds.
func TestMatchedThresholds(t *testing.T) {
	ref := []float64{1, 1, 1, 3, 3, 3, 2, 2, 2, 100} // the 100 is in the dropped chunk
	chunks := []Chunk{{Start: 0, End: 3}, {Start: 3, End: 5}, {Start: 5, End: 9}}
	th, size := MatchedThresholds(ref, chunks, DefaultWidth, true)
	want := ReferenceThresholds([]float64{1, 3, 2}, DefaultWidth, true)
	if size != 3 || th != want {
		t.Errorf("got %+v size %d, want %+v size 3", th, size, want)
	}
	th, size = MatchedThresholds(ref[:5], []Chunk{{Start: 0, End: 4}}, DefaultWidth, true)
	if size != 4 || th.Available() || th.Chunks != 1 {
		t.Errorf("one reference chunk: %+v size %d", th, size)
	}
	th, _ = MatchedThresholds(ref[:2], []Chunk{{Start: 0, End: 4}}, DefaultWidth, true)
	if th.Available() || th.Chunks != 0 {
		t.Errorf("no reference chunk: %+v", th)
	}
}

// TestLossThresholdsFalseAlarms: when every chunk's estimate is the mean
// loss of chunk rows drawn like the reference (an exact check model),
// chunks of 250 rows against 1,000 reference rows of skewed losses
// alert about as often as ±3 standard errors allow, not the 10-16% that
// thresholds from four consecutive reference chunks raised.
func TestLossThresholdsFalseAlarms(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 2))
	loss := func() float64 { v := r.NormFloat64(); return v * v }
	const refs, chunks, size = 100, 10, 250
	alerts, total := 0, 0
	for range refs {
		ref := make([]float64, 1000)
		for i := range ref {
			ref[i] = loss()
		}
		est := make([]float64, chunks*size)
		for i := range est {
			est[i] = loss()
		}
		cs, _ := BySize(len(est), size)
		rep, err := Run(Input{Chunks: cs, Estimates: est, Reference: ref, NonNegative: true})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Thresholds.Chunks != 4 || !rep.Thresholds.Available() {
			t.Fatalf("thresholds %+v: want them available, from 4 chunks' worth of rows", rep.Thresholds)
		}
		alerts += Alerts(rep.Results)
		total += len(rep.Results)
	}
	if alerts > total*15/1000 {
		t.Errorf("MSE alert on %d of %d chunks drawn like the reference", alerts, total)
	}
	if rep, _ := Run(Input{ChunkSize: 250, Reference: make([]float64, 499)}); rep.Thresholds.Available() {
		t.Errorf("thresholds %+v from less than two chunks of reference rows", rep.Thresholds)
	}
}

// A chunk has one interval: Evaluate's (no calibration) is the band, and
// the drift flag names the signals that raised it.
func TestOneIntervalAndDriftSignals(t *testing.T) {
	res, err := Evaluate([]Chunk{{Index: 0, Start: 0, End: 4}}, []float64{1, 2, 3, 4}, nil, Options{NonNegative: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.EstimateLower != r.Lower || r.EstimateUpper != r.Upper || r.IntervalCalibrated {
		t.Errorf("interval [%v, %v] calibrated %v, want the band [%v, %v]", r.EstimateLower, r.EstimateUpper, r.IntervalCalibrated, r.Lower, r.Upper)
	}
	for _, c := range []struct {
		ks, rec bool
		want    string
	}{{false, false, ""}, {true, false, "KS"}, {false, true, "reconstruction"}, {true, true, "KS,reconstruction"}} {
		d := &ChunkDrift{KSAlert: c.ks, ReconstructionAlert: c.rec, DriftAlert: c.ks || c.rec}
		if got := strings.Join(d.DriftSignals(), ","); got != c.want {
			t.Errorf("KS %v, reconstruction %v: signals %q, want %q", c.ks, c.rec, got, c.want)
		}
	}
}
