package jobrun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/internal/demo/imagesynth"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/icljob"
	"github.com/genlens/genlens/job/imagejob"
	"github.com/genlens/genlens/job/llmjob"
	"github.com/genlens/genlens/job/msejob"
	"github.com/genlens/genlens/job/reprjob"
	"github.com/genlens/genlens/metric/frechet"
)

// kindInputs are small inputs for every kind, as a client would upload
// them.
func kindInputs(t *testing.T) fstest.MapFS {
	r := rand.New(rand.NewPCG(11, 12))
	real := normal(r, 80, 6, 0, 1)
	fs := fstest.MapFS{
		"answers.jsonl": {Data: []byte(`{"id":"q1","samples":["paris","paris","paris is the capital","paris","lyon"],"reference":"Paris"}
{"id":"q2","samples":["rome","milan","turin","rome","naples"],"reference":"Rome"}
{"id":"q3","samples":["berlin","berlin","berlin","bonn","berlin"],"reference":"Berlin"}
{"id":"q4","samples":["madrid","barcelona","seville","valencia","bilbao"],"correct":false}
`)},
		"m1.npy":   {Data: npy(t, []int{12, 3}, normal(r, 12, 3, 0, 1))},
		"m2.npy":   {Data: npy(t, []int{12, 3}, normal(r, 12, 3, 0.4, 1))},
		"e1.npy":   {Data: npy(t, []int{4, 6, 3}, normal(r, 24, 3, 0, 1))},
		"e2.npy":   {Data: npy(t, []int{4, 6, 3}, normal(r, 24, 3, 0.1, 0.9))},
		"e3.npy":   {Data: npy(t, []int{4, 6, 3}, normal(r, 24, 3, 1, 0.5))},
		"real.npy": {Data: npy(t, []int{80, 6}, real)},
		"fake.npy": {Data: npy(t, []int{70, 6}, normal(r, 70, 6, 0.3, 1.2))},
		"g0.npy":   {Data: npy(t, []int{100, 6}, normal(r, 100, 6, 0, 0.3))},
		"g1.npy":   {Data: npy(t, []int{100, 6}, normal(r, 100, 6, 0, 1))},
		"g2.npy":   {Data: npy(t, []int{100, 6}, normal(r, 100, 6, 0, 1.8))},
		"x.csv":    {Data: []byte("1,2\n2,1\n3,5\n4,4\n5,0\n")},
		"y.csv":    {Data: []byte("1\n3\n2\n5\n4\n")},
		"ctx.jsonl": {Data: []byte(`{"x":"cat","y":"yes"}
{"x":"dog","y":"no"}
{"x":"cat","y":"yes"}
`)},
		"q.jsonl": {Data: []byte(`{"id":"q1","x":"cat","y":"yes"}
{"id":"q2","x":"bird"}
`)},
		"ref.csv": {Data: mseTable(120, 0, 1, 120)},
		"op.csv":  {Data: mseTable(96, 0.5, 2, 40)},
	}
	const k = 5
	p := make([]float64, 60*k)
	for i := range 60 {
		for j := range k {
			p[i*k+j] = 0.04
		}
		p[i*k+r.IntN(k)] = 1 - 0.04*(k-1)
	}
	fs["p0.npy"] = &fstest.MapFile{Data: npy(t, []int{60, k}, p)}
	faces := func(n int) []byte {
		x := imagesynth.Faces(r, n, 12, 12)
		return npy(t, []int{n, 12, 12}, x.RawMatrix().Data)
	}
	fs["train.npy"] = &fstest.MapFile{Data: faces(60)}
	fs["test.npy"] = &fstest.MapFile{Data: faces(40)}
	fs["gen.npy"] = &fstest.MapFile{Data: faces(40)}
	// The two part files of 'stats --shards 2' over real.npy's rows.
	for i := range 2 {
		a := frechet.NewAccumulator(6)
		for row := i * 40; row < (i+1)*40; row++ {
			a.Add(real[row*6 : (row+1)*6])
		}
		var buf bytes.Buffer
		part := frechet.PartOf(a, i, 2, frechet.Listing{Kind: "features", Count: 80, Cols: 6, SHA256: "00"}, frechet.Provenance{Embedder: "features", Dims: "6"})
		if err := frechet.EncodePart(&buf, part); err != nil {
			t.Fatal(err)
		}
		fs[fmt.Sprintf("part%d.npz", i)] = &fstest.MapFile{Data: buf.Bytes()}
	}
	return fs
}

