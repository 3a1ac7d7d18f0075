package icljob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/internal/testkit/llmtest"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/internal/golden"
	"github.com/genlens/genlens/metric/hallucination/categorical"
)

// smallSimulate is a simulation small enough for a unit test that still
// shows the PHR falling with the context size.
func smallSimulate(model string) HallucinationSimulateRequest {
	req := NewHallucinationSimulateRequest()
	req.Model, req.Ns, req.Tasks, req.M, req.K, req.Extra, req.Seed, req.Concurrency = model, "1,8", 8, 8, 200, 20, 7, 2
	return req
}

func TestHallucinationSimulateGolden(t *testing.T) {
	for _, model := range []string{"linear", "categorical"} {
		t.Run(model, func(t *testing.T) {
			res, err := HallucinationSimulate(context.Background(), job.Env{}, smallSimulate(model))
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "hallucination_simulate_"+model, res)
			for _, row := range res.Rows {
				for _, v := range []jsonnum.Num{row.PHRMean, row.THRMean, row.ExactPHRMean, row.MAEPHRExact} {
					if !(v >= 0 && v <= 1) {
						t.Errorf("n=%d: a rate %v outside [0, 1]", row.N, v)
					}
				}
				if row.Tasks != 8 {
					t.Errorf("n=%d: %d tasks", row.N, row.Tasks)
				}
			}
			if !(res.Rows[1].PHRMean < res.Rows[0].PHRMean) {
				t.Errorf("mean PHR %v at n=8 is not below %v at n=1", res.Rows[1].PHRMean, res.Rows[0].PHRMean)
			}
			for _, a := range res.Artifacts() {
				var b bytes.Buffer
				if err := a.Write(&b); err != nil || b.Len() == 0 {
					t.Errorf("artifact %s: %d bytes, %v", a.Name, b.Len(), err)
				}
				if a.Name == "tasks.csv" {
					if lines := strings.Count(b.String(), "\n"); lines != 1+2*8 {
						t.Errorf("tasks.csv has %d lines, want %d", lines, 1+2*8)
					}
				}
			}
		})
	}
}

// The result does not depend on the number of workers: every task's and
// every query's randomness comes from its own seed, and BLAS runs on one
// thread whatever the count (OpenBLAS rounds differently with more).
func TestHallucinationWorkers(t *testing.T) {
	for _, model := range []string{"linear", "categorical"} {
		req := smallSimulate(model)
		req.Concurrency = 1
		one, err := HallucinationSimulate(context.Background(), job.Env{}, req)
		if err != nil {
			t.Fatal(err)
		}
		req.Concurrency = 3
		three, err := HallucinationSimulate(context.Background(), job.Env{}, req)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(one.Tasks, three.Tasks) {
			t.Errorf("%s: 1 and 3 workers gave different tasks", model)
		}
	}
	req := NewHallucinationRunRequest()
	req.Backend, req.Features, req.Context, req.Queries, req.M, req.K, req.Extra = "linear", "relu:16:1", "lctx.jsonl", "lq.jsonl", 6, 100, 10
	var runs [2]*HallucinationRunResult
	for i, c := range []int{1, 4} {
		req.Concurrency = c
		res, err := HallucinationRun(context.Background(), job.Env{FS: phrFS()}, req)
		if err != nil {
			t.Fatal(err)
		}
		runs[i] = res
	}
	// Compared as JSON: error_rate is NaN (no "y"), which is not equal to
	// itself.
	a, _ := json.Marshal(runs[0].Items)
	b, _ := json.Marshal(runs[1].Items)
	if !bytes.Equal(a, b) {
		t.Errorf("run: concurrency 1 and 4 differ:\n%s\n%s", a, b)
	}
}

// Cancelling a simulation with the command's defaults (minutes of work)
// stops it within a second, with context.Canceled.
func TestHallucinationSimulateCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := HallucinationSimulate(ctx, job.Env{}, NewHallucinationSimulateRequest())
		errc <- err
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	start := time.Now()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) || fault.Classify(err) != fault.KindCanceled {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("stopped %v after the cancel, want within 1 s", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the simulation did not stop within 5 s of the cancel")
	}
}

