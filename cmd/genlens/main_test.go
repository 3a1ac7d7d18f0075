package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/demo/synth"
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/metric/kernel"
	"github.com/genlens/genlens/metric/kscore"
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
	// The protocol of the TriviaQA files: the answer under test is
	// samples[0], correct when RougeL-F with the reference > 0.3;
	// uncertainty from samples[1:]. The default (lengths 1..2 summed, as
	// the authors' code) must beat length 2 alone (the paper's text) on
	// both files: that is why it is the default.
	for _, f := range []string{"llm/triviaqa_llama13b_500x20.jsonl", "llm/triviaqa_qwen2.5-7b_1000x10.jsonl"} {
		path := shareddata.Path(t, f)
		auroc := map[string]float64{}
		for _, setting := range []string{"default", "--cumulative=false"} {
			args := []string{"entropy", "--in", path, "--holdout-first", "--json"}
			if setting != "default" {
				args = append(args, setting)
			}
			code, stdout, stderr := cli(t, args...)
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
			t.Logf("%s %s: n=%d accuracy=%.3f AUROC kernel entropy %.4f, lexical similarity %.4f", f, setting, out.Summary.N, out.Summary.Accuracy, a.KernelEntropy, a.LexicalSimilarity)
			if a.KernelEntropy <= 0.70 || a.LexicalSimilarity <= 0.70 {
				t.Errorf("%s: AUROCs %.4f / %.4f, want both > 0.70", f, a.KernelEntropy, a.LexicalSimilarity)
			}
			if len(out.Items) != out.Summary.N {
				t.Errorf("%d items for n=%d", len(out.Items), out.Summary.N)
			}
			auroc[setting] = a.KernelEntropy
		}
		if !(auroc["default"] > auroc["--cumulative=false"]) {
			t.Errorf("%s: default cs kernel AUROC %.4f does not beat length 2 alone (%.4f)", f, auroc["default"], auroc["--cumulative=false"])
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
	checkOutputs(t, outDir, entropyOutputs[:3]) // no accuracy-rejection chart without --auarc
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
	out := entropyOutput{Items: decodeEntropyItems(t, stdout)}
	// Row a: squared distances 1, 4, 5 -> -(e^-0.5 + e^-2 + e^-2.5)/3.
	want := -(math.Exp(-0.5) + math.Exp(-2) + math.Exp(-2.5)) / 3
	if got := float64(*out.Items[0].Score("kernel_entropy")); math.Abs(got-want) > 1e-12 {
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
	cov, vars, _ := kscore.CovarianceMatrix(context.Background(), kernel.RBF{Gamma: 0.5}, runs)
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
	seq := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(i*i%7) + 0.5*float64(i)
		}
		return v
	}
	inst5 := writeArray(t, dir, "c1.npy", []int{5, 3, 2}, seq(30))
	inst4 := writeArray(t, dir, "c3.npy", []int{4, 3, 2}, seq(24))
	one1 := writeArray(t, dir, "one1.npy", []int{1, 2}, []float64{1, 2})
	one2 := writeArray(t, dir, "one2.npy", []int{1, 2}, []float64{3, 4})
	stackedOne := writeArray(t, dir, "stacked1.npy", []int{3, 1, 2}, seq(6))
	member1 := writeArray(t, dir, "s1.npy", []int{1, 4, 2}, seq(8))
	member1b := writeArray(t, dir, "s2.npy", []int{1, 4, 2}, seq(8))
	sample1 := writeArray(t, dir, "m1.npy", []int{3, 1, 2}, seq(6))
	sample1b := writeArray(t, dir, "m2.npy", []int{3, 1, 2}, seq(6))
	epoch := writeArray(t, dir, "e3.npy", []int{3, 4, 2}, seq(24))
	constant := writeArray(t, dir, "const.npy", []int{6, 2}, slices.Repeat([]float64{1}, 12))
	constJSONL := writeFile(t, dir, "const.jsonl", `{"id":"a","samples":["x","y","z"],"embeddings":[[1,1],[1,1],[1,1]]}`+"\n")
	plain := writeFile(t, dir, "plain.jsonl", `{"id":"a","samples":["x","y","z"]}`+"\n")
	emb := writeArray(t, dir, "emb.npy", []int{1, 3, 2}, seq(6))
	multi := filepath.Join(dir, "multi.npz")
	if err := dataio.WriteNPZ(multi, map[string]*dataio.Array{
		"samples": {Shape: []int{3, 4, 2}, Data: seq(24)}, "other": {Shape: []int{3, 4, 2}, Data: seq(24)},
	}, false); err != nil {
		t.Fatal(err)
	}
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
		{"correlate rank", []string{"correlate", ok2, ok2}, []string{"ok2.npy"}},
		// Too few instances, members or samples is the input's fault.
		{"conditional instance counts", []string{"decompose", "--models", inst5, inst4}, []string{"c3.npy", "4 instances", "c1.npy has 5"}},
		{"one sample per model", []string{"decompose", "--models", one1, one2}, []string{"one1.npy", "1 sample(s)", "at least 2"}},
		{"one sample per stacked model", []string{"decompose", "--models", stackedOne}, []string{"stacked1.npy", "at least 2"}},
		{"one target", []string{"decompose", "--models", ok2, ok2, "--targets", one1}, []string{"one1.npy", "targets", "at least 2"}},
		{"correlate one member", []string{"correlate", member1, member1b}, []string{"s1.npy", "1 member(s)", "at least 2"}},
		{"correlate one sample", []string{"correlate", epoch, sample1, sample1b}, []string{"m1.npy", "1 sample(s) per member", "at least 2"}},
		{"correlate no files", []string{"correlate"}, []string{"at least two files", "genlens correlate --help"}},
		{"correlate one file", []string{"correlate", epoch}, []string{"at least two files"}},
		// The median rule on constant data.
		{"median of constant data", []string{"decompose", "--models", constant, constant, "--gamma", "median"}, []string{"constant", "numeric --gamma"}},
		{"median of constant data, default gamma", []string{"decompose", "--models", constant}, []string{"constant", "numeric --gamma"}},
		{"median of constant embeddings", []string{"entropy", "--in", constJSONL, "--kernel", "rbf", "--gamma", "median"}, []string{"constant", "numeric --gamma"}},
		// .npz archives with several arrays.
		{"npz without key", []string{"decompose", "--models", multi}, []string{"multi.npz", "key"}},
		{"npz unknown key", []string{"correlate", "--key", "nope", multi, multi}, []string{"multi.npz", "nope"}},
		{"key on npy", []string{"correlate", "--key", "samples", epoch, epoch}, []string{"e3.npy", "samples"}},
		{"embeddings-key without embeddings", []string{"entropy", "--in", ragged, "--kernel", "rbf", "--embeddings-key", "e"}, []string{"--embeddings-key", "--embeddings"}},
		// Flags the chosen kernel would ignore.
		{"gamma with cs", []string{"entropy", "--in", plain, "--gamma", "0.5"}, []string{"--gamma", "--kernel cs"}},
		{"embeddings with cs", []string{"entropy", "--in", plain, "--embeddings", emb}, []string{"--embeddings", "--kernel cs"}},
		{"embeddings-key with cs", []string{"entropy", "--in", plain, "--kernel", "cs", "--embeddings-key", "e"}, []string{"--embeddings-key", "--kernel cs"}},
		{"t with a vector kernel", []string{"entropy", "--in", plain, "--embeddings", emb, "--kernel", "rbf", "--t", "3"}, []string{"--t", "cs kernel", "--kernel rbf"}},
		{"cumulative with a vector kernel", []string{"entropy", "--in", plain, "--embeddings", emb, "--kernel", "cosine", "--cumulative"}, []string{"--cumulative", "--kernel cosine"}},
		{"gamma with cosine", []string{"entropy", "--in", plain, "--embeddings", emb, "--kernel", "cosine", "--gamma", "dim"}, []string{"--gamma", "--kernel cosine"}},
		{"decompose gamma with linear", []string{"decompose", "--models", ok2, ok2, "--kernel", "linear", "--gamma", "0.5"}, []string{"--gamma", "--kernel linear", "genlens decompose --help"}},
		{"correlate gamma with cosine", []string{"correlate", "--kernel", "cosine", "--gamma", "median", epoch, epoch}, []string{"--gamma", "--kernel cosine"}},
		{"threshold 1", []string{"entropy", "--in", plain, "--rouge-threshold", "1"}, []string{"--rouge-threshold"}},
		{"negative threshold", []string{"entropy", "--in", plain, "--rouge-threshold", "-0.1"}, []string{"--rouge-threshold"}},
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

// TestEntropyEmptySamplesSkipped: a row with no samples is skipped with
// the same reason whatever the kernel; a row with samples but no
// embeddings is still refused by a vector kernel (TestEntropyVectorKernels).
func TestEntropyEmptySamplesSkipped(t *testing.T) {
	dir := t.TempDir()
	inline := writeFile(t, dir, "inline.jsonl",
		`{"id":"p","samples":["x","y","z"],"embeddings":[[0,0],[1,0],[0,2]]}`+"\n"+
			`{"id":"q","samples":[],"embeddings":[]}`+"\n"+
			`{"id":"r","samples":[]}`+"\n")
	plain := writeFile(t, dir, "plain.jsonl", `{"id":"p","samples":["x","y","z"]}`+"\n"+`{"id":"q","samples":[]}`+"\n"+`{"id":"r","samples":[]}`+"\n")
	// Rows q and r have no samples: whatever --embeddings holds for them is unused.
	npy := writeArray(t, dir, "e.npy", []int{3, 3, 2}, []float64{0, 0, 1, 0, 0, 2, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9})
	for _, c := range []struct {
		name string
		args []string
	}{
		{"cs", []string{"--in", plain}},
		{"rbf, embeddings in the rows", []string{"--in", inline, "--kernel", "rbf", "--gamma", "0.5"}},
		{"rbf, --embeddings", []string{"--in", plain, "--embeddings", npy, "--kernel", "rbf", "--gamma", "median"}},
		{"cosine, holdout-first", []string{"--in", inline, "--kernel", "cosine", "--holdout-first"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, append([]string{"entropy", "--json"}, c.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			out := entropyOutput{Items: decodeEntropyItems(t, stdout)}
			if len(out.Items) != 3 {
				t.Fatalf("%d items", len(out.Items))
			}
			for _, it := range out.Items[1:] {
				if it.Reason != "0 usable sample(s); kernel entropy needs at least 2" || !strings.Contains(stdout, `"kernel_entropy": null`) {
					t.Errorf("row %s: reason %q\n%s", it.ID, it.Reason, stdout)
				}
			}
			if out.Items[0].Reason != "" {
				t.Errorf("row p skipped: %q", out.Items[0].Reason)
			}
		})
	}
}

func TestEntropyThresholdZero(t *testing.T) {
	dir := t.TempDir()
	// RougeL-F(answer, reference) = 2/7 = 0.286: incorrect at 0.3 and at
	// 0.286, correct at 0 and 0.2. "Lyon" shares no word: incorrect at 0 too.
	in := writeFile(t, dir, "t.jsonl",
		`{"id":"a","samples":["x","y"],"answer":"it is the capital city paris","reference":"Paris"}`+"\n"+
			`{"id":"b","samples":["x","y"],"answer":"Lyon","reference":"Paris"}`+"\n")
	for _, c := range []struct {
		threshold []string
		want      [2]bool
	}{
		{nil, [2]bool{false, false}},
		{[]string{"--rouge-threshold", "0.3"}, [2]bool{false, false}},
		{[]string{"--rouge-threshold", "0.2"}, [2]bool{true, false}},
		{[]string{"--rouge-threshold", "0"}, [2]bool{true, false}},
	} {
		t.Run(strings.Join(append([]string{"default"}, c.threshold...), " "), func(t *testing.T) {
			code, stdout, stderr := cli(t, append([]string{"entropy", "--in", in, "--json"}, c.threshold...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var out struct{ Items []entropyItem }
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatal(err)
			}
			for i, it := range out.Items {
				if it.Correct == nil || *it.Correct != c.want[i] {
					t.Errorf("%s: correct = %v, want %v", it.ID, it.Correct, c.want[i])
				}
			}
		})
	}
}

func TestEntropyZeroIsNotNegative(t *testing.T) {
	// One-word answers share no subsequence of length 2: every pair has
	// k = 0 and the entropy -mean k is -0, which must print as 0.
	dir := t.TempDir()
	in := writeFile(t, dir, "z.jsonl", `{"id":"q","samples":["a","b","c"],"correct":true}`+"\n"+`{"id":"r","samples":["a b","a b"],"correct":false}`+"\n")
	outDir := filepath.Join(dir, "out")
	for _, args := range [][]string{{"--json"}, {}, {"--out", outDir}} {
		code, stdout, stderr := cli(t, append([]string{"entropy", "--in", in}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if strings.Contains(stdout, "-0") && !strings.Contains(stdout, "-0.") {
			t.Errorf("%v: -0 in output:\n%s", args, stdout)
		}
	}
	csvText, err := os.ReadFile(filepath.Join(outDir, "items.csv"))
	if err != nil || !strings.Contains(string(csvText), "\nq,0,0,true,") {
		t.Errorf("items.csv = %q (%v)", csvText, err)
	}
	for _, f := range []string{"items.csv", "entropy.json"} {
		if b, _ := os.ReadFile(filepath.Join(outDir, f)); strings.Contains(string(b), "-0,") || strings.Contains(string(b), "-0\n") {
			t.Errorf("%s has -0:\n%s", f, b)
		}
	}
}

func TestDecomposeWarnsOnSampleCounts(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(7, 8))
	file := func(name string, shape ...int) string {
		n := 1
		for _, s := range shape {
			n *= s
		}
		data := make([]float64, n)
		for i := range data {
			data[i] = r.NormFloat64()
		}
		return writeArray(t, dir, name, shape, data)
	}
	a, b, c := file("a50.npy", 50, 2), file("b50.npy", 50, 2), file("c40.npy", 40, 2)
	ca, cb := file("ca.npy", 2, 6, 2), file("cb.npy", 2, 5, 2)
	for _, tc := range []struct {
		name string
		args []string
		warn []string // substrings of the one warning line; nil for none
	}{
		{"equal counts", []string{a, b}, nil},
		{"50, 50, 40", []string{a, b, c}, []string{"a50.npy 50", "b50.npy 50", "c40.npy 40", "smallest (40)"}},
		{"conditional 6, 5", []string{ca, cb}, []string{"ca.npy 6", "cb.npy 5", "smallest (5)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, append([]string{"decompose", "--gamma", "0.5", "--json", "--models"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if tc.warn == nil {
				if stderr != "" {
					t.Errorf("unexpected stderr %q", stderr)
				}
				return
			}
			if !strings.HasPrefix(stderr, "genlens: warning: ") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("want one warning line, got %q", stderr)
			}
			for _, w := range tc.warn {
				if !strings.Contains(stderr, w) {
					t.Errorf("warning %q lacks %q", stderr, w)
				}
			}
			if !json.Valid([]byte(stdout)) {
				t.Errorf("stdout is not JSON: %q", stdout)
			}
		})
	}
}

// TestNPZKeyFlags: decompose and correlate --key and entropy
// --embeddings-key read a named array of a multi-array .npz, with the
// results of the same arrays saved as .npy.
func TestNPZKeyFlags(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(9, 10))
	randArray := func(shape ...int) *dataio.Array {
		n := 1
		for _, s := range shape {
			n *= s
		}
		a := &dataio.Array{Shape: shape}
		for range n {
			a.Data = append(a.Data, r.NormFloat64())
		}
		return a
	}
	npz := func(name string, a *dataio.Array) (string, string) {
		p := filepath.Join(dir, name+".npz")
		if err := dataio.WriteNPZ(p, map[string]*dataio.Array{"samples": a, "labels": randArray(3)}, true); err != nil {
			t.Fatal(err)
		}
		return p, writeArray(t, dir, name+".npy", a.Shape, a.Data)
	}
	e1z, e1 := npz("e1", randArray(3, 4, 2))
	e2z, e2 := npz("e2", randArray(3, 4, 2))
	yz, y := npz("y", randArray(5, 2))
	embz, emb := npz("emb", randArray(2, 3, 2))
	in := writeFile(t, dir, "a.jsonl", `{"id":"a","samples":["x","y","z"]}`+"\n"+`{"id":"b","samples":["x","y","z"]}`+"\n")
	for _, c := range []struct {
		name      string
		npz, npy  []string
		wantNoKey string // error of the .npz run without the key
	}{
		{"decompose", []string{"decompose", "--key", "samples", "--targets", yz, "--models", e1z}, []string{"decompose", "--targets", y, "--models", e1}, "e1.npz"},
		{"correlate", []string{"correlate", "--key", "samples", e1z, e2z}, []string{"correlate", e1, e2}, "e1.npz"},
		{"entropy", []string{"entropy", "--in", in, "--kernel", "rbf", "--embeddings", embz, "--embeddings-key", "samples"}, []string{"entropy", "--in", in, "--kernel", "rbf", "--embeddings", emb}, "emb.npz"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, want, stderr := cli(t, append(c.npy, "--json")...)
			if code != 0 {
				t.Fatalf("npy: exit %d: %s", code, stderr)
			}
			code, got, stderr := cli(t, append(c.npz, "--json")...)
			// correlate lists its files: same names but for the extension.
			if code != 0 || strings.ReplaceAll(got, ".npz", ".npy") != want {
				t.Errorf("npz with key: exit %d (%s)\n%s\nwant\n%s", code, stderr, got, want)
			}
			noKey := slices.DeleteFunc(slices.Clone(c.npz), func(s string) bool { return s == "samples" || strings.HasSuffix(s, "key") })
			code, _, stderr = cli(t, noKey...)
			if code != 2 || !strings.Contains(stderr, c.wantNoKey) || !strings.Contains(stderr, "choose one") {
				t.Errorf("npz without key: exit %d, stderr %q", code, stderr)
			}
		})
	}
}

