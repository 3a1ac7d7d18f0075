package main

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"genlens/dataio"
	"genlens/internal/shareddata"
	"genlens/kernel"
	"genlens/kscore"
	"genlens/synth"
)

// cli runs genlens with args and returns exit code, stdout and stderr.
func cli(t testing.TB, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// checkOutputs fails unless dir holds exactly the files a command
// declares it writes (the list guardOut protects the inputs with), each
// non-empty.
func checkOutputs(t *testing.T, dir string, declared []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
		if info, err := e.Info(); err != nil || info.Size() == 0 {
			t.Errorf("--out wrote an empty %s", e.Name())
		}
	}
	want := slices.Clone(declared)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("--out wrote %v, the command declares %v", got, want)
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeArray(t *testing.T, dir, name string, shape []int, data []float64) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := dataio.WriteNPY(p, &dataio.Array{Shape: shape, Data: data}); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEntropyRealDataAUROC(t *testing.T) {
	// Protocol of ../shared/data/README.md: the answer under test is
	// samples[0], correct when RougeL-F with the reference > 0.3;
	// uncertainty from samples[1:].
	for _, f := range []string{"llm/triviaqa_llama13b_500x20.jsonl", "llm/triviaqa_qwen2.5-7b_1000x10.jsonl"} {
		path := shareddata.Path(t, f)
		code, stdout, stderr := cli(t, "entropy", "--in", path, "--holdout-first", "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", f, code, stderr)
		}
		var out struct {
			Items   []map[string]any `json:"items"`
			Summary struct {
				N     int `json:"n"`
				AUROC struct {
					KernelEntropy     float64 `json:"kernel_entropy"`
					LexicalSimilarity float64 `json:"lexical_similarity"`
				} `json:"auroc"`
				Accuracy float64 `json:"accuracy"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		a := out.Summary.AUROC
		t.Logf("%s: n=%d accuracy=%.3f AUROC kernel entropy (cs, t=2) %.4f, lexical similarity %.4f", f, out.Summary.N, out.Summary.Accuracy, a.KernelEntropy, a.LexicalSimilarity)
		if a.KernelEntropy <= 0.70 || a.LexicalSimilarity <= 0.70 {
			t.Errorf("%s: AUROCs %.4f / %.4f, want both > 0.70", f, a.KernelEntropy, a.LexicalSimilarity)
		}
		if len(out.Items) != out.Summary.N {
			t.Errorf("%d items for n=%d", len(out.Items), out.Summary.N)
		}
	}
}

func TestEntropyJSONContract(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "a.jsonl", strings.Join([]string{
		`{"id":"p1","samples":["Paris","Paris","paris!"],"answer":"Paris","reference":"Paris"}`,
		`{"id":"p2","samples":["Lyon","Nice","Marseille"],"answer":"Lyon","reference":["Paris","City of Light"]}`,
		`{"id":"p3","samples":["only one"],"answer":"x","reference":"x"}`,
		`{"id":7,"samples":["a b","a b c","a b"],"correct":false}`,
	}, "\n")+"\n")
	outDir := filepath.Join(dir, "out")
	code, stdout, stderr := cli(t, "entropy", "--in", in, "--json", "--out", outDir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	csvText, err := os.ReadFile(filepath.Join(outDir, "items.csv"))
	if err != nil || !strings.HasPrefix(string(csvText), "id,kernel_entropy,lexical_similarity,correct,reason\np1,-1,1,true,\n") ||
		!strings.Contains(string(csvText), "\np3,,,true,") {
		t.Errorf("items.csv = %q (%v)", csvText, err)
	}
	checkOutputs(t, outDir, entropyOutputs)
	var out map[string]any
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	items := out["items"].([]any)
	if len(items) != 4 {
		t.Fatalf("%d items", len(items))
	}
	p1 := items[0].(map[string]any)
	for _, key := range []string{"id", "kernel_entropy", "lexical_similarity", "correct"} {
		if _, ok := p1[key]; !ok {
			t.Errorf("item lacks %q: %v", key, p1)
		}
	}
	// p1: all three samples tokenise to ["paris"], atoms equal -> entropy -1.
	if p1["kernel_entropy"].(float64) != -1 || p1["correct"] != true {
		t.Errorf("p1 = %v", p1)
	}
	if p2 := items[1].(map[string]any); p2["kernel_entropy"].(float64) != 0 || p2["correct"] != false {
		t.Errorf("p2 = %v", p2)
	}
	p3 := items[2].(map[string]any)
	if p3["kernel_entropy"] != nil || p3["lexical_similarity"] != nil || p3["reason"] == nil {
		t.Errorf("p3 with one sample should have null scores and a reason: %v", p3)
	}
	if p4 := items[3].(map[string]any); p4["id"] != "7" || p4["correct"] != false {
		t.Errorf("p4 = %v", p4)
	}
	sum := out["summary"].(map[string]any)
	if sum["n"].(float64) != 4 || sum["skipped"].(float64) != 1 {
		t.Errorf("summary = %v", sum)
	}
	auroc := sum["auroc"].(map[string]any)
	// Labelled: p1 correct (entropy -1), p2 and p4 incorrect (entropy 0
	// and > -1): kernel entropy separates them perfectly.
	if auroc["kernel_entropy"].(float64) != 1 {
		t.Errorf("auroc = %v", auroc)
	}
	if _, ok := auroc["lexical_similarity"]; !ok {
		t.Errorf("auroc lacks lexical_similarity: %v", auroc)
	}
}

func TestEntropyVectorKernels(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "e.jsonl",
		`{"id":"a","samples":["x","y","z"],"embeddings":[[0,0],[1,0],[0,2]],"correct":true}`+"\n"+
			`{"id":"b","samples":["x","y","z"],"embeddings":[[0,0],[0,0],[3,0]],"correct":false}`+"\n")
	code, stdout, stderr := cli(t, "entropy", "--in", in, "--kernel", "rbf", "--gamma", "0.5", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out entropyOutput
	if err := json.Unmarshal([]byte(stdout), &struct {
		Items *[]entropyItem `json:"items"`
	}{&out.Items}); err != nil {
		t.Fatal(err)
	}
	// Row a: squared distances 1, 4, 5 -> -(e^-0.5 + e^-2 + e^-2.5)/3.
	want := -(math.Exp(-0.5) + math.Exp(-2) + math.Exp(-2.5)) / 3
	if got := float64(out.Items[0].KernelEntropy); math.Abs(got-want) > 1e-12 {
		t.Errorf("kernel entropy %v, want %v", got, want)
	}
	// The same embeddings from a (rows, samples, d) .npy give the same.
	npy := writeArray(t, dir, "e.npy", []int{2, 3, 2}, []float64{0, 0, 1, 0, 0, 2, 0, 0, 0, 0, 3, 0})
	plain := writeFile(t, dir, "p.jsonl", `{"id":"a","samples":["x","y","z"]}`+"\n"+`{"id":"b","samples":["x","y","z"]}`+"\n")
	code, stdout2, stderr := cli(t, "entropy", "--in", plain, "--embeddings", npy, "--kernel", "rbf", "--gamma", "0.5", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout2, strings.TrimRight(strings.Split(strings.Split(stdout, `"kernel_entropy": `)[1], ",")[0], " ")) {
		t.Errorf("--embeddings result differs:\n%s\nvs\n%s", stdout2, stdout)
	}
	// A vector kernel without embeddings is bad input naming the line.
	code, _, stderr = cli(t, "entropy", "--in", plain, "--kernel", "cosine")
	if code != 2 || !strings.Contains(stderr, "p.jsonl line 1") || !strings.Contains(stderr, "embeddings") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestDecomposeMatchesPackage(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	g := synth.GaussianEnsemble{Mu: []float64{0, 0, 0}, Nu: []float64{0.5, 0, 0}, S: 1, Tau: 0.5, R: 1}
	members, targets := g.Sample(r, 4, 6, 9)
	var stacked []float64
	for _, m := range members {
		stacked = append(stacked, m.RawMatrix().Data...)
	}
	models := writeArray(t, dir, "models.npy", []int{4, 6, 3}, stacked)
	y := writeArray(t, dir, "y.npy", []int{9, 3}, targets.RawMatrix().Data)
	code, stdout, stderr := cli(t, "decompose", "--models", models, "--targets", y, "--kernel", "rbf", "--gamma", "0.3", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	want, err := kscore.Decompose(kernel.RBF{Gamma: 0.3}, members, targets)
	if err != nil {
		t.Fatal(err)
	}
	for key, v := range map[string]float64{
		"variance": want.Variance, "kernel_entropy": want.KernelEntropy, "noise": want.Noise, "bias": want.Bias,
		"kernel_score": want.KernelScore, "mmd2": want.MMD2, "n_models": 4, "samples_per_model": 6,
	} {
		got, ok := out[key].(float64)
		if !ok || math.Abs(got-v) > 1e-12 {
			t.Errorf("%s = %v, want %v", key, out[key], v)
		}
	}
	if gap := out["identity_gap"].(float64); math.Abs(gap) > 1e-12 {
		t.Errorf("identity_gap = %v", gap)
	}
	// The same models as separate files, given partly as arguments.
	var files []string
	for i, m := range members {
		files = append(files, writeArray(t, dir, "m"+string(rune('0'+i))+".npy", []int{6, 3}, m.RawMatrix().Data))
	}
	code, stdout2, _ := cli(t, append([]string{"decompose", "--targets", y, "--kernel", "rbf", "--gamma", "0.3", "--json", "--models", files[0]}, files[1:]...)...)
	if code != 0 || stdout2 != stdout {
		t.Errorf("separate files: exit %d\n%s\nwant\n%s", code, stdout2, stdout)
	}
	// Without targets the target terms are null; with one model so is the variance.
	code, stdout3, _ := cli(t, "decompose", "--models", files[0], "--gamma", "dim", "--json")
	if code != 0 || !strings.Contains(stdout3, `"variance": null`) || !strings.Contains(stdout3, `"bias": null`) {
		t.Errorf("one model, no targets: exit %d\n%s", code, stdout3)
	}
}

func TestDecomposeConditional(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	// 3 models x 2 instances x 5 samples x 2 dims; targets 2 x 4 x 2.
	var files []string
	for i := 0; i < 3; i++ {
		data := make([]float64, 2*5*2)
		for j := range data {
			data[j] = r.NormFloat64()
		}
		files = append(files, writeArray(t, dir, "c"+string(rune('0'+i))+".npy", []int{2, 5, 2}, data))
	}
	ydata := make([]float64, 2*4*2)
	for j := range ydata {
		ydata[j] = r.NormFloat64()
	}
	y := writeArray(t, dir, "cy.npy", []int{2, 4, 2}, ydata)
	code, stdout, stderr := cli(t, append([]string{"decompose", "--per-instance", "--json", "--targets", y, "--models"}, files...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out struct {
		Instances   int `json:"instances"`
		Bias        float64
		PerInstance []struct{ Bias float64 } `json:"per_instance"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Instances != 2 || len(out.PerInstance) != 2 || math.Abs(out.Bias-(out.PerInstance[0].Bias+out.PerInstance[1].Bias)/2) > 1e-12 {
		t.Errorf("conditional output %+v", out)
	}
	// Unconditional targets for conditional models is bad input.
	flat := writeArray(t, dir, "flat.npy", []int{4, 2}, ydata[:8])
	if code, _, stderr := cli(t, "decompose", "--targets", flat, "--models", files[0], files[1]); code != 2 || !strings.Contains(stderr, "flat.npy") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestCorrelateOutputs(t *testing.T) {
	dir := t.TempDir()
	runs := synth.TrainingRun(rand.New(rand.NewPCG(5, 6)), 3, 4, 5, 2)
	var files []string
	for e, ms := range runs {
		var data []float64
		for _, m := range ms {
			data = append(data, m.RawMatrix().Data...)
		}
		files = append(files, writeArray(t, dir, "epoch"+string(rune('1'+e))+".npy", []int{4, 5, 2}, data))
	}
	outDir := filepath.Join(dir, "out")
	code, stdout, stderr := cli(t, append([]string{"correlate", "--json", "--gamma", "0.5", "--out", outDir}, files...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out struct {
		Variance     []float64   `json:"variance"`
		Covariance   [][]float64 `json:"covariance"`
		Correlation  [][]float64 `json:"correlation"`
		EnsembleGain []float64   `json:"ensemble_gain"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	cov, vars, _ := kscore.CovarianceMatrix(kernel.RBF{Gamma: 0.5}, runs)
	for e := 0; e < 3; e++ {
		if math.Abs(out.Variance[e]-vars[e]) > 1e-12 || math.Abs(out.EnsembleGain[e]-0.75*vars[e]) > 1e-12 {
			t.Errorf("epoch %d: variance %v gain %v, want %v and %v", e, out.Variance[e], out.EnsembleGain[e], vars[e], 0.75*vars[e])
		}
		for f := 0; f < 3; f++ {
			if math.Abs(out.Covariance[e][f]-cov.At(e, f)) > 1e-12 {
				t.Errorf("cov[%d][%d] = %v, want %v", e, f, out.Covariance[e][f], cov.At(e, f))
			}
		}
		if math.Abs(out.Correlation[e][e]-1) > 1e-12 {
			t.Errorf("corr[%d][%d] = %v", e, e, out.Correlation[e][e])
		}
	}
	checkOutputs(t, outDir, correlateOutputs)
}

func TestBadInputExitsTwoWithOneLine(t *testing.T) {
	dir := t.TempDir()
	nan := writeArray(t, dir, "nan.npy", []int{2, 2}, []float64{1, 2, math.NaN(), 4})
	ok2 := writeArray(t, dir, "ok2.npy", []int{2, 2}, []float64{1, 2, 3, 4})
	ok3 := writeArray(t, dir, "ok3.npy", []int{2, 3}, []float64{1, 2, 3, 4, 5, 6})
	rank1 := writeArray(t, dir, "rank1.npy", []int{4}, []float64{1, 2, 3, 4})
	empty := writeFile(t, dir, "empty.jsonl", "")
	ragged := writeFile(t, dir, "ragged.jsonl", `{"id":"a","samples":["x","y"],"embeddings":[[1,2],[3]]}`+"\n")
	badjson := writeFile(t, dir, "bad.jsonl", `{"id":"a","samples":["x","y"]}`+"\n"+`{"id":"b","samples":`+"\n")
	notlist := writeFile(t, dir, "notlist.jsonl", `{"id":"a","samples":"x"}`+"\n")
	csvRagged := writeFile(t, dir, "r.csv", "1,2\n3\n")
	cases := []struct {
		name string
		args []string
		want []string // substrings of the error line
	}{
		{"missing file", []string{"entropy", "--in", filepath.Join(dir, "nope.jsonl")}, []string{"nope.jsonl"}},
		{"NaN", []string{"decompose", "--models", nan, ok2}, []string{"nan.npy", "NaN"}},
		{"wrong rank", []string{"decompose", "--models", rank1}, []string{"rank1.npy"}},
		{"empty input", []string{"entropy", "--in", empty}, []string{"empty.jsonl"}},
		{"ragged embeddings", []string{"entropy", "--in", ragged, "--kernel", "rbf"}, []string{"ragged.jsonl", "line 1", "embeddings"}},
		{"bad json", []string{"entropy", "--in", badjson}, []string{"bad.jsonl", "line 2"}},
		{"samples not a list", []string{"entropy", "--in", notlist}, []string{"notlist.jsonl", "line 1", "samples"}},
		{"ragged csv", []string{"decompose", "--models", csvRagged, csvRagged}, []string{"r.csv", "line 2"}},
		{"mismatched dims", []string{"decompose", "--models", ok2, ok3}, []string{"ok2.npy", "ok3.npy"}},
		{"mismatched targets", []string{"decompose", "--models", ok2, ok2, "--targets", ok3}, []string{"ok3.npy"}},
		{"bad gamma", []string{"decompose", "--models", ok2, ok2, "--gamma", "wide"}, []string{"gamma"}},
		{"bad kernel", []string{"entropy", "--in", ragged, "--kernel", "gauss"}, []string{"gauss"}},
		{"unknown flag", []string{"entropy", "--bogus"}, []string{"bogus"}},
		{"missing --in", []string{"entropy"}, []string{"--in"}},
		{"unknown command", []string{"frobnicate"}, []string{"frobnicate"}},
		{"correlate rank", []string{"correlate", ok2}, []string{"ok2.npy"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := cli(t, c.args...)
			if code != 2 {
				t.Errorf("exit code %d, want 2 (stderr %q)", code, stderr)
			}
			if n := strings.Count(strings.TrimRight(stderr, "\n"), "\n"); n != 0 {
				t.Errorf("error is %d lines, want one: %q", n+1, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
}

func TestDemoWritesReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	// A file of the user's in the report directory must survive.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	keep := writeFile(t, dir, "notes.txt", "mine")
	code, stdout, stderr := cli(t, "demo", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"index.html", "report.md", "entropy_by_correctness.png", "decomposition.png", "epoch_correlation.png", "epoch_variance.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("demo did not write %s", f)
		}
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "mine" {
		t.Error("demo clobbered a file in the output directory")
	}
	if !strings.Contains(stdout, "AUROC") || !strings.Contains(stdout, "closed form") && !strings.Contains(stdout, "variance") {
		t.Errorf("demo summary:\n%s", stdout)
	}
	// Same seed, same report.
	dir2 := filepath.Join(t.TempDir(), "demo2")
	if code, stdout2, _ := cli(t, "demo", "--out", dir2); code != 0 || strings.ReplaceAll(stdout2, dir2, "") != strings.ReplaceAll(stdout, dir, "") {
		t.Error("demo output differs between runs with the same seed")
	}
}