func TestHallucinationSimulateValidate(t *testing.T) {
	for _, tc := range []struct {
		name, field, want string
		edit              func(r *HallucinationSimulateRequest)
	}{
		{"model", "model", `{model} "gp"`, func(r *HallucinationSimulateRequest) { r.Model = "gp" }},
		{"tasks", "tasks", "{tasks} 0", func(r *HallucinationSimulateRequest) { r.Tasks = 0 }},
		{"tasks 9e18", "tasks", "{tasks} 9000000000000000000", func(r *HallucinationSimulateRequest) { r.Tasks = 9e18 }},
		{"extra 9e18", "extra", "{extra} 9000000000000000000", func(r *HallucinationSimulateRequest) { r.Extra = 9e18 }},
		{"K 9e18", "K", "{K} 9000000000000000000: at most 10000000", func(r *HallucinationSimulateRequest) { r.K = 9e18 }},
		{"eps", "eps", "{eps} 1", func(r *HallucinationSimulateRequest) { r.Eps = 1 }},
		{"M", "M", "{M} 0, {K} 2000, {extra} 100: want positive values", func(r *HallucinationSimulateRequest) { r.M = 0 }},
		{"extra", "M", "{extra} 0", func(r *HallucinationSimulateRequest) { r.Extra = 0 }},
		{"draws", "M", "responses per query", func(r *HallucinationSimulateRequest) { r.M, r.K = 100000, 100000 }},
		{"concurrency", "concurrency", "{concurrency} 0", func(r *HallucinationSimulateRequest) { r.Concurrency = 0 }},
		{"ns", "ns", `{ns} "2,x"`, func(r *HallucinationSimulateRequest) { r.Ns = "2,x" }},
		{"ns twice", "ns", "given twice", func(r *HallucinationSimulateRequest) { r.Ns = "2,2" }},
		{"ns range", "ns", "[0, 100000]", func(r *HallucinationSimulateRequest) { r.Ns = "-1" }},
		{"features", "features", "{features}: ", func(r *HallucinationSimulateRequest) { r.Features = "poly:x" }},
		{"noise", "noise", "{noise} 0, {prior_scale} 1", func(r *HallucinationSimulateRequest) { r.Noise = 0 }},
		{"labels 1e8", "labels", "{labels} 100000000: at most 65536", func(r *HallucinationSimulateRequest) { r.Model, r.Labels = "categorical", 1e8 }},
		{"groups x labels", "groups", "product at most 4194304", func(r *HallucinationSimulateRequest) { r.Model, r.Groups, r.Labels = "categorical", 1<<16, 1<<16 }},
		{"labels", "groups", "{labels} 1", func(r *HallucinationSimulateRequest) { r.Model, r.Labels = "categorical", 1 }},
		{"alpha", "groups", "{alpha} -1", func(r *HallucinationSimulateRequest) { r.Model, r.Alpha = "categorical", -1 }},
	} {
		r := NewHallucinationSimulateRequest()
		tc.edit(&r)
		var fe *fault.FieldError
		if err := r.Validate(); !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.want) {
			t.Errorf("%s: %v, want a FieldError on %s containing %q", tc.name, err, tc.field, tc.want)
		}
	}
	for _, model := range []string{"linear", "categorical"} {
		r := NewHallucinationSimulateRequest()
		r.Model = model
		if err := r.Validate(); err != nil {
			t.Errorf("defaults, %s: %v", model, err)
		}
	}
	// Upper-case fields keep their case.
	r := NewHallucinationSimulateRequest()
	r.M = 0
	var fe *fault.FieldError
	flag := func(f string) string { return "--" + f }
	if errors.As(r.Validate(), &fe); fe == nil || !strings.HasPrefix(fe.Render(flag), "--M 0, --K 2000, --extra 100") {
		t.Errorf("rendered %v", fe)
	}
}

