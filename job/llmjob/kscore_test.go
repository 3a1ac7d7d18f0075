package llmjob

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/internal/golden"
)

// normalNPY encodes an array of standard normal draws (times scale, plus
// shift) as a .npy file in memory.
func normalNPY(t *testing.T, r *rand.Rand, shift, scale float64, shape ...int) []byte {
	t.Helper()
	a := &dataio.Array{Shape: shape}
	n := 1
	for _, s := range shape {
		n *= s
	}
	for i := 0; i < n; i++ {
		a.Data = append(a.Data, shift+scale*r.NormFloat64())
	}
	var b bytes.Buffer
	if err := dataio.EncodeNPY(&b, a); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// answersJSONL: twelve prompts of five samples, with 2-d embeddings and a
// reference, plus one row without samples (skipped with a reason).
const answersJSONL = `{"id":"q1","samples":["paris","paris","paris is the capital","paris","lyon"],"embeddings":[[0,0],[0,0.1],[0.2,0],[0,0],[3,1]],"answer":"paris","reference":"Paris"}
{"id":"q2","samples":["rome","milan","turin","rome","naples"],"embeddings":[[1,1],[2,0],[0,2],[1,1],[3,3]],"answer":"milan","reference":"Rome"}
{"id":"q3","samples":["the capital is berlin","berlin","berlin","bonn","berlin"],"embeddings":[[0,1],[0,1.1],[0.1,1],[2,2],[0,1]],"reference":["Berlin","berlin city"]}
{"id":"q4","samples":["madrid","barcelona","seville","valencia","bilbao"],"embeddings":[[0,0],[1,0],[0,1],[1,1],[2,2]],"correct":false}
{"id":"q5","samples":["vienna","vienna","vienna","vienna","vienna"],"embeddings":[[5,5],[5,5],[5,5],[5,5.1],[5,5]],"correct":true}
{"id":"q6","samples":[]}
`

func TestEntropyGolden(t *testing.T) {
	fsys := fstest.MapFS{"answers.jsonl": {Data: []byte(answersJSONL)}}
	dumpInputs(t, fsys)
	three, no := 3, false
	for _, tc := range []struct {
		name string
		edit func(r *EntropyRequest)
	}{
		// The default sums lengths 1..2. By hand for q1 (samples[1:] =
		// paris, "paris is the capital", paris, lyon): the long answer
		// has 4 words and 3 word pairs, so it meets "paris" at 1/√7; the
		// mean over the 6 pairs is (1 + 2/√7)/6 and the entropy
		// -0.2926548.
		{"entropy_cs_holdout", func(r *EntropyRequest) { r.HoldoutFirst = true }},
		{"entropy_cs_length2_holdout", func(r *EntropyRequest) { r.HoldoutFirst, r.Cumulative = true, &no }},
		{"entropy_cs_length3_threshold0", func(r *EntropyRequest) { r.T, r.Cumulative, r.Threshold = &three, &no, 0 }},
		{"entropy_rbf_median", func(r *EntropyRequest) { r.Kernel, r.Gamma, r.HoldoutFirst = "rbf", "median", true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := NewEntropyRequest()
			req.In = "answers.jsonl"
			tc.edit(&req)
			var done, total int
			res, err := Entropy(context.Background(), job.Env{FS: fsys, Progress: func(d, n int) { done, total = d, n }}, req)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tc.name, res)
			if done != 6 || total != 6 {
				t.Errorf("progress ended at %d/%d, want 6/6", done, total)
			}
			checkKScoreArtifacts(t, res.Artifacts(), "items.csv", "entropy.json", "kernel_entropy_by_correctness.png")
		})
	}
}

// checkKScoreArtifacts renders every artifact and checks the names.
func checkKScoreArtifacts(t *testing.T, arts []job.Artifact, names ...string) {
	t.Helper()
	var got []string
	for _, a := range arts {
		got = append(got, a.Name)
		var b bytes.Buffer
		if err := a.Write(&b); err != nil || b.Len() == 0 {
			t.Errorf("artifact %s: %d bytes, %v", a.Name, b.Len(), err)
		}
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("artifacts %v, want %v", got, names)
	}
}

