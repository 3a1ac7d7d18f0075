package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

type phrSimJSON struct {
	Rows []map[string]*float64 `json:"rows"`
}

func TestPHRSimulateJSONContract(t *testing.T) {
	for _, model := range []string{"linear", "categorical"} {
		t.Run(model, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"hallucination", "simulate", "--backend", model, "--ns", "1,8,64", "--tasks", "30", "--m", "10", "--k", "300", "--extra", "40", "--json", "--out", dir}
			code, stdout, stderr := cli(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var out phrSimJSON
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatal(err)
			}
			if len(out.Rows) != 3 {
				t.Fatalf("%d rows", len(out.Rows))
			}
			for _, row := range out.Rows {
				for _, k := range []string{"n", "phr_mean", "thr_mean", "exact_phr_mean", "mae_phr_vs_exact", "mae_phr_vs_thr", "r2_phr_vs_thr"} {
					v, ok := row[k]
					if !ok || v == nil {
						t.Errorf("row %v: key %q missing or null", row, k)
						continue
					}
					if k != "n" && !(*v >= 0 && *v <= 1) {
						t.Errorf("row n=%v: %s = %v outside [0, 1]", *row["n"], k, *v)
					}
				}
			}
			first, last := *out.Rows[0]["phr_mean"], *out.Rows[2]["phr_mean"]
			if !(last < first) {
				t.Errorf("mean PHR %v at n=64 is not below %v at n=1", last, first)
			}
			// With only 40 imagined examples the truncation bias is a few
			// hundredths for the categorical model at n = 1.
			for i, row := range out.Rows {
				if d := math.Abs(*row["phr_mean"] - *row["exact_phr_mean"]); d > 0.05 {
					t.Errorf("row %d: mean PHR %v, exact %v", i, *row["phr_mean"], *row["exact_phr_mean"])
				}
			}
			for _, f := range []string{"simulate.csv", "tasks.csv", "simulate.json", "rates_vs_n.png", "phr_vs_thr.png"} {
				if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
					t.Errorf("--out did not write %s", f)
				}
			}
			csv, _ := os.ReadFile(filepath.Join(dir, "tasks.csv"))
			if lines := strings.Count(string(csv), "\n"); lines != 1+3*30 {
				t.Errorf("tasks.csv has %d lines, want %d", lines, 1+3*30)
			}
			// The same seed gives the same output, whatever the concurrency.
			_, again, _ := cli(t, append(args[:len(args)-2], "--concurrency", "1")...)
			if again != stdout {
				t.Error("a second run with the same seed printed something else")
			}
		})
	}
}