// phrFS holds the context and queries of the run tests: a categorical
// task with named inputs and labels, and a linear one.
func phrFS() fstest.MapFS {
	return fstest.MapFS{
		"ctx.jsonl":  {Data: []byte("{\"x\":\"cat\",\"y\":\"yes\"}\n{\"x\":\"dog\",\"y\":\"no\"}\n{\"x\":\"cat\",\"y\":\"yes\"}\n\n{\"x\":\"bird\",\"y\":\"no\"}\n")},
		"q.jsonl":    {Data: []byte("{\"id\":\"q1\",\"x\":\"cat\",\"y\":\"yes\"}\n{\"id\":7,\"x\":\"bird\"}\n{\"x\":\"dog\",\"y\":\"yes\"}\n")},
		"lctx.jsonl": {Data: []byte("{\"x\":0.5,\"y\":1}\n{\"x\":-1,\"y\":0.2}\n{\"x\":1.5,\"y\":2.1}\n")},
		"lq.jsonl":   {Data: []byte("{\"id\":\"near\",\"x\":0.3}\n{\"id\":\"far\",\"x\":1.9}\n")},
		"text.jsonl": {Data: []byte("\n{\"id\":\"a\",\"x\":\"zero\"}\n")},
		"bad.jsonl":  {Data: []byte("{\"x\":\"a\",\"y\":\"two\\nlines\"}\n")},
		"badq.jsonl": {Data: []byte("{\"x\":\"a\\n\\nb\"}\n")},
	}
}

func categoricalRun() HallucinationRunRequest {
	req := NewHallucinationRunRequest()
	req.Backend, req.Inputs, req.Labels = "categorical", "cat,dog,bird", "yes,no"
	req.Context, req.Queries, req.M, req.K, req.Extra, req.Seed, req.Concurrency = "ctx.jsonl", "q.jsonl", 5, 20, 4, 3, 2
	return req
}

func TestHallucinationRunGolden(t *testing.T) {
	res, err := HallucinationRun(context.Background(), job.Env{FS: phrFS()}, categoricalRun())
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "hallucination_run_categorical", res)
	if res.Items[1].ID != "7" || res.Items[2].ID != "row-3" || !math.IsNaN(float64(res.Items[1].ErrorRate)) || res.Items[0].ExactPHR == nil {
		t.Errorf("items %+v", res.Items)
	}

	req := NewHallucinationRunRequest()
	req.Backend, req.Features, req.Context, req.Queries, req.M, req.K, req.Extra = "linear", "poly:2", "lctx.jsonl", "lq.jsonl", 20, 500, 50
	res, err = HallucinationRun(context.Background(), job.Env{FS: phrFS()}, req)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "hallucination_run_linear", res)
	for _, it := range res.Items {
		if d := math.Abs(float64(it.PHR) - float64(*it.ExactPHR)); d > 0.1 {
			t.Errorf("item %s: PHR %v, exact %v", it.ID, it.PHR, *it.ExactPHR)
		}
	}
	for _, a := range res.Artifacts() {
		var b bytes.Buffer
		if err := a.Write(&b); err != nil || b.Len() == 0 {
			t.Errorf("artifact %s: %d bytes, %v", a.Name, b.Len(), err)
		}
	}
}