// dumpInputs writes a test's inputs to $GENLENS_DUMP_INPUTS, to run the
// command line on the same files when checking a golden file by hand.
func dumpInputs(t *testing.T, fsys fstest.MapFS) {
	dir := os.Getenv("GENLENS_DUMP_INPUTS")
	if dir == "" {
		return
	}
	for name, f := range fsys {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestEntropyCSV(t *testing.T) {
	fsys := fstest.MapFS{"answers.jsonl": {Data: []byte(answersJSONL)}}
	req := NewEntropyRequest()
	req.In, req.HoldoutFirst = "answers.jsonl", true
	res, err := Entropy(context.Background(), job.Env{FS: fsys}, req)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := res.Artifacts()[0].Write(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	// q5: four equal answers (k = 1 between all): entropy -1, similarity 1.
	if lines[0] != "id,kernel_entropy,lexical_similarity,correct,reason" || lines[5] != "q5,-1,1,true," ||
		lines[6] != "q6,,,,0 usable sample(s); kernel entropy needs at least 2" {
		t.Errorf("items.csv:\n%s", b.String())
	}
}

func TestEntropyValidate(t *testing.T) {
	zero, three, yes := 0, 3, true
	for _, tc := range []struct {
		name, field, want string
		edit              func(r *EntropyRequest)
	}{
		{"no input", "in", "{in} FILE is required", func(r *EntropyRequest) { r.In = "" }},
		{"t 0", "t", "{t} 0: want a positive", func(r *EntropyRequest) { r.T = &zero }},
		{"threshold 1", "threshold", "{threshold} 1: want a value in [0, 1)", func(r *EntropyRequest) { r.Threshold = 1 }},
		{"negative threshold", "threshold", "{threshold} -0.1", func(r *EntropyRequest) { r.Threshold = -0.1 }},
		{"unknown kernel", "kernel", `{kernel} "gauss": want cs, rbf`, func(r *EntropyRequest) { r.Kernel = "gauss" }},
		{"t with rbf", "t", "{t} applies only to the cs kernel, not {kernel} rbf", func(r *EntropyRequest) { r.Kernel, r.T = "rbf", &three }},
		{"cumulative with cosine", "cumulative", "{cumulative} applies only to the cs kernel", func(r *EntropyRequest) { r.Kernel, r.Cumulative = "cosine", &yes }},
		{"gamma with cs", "gamma", "{gamma} applies only to the rbf, laplacian and poly kernels, not {kernel} cs", func(r *EntropyRequest) { r.Gamma = "1" }},
		{"embeddings with cs", "embeddings", "{embeddings} applies only to the vector kernels", func(r *EntropyRequest) { r.Embeddings = "e.npy" }},
		{"embeddings key with cs", "embeddings_key", "{embeddings_key} applies only", func(r *EntropyRequest) { r.EmbeddingsKey = "e" }},
		{"embeddings key alone", "embeddings_key", "{embeddings_key} e: give the .npz with {embeddings}", func(r *EntropyRequest) { r.Kernel, r.EmbeddingsKey = "rbf", "e" }},
		{"gamma with cosine", "gamma", "not {kernel} cosine", func(r *EntropyRequest) { r.Kernel, r.Gamma = "cosine", "dim" }},
		{"bad gamma", "gamma", `gamma "wide"`, func(r *EntropyRequest) { r.Kernel, r.Gamma = "rbf", "wide" }},
	} {
		r := NewEntropyRequest()
		r.In = "a.jsonl"
		tc.edit(&r)
		var fe *fault.FieldError
		if err := r.Validate(); !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.want) {
			t.Errorf("%s: %v, want a FieldError on %s containing %q", tc.name, err, tc.field, tc.want)
		}
	}
	ok := NewEntropyRequest()
	ok.In = "a.jsonl"
	if err := ok.Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	ok.Kernel = "cosine"
	if err := ok.Validate(); err != nil {
		t.Errorf("cosine without gamma: %v", err)
	}
}

// TestEntropyInputErrors: embeddings that do not fit the rows are input
// errors naming the file, line and field.
func TestEntropyInputErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fsys := fstest.MapFS{
		"plain.jsonl": {Data: []byte(`{"id":"a","samples":["x","y","z"]}` + "\n" + `{"id":"b","samples":["x","y"]}` + "\n")},
		"e.npy":       {Data: normalNPY(t, r, 0, 1, 2, 3, 4)},
		"const.jsonl": {Data: []byte(`{"id":"a","samples":["x","y","z"],"embeddings":[[1,1],[1,1],[1,1]]}` + "\n")},
	}
	for _, tc := range []struct {
		name, in, emb, gamma string
		file                 string
		line                 int
		field                string
	}{
		{"no embeddings", "plain.jsonl", "", "", "plain.jsonl", 1, "embeddings"},
		{"sample count", "plain.jsonl", "e.npy", "", "plain.jsonl", 2, "samples"},
	} {
		req := NewEntropyRequest()
		req.In, req.Embeddings, req.Kernel = tc.in, tc.emb, "rbf"
		_, err := Entropy(context.Background(), job.Env{FS: fsys}, req)
		var ie *fault.InputError
		if !errors.As(err, &ie) || ie.File != tc.file || ie.Line != tc.line || ie.Field != tc.field {
			t.Errorf("%s: %v, want an InputError on %s line %d field %s", tc.name, err, tc.file, tc.line, tc.field)
		}
	}
	req := NewEntropyRequest()
	req.In, req.Kernel, req.Gamma = "const.jsonl", "rbf", "median"
	_, err := Entropy(context.Background(), job.Env{FS: fsys}, req)
	var fe *fault.FieldError
	if !errors.As(err, &fe) || fe.Field != "gamma" || !strings.Contains(fe.Msg, "the data are constant") {
		t.Errorf("median of constant embeddings: %v, want a FieldError on gamma", err)
	}
}

// TestEntropyCancel: a cancelled context stops the job with the context's
// error within a second, on 20,000 prompts.
func TestEntropyCancel(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		b.WriteString(`{"id":"p","samples":["a long answer about the capital city of a country","another long answer about a city","a third answer","yet another answer about the capital","the last answer"]}` + "\n")
	}
	fsys := fstest.MapFS{"big.jsonl": {Data: []byte(b.String())}}
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled time.Time
	req := NewEntropyRequest()
	req.In = "big.jsonl"
	_, err := Entropy(ctx, job.Env{FS: fsys, Progress: func(done, _ int) {
		if done == 100 {
			cancelled = time.Now()
			cancel()
		}
	}}, req)
	if !errors.Is(err, context.Canceled) || fault.Classify(err) != fault.KindCanceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(cancelled); d > time.Second {
		t.Errorf("returned %v after the cancel, want within 1 s", d)
	}
}