// decodeEntropyItems reads the items of entropy's --json output (the
// summary is checked by the tests that need it).
func decodeEntropyItems(t *testing.T, stdout string) []entropyItem {
	t.Helper()
	var out struct {
		Items []entropyItem `json:"items"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	return out.Items
}

// Models drawn from the targets' own distribution have a true bias of 0;
// the unbiased estimate of the conditional example is negative, and the
// table and --json say why instead of printing it silently.
func TestDecomposeNegativeBiasNote(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	for seed := 0; seed < 20; seed++ {
		var files []string
		for i := 0; i < 3; i++ {
			data := make([]float64, 6*2)
			for j := range data {
				data[j] = r.NormFloat64()
			}
			files = append(files, writeArray(t, dir, fmt.Sprintf("s%d_m%d.npy", seed, i), []int{6, 2}, data))
		}
		ydata := make([]float64, 6*2)
		for j := range ydata {
			ydata[j] = r.NormFloat64()
		}
		y := writeArray(t, dir, fmt.Sprintf("s%d_y.npy", seed), []int{6, 2}, ydata)
		args := append([]string{"decompose", "--targets", y, "--models"}, files...)
		code, stdout, stderr := cli(t, append(args, "--json")...)
		var out struct {
			Bias     float64  `json:"bias"`
			Warnings []string `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); code != 0 || err != nil {
			t.Fatalf("exit %d (%s): %v", code, stderr, err)
		}
		if out.Bias >= 0 {
			continue
		}
		if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "negative bias") || !strings.Contains(out.Warnings[0], "unclipped") {
			t.Errorf("bias %g: warnings %q", out.Bias, out.Warnings)
		}
		_, table, _ := cli(t, args...)
		if !strings.Contains(table, "note: negative bias") || !strings.Contains(table, "read it as 0 within sampling error") {
			t.Errorf("table:\n%s", table)
		}
		return
	}
	t.Fatal("no negative bias in 20 draws")
}