// The openai backend reads its API key through Env.Secret, by the name the
// request gives: against the exact classifier served on 127.0.0.1 it gives
// the categorical backend's numbers with the key, and fails without it.
func TestHallucinationRunOpenAISecret(t *testing.T) {
	h, err := llmtest.NewHandler(llmtest.Config{Model: categorical.Symmetric(3, 2, 0.5), Inputs: []string{"cat", "dog", "bird"},
		Labels: []string{"yes", "no"}, APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	req := categoricalRun()
	req.Backend, req.BaseURL, req.Model, req.APIKeyEnv, req.Concurrency = "openai", srv.URL+"/v1", "genlens-categorical", "PHR_KEY", 4
	secrets := func(name string) (string, bool) {
		if name == "PHR_KEY" {
			return "sk-test", true
		}
		return "", false
	}
	viaAPI, err := HallucinationRun(context.Background(), job.Env{FS: phrFS(), Secret: secrets}, req)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := HallucinationRun(context.Background(), job.Env{FS: phrFS()}, categoricalRun())
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range viaAPI.Items {
		d := direct.Items[i]
		d.ExactPHR = nil
		if !reflect.DeepEqual(numsOf(it), numsOf(d)) || it.ID != d.ID {
			t.Errorf("item %d: %+v via the API, %+v direct", i, it, d)
		}
	}
	if viaAPI.Stats == nil || viaAPI.Stats.Requests == 0 || viaAPI.Settings.Model != "genlens-categorical" {
		t.Errorf("stats %+v, settings %+v", viaAPI.Stats, viaAPI.Settings)
	}
	if _, err := HallucinationRun(context.Background(), job.Env{FS: phrFS()}, req); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("without the secret: %v, want the server's 401", err)
	}
}

// numsOf lists an item's numbers as strings, so that NaN equals NaN.
func numsOf(it HallucinationItem) []string {
	var out []string
	for _, v := range []jsonnum.Num{it.PHR, it.PHRStdErr, it.Total, it.Aleatoric, it.Epistemic, it.ErrorRate} {
		b, _ := v.MarshalJSON()
		out = append(out, string(b))
	}
	return out
}

func TestHallucinationRunBadInput(t *testing.T) {
	for _, tc := range []struct {
		name        string
		edit        func(r *HallucinationRunRequest)
		file        string
		line        int
		field, want string
	}{
		{"missing file", func(r *HallucinationRunRequest) { r.Context = "nope.jsonl" }, "nope.jsonl", 0, "", "cannot open"},
		{"text for linear", func(r *HallucinationRunRequest) {
			r.Backend, r.Context, r.Queries = "linear", "lctx.jsonl", "text.jsonl"
		}, "text.jsonl", 2, "x", "want a number"},
		{"unknown label", func(r *HallucinationRunRequest) { r.Labels = "yes,maybe" }, "ctx.jsonl", 2, "y", `"no" is not one of`},
		{"label on two lines", func(r *HallucinationRunRequest) {
			r.Backend, r.BaseURL, r.Model, r.Context = "openai", "http://127.0.0.1:1/v1", "m", "bad.jsonl"
		}, "bad.jsonl", 1, "", "spans several lines"},
		{"query with a blank line", func(r *HallucinationRunRequest) {
			r.Backend, r.BaseURL, r.Model, r.Queries = "openai", "http://127.0.0.1:1/v1", "m", "badq.jsonl"
		}, "badq.jsonl", 1, "x", "blank line"},
		{"no queries", func(r *HallucinationRunRequest) { r.Queries = "empty.jsonl" }, "empty.jsonl", 0, "", "no queries"},
	} {
		fsys := phrFS()
		fsys["empty.jsonl"] = &fstest.MapFile{Data: []byte("\n")}
		req := categoricalRun()
		tc.edit(&req)
		_, err := HallucinationRun(context.Background(), job.Env{FS: fsys}, req)
		var ie *fault.InputError
		if !errors.As(err, &ie) || ie.File != tc.file || ie.Line != tc.line || ie.Field != tc.field || !strings.Contains(ie.Msg, tc.want) || fault.Classify(err) != fault.KindInput {
			t.Errorf("%s: %#v, want an InputError on %s line %d field %q containing %q", tc.name, err, tc.file, tc.line, tc.field, tc.want)
		}
		if strings.Contains(err.Error(), "openai: ") {
			t.Errorf("%s: %q repeats the library's prefix", tc.name, err)
		}
	}
}

func TestHallucinationRunValidate(t *testing.T) {
	ok := categoricalRun()
	for _, tc := range []struct {
		name, field, want string
		edit              func(r *HallucinationRunRequest)
	}{
		{"no files", "context", "{context} FILE and {queries} FILE are required", func(r *HallucinationRunRequest) { r.Queries = "" }},
		{"backend", "backend", `{backend} "gpt"`, func(r *HallucinationRunRequest) { r.Backend = "gpt" }},
		{"eps", "eps", "{eps} 0", func(r *HallucinationRunRequest) { r.Eps = 0 }},
		{"negative M", "M", "(0: the backend's default)", func(r *HallucinationRunRequest) { r.M = -1 }},
		{"draws", "M", "{M} 4000000000: at most 10000000", func(r *HallucinationRunRequest) { r.M, r.K = 4000000000, 4000000000 }},
		{"draws product", "M", "responses per query", func(r *HallucinationRunRequest) { r.M, r.K = 100000, 100000 }},
		{"extra 9e18", "extra", "{extra} 9000000000000000000", func(r *HallucinationRunRequest) { r.Extra = 9e18 }},
		{"concurrency", "concurrency", "{concurrency} 0", func(r *HallucinationRunRequest) { r.Concurrency = 0 }},
		{"features", "features", "{features}", func(r *HallucinationRunRequest) { r.Backend, r.Features = "linear", "relu:x" }},
		{"noise", "noise", "{noise} -1", func(r *HallucinationRunRequest) { r.Backend, r.Noise = "linear", -1 }},
		{"duplicate input", "inputs", `{inputs} "cat,cat"`, func(r *HallucinationRunRequest) { r.Inputs = "cat,cat" }},
		{"one label", "inputs", `{labels} "yes"`, func(r *HallucinationRunRequest) { r.Labels = "yes" }},
		{"no URL", "base_url", "{backend} openai needs {base_url} URL and {model} NAME", func(r *HallucinationRunRequest) { r.Backend = "openai" }},
		{"bad URL", "base_url", "base URL", func(r *HallucinationRunRequest) { r.Backend, r.BaseURL, r.Model = "openai", "ftp://x", "m" }},
		{"max tokens", "max_tokens", "{max_tokens} 0", func(r *HallucinationRunRequest) { r.Backend, r.MaxTokens = "openai", 0 }},
		{"top p", "pair_top_p", "{pair_top_p} 2", func(r *HallucinationRunRequest) { r.Backend, r.PairTopP = "openai", 2 }},
		{"timeout", "timeout", "{timeout} 0s", func(r *HallucinationRunRequest) { r.Backend, r.Timeout = "openai", 0 }},
		{"retries", "retries", "{retries} -1", func(r *HallucinationRunRequest) { r.Backend, r.Retries = "openai", -1 }},
	} {
		r := ok
		tc.edit(&r)
		var fe *fault.FieldError
		if err := r.Validate(); !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.want) {
			t.Errorf("%s: %v, want a FieldError on %s containing %q", tc.name, err, tc.field, tc.want)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("categorical: %v", err)
	}
	// A request that is valid until its defaults are filled in: M = 0
	// (40 for the exact models) times K = 2·10⁶ is too many responses.
	big := ok
	big.M, big.K = 0, 2000000
	var fe *fault.FieldError
	if _, err := HallucinationRun(context.Background(), job.Env{FS: phrFS()}, big); !errors.As(err, &fe) || fe.Field != "M" {
		t.Errorf("M 0 (40) x K 2e6: %v", err)
	}
}

// The JSONL reader of the run job returns rows or an *fault.InputError,
// never a panic or another error, whatever the bytes.
func FuzzReadPHRRows(f *testing.F) {
	for _, s := range []string{"{\"x\":1,\"y\":2}\n", "\n{\"id\":7,\"x\":\"a\"}\n", "{\"x\":", "[1]\n", "{\"id\":{},\"x\":1}", "{\"x\":null,\"y\":1}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, needY := range []bool{false, true} {
			rows, err := readPHRRows(fstest.MapFS{"f.jsonl": {Data: data}}, "f.jsonl", needY)
			var ie *fault.InputError
			if err != nil && (!errors.As(err, &ie) || ie.File != "f.jsonl") {
				t.Fatalf("%T %v, want an *fault.InputError on f.jsonl", err, err)
			}
			for _, r := range rows {
				if r.line < 1 || len(r.x) == 0 || (needY && !r.hasY) || r.id == "" && !bytes.Contains(data, []byte(`"id"`)) {
					t.Fatalf("row %+v", r)
				}
			}
		}
	})
}