func kscoreFS(t *testing.T) fstest.MapFS {
	r := rand.New(rand.NewPCG(5, 6))
	return fstest.MapFS{
		"m1.npy":    {Data: normalNPY(t, r, 0, 1, 12, 3)},
		"m2.npy":    {Data: normalNPY(t, r, 0.4, 1, 12, 3)},
		"m3.npy":    {Data: normalNPY(t, r, 0, 0.8, 10, 3)},
		"y.npy":     {Data: normalNPY(t, r, 0.2, 1.1, 15, 3)},
		"cond.npy":  {Data: normalNPY(t, r, 0, 1, 3, 2, 6, 3)},
		"ycond.npy": {Data: normalNPY(t, r, 0, 1, 2, 8, 3)},
		"e1.npy":    {Data: normalNPY(t, r, 0, 1, 4, 6, 3)},
		"e2.npy":    {Data: normalNPY(t, r, 0.1, 0.9, 4, 6, 3)},
		"e3.npy":    {Data: normalNPY(t, r, 1, 0.5, 4, 6, 3)},
		"const.npy": {Data: normalNPY(t, r, 0, 0, 4, 6, 3)}, // zeros: k = 0 exactly under the linear kernel
	}
}

func TestDecomposeGolden(t *testing.T) {
	fsys := kscoreFS(t)
	dumpInputs(t, fsys)
	for _, tc := range []struct {
		name     string
		edit     func(r *DecomposeRequest)
		warnings int
	}{
		{"decompose_files", func(r *DecomposeRequest) { r.Models, r.Targets = []string{"m1.npy", "m2.npy", "m3.npy"}, "y.npy" }, 1},
		{"decompose_one_model", func(r *DecomposeRequest) { r.Models, r.Kernel, r.Gamma = []string{"m1.npy"}, "laplacian", "dim" }, 0},
		{"decompose_conditional", func(r *DecomposeRequest) {
			r.Models, r.Targets, r.PerInstance = []string{"cond.npy"}, "ycond.npy", true
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := NewDecomposeRequest()
			tc.edit(&req)
			var warnings []string
			res, err := Decompose(context.Background(), job.Env{FS: fsys, Warn: func(m string) { warnings = append(warnings, m) }}, req)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tc.name, res)
			if len(warnings) != tc.warnings {
				t.Errorf("warnings %q, want %d", warnings, tc.warnings)
			}
		})
	}
}