// mseTable is a regression table with a timestamp, a feature, a feature
// of pure noise, a model's prediction and the target, labelled on the
// first `labelled` rows.
func mseTable(n int, shift float64, seed uint64, labelled int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString("ts,x,noise_feature,pred,y\n")
	start := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
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

// kindCase is one kind's request as JSON (upload names in {{}}) and the
// same request built in Go, run directly: the service must give the
// same result JSON and artifacts as a direct call of the job function,
// which shows that the JSON decodes over the same defaults as the
// command line's flags and reaches the right function.
type kindCase struct {
	kind   string
	body   string
	direct func(ctx context.Context, env job.Env, id func(string) string) (result any, arts []job.Artifact, err error)
}

func arts[R any](res *R, err error, a func(*R) []job.Artifact) (any, []job.Artifact, error) {
	if err != nil {
		return nil, nil, err
	}
	if a == nil {
		return res, nil, nil
	}
	return res, a(res), nil
}

func kindCases() []kindCase {
	return []kindCase{
		{"entropy", `{"in":"{{answers.jsonl}}","holdout_first":true}`, func(ctx context.Context, env job.Env, id func(string) string) (any, []job.Artifact, error) {
			r := llmjob.NewEntropyRequest()
			r.In, r.HoldoutFirst = id("answers.jsonl"), true
			res, err := llmjob.Entropy(ctx, env, r)
			return arts(res, err, (*llmjob.EntropyResult).Artifacts)
		}},
		{"decompose", `{"models":["{{m1.npy}}","{{m2.npy}}"]}`, func(ctx context.Context, env job.Env, id func(string) string) (any, []job.Artifact, error) {
			r := llmjob.NewDecomposeRequest()
			r.Models = []string{id("m1.npy"), id("m2.npy")}
			res, err := llmjob.Decompose(ctx, env, r)
			return arts(res, err, nil)
		}},
		{"correlate", `{"files":["{{e1.npy}}","{{e2.npy}}","{{e3.npy}}"],"kernel":"laplacian"}`, func(ctx context.Context, env job.Env, id func(string) string) (any, []job.Artifact, error) {
			r := llmjob.NewCorrelateRequest()
			r.Files, r.Kernel = []string{id("e1.npy"), id("e2.npy"), id("e3.npy")}, "laplacian"
			res, err := llmjob.Correlate(ctx, env, r)
			return arts(res, err, (*llmjob.CorrelateResult).Artifacts)
		}},
		{"stats", `{"in":"{{real.npy}}"}`, func(ctx context.Context, env job.Env, id func(string) string) (any, []job.Artifact, error) {
			r := imagejob.NewStatsRequest()
			r.In = id("real.npy")
			res, err := imagejob.Stats(ctx, env, r)
			return arts(res, err, func(s *imagejob.StatsResult) []job.Artifact { return []job.Artifact{s.Artifact("stats.npz")} })
		}},
		{"stats-merge", `{"parts":["{{part1.npz}}","{{part0.npz}}"]}`, func(ctx context.Context, env job.Env, id func(string) string) (any, []job.Artifact, error) {
			r := imagejob.NewStatsMergeRequest()
			r.Parts = []string{id("part1.npz"), id("part0.npz")}
			res, err := imagejob.StatsMerge(ctx, env, r)
			return arts(res, err, func(s *imagejob.StatsMergeResult) []job.Artifact { return []job.Artifact{s.Artifact("stats.npz")} })
		}},
		{"compare", `{"real":"{{real.npy}}","fake":"{{fake.npy}}","kid_subsets":10,"kid_subset_size":20}`, func(ctx context.Context, env job.Env, id func(string) string) (any, []job.Artifact, error) {
			r := imagejob.NewCompareRequest()
			r.Real, r.Fake, r.KIDSubsets, r.KIDSubsetSize = id("real.npy"), id("fake.npy"), 10, 20
			res, err := imagejob.Compare(ctx, env, r)
			return arts(res, err, nil)
		}},
		{"is", `{"probs":"{{p0.npy}}","splits":3}`, func(ctx context.Context, env job.Env, id func(string) string) (any, []job.Artifact, error) {
			r := imagejob.NewISRequest()
			r.Probs, r.Splits = id("p0.npy"), 3
			res, err := imagejob.IS(ctx, env, r)
			return arts(res, err, nil)
		}},
		{"cka", `{"x":"{{x.csv}}","y":"{{y.csv}}","kernel":"rbf","debiased":true}`, func(ctx context.Context, env job.Env, id func(string) string) (any, []job.Artifact, error) {
			r := reprjob.NewCKARequest()
			r.X, r.Y, r.Kernel, r.Debiased = id("x.csv"), id("y.csv"), "rbf", true
			res, err := reprjob.CKA(ctx, env, r)
			return arts(res, err, nil)
		}},
		{"select", `{"pools":["{{g0.npy}}","{{g1.npy}}","{{g2.npy}}"],"ref":"{{real.npy}}","steps":15,"batch":4,"trials":2}`, func(ctx context.Context, env job.Env, id func(string) string) (any, []job.Artifact, error) {
			r := imagejob.NewSelectRequest()
			r.Pools, r.Ref, r.Steps, r.Batch, r.Trials = []string{id("g0.npy"), id("g1.npy"), id("g2.npy")}, id("real.npy"), 15, 4, 2
			res, err := imagejob.Select(ctx, env, r)
			return arts(res, err, (*imagejob.SelectResult).Artifacts)
		}},
		{"disentangle", `{"train":"{{train.npy}}","test":"{{test.npy}}","generated":["{{gen.npy}}"],"names":["epoch_1"],"clusters":3,"cka_batch":30,"cms_batch":20}`, func(ctx context.Context, env job.Env, id func(string) string) (any, []job.Artifact, error) {
			r := reprjob.NewDisentangleRequest()
			r.Train, r.Test, r.Generated, r.Names = id("train.npy"), id("test.npy"), []string{id("gen.npy")}, []string{"epoch_1"}
			r.Clusters, r.CKABatch, r.CMSBatch = 3, 30, 20
			res, err := reprjob.Disentangle(ctx, env, r)
			return arts(res, err, (*reprjob.DisentangleResult).Artifacts)
		}},
		{"hallucination-run", `{"backend":"categorical","inputs":"cat,dog,bird","labels":"yes,no","context":"{{ctx.jsonl}}","queries":"{{q.jsonl}}","M":5,"K":20,"extra":4,"seed":3,"concurrency":2}`, func(ctx context.Context, env job.Env, id func(string) string) (any, []job.Artifact, error) {
			r := icljob.NewHallucinationRunRequest()
			r.Backend, r.Inputs, r.Labels, r.Context, r.Queries = "categorical", "cat,dog,bird", "yes,no", id("ctx.jsonl"), id("q.jsonl")
			r.M, r.K, r.Extra, r.Seed, r.Concurrency = 5, 20, 4, 3, 2
			res, err := icljob.HallucinationRun(ctx, env, r)
			return arts(res, err, (*icljob.HallucinationRunResult).Artifacts)
		}},
		{"hallucination-simulate", `{"model":"categorical","ns":"1,8","tasks":6,"M":8,"K":100,"extra":20,"seed":7,"concurrency":2}`, func(ctx context.Context, env job.Env, id func(string) string) (any, []job.Artifact, error) {
			r := icljob.NewHallucinationSimulateRequest()
			r.Model, r.Ns, r.Tasks, r.M, r.K, r.Extra, r.Seed, r.Concurrency = "categorical", "1,8", 6, 8, 100, 20, 7, 2
			res, err := icljob.HallucinationSimulate(ctx, env, r)
			return arts(res, err, (*icljob.HallucinationSimulateResult).Artifacts)
		}},
		{"mse-fit", `{"train":"{{ref.csv}}","target":"y","prediction":"pred","features":["x","noise_feature"],"epochs":30,"model":"check.json"}`, func(ctx context.Context, env job.Env, id func(string) string) (any, []job.Artifact, error) {
			r := msejob.NewFitRequest()
			r.Train, r.Target, r.Prediction, r.Features, r.Epochs, r.Model = id("ref.csv"), "y", "pred", []string{"x", "noise_feature"}, 30, "check.json"
			res, err := msejob.Fit(ctx, env, r)
			return arts(res, err, func(m *msejob.FitResult) []job.Artifact {
				return []job.Artifact{{Name: "check.json", Write: m.WriteModel}}
			})
		}},
		// mse-estimate reads the model that mse-fit stored as an
		// artifact, downloaded and uploaded again as a client would.
		{"mse-estimate", `{"model":"{{check.json}}","data":"{{op.csv}}","chunk_size":24,"target":"y"}`, func(ctx context.Context, env job.Env, id func(string) string) (any, []job.Artifact, error) {
			r := msejob.NewEstimateRequest()
			r.Model, r.Data, r.ChunkSize, r.Target = id("check.json"), id("op.csv"), 24, "y"
			res, err := msejob.Estimate(ctx, env, r)
			return arts(res, err, (*msejob.EstimateResult).Artifacts)
		}},
		{"mse-bench", `{"dataset":"synthetic-a","trials":2,"methods":["kstar","naive"]}`, func(ctx context.Context, env job.Env, id func(string) string) (any, []job.Artifact, error) {
			r := msejob.NewBenchRequest()
			r.Dataset, r.Trials, r.Methods = "synthetic-a", 2, []string{"kstar", "naive"}
			res, err := msejob.Bench(ctx, env, r)
			return arts(res, err, (*msejob.BenchResult).Artifacts)
		}},
	}
}

// TestEveryKind runs every kind end to end through the Service and the
// in-memory store, and compares the stored result and artifacts with a
// direct call of the job function on the same uploads.
func TestEveryKind(t *testing.T) {
	s := newTestService(t, nil, Config{Workers: 2})
	ctx := context.Background()
	ids := map[string]string{}
	fs := kindInputs(t)
	for name, f := range fs {
		ids[name] = upload(t, s, name, f.Data)
	}
	id := func(name string) string { return ids[name] }
	cases := kindCases()
	var kinds []string
	for _, c := range cases {
		kinds = append(kinds, c.kind)
	}
	kinds = append(kinds, "features") // TestFeaturesKind, on shared data
	kinds = append(kinds, "sample")   // TestSampleKind, against a test server
	kinds = append(kinds, "embed")    // TestEmbedKind, with a model directory
	slices.Sort(kinds)
	all := slices.Sorted(slices.Values(Kinds))
	if !slices.Equal(kinds, all) {
		t.Errorf("cases cover %v, Kinds is %v", kinds, all)
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			j, err := s.Submit(ctx, c.kind, []byte(replaceIDs(c.body, ids)))
			if err != nil {
				t.Fatal(err)
			}
			j = waitJob(t, s, j.ID, time.Minute)
			if j.Status != records.StatusSucceeded {
				t.Fatalf("status %s: %s: %s", j.Status, j.ErrorKind, j.Error)
			}
			if j.Done != j.Total {
				t.Errorf("finished at progress %d/%d", j.Done, j.Total)
			}
			res, want, err := c.direct(ctx, job.Env{FS: s.fsys}, id)
			if err != nil {
				t.Fatal(err)
			}
			wantJSON, _ := json.Marshal(res)
			if !bytes.Equal(j.Result, wantJSON) {
				t.Errorf("result differs from the direct call:\n got %s\nwant %s", j.Result, wantJSON)
			}
			stored, err := s.Artifacts(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, a := range stored {
				if a.Name != "warnings.txt" {
					names = append(names, a.Name)
				}
			}
			var wantNames []string
			for _, a := range want {
				wantNames = append(wantNames, a.Name)
				var b bytes.Buffer
				if err := a.Write(&b); err != nil {
					t.Fatal(err)
				}
				got, err := s.Artifact(ctx, j.ID, a.Name)
				if err != nil {
					t.Errorf("artifact %s: %v", a.Name, err)
					continue
				}
				if !bytes.Equal(got.Data, b.Bytes()) || got.ContentType != contentType(a.Name) {
					t.Errorf("artifact %s: %d bytes (%s), want %d", a.Name, len(got.Data), got.ContentType, b.Len())
				}
			}
			slices.Sort(wantNames)
			if !slices.Equal(names, wantNames) {
				t.Errorf("artifacts %v, want %v", names, wantNames)
			}
			if c.kind == "mse-fit" {
				a, err := s.Artifact(ctx, j.ID, "check.json")
				if err != nil {
					t.Fatal(err)
				}
				ids["check.json"] = upload(t, s, "check.json", a.Data)
			}
			if c.kind == "stats" || c.kind == "stats-merge" {
				a, _ := s.Artifact(ctx, j.ID, "stats.npz")
				st, err := frechet.ReadStatsFS(fstest.MapFS{"s.npz": {Data: a.Data}}, "s.npz")
				if err != nil || st.Dim() != 6 {
					t.Errorf("stats.npz: dim %d, %v", st.Dim(), err)
				}
			}
		})
	}
}
