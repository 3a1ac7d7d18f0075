package msejob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/internal/golden"
)

// mseTable is a table of the synthetic A relation of the MSE paper with a
// deployed model's prediction (the true mean plus a bias growing with x),
// an hourly timestamp, a feature of pure noise, and labels on the first
// labelled rows. shift moves the inputs (drift).
func mseTable(n int, shift float64, seed uint64, labelled int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString("ts,x,noise_feature,pred,y\n")
	start := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		x := r.NormFloat64() + shift
		v := 3*x + 5
		u := v * math.Sin(v)
		y := u + 0.3*(1+math.Max(0, v))*r.NormFloat64()
		label := ""
		if i < labelled {
			label = fmt.Sprintf("%.6f", y)
		}
		fmt.Fprintf(&b, "%s,%.6f,%.6f,%.6f,%s\n", start.Add(time.Duration(i)*time.Hour).Format(time.RFC3339), x, r.NormFloat64(), u+0.5*x, label)
	}
	return []byte(b.String())
}

// mseFS holds 120 labelled reference rows and 96 hours of operational
// rows, drifted, with labels on the first 40.
func mseFS() fstest.MapFS {
	return fstest.MapFS{"ref.csv": {Data: mseTable(120, 0, 1, 120)}, "op.csv": {Data: mseTable(96, 0.5, 2, 40)}}
}

// mseFitted returns mseFS with the check model of TestMSEGolden stored as
// check.json.
func mseFitted(t *testing.T) (fstest.MapFS, *FitResult) {
	t.Helper()
	fsys := mseFS()
	req := NewFitRequest()
	req.Train, req.Target, req.Prediction, req.Features, req.Epochs, req.Model = "ref.csv", "y", "pred", []string{"x", "noise_feature"}, 30, "check.json"
	res, err := Fit(context.Background(), job.Env{FS: fsys}, req)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := res.WriteModel(&b); err != nil {
		t.Fatal(err)
	}
	fsys["check.json"] = &fstest.MapFile{Data: b.Bytes()}
	return fsys, res
}

// TestMSEGolden pins the JSON of mse fit and mse estimate (period, size
// and default chunks); the numbers are those `genlens mse fit --epochs 30`
// and `genlens mse estimate` printed on these files before the job layer.
func TestMSEGolden(t *testing.T) {
	fsys, fit := mseFitted(t)
	golden.Check(t, "mse_fit", fit)
	for _, tc := range []struct {
		name string
		edit func(r *EstimateRequest)
	}{
		{"mse_estimate_period", func(r *EstimateRequest) { r.Timestamp, r.Period, r.Target = "ts", "day", "y" }},
		{"mse_estimate_size", func(r *EstimateRequest) { r.ChunkSize = 40 }},
		{"mse_estimate_default", func(r *EstimateRequest) {}},
	} {
		req := NewEstimateRequest()
		req.Model, req.Data = "check.json", "op.csv"
		tc.edit(&req)
		res, err := Estimate(context.Background(), job.Env{FS: fsys}, req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		golden.Check(t, tc.name, res)
		oneInterval(t, tc.name, res)
		for _, a := range res.Artifacts() {
			var b bytes.Buffer
			if err := a.Write(&b); err != nil || b.Len() == 0 {
				t.Errorf("%s: artifact %s: %d bytes, %v", tc.name, a.Name, b.Len(), err)
			}
		}
	}
}

// TestMSEBenchGolden pins the JSON of mse bench on the synthetic A
// protocol and on a CSV file (the window protocol), and the artifacts'
// layout; the numbers are those the command printed before the job layer.
func TestMSEBenchGolden(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 9))
	var b strings.Builder
	for i := 0; i < 1050; i++ {
		x1, x2 := r.Float64()*2-1, r.Float64()*2-1
		fmt.Fprintf(&b, "%.5f,%.5f,%.5f\n", math.Sin(3*x1)+x2+0.3*r.NormFloat64(), x1, x2)
	}
	fsys := fstest.MapFS{"toy_scale.csv": {Data: []byte(b.String())}}
	for _, tc := range []struct {
		name, dataset string
		methods       []string
	}{
		{"mse_bench_synthetic_a", "synthetic-a", []string{"kstar", "naive", "m2v"}},
		{"mse_bench_csv", "toy_scale.csv", []string{"kstar", "l"}},
	} {
		req := NewBenchRequest()
		req.Dataset, req.Trials, req.Methods = tc.dataset, 2, tc.methods
		var calls, last int
		res, err := Bench(context.Background(), job.Env{FS: fsys, Progress: func(done, total int) { calls, last = calls+1, done }}, req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		mseGoldenTrained(t, tc.name, res)
		if calls != 2 || last != 2 {
			t.Errorf("%s: progress called %d times, last %d; want 2, 2", tc.name, calls, last)
		}
		arts := map[string]string{}
		for _, a := range res.Artifacts() {
			var b bytes.Buffer
			if err := a.Write(&b); err != nil {
				t.Fatal(err)
			}
			arts[a.Name] = b.String()
		}
		if !strings.HasPrefix(arts["trials.csv"], "trial,empirical_mse,"+strings.Join(tc.methods, ",")+"\n1,") || strings.Count(arts["trials.csv"], "\n") != 3 {
			t.Errorf("%s: trials.csv:\n%s", tc.name, arts["trials.csv"])
		}
		md := arts["bench.md"]
		if tc.dataset == "synthetic-a" && (!strings.Contains(md, "| Data set | K* | naive | M2V |\n|---|---|---|---|\n") ||
			!strings.Contains(md, "synthetic-a (seed) | 0.235 (0.208) | - | 0.294 (0.259) |")) {
			t.Errorf("%s: bench.md:\n%s", tc.name, md)
		}
	}
}