func TestDecomposeValidate(t *testing.T) {
	for _, tc := range []struct {
		name, field, want string
		edit              func(r *DecomposeRequest)
	}{
		{"no models", "models", "at least one model file with {models}", func(r *DecomposeRequest) { r.Models = nil }},
		{"gamma with linear", "gamma", "not {kernel} linear", func(r *DecomposeRequest) { r.Kernel, r.Gamma = "linear", "0.5" }},
		{"unknown kernel", "kernel", `unknown kernel "gauss"`, func(r *DecomposeRequest) { r.Kernel = "gauss" }},
		{"bad gamma", "gamma", `gamma "wide"`, func(r *DecomposeRequest) { r.Gamma = "wide" }},
	} {
		r := NewDecomposeRequest()
		r.Models = []string{"m.npy"}
		tc.edit(&r)
		var fe *fault.FieldError
		if err := r.Validate(); !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.want) {
			t.Errorf("%s: %v, want a FieldError on %s containing %q", tc.name, err, tc.field, tc.want)
		}
	}
}

func TestCorrelateGolden(t *testing.T) {
	fsys := kscoreFS(t)
	for _, tc := range []struct {
		name string
		edit func(r *CorrelateRequest)
	}{
		{"correlate_rbf_median", func(r *CorrelateRequest) { r.Files = []string{"e1.npy", "e2.npy", "e3.npy"} }},
		// A constant collection: covariance 0, correlations null.
		{"correlate_linear_constant", func(r *CorrelateRequest) { r.Files, r.Kernel = []string{"e1.npy", "const.npy"}, "linear" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := NewCorrelateRequest()
			tc.edit(&req)
			res, err := Correlate(context.Background(), job.Env{FS: fsys}, req)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tc.name, res)
			checkKScoreArtifacts(t, res.Artifacts(), "correlation.png", "covariance.csv", "correlation.csv", "correlate.json")
		})
	}
}

func TestCorrelateErrors(t *testing.T) {
	fsys := kscoreFS(t)
	for _, tc := range []struct {
		name, field, file string
		edit              func(r *CorrelateRequest)
	}{
		{"one file", "files", "", func(r *CorrelateRequest) { r.Files = r.Files[:1] }},
		{"gamma with cosine", "gamma", "", func(r *CorrelateRequest) { r.Kernel, r.Gamma = "cosine", "median" }},
		{"rank", "", "m1.npy", func(r *CorrelateRequest) { r.Files = []string{"e1.npy", "m1.npy"} }},
		{"members", "", "cond.npy", func(r *CorrelateRequest) { r.Files = []string{"e1.npy", "cond.npy"} }},
		{"median of constant data", "gamma", "", func(r *CorrelateRequest) { r.Files = []string{"const.npy", "const.npy"} }},
	} {
		req := NewCorrelateRequest()
		req.Files = []string{"e1.npy", "e2.npy"}
		tc.edit(&req)
		_, err := Correlate(context.Background(), job.Env{FS: fsys}, req)
		var fe *fault.FieldError
		var ie *fault.InputError
		switch {
		case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field):
			t.Errorf("%s: %v, want a FieldError on %s", tc.name, err, tc.field)
		case tc.file != "" && (!errors.As(err, &ie) || ie.File != tc.file):
			t.Errorf("%s: %v, want an InputError on %s", tc.name, err, tc.file)
		}
	}
}

// A negative estimate of a squared norm is explained, unclipped; NaN
// (a term that needs targets or models not given) and positive values
// say nothing.
func TestDecomposeNegativeTermsNote(t *testing.T) {
	nan := jsonnum.Num(math.NaN())
	for _, c := range []struct {
		name string
		d    DecomposeResult
		want []string // substrings; nil for no note
	}{
		{"negative bias", DecomposeResult{Bias: -0.0012, Variance: 0.3, MMD2: 0.2}, []string{"negative bias -0.0012: ", "||E[P] - Q||²", "kept unclipped"}},
		{"negative bias and mmd2", DecomposeResult{Bias: -0.5, Variance: 0.3, MMD2: -1e-4}, []string{"negative bias -0.5, mmd2 -0.0001: "}},
		{"positive", DecomposeResult{Bias: 0.01, Variance: 0.3, MMD2: 0.2}, nil},
		{"zero", DecomposeResult{}, nil},
		{"null terms", DecomposeResult{Bias: nan, Variance: nan, MMD2: nan}, nil},
		{"an instance only", DecomposeResult{Bias: 0.1, Variance: 0.1, MMD2: 0.1, PerInstance: []*DecomposeResult{{Variance: -0.02}, {Bias: 0.1}}},
			[]string{"1 of 2 instances have a negative bias, variance or mmd2: "}},
	} {
		got := negativeTermsNote(&c.d)
		if c.want == nil && got != "" {
			t.Errorf("%s: %q, want none", c.name, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.name, got, w)
			}
		}
	}
}