// One bad query does not lose the others: it is reported on its row and
// counted, with a warning; estimates that cannot be told from 0 and
// negative uncertainties are explained in warnings. An interrupted run
// returns the queries finished so far with the error.
func TestHallucinationRunItemErrorsAndWarnings(t *testing.T) {
	fsys := phrFS()
	fsys["mixed.jsonl"] = &fstest.MapFile{Data: []byte("{\"id\":\"ok\",\"x\":\"cat\"}\n{\"id\":\"bad\",\"x\":\"fish\"}\n")}
	req := categoricalRun()
	req.Queries, req.K, req.M = "mixed.jsonl", 3, 2 // tiny K: estimates within noise of 0
	var warnings []string
	res, err := HallucinationRun(context.Background(), job.Env{FS: fsys, Warn: func(s string) { warnings = append(warnings, s) }}, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 2 || res.Failed != 1 || res.Items[1].Error == "" || !strings.Contains(res.Items[1].Error, "mixed.jsonl line 2") || res.Items[0].Error != "" {
		t.Fatalf("items %+v, failed %d", res.Items, res.Failed)
	}
	if !math.IsNaN(float64(res.Items[1].PHR)) {
		t.Errorf("failed item PHR %v, want NaN", res.Items[1].PHR)
	}
	all := strings.Join(warnings, "\n")
	if !strings.Contains(all, "1 of 2 queries failed") {
		t.Errorf("warnings %q lack the failure", warnings)
	}
	if phr, se := float64(res.Items[0].PHR), float64(res.Items[0].PHRStdErr); (phr <= 2*se || phr == 0) != strings.Contains(all, "within two standard errors of 0") {
		t.Errorf("PHR %v ± %v: warnings %q", phr, se, warnings)
	}
	var b strings.Builder
	for _, a := range res.Artifacts() {
		if a.Name == "items.csv" {
			_ = a.Write(&b)
		}
	}
	if !strings.Contains(b.String(), ",error\n") || !strings.Contains(b.String(), "fish") {
		t.Errorf("items.csv lacks the error column or message:\n%s", b.String())
	}

	// Every query failing is the run failing, as the first one did.
	fsys["allbad.jsonl"] = &fstest.MapFile{Data: []byte("{\"x\":\"fish\"}\n")}
	req.Queries = "allbad.jsonl"
	if res, err := HallucinationRun(context.Background(), job.Env{FS: fsys}, req); err == nil || res != nil || fault.Classify(err) != fault.KindInput {
		t.Errorf("all queries bad: %v, %v", res, err)
	}

	// Cancelled: whatever finished comes back, marked incomplete.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req.Queries = "q.jsonl"
	res, err = HallucinationRun(ctx, job.Env{FS: fsys}, req)
	if !errors.Is(err, context.Canceled) || res == nil || !res.Incomplete || len(res.Items) > 3 {
		t.Errorf("cancelled: %v, %+v", err, res)
	}
}

// Negative epistemic uncertainty is Monte Carlo noise and said so; a
// negative total or aleatoric uncertainty of the linear backend is a
// differential entropy, negative by nature, and said so (not called
// noise); of a discrete backend neither is mentioned but the epistemic.
func TestHallucinationRunNegativeWarning(t *testing.T) {
	for _, c := range []struct {
		name    string
		backend string
		item    HallucinationItem
		want    []string // one substring per warning, in order
	}{
		{"epistemic, discrete", "categorical", HallucinationItem{ID: "a", PHR: 0.3, PHRStdErr: 0.01, Total: 0.2, Aleatoric: 0.25, Epistemic: -0.05},
			[]string{"negative epistemic uncertainty: it is total minus aleatoric, two Monte Carlo estimates"}},
		{"differential, linear", "linear", HallucinationItem{ID: "a", PHR: 0.3, PHRStdErr: 0.01, Total: -0.58, Aleatoric: -0.87, Epistemic: 0.29},
			[]string{"negative total or aleatoric uncertainty, as they should: y is continuous on the linear backend, so both are differential entropies (nats)"}},
		{"both, linear", "linear", HallucinationItem{ID: "a", PHR: 0.3, PHRStdErr: 0.01, Total: -0.88, Aleatoric: -0.87, Epistemic: -0.01},
			[]string{"negative epistemic", "differential entropies"}},
		{"nothing negative", "linear", HallucinationItem{ID: "a", PHR: 0.3, PHRStdErr: 0.01, Total: 0.5, Aleatoric: 0.2, Epistemic: 0.3}, nil},
	} {
		var warnings []string
		env := job.Env{Warn: func(s string) { warnings = append(warnings, s) }}
		r := &HallucinationRunResult{Items: []HallucinationItem{c.item}, Settings: HallucinationRunSettings{Backend: c.backend, M: 10, K: 50, Noise: 0.1}}
		hallucinationRunWarnings(env, r)
		if len(warnings) != len(c.want) {
			t.Errorf("%s: warnings %q, want %d", c.name, warnings, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(warnings[i], w) {
				t.Errorf("%s: warning %q lacks %q", c.name, warnings[i], w)
			}
		}
		for _, w := range warnings {
			if strings.Contains(w, "differential") {
				// ½ ln(2πe·0.01) = −0.8836 for σ = 0.1.
				if !strings.Contains(w, "-0.884 for the likelihood's σ = {noise} 0.1") || strings.Contains(w, "noise around") {
					t.Errorf("%s: %q", c.name, w)
				}
			}
		}
	}
}