// A check at the paper's settings (ε = 0.05, M = 40, K = 2000,
// N-n = 100, 200 tasks): on the paper's cubic task the mean absolute
// difference between Algorithm 1 and the exact PHR is below 0.02 at n = 2
// and n = 16. (The derivation of the tolerance and the categorical model
// are in the packages' tests.)
func TestPHRSimulateSeedSettings(t *testing.T) {
	code, stdout, stderr := cli(t, "hallucination", "simulate", "--ns", "2,16", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out phrSimJSON
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	for _, row := range out.Rows {
		t.Logf("n=%v: PHR %.4f exact %.4f THR %.4f MAE vs exact %.4f", *row["n"], *row["phr_mean"], *row["exact_phr_mean"], *row["thr_mean"], *row["mae_phr_vs_exact"])
		if *row["mae_phr_vs_exact"] >= 0.02 {
			t.Errorf("n=%v: MAE vs exact %.4f, want < 0.02", *row["n"], *row["mae_phr_vs_exact"])
		}
	}
}

func writeLines(t *testing.T, dir, name string, lines ...string) string {
	return writeFile(t, dir, name, strings.Join(lines, "\n")+"\n")
}

type phrRunJSON struct {
	Items []map[string]any `json:"items"`
	Stats *struct {
		Requests int64 `json:"requests"`
	} `json:"stats"`
}

func runPHR(t *testing.T, args ...string) phrRunJSON {
	t.Helper()
	code, stdout, stderr := cli(t, append([]string{"hallucination", "run"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out phrRunJSON
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	return out
}

// run --backend openai against the exact model served on 127.0.0.1 gives
// the same numbers as run --backend categorical on the same model.
func TestPHRRunOpenAIMatchesExactModel(t *testing.T) {
	inputs, labels := []string{"cat", "dog", "bird"}, []string{"yes", "no"}
	h, err := llmtest.NewHandler(llmtest.Config{Model: categorical.Symmetric(3, 2, 0.5), Inputs: inputs, Labels: labels, APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	t.Setenv("PHR_TEST_KEY", "sk-test")
	dir := t.TempDir()
	ctxFile := writeLines(t, dir, "ctx.jsonl",
		`{"x":"cat","y":"yes"}`, `{"x":"dog","y":"no"}`, `{"x":"cat","y":"yes"}`, ``, `{"x":"bird","y":"no"}`)
	qFile := writeLines(t, dir, "q.jsonl", `{"id":"q1","x":"cat","y":"yes"}`, `{"id":7,"x":"bird"}`, `{"x":"dog","y":"yes"}`)
	common := []string{"--context", ctxFile, "--queries", qFile, "--m", "5", "--k", "20", "--extra", "4", "--seed", "3", "--json"}
	viaAPI := runPHR(t, append([]string{"--backend", "openai", "--base-url", srv.URL + "/v1", "--model-name", "genlens-categorical", "--api-key-env", "PHR_TEST_KEY", "--concurrency", "4"}, common...)...)
	direct := runPHR(t, append([]string{"--backend", "categorical", "--inputs", "cat,dog,bird", "--labels", "yes,no", "--alpha", "0.5", "--concurrency", "2"}, common...)...)
	if len(viaAPI.Items) != 3 || len(direct.Items) != 3 {
		t.Fatalf("%d and %d items", len(viaAPI.Items), len(direct.Items))
	}
	for i, it := range viaAPI.Items {
		for _, k := range []string{"id", "phr", "total", "aleatoric", "epistemic", "error_rate"} {
			if _, ok := it[k]; !ok {
				t.Errorf("item %d: key %q missing", i, k)
			}
			if fmt.Sprint(it[k]) != fmt.Sprint(direct.Items[i][k]) {
				t.Errorf("item %d: %s = %v via the API, %v direct", i, k, it[k], direct.Items[i][k])
			}
		}
		if _, ok := direct.Items[i]["exact_phr"]; !ok {
			t.Errorf("categorical item %d has no exact_phr", i)
		}
	}
	if viaAPI.Items[1]["id"] != "7" || viaAPI.Items[2]["id"] != "row-3" || viaAPI.Items[1]["error_rate"] != nil || viaAPI.Items[0]["error_rate"] == nil {
		t.Errorf("ids / error rates: %v", viaAPI.Items)
	}
	if viaAPI.Stats == nil || viaAPI.Stats.Requests == 0 {
		t.Error("no request statistics")
	}
}

func TestPHRRunLinear(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	var lines []string
	for range 6 {
		x := -2 + 4*r.Float64()
		lines = append(lines, fmt.Sprintf(`{"x":%v,"y":%v}`, x, 0.5*x*x-x+0.1*r.NormFloat64()))
	}
	ctxFile := writeLines(t, dir, "ctx.jsonl", lines...)
	qFile := writeLines(t, dir, "q.jsonl", `{"id":"near","x":0.1}`, `{"id":"far","x":1.99}`)
	out := runPHR(t, "--backend", "linear", "--features", "poly:2", "--noise", "0.1", "--prior-scale", "1",
		"--context", ctxFile, "--queries", qFile, "--m", "40", "--k", "1000", "--json", "--out", filepath.Join(dir, "out"))
	for _, it := range out.Items {
		phr, exact := it["phr"].(float64), it["exact_phr"].(float64)
		if math.Abs(phr-exact) > 0.05 || it["error_rate"] != nil {
			t.Errorf("item %v: phr %v, exact %v", it["id"], phr, exact)
		}
	}
	checkOutputs(t, filepath.Join(dir, "out"), phrRunOutputs)
}

func TestPHRBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeLines(t, dir, "ctx.jsonl", `{"x":0.5,"y":1}`)
	q := writeLines(t, dir, "q.jsonl", `{"id":"a","x":0.3}`)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no files", []string{"run", "--backend", "linear"}, "--context FILE and --queries FILE are required"},
		{"bad backend", []string{"run", "--backend", "gpt", "--context", good, "--queries", q}, "--backend"},
		{"bad eps", []string{"run", "--backend", "linear", "--context", good, "--queries", q, "--eps", "1"}, "--eps"},
		{"bad JSON", []string{"run", "--backend", "linear", "--context", writeLines(t, dir, "b1.jsonl", `{"x":1,"y":2}`, `{"x":1,"y":`), "--queries", q}, "b1.jsonl line 2"},
		{"missing y", []string{"run", "--backend", "linear", "--context", writeLines(t, dir, "b2.jsonl", `{"x":1}`), "--queries", q}, "b2.jsonl line 1: y: missing"},
		{"text for linear", []string{"run", "--backend", "linear", "--context", good, "--queries", writeLines(t, dir, "b3.jsonl", ``, `{"id":"a","x":"zero"}`)}, "b3.jsonl line 2: x: want a number"},
		{"no queries", []string{"run", "--backend", "linear", "--context", good, "--queries", writeLines(t, dir, "b4.jsonl", ``)}, "no queries"},
		{"missing file", []string{"run", "--backend", "linear", "--context", filepath.Join(dir, "nope.jsonl"), "--queries", q}, "nope.jsonl"},
		{"bad features", []string{"run", "--backend", "linear", "--features", "poly:x", "--context", good, "--queries", q}, "--features"},
		{"unknown label", []string{"run", "--backend", "categorical", "--context", writeLines(t, dir, "b5.jsonl", `{"x":"red","y":"perhaps"}`), "--queries", q}, `b5.jsonl line 1: y: "perhaps" is not one of`},
		{"bad openai label", []string{"run", "--backend", "openai", "--base-url", "http://127.0.0.1:1/v1", "--model-name", "m", "--context", writeLines(t, dir, "b6.jsonl", `{"x":"a","y":"two\nlines"}`), "--queries", q}, "b6.jsonl line 1"},
		{"openai without URL", []string{"run", "--backend", "openai", "--context", good, "--queries", q}, "--base-url"},
		{"bad ns", []string{"simulate", "--ns", "2,x"}, "--ns"},
		{"bad model", []string{"simulate", "--backend", "gp"}, "--backend"},
		{"bad groups", []string{"simulate", "--backend", "categorical", "--label-count", "1"}, "--label-count"},
		{"unknown subcommand", []string{"halucinate"}, "unknown command"},
		{"public address", []string{"serve-model", "--addr", "0.0.0.0:8000"}, "loopback"},
		{"bad port", []string{"serve-model", "--addr", "127.0.0.1:99999"}, "--addr"},
		{"one label served", []string{"serve-model", "--labels", "yes"}, `--labels "yes"`},
		{"duplicate n", []string{"simulate", "--ns", "2,2"}, "given twice"},
		{"out is a file", []string{"simulate", "--out", good}, "is a file"},
		{"M x K too large", []string{"run", "--backend", "linear", "--context", good, "--queries", q, "--m", "100000", "--k", "100000"}, "responses per query"},
		{"max tokens 0", []string{"run", "--backend", "openai", "--base-url", "http://127.0.0.1:1/v1", "--model-name", "m", "--context", good, "--queries", q, "--max-tokens", "0"}, "--max-tokens"},
		{"timeout 0", []string{"run", "--backend", "openai", "--base-url", "http://127.0.0.1:1/v1", "--model-name", "m", "--context", good, "--queries", q, "--timeout", "0s"}, "--timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := cli(t, append([]string{"hallucination"}, tc.args...)...)
			if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line mentioning %q", code, stderr, tc.want)
			}
		})
	}
}

// A server without log-probabilities is a runtime failure (exit 1) with a
// message that says what is missing; a hanging server times out.
func TestPHRRunBadServer(t *testing.T) {
	dir := t.TempDir()
	ctxFile := writeLines(t, dir, "ctx.jsonl", `{"x":"a","y":"b"}`)
	q := writeLines(t, dir, "q.jsonl", `{"id":"q","x":"a"}`)
	noLogprobs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, `{"choices":[{"index":0,"text":" b\nLabel: c","logprobs":null}]}`)
	}))
	defer noLogprobs.Close()
	code, _, stderr := cli(t, "hallucination", "run", "--base-url", noLogprobs.URL+"/v1", "--model-name", "m", "--context", ctxFile, "--queries", q)
	if code != 1 || !strings.Contains(stderr, "no token log-probabilities") {
		t.Errorf("no logprobs: exit %d, %q", code, stderr)
	}
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice when the client hangs up.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer hang.Close()
	start := time.Now()
	code, _, stderr = cli(t, "hallucination", "run", "--base-url", hang.URL+"/v1", "--model-name", "m", "--context", ctxFile, "--queries", q, "--timeout", "100ms", "--retries", "1")
	if code != 1 || !strings.Contains(stderr, "no complete response within 100ms") || time.Since(start) > 3*time.Second {
		t.Errorf("hanging server: exit %d after %v, %q", code, time.Since(start), stderr)
	}
}