func TestMSEFitValidate(t *testing.T) {
	ok := NewFitRequest()
	ok.Train, ok.Target, ok.Prediction, ok.Model = "a.csv", "y", "p", "m.json"
	for _, tc := range []struct {
		name, field, want string
		edit              func(r *FitRequest)
	}{
		{"no train", "train", "{train} is required", func(r *FitRequest) { r.Train = "" }},
		{"no target", "target", "{target} is required", func(r *FitRequest) { r.Target = "" }},
		{"no prediction", "prediction", "{prediction} is required", func(r *FitRequest) { r.Prediction = "" }},
		{"no model", "model", "{model} is required", func(r *FitRequest) { r.Model = "" }},
		{"objective", "objective", "unknown objective", func(r *FitRequest) { r.Objective = "q" }},
		{"epochs", "epochs", "{epochs} 0 must be in [1, 1000000]", func(r *FitRequest) { r.Epochs = 0 }},
		{"epochs huge", "epochs", "{epochs} 9000000000000000000: at most 1000000", func(r *FitRequest) { r.Epochs = 9e18 }},
		{"epoch selection", "epoch_selection", `{epoch_selection} "auto" must be fixed or validation`, func(r *FitRequest) { r.EpochSelection = "auto" }},
		{"epoch selection empty", "epoch_selection", `{epoch_selection} "" must be`, func(r *FitRequest) { r.EpochSelection = "" }},
		{"validation bound", "epochs", "{epochs} 9 is below 10", func(r *FitRequest) { r.EpochSelection, r.Epochs = "validation", 9 }},
		{"validation bound huge", "epochs", "{epochs} 1000001: at most 1000000", func(r *FitRequest) { r.EpochSelection, r.Epochs = "validation", 1_000_001 }},
		{"folds 1", "folds", "{folds} 1 must be 0", func(r *FitRequest) { r.Folds = 1 }},
		{"lr", "lr", "{lr} -1 must be positive", func(r *FitRequest) { r.LR = -1 }},
		{"lr inf", "lr", "{lr} +Inf", func(r *FitRequest) { r.LR = math.Inf(1) }},
		{"lambda", "lambda", "{lambda} -1 must be non-negative", func(r *FitRequest) { r.Lambda = -1 }},
		{"lambda nan", "lambda", "{lambda} NaN", func(r *FitRequest) { r.Lambda = math.NaN() }},
		{"header", "header", `{header} "maybe"`, func(r *FitRequest) { r.Header = "maybe" }},
	} {
		r := ok
		tc.edit(&r)
		var fe *fault.FieldError
		if err := r.Validate(); !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.want) {
			t.Errorf("%s: %v, want a FieldError on %s containing %q", tc.name, err, tc.field, tc.want)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	v := ok
	v.EpochSelection, v.Epochs = "validation", 10
	if err := v.Validate(); err != nil {
		t.Errorf("validation up to 10 epochs: %v", err)
	}
}

func TestMSEEstimateValidate(t *testing.T) {
	ok := NewEstimateRequest()
	ok.Model, ok.Data = "m.json", "op.csv"
	for _, tc := range []struct {
		name, field, want string
		edit              func(r *EstimateRequest)
	}{
		{"no model", "model", "{model} and {data} are required", func(r *EstimateRequest) { r.Model = "" }},
		{"no data", "model", "{model} and {data} are required", func(r *EstimateRequest) { r.Data = "" }},
		{"two chunkings", "chunk_size", "give one of {chunk_size}", func(r *EstimateRequest) { r.Chunks, r.ChunkSize = 2, 3 }},
		{"period and chunks", "chunk_size", "give one of", func(r *EstimateRequest) { r.Chunks, r.Timestamp, r.Period = 2, "ts", "day" }},
		{"period alone", "timestamp", "{timestamp} and {period} go together", func(r *EstimateRequest) { r.Period = "day" }},
		{"timestamp alone", "timestamp", "go together", func(r *EstimateRequest) { r.Timestamp = "ts" }},
		{"negative size", "chunk_size", "must be positive", func(r *EstimateRequest) { r.ChunkSize = -1 }},
		{"negative count", "chunks", "must be positive", func(r *EstimateRequest) { r.Chunks = -1 }},
		{"period", "period", `unknown period "fortnight"`, func(r *EstimateRequest) { r.Timestamp, r.Period = "ts", "fortnight" }},
	} {
		r := ok
		tc.edit(&r)
		var fe *fault.FieldError
		if err := r.Validate(); !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.want) {
			t.Errorf("%s: %v, want a FieldError on %s containing %q", tc.name, err, tc.field, tc.want)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

func TestMSEBenchValidate(t *testing.T) {
	ok := NewBenchRequest()
	ok.Dataset = "synthetic-b"
	for _, tc := range []struct {
		name, field, want string
		edit              func(r *BenchRequest)
	}{
		{"no dataset", "dataset", "{dataset} is required", func(r *BenchRequest) { r.Dataset = "" }},
		{"unknown synthetic", "dataset", `unknown dataset "synthetic-d"`, func(r *BenchRequest) { r.Dataset = "synthetic-d" }},
		{"trials", "trials", "{trials} 0 must be in [1, 100000]", func(r *BenchRequest) { r.Trials = 0 }},
		{"trials huge", "trials", "{trials} 9000000000000000000: at most 100000", func(r *BenchRequest) { r.Trials = 9e18 }},
		{"method", "methods", `unknown method "gp"`, func(r *BenchRequest) { r.Methods = []string{"kstar", "gp"} }},
		{"method twice", "methods", `method "kstar" given twice`, func(r *BenchRequest) { r.Methods = []string{"kstar", " k* "} }},
	} {
		r := ok
		tc.edit(&r)
		var fe *fault.FieldError
		if err := r.Validate(); !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.want) {
			t.Errorf("%s: %v, want a FieldError on %s containing %q", tc.name, err, tc.field, tc.want)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// TestMSEInputErrors: problems with the files are *fault.InputError
// naming the file, and the line and column when there is one.
func TestMSEInputErrors(t *testing.T) {
	fsys, _ := mseFitted(t)
	fsys["other.csv"] = &fstest.MapFile{Data: []byte("x,z,pred,y\n1,2,3,4\n")}
	fsys["nohdr.csv"] = &fstest.MapFile{Data: []byte("1,2,3,4\n2,3,4,5\n")}
	fsys["unordered.csv"] = &fstest.MapFile{Data: []byte("ts,x,noise_feature,pred\n2024-01-02,1,2,3\n2024-01-01,1,2,3\n")}
	fsys["notmodel.json"] = &fstest.MapFile{Data: []byte(`{"hello": 1}`)}
	fsys["short.csv"] = &fstest.MapFile{Data: []byte("1,2\n3,4\n")}
	fsys["dupnames.csv"] = &fstest.MapFile{Data: []byte("x,pred,x,y\n1,2,3,4\n2,3,4,5\n3,1,2,7\n")}
	// The model of x and noise_feature, with noise_feature renamed x.
	fsys["dupmodel.json"] = &fstest.MapFile{Data: bytes.ReplaceAll(fsys["check.json"].Data, []byte(`"noise_feature"`), []byte(`"x"`))}
	est := func(edit func(r *EstimateRequest)) error {
		r := NewEstimateRequest()
		r.Model, r.Data = "check.json", "op.csv"
		edit(&r)
		_, err := Estimate(context.Background(), job.Env{FS: fsys}, r)
		return err
	}
	fit := func(edit func(r *FitRequest)) error {
		r := NewFitRequest()
		r.Train, r.Target, r.Prediction, r.Features, r.Epochs, r.Model = "ref.csv", "y", "pred", []string{"x"}, 2, "m.json"
		edit(&r)
		_, err := Fit(context.Background(), job.Env{FS: fsys}, r)
		return err
	}
	for _, tc := range []struct {
		name       string
		err        error
		file       string
		line       int
		field, msg string
	}{
		{"other columns", est(func(r *EstimateRequest) { r.Data = "other.csv" }), "other.csv", 0, "", `no column "noise_feature" (the feature of check model check.json)`},
		{"no header", est(func(r *EstimateRequest) { r.Data = "nohdr.csv" }), "nohdr.csv", 0, "", "has no header row, but the check model check.json"},
		{"out of order", est(func(r *EstimateRequest) { r.Data, r.Timestamp, r.Period = "unordered.csv", "ts", "day" }), "unordered.csv", 3, `column "ts"`, "earlier than the previous row"},
		{"too many chunks", est(func(r *EstimateRequest) { r.Chunks = 97 }), "op.csv", 0, "", "{chunks} 97: 96 data rows"},
		{"missing target column", est(func(r *EstimateRequest) { r.Target = "price" }), "op.csv", 0, "{target}", `no column "price"`},
		{"not a model", est(func(r *EstimateRequest) { r.Model = "notmodel.json" }), "notmodel.json", 0, "", `format ""`},
		{"missing model", est(func(r *EstimateRequest) { r.Model = "nope.json" }), "nope.json", 0, "", "cannot read the check model"},
		{"timestamp feature", fit(func(r *FitRequest) { r.Features = nil }), "ref.csv", 2, `column "ts"`, "is not a number"},
		{"missing feature", fit(func(r *FitRequest) { r.Features = []string{"nope"} }), "ref.csv", 0, "{features}", `no column "nope"`},
		{"two columns named x", fit(func(r *FitRequest) { r.Train, r.Features = "dupnames.csv", nil }), "dupnames.csv", 1, "", `column name "x" appears twice`},
		{"model with a feature twice", est(func(r *EstimateRequest) { r.Model = "dupmodel.json" }), "dupmodel.json", 0, "", `feature 1, "x", is also feature 0`},
		{"short bench file", func() error {
			r := NewBenchRequest()
			r.Dataset, r.Methods = "short.csv", []string{"kstar"}
			_, err := Bench(context.Background(), job.Env{FS: fsys}, r)
			return err
		}(), "short.csv", 0, "", "2 rows: the protocol needs 1000 contiguous rows"},
	} {
		var ie *fault.InputError
		if !errors.As(tc.err, &ie) || ie.File != tc.file || ie.Line != tc.line || ie.Field != tc.field || !strings.Contains(ie.Msg, tc.msg) {
			t.Errorf("%s: %#v, want an InputError on %s line %d field %q containing %q", tc.name, tc.err, tc.file, tc.line, tc.field, tc.msg)
		}
		if fault.Classify(tc.err) != fault.KindInput {
			t.Errorf("%s: kind %v", tc.name, fault.Classify(tc.err))
		}
	}
	var fe *fault.FieldError
	if err := fit(func(r *FitRequest) { r.Prediction = "y" }); !errors.As(err, &fe) || fe.Field != "target" {
		t.Errorf("target = prediction: %v", err)
	}
	if err := fit(func(r *FitRequest) { r.Features = []string{"x", "x"} }); !errors.As(err, &fe) || fe.Field != "features" {
		t.Errorf("feature twice: %v", err)
	}
}

// TestMSEFitDiverged: a fit whose learning rate makes it diverge is an
// (internal) error with no model; a fit far from the realised MSE is
// returned with a warning.
func TestMSEFitDiverged(t *testing.T) {
	fsys := mseFS()
	req := NewFitRequest()
	req.Train, req.Target, req.Prediction, req.Features, req.Model = "ref.csv", "y", "pred", []string{"x"}, "m.json"
	req.LR = 1e6
	res, err := Fit(context.Background(), job.Env{FS: fsys}, req)
	if err == nil || res != nil || !strings.Contains(err.Error(), "training diverged") || fault.Classify(err) != fault.KindInternal {
		t.Fatalf("lr 1e6: %v, %v", res, err)
	}
	req.LR, req.Epochs = 0.2, 1 // an estimate 20 times the realised MSE
	var warnings []string
	if _, err := Fit(context.Background(), job.Env{FS: fsys, Warn: func(m string) { warnings = append(warnings, m) }}, req); err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "far from the realised") {
		t.Errorf("one epoch: warnings %q", warnings)
	}
}

// TestMSEBenchCancelled: a cancelled bench is KindCanceled (exit 130),
// and stops within a second.
func TestMSEBenchCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	req := NewBenchRequest()
	req.Dataset, req.Trials = "synthetic-a", 1000
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := Bench(ctx, job.Env{}, req)
	if fault.Classify(err) != fault.KindCanceled {
		t.Fatalf("err = %v, want cancelled", err)
	}
	if d := time.Since(start); d > 1200*time.Millisecond {
		t.Errorf("returned after %v", d)
	}
}

// mseGoldenTrained is golden for results of networks trained for
// hundreds of Adam steps (the bench trials). Training amplifies the
// last-bit differences of another BLAS (OpenBLAS sums products in another
// order than gonum) to about 1e-5 relative, far below the spread between
// trials; the golden numbers are gonum's, the ones the command printed.
// With another backend, keys, their order, integers and strings must
// still match exactly, and floats to 1e-3 relative.
func mseGoldenTrained(t *testing.T, name string, v any) {
	t.Helper()
	if strings.HasPrefix(linalg.Backend(), "gonum") || *golden.Update {
		golden.Check(t, name, v)
		return
	}
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	dg, dw := json.NewDecoder(bytes.NewReader(got)), json.NewDecoder(bytes.NewReader(want))
	dg.UseNumber()
	dw.UseNumber()
	for i := 0; ; i++ {
		tg, eg := dg.Token()
		tw, ew := dw.Token()
		if eg != nil || ew != nil {
			if eg != ew {
				t.Errorf("%s: token %d: got error %v, want error %v", name, i, eg, ew)
			}
			return
		}
		ng, okg := tg.(json.Number)
		nw, okw := tw.(json.Number)
		if okg && okw && golden.IsFloat(ng) && golden.IsFloat(nw) {
			fg, _ := ng.Float64()
			fw, _ := nw.Float64()
			if math.Abs(fg-fw) > 1e-3*math.Abs(fw) {
				t.Errorf("%s (%s): token %d: got %s, want %s", name, linalg.Backend(), i, ng, nw)
			}
			continue
		}
		if fmt.Sprint(tg) != fmt.Sprint(tw) || fmt.Sprintf("%T", tg) != fmt.Sprintf("%T", tw) {
			t.Errorf("%s: token %d: got %v, want %v", name, i, tg, tw)
			return
		}
	}
}

// Columns at scales float64 cannot square are named, with the overflow
// or underflow, instead of "training diverged" or a realised MSE of 0.
func TestMSEFitExtremeScaleNamesColumn(t *testing.T) {
	var huge, tiny strings.Builder
	huge.WriteString("x,pred,y\n")
	tiny.WriteString("x,pred,y\n")
	r := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&huge, "%g,%g,%g\n", r.Float64(), r.Float64()*1e160, r.Float64())
		fmt.Fprintf(&tiny, "%g,%g,%g\n", r.Float64(), r.Float64()*1e-300, r.Float64()*1e-300)
	}
	fsys := fstest.MapFS{"huge.csv": {Data: []byte(huge.String())}, "tiny.csv": {Data: []byte(tiny.String())}}
	for _, tc := range []struct{ file, want string }{
		{"huge.csv", "column pred: squared errors against the target y overflow"},
		{"tiny.csv", "column pred: squared errors against the target y underflow"},
	} {
		req := NewFitRequest()
		req.Train, req.Target, req.Prediction, req.Model = tc.file, "y", "pred", "m.json"
		_, err := Fit(context.Background(), job.Env{FS: fsys}, req)
		if err == nil || !strings.Contains(err.Error(), tc.want) || fault.Classify(err) != fault.KindInput {
			t.Errorf("%s: %v, want bad input containing %q", tc.file, err, tc.want)
		}
	}
}

// A model file written before the drift model existed still loads: the
// estimate is the same, its chunks carry no drift keys, and a warning
// says why and what to do.
func TestMSEEstimateOldModelFile(t *testing.T) {
	fsys, _ := mseFitted(t)
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(fsys["check.json"].Data, &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["drift"]; !ok {
		t.Fatal("mse fit wrote no drift model")
	}
	delete(doc, "drift")
	var ref map[string]json.RawMessage
	if err := json.Unmarshal(doc["reference"], &ref); err != nil {
		t.Fatal(err)
	}
	if _, ok := ref["held_out_estimates"]; !ok {
		t.Fatal("mse fit wrote no held-out estimates")
	}
	delete(ref, "held_out_estimates")
	doc["reference"], _ = json.Marshal(ref)
	old, _ := json.Marshal(doc)
	fsys["old.json"] = &fstest.MapFile{Data: old}
	req := NewEstimateRequest()
	req.Model, req.Data, req.ChunkSize = "old.json", "op.csv", 40
	var warnings []string
	res, err := Estimate(context.Background(), job.Env{FS: fsys, Warn: func(s string) { warnings = append(warnings, s) }}, req)
	if err != nil {
		t.Fatal(err)
	}
	req.Model = "check.json"
	cur, err := Estimate(context.Background(), job.Env{FS: fsys}, req)
	if err != nil {
		t.Fatal(err)
	}
	// Without a calibrated interval a chunk alerts when its estimate lies
	// outside the thresholds, as before; the new file's chunks alert by
	// their interval (wholly beyond the thresholds, or reaching above
	// the upper one where extrapolating).
	outside, beyond := 0, 0
	for i, c := range cur.Chunks {
		est, lo, hi := c.EstimatedMSE, c.EstimateLower, c.EstimateUpper
		out := est < cur.LowerThreshold || est > cur.UpperThreshold
		outside += b2i(out)
		want := lo > cur.UpperThreshold || hi < cur.LowerThreshold || (c.DriftView != nil && c.Extrapolating && hi > cur.UpperThreshold)
		beyond += b2i(want)
		if c.Alert != want || res.Chunks[i].Alert != out {
			t.Errorf("chunk %d: estimate %v, interval [%v, %v], thresholds [%v, %v]: alert %v with the interval (want %v), %v without (want %v)",
				c.Index, est, lo, hi, cur.LowerThreshold, cur.UpperThreshold, c.Alert, want, res.Chunks[i].Alert, out)
		}
	}
	// The printed summary says which rule the alerts followed.
	for _, c := range []struct {
		res  *EstimateResult
		want string
	}{{res, "alert(s): the estimate outside the thresholds"}, {cur, "alert(s): the chunk's 90% interval (lower, upper) wholly beyond"}} {
		var b strings.Builder
		estimateText(&b, &req, c.res)
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("mse estimate's text lacks %q:\n%s", c.want, b.String())
		}
	}
	if res.EstimatedMSE != cur.EstimatedMSE || res.Alerts != outside || cur.Alerts != beyond || outside == beyond {
		t.Errorf("old model file: estimate %v with %d alerts, new %v with %d (%d outside the thresholds, %d by the interval; want the rules to differ here)",
			res.EstimatedMSE, res.Alerts, cur.EstimatedMSE, cur.Alerts, outside, beyond)
	}
	for _, c := range res.Chunks {
		if c.IntervalCalibrated || c.EstimateLower != c.SELower || c.EstimateUpper != c.SEUpper || c.Lower != c.SELower || c.Upper != c.SEUpper {
			t.Errorf("old model file: chunk %d interval [%v, %v] ([%v, %v]) calibrated %v, want the band [%v, %v]", c.Index, c.Lower, c.Upper, c.EstimateLower, c.EstimateUpper, c.IntervalCalibrated, c.SELower, c.SEUpper)
		}
	}
	b, _ := json.Marshal(res)
	for _, key := range []string{"out_of_reference", "extrapolating", "reconstruction_error", `"features"`} {
		if strings.Contains(string(b), key) {
			t.Errorf("old model file's result has %s: %s", key, b)
		}
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "old.json") || !strings.Contains(warnings[0], "mse fit") ||
		!strings.Contains(warnings[1], "held-out estimates") || !strings.Contains(warnings[1], "mse fit") {
		t.Errorf("warnings %q: want two naming the file and mse fit (drift, then the interval)", warnings)
	}
	var csv bytes.Buffer
	for _, a := range cur.Artifacts() {
		if a.Name == "chunks.csv" {
			a.Write(&csv)
		}
	}
	if !strings.HasPrefix(csv.String(), "index,start,end,rows,period,estimated_mse,sampling_error,lower,upper,realized_mse,alert,out_of_reference,extrapolating,reconstruction_error,drift_alert,ks_x,p_x,ks_noise_feature,p_noise_feature,thin_support,thin_support_limit,ks_alert,estimate_lower,estimate_upper,se_lower,se_upper\n") {
		t.Errorf("chunks.csv: %s", csv.String())
	}
}

// The request refuses an extrapolation limit outside (0, 1].
func TestMSEEstimateMaxOutOfReference(t *testing.T) {
	for _, v := range []float64{0, -0.1, 1.5, math.NaN()} {
		req := NewEstimateRequest()
		req.Model, req.Data, req.MaxOutOfReference = "m", "d", v
		var fe *fault.FieldError
		if err := req.Validate(); !errors.As(err, &fe) || fe.Field != "max_out_of_reference" {
			t.Errorf("max_out_of_reference %v: %v", v, err)
		}
	}
}

// oneInterval checks that every chunk of res has one interval: the
// table's lower and upper, the JSON's lower and upper (and
// estimate_lower and estimate_upper), and the interval the alert
// compared (monitor.Result's EstimateLower and EstimateUpper) are the
// same numbers, that the ±3 sampling-error band is the JSON's se_lower
// and se_upper, and that alert follows from the JSON's own numbers.
func oneInterval(t *testing.T, name string, res *EstimateResult) {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	// The keys by name, as a client reads them.
	var raw struct {
		Lo     *float64 `json:"lower_threshold"`
		Hi     *float64 `json:"upper_threshold"`
		Chunks []map[string]any
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	f := func(m map[string]any, k string) float64 {
		v, ok := m[k]
		if !ok {
			t.Fatalf("%s: chunk %v lacks %q", name, m["index"], k)
		}
		if v == nil {
			return math.NaN()
		}
		return v.(float64)
	}
	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
	var text strings.Builder
	req := NewEstimateRequest()
	estimateText(&text, &req, res)
	var rows [][]string
	lines := strings.Split(text.String(), "\n")
	for i, l := range lines {
		if h := strings.Fields(l); len(h) > 1 && h[0] == "chunk" && h[1] == "period" {
			for _, r := range lines[i+1:] {
				if strings.TrimSpace(r) == "" {
					break
				}
				rows = append(rows, strings.Fields(r))
			}
			break
		}
	}
	if len(rows) != len(res.Monitor) || len(raw.Chunks) != len(res.Monitor) {
		t.Fatalf("%s: %d table rows, %d JSON chunks, %d chunks:\n%s", name, len(rows), len(raw.Chunks), len(res.Monitor), text.String())
	}
	thLo, thHi := math.NaN(), math.NaN()
	if raw.Lo != nil && raw.Hi != nil {
		thLo, thHi = *raw.Lo, *raw.Hi
	}
	calibrated := 0
	for i, r := range res.Monitor {
		c := raw.Chunks[i]
		lo, hi := f(c, "lower"), f(c, "upper")
		if !same(lo, r.EstimateLower) || !same(hi, r.EstimateUpper) || !same(f(c, "estimate_lower"), lo) || !same(f(c, "estimate_upper"), hi) {
			t.Errorf("%s: chunk %d: JSON lower/upper [%v, %v], estimate_lower/upper [%v, %v], the alert's interval [%v, %v]",
				name, i, lo, hi, f(c, "estimate_lower"), f(c, "estimate_upper"), r.EstimateLower, r.EstimateUpper)
		}
		if !same(f(c, "se_lower"), r.Lower) || !same(f(c, "se_upper"), r.Upper) {
			t.Errorf("%s: chunk %d: se_lower/se_upper [%v, %v], want the band [%v, %v]", name, i, f(c, "se_lower"), f(c, "se_upper"), r.Lower, r.Upper)
		}
		if got := rows[i][4:6]; got[0] != num(lo) || got[1] != num(hi) {
			t.Errorf("%s: chunk %d: the table's interval %v, the JSON's [%s, %s]", name, i, got, num(lo), num(hi))
		}
		cal := c["interval_calibrated"].(bool)
		ex, _ := c["extrapolating"].(bool)
		est := f(c, "estimated_mse")
		want := false
		switch {
		case math.IsNaN(thLo) || math.IsNaN(thHi):
		case cal:
			calibrated++
			want = lo > thHi || hi < thLo || ex && hi > thHi
		default:
			want = est < thLo || est > thHi
		}
		if c["alert"].(bool) != want || r.Alert != want {
			t.Errorf("%s: chunk %d: interval [%v, %v] (calibrated %v), estimate %v, thresholds [%v, %v], extrapolating %v: alert %v, want %v",
				name, i, lo, hi, cal, est, thLo, thHi, ex, c["alert"], want)
		}
		if got, want := rows[i][7] == "ALERT", want; got != want {
			t.Errorf("%s: chunk %d: the table's alert %v, want %v", name, i, got, want)
		}
	}
	if calibrated == 0 && !math.IsNaN(thHi) {
		t.Errorf("%s: no chunk with a calibrated interval: the check proves little", name)
	}
}

// The headline compares estimate and realised MSE over the same rows. In
// chunks of 8 rows, the 40 labelled rows of op.csv are exactly chunks 0-4,
// so the estimate over the labelled rows is the mean of those chunks'
// estimates, the realised MSE the mean of their realised MSEs, and the
// all-rows estimate the mean of all 12 chunks' estimates.
func TestMSEEstimateLabelledRows(t *testing.T) {
	fsys, _ := mseFitted(t)
	req := NewEstimateRequest()
	req.Model, req.Data, req.Target, req.ChunkSize = "check.json", "op.csv", "y", 8
	res, err := Estimate(context.Background(), job.Env{FS: fsys}, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Chunks) != 12 || res.Labelled == nil || *res.Labelled != 40 || res.EstimatedLabelledMSE == nil || res.RealizedMSE == nil {
		t.Fatalf("%d chunks, labelled %v, estimated over labelled %v: want 12 chunks, 40 labelled rows and both MSEs", len(res.Chunks), res.Labelled, res.EstimatedLabelledMSE)
	}
	var estL, realL, estAll float64
	for i, c := range res.Chunks {
		estAll += float64(c.EstimatedMSE) / 12
		if i < 5 {
			estL += float64(c.EstimatedMSE) / 5
			realL += float64(c.RealizedMSE) / 5
		} else if !math.IsNaN(float64(c.RealizedMSE)) {
			t.Fatalf("chunk %d: realised %v, want none (rows 40 on are unlabelled)", i, c.RealizedMSE)
		}
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"estimated_mse_labelled", float64(*res.EstimatedLabelledMSE), estL},
		{"realized_mse", float64(*res.RealizedMSE), realL},
		{"estimated_mse", float64(res.EstimatedMSE), estAll},
	} {
		if math.Abs(c.got-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// The drifted unlabelled rows make the two estimates differ: the
	// headline must not set the all-rows one beside the realised MSE.
	if math.Abs(estL-estAll) < 1e-6 {
		t.Fatalf("estimate over the labelled rows %v equals the all-rows one %v: the case cannot tell them apart", estL, estAll)
	}
	var b bytes.Buffer
	estimateText(&b, &req, res)
	head, _, _ := strings.Cut(b.String(), "\n")
	want := fmt.Sprintf("MSE of pred over the 40 labelled rows: estimated %s, realised %s; estimated over all 96 rows: %s", num(estL), num(realL), num(estAll))
	if !strings.Contains(head, want) {
		t.Errorf("headline %q\nwant it to hold %q", head, want)
	}
	j, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"estimated_mse":`, `"realized_mse":`, `"labelled":`, `"estimated_mse_labelled":`} {
		if !bytes.Contains(j, []byte(k)) {
			t.Errorf("--json lacks %s", k)
		}
	}
	// No label yet: nothing to set beside the realised MSE.
	fsys["nolabels.csv"] = &fstest.MapFile{Data: mseTable(96, 0.5, 2, 0)}
	req.Data = "nolabels.csv"
	if res, err = Estimate(context.Background(), job.Env{FS: fsys}, req); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	estimateText(&b, &req, res)
	head, _, _ = strings.Cut(b.String(), "\n")
	if want := fmt.Sprintf("estimated MSE of pred over all 96 rows: %s; no label has arrived yet", num(float64(res.EstimatedMSE))); !strings.HasSuffix(head, want) || *res.Labelled != 0 {
		t.Errorf("no labels: headline %q, labelled %d; want it to end %q", head, *res.Labelled, want)
	}
}