// TestInputErrorsNameTheCommand checks that an unreadable input is
// reported under the command's name, not the library package's.
func TestInputErrorsNameTheCommand(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"entropy", "--in", missing + ".jsonl"}, "genlens: entropy: " + missing + ".jsonl: cannot open"},
		{[]string{"stats", "merge", missing + ".npz", "--out", missing + "-out.npz"}, "genlens: stats merge: " + missing + ".npz: cannot open"},
		{[]string{"mse", "fit", "--train", missing + ".csv", "--target", "y", "--prediction", "p", "--model", missing + ".json"}, "genlens: mse fit: " + missing + ".csv: cannot open"},
	} {
		code, _, stderr := cli(t, tc.args...)
		if code != 2 || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("genlens %s: exit %d, stderr %q; want exit 2 and a message starting %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// fixtureFolders copies the random-weight Inception fixture's first six
// images (under fix, the fixture's folder) into dir/real (img000-002) and
// dir/fake (img003-005) and returns those folders.
func fixtureFolders(t *testing.T, fix, dir string) (real, fake string) {
	t.Helper()
	real, fake = filepath.Join(dir, "real"), filepath.Join(dir, "fake")
	for i, name := range []string{"img000", "img001", "img002", "img003", "img004", "img005"} {
		b, err := os.ReadFile(filepath.Join(fix, "images", name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		to := real
		if i >= 3 {
			to = fake
		}
		if err := os.MkdirAll(to, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, name+".png"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return real, fake
}