func TestPHRServeModel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	var out strings.Builder
	f := phrServeFlags{addr: "127.0.0.1:0", modelName: "genlens-categorical", mf: phrModelFlags{inputNames: "a,b", labelNames: "x,y", alpha: 1}}
	go func() { done <- runPHRServe(ctx, &out, f, func(a string) { addr <- a }) }()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-done:
		t.Fatal(err)
	}
	resp, err := http.Post(base+"/v1/completions", "application/json", strings.NewReader(`{"model":"genlens-categorical","prompt":"Input: a\nLabel:","max_tokens":1,"seed":1}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"text":" `) {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve-model did not stop")
	}
	if !strings.Contains(out.String(), "served 1 completion requests") {
		t.Errorf("output %q", out.String())
	}
}

// The performance target: `hallucination simulate` with the defaults (6 context
// sizes x 200 tasks, M = 40, K = 2000, N-n = 100) in under 3 minutes on 2
// cores.
// Run: go test ./cmd/genlens -run XXX -bench PHRSimulateDefaults -benchtime 1x -count 3
func BenchmarkPHRSimulateDefaults(b *testing.B) {
	for _, model := range []string{"linear", "categorical"} {
		b.Run(model, func(b *testing.B) {
			for b.Loop() {
				if code := run([]string{"hallucination", "simulate", "--backend", model, "--json"}, io.Discard, io.Discard); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}

// The old spellings (--M, --K, run's --model, simulate's --model) still
// work for one release, with a notice on stderr that names the new flag;
// stdout stays one clean JSON document.
func TestPHRDeprecatedFlagAliases(t *testing.T) {
	newArgs := []string{"hallucination", "simulate", "--backend", "categorical", "--ns", "2", "--tasks", "3", "--m", "3", "--k", "20", "--extra", "4", "--json"}
	oldArgs := []string{"hallucination", "simulate", "--model", "categorical", "--ns", "2", "--tasks", "3", "--M", "3", "--K", "20", "--extra", "4", "--json"}
	code, want, stderr := cli(t, newArgs...)
	if code != 0 || stderr != "" {
		t.Fatalf("new spellings: exit %d, stderr %q", code, stderr)
	}
	code, got, stderr := cli(t, oldArgs...)
	if code != 0 || got != want {
		t.Fatalf("old spellings: exit %d, stdout differs: %v", code, got != want)
	}
	for _, w := range []string{"--model is deprecated", "use --backend", "--M is deprecated", "use --m", "use --k"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q lacks %q", stderr, w)
		}
	}
	_, out, _ := cli(t, "hallucination", "run", "--help")
	if strings.Contains(out, "--M ") || strings.Contains(out, "--K ") || !strings.Contains(out, "--model-name") {
		t.Errorf("run --help shows the deprecated flags or lacks --model-name:\n%s", out)
	}
}

// The advice of run names the current flags (--m, --k, --noise), never
// the deprecated --M/--K, and on the linear backend calls a negative
// total uncertainty what it is, a differential entropy, not noise.
func TestPHRRunAdviceFlags(t *testing.T) {
	dir := t.TempDir()
	ctxFile := writeLines(t, dir, "ctx.jsonl", `{"x":"cat","y":"yes"}`, `{"x":"cat","y":"yes"}`, `{"x":"dog","y":"no"}`)
	qFile := writeLines(t, dir, "q.jsonl", `{"id":"q1","x":"cat"}`, `{"id":"q2","x":"dog"}`)
	code, _, stderr := cli(t, "hallucination", "run", "--backend", "categorical", "--inputs", "cat,dog", "--labels", "yes,no",
		"--context", ctxFile, "--queries", qFile, "--m", "2", "--k", "3", "--extra", "2")
	if code != 0 || !strings.Contains(stderr, "raise --k and --m") {
		t.Errorf("categorical: exit %d, stderr:\n%s", code, stderr)
	}
	for _, bad := range []string{"--K", "--M", "{", "deprecated"} {
		if strings.Contains(stderr, bad) {
			t.Errorf("categorical: stderr has %q:\n%s", bad, stderr)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	var lines []string
	for range 20 {
		x := -1 + 2*r.Float64()
		lines = append(lines, fmt.Sprintf(`{"x":%v,"y":%v}`, x, x*x*x+0.1*r.NormFloat64()))
	}
	points := writeLines(t, dir, "points.jsonl", lines...)
	xs := writeLines(t, dir, "xs.jsonl", `{"id":"a","x":0.1}`, `{"id":"b","x":-0.4}`)
	code, stdout, stderr := cli(t, "hallucination", "run", "--backend", "linear", "--features", "poly:3", "--noise", "0.1", "--prior-scale", "1",
		"--context", points, "--queries", xs, "--m", "20", "--k", "500")
	if code != 0 || !strings.Contains(stdout, "-0.8") {
		t.Fatalf("linear: exit %d (%s)\n%s", code, stderr, stdout)
	}
	if !strings.Contains(stderr, "differential entropies") || !strings.Contains(stderr, "-0.884 for the likelihood's σ = --noise 0.1") ||
		strings.Contains(stderr, "negative value is noise") || strings.Contains(stderr, "--K") || strings.Contains(stderr, "{") {
		t.Errorf("linear: stderr:\n%s", stderr)
	}
}
