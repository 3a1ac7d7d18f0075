package llmjob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/internal/golden"
)

// TestEntropyDefaultScoresUnchanged: the default scores, and the same
// two named explicitly in any order, give the existing goldens byte for
// byte (the golden helper alone would accept an equivalent JSON) and the
// same items.csv. The rbf golden's last digits depend on the machine's
// vector kernels, so there the three runs must agree with each other and
// with the golden as the golden helper compares.
func TestEntropyDefaultScoresUnchanged(t *testing.T) {
	fsys := fstest.MapFS{"answers.jsonl": {Data: []byte(answersJSONL)}}
	three, no := 3, false
	for _, tc := range []struct {
		name  string
		exact bool
		edit  func(r *EntropyRequest)
	}{
		{"entropy_cs_holdout", true, func(r *EntropyRequest) { r.HoldoutFirst = true }},
		{"entropy_cs_length2_holdout", true, func(r *EntropyRequest) { r.HoldoutFirst, r.Cumulative = true, &no }},
		{"entropy_cs_length3_threshold0", true, func(r *EntropyRequest) { r.T, r.Cumulative, r.Threshold = &three, &no, 0 }},
		{"entropy_rbf_median", false, func(r *EntropyRequest) { r.Kernel, r.Gamma, r.HoldoutFirst = "rbf", "median", true }},
	} {
		want, err := os.ReadFile(filepath.Join("testdata", tc.name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var json0, csv0 []byte
		for _, scores := range []string{"", "kernel-entropy,lexsim", " LexSim , kernel-entropy"} {
			req := NewEntropyRequest()
			req.In, req.Scores = "answers.jsonl", scores
			tc.edit(&req)
			res, err := Entropy(context.Background(), job.Env{FS: fsys}, req)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetIndent("", "  ")
			if err := enc.Encode(res); err != nil {
				t.Fatal(err)
			}
			var c bytes.Buffer
			if err := res.Artifacts()[0].Write(&c); err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.exact && !bytes.Equal(b.Bytes(), want):
				t.Errorf("%s, scores %q: output differs from the golden byte for byte:\n%s", tc.name, scores, b.Bytes())
			case !tc.exact && json0 == nil:
				golden.Check(t, tc.name, res)
			}
			if json0 == nil {
				json0, csv0 = b.Bytes(), c.Bytes()
				if !strings.HasPrefix(c.String(), "id,kernel_entropy,lexical_similarity,correct,reason\n") {
					t.Errorf("items.csv header: %q", strings.SplitN(c.String(), "\n", 2)[0])
				}
				continue
			}
			if !bytes.Equal(b.Bytes(), json0) || !bytes.Equal(c.Bytes(), csv0) {
				t.Errorf("%s, scores %q: output or items.csv differs from the default's", tc.name, scores)
			}
		}
	}
}

// TestEntropyAllScores: every score on the golden input, with q1's graph
// scores by hand.
func TestEntropyAllScores(t *testing.T) {
	fsys := fstest.MapFS{"answers.jsonl": {Data: []byte(answersJSONL)}}
	req := NewEntropyRequest()
	req.In, req.HoldoutFirst, req.Scores = "answers.jsonl", true, "all"
	res, err := Entropy(context.Background(), job.Env{FS: fsys}, req)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "entropy_all_scores_holdout", res)
	checkKScoreArtifacts(t, res.Artifacts(), "items.csv", "entropy.json", "kernel_entropy_by_correctness.png")

	// q1, samples[1:] = paris, "paris is the capital", paris, lyon.
	// RougeL-F of paris and the long answer: 2·1/(1+4) = 0.4, so
	// W = [1 .4 1 0; .4 1 .4 0; 1 .4 1 0; 0 0 0 1], degrees 2.4, 1.8,
	// 2.4, 1.
	// degree = 1 − 7.6/16 = 0.525.
	// eigv: lyon alone gives eigenvalue 1 of D^{-1/2} W D^{-1/2}; on the
	// first three, (1, 0, −1) gives 0 and (x, y, x) the 2×2 matrix
	// [2/2.4 .4/√4.32; .8/√4.32 1/1.8], trace 25/18, determinant 7/18:
	// eigenvalues 1 and 7/18. eigv = 2 + 7/18 = 43/18.
	// kle: L = D − W has 0 (lyon), 0 (ones on the first three), 2.4
	// ((1, 0, −1)) and 3.6 − 2.4 = 1.2 (the trace's rest), so ρ ∝ 1, 1,
	// e^{−0.36}, e^{−0.72} at t = 0.3.
	q1 := res.Items[0]
	var z, h float64
	for _, mu := range []float64{0, 0, 1.2, 2.4} {
		z += math.Exp(-0.3 * mu)
	}
	for _, mu := range []float64{0, 0, 1.2, 2.4} {
		p := math.Exp(-0.3*mu) / z
		h -= p * math.Log(p)
	}
	for _, c := range []struct {
		name      string
		got       *jsonnum.Num
		want, tol float64
	}{
		{"degree", q1.Score("degree"), 0.525, 1e-15},
		{"eigv", q1.Score("eigv"), 43.0 / 18, 1e-12},
		{"kle", q1.Score("kle"), h, 1e-12},
		{"lexical similarity", q1.Score("lexical_similarity"), 0.3, 1e-15},
	} {
		if c.got == nil || math.Abs(float64(*c.got)-c.want) > c.tol {
			t.Errorf("q1 %s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// q6 has no samples: every score null, one reason.
	q6 := res.Items[5]
	for _, s := range res.Scores() {
		if v := q6.Score(s); v == nil || !math.IsNaN(float64(*v)) {
			t.Errorf("q6 %s = %v, want null", s, v)
		}
	}
	if res.Summary.Skipped != 1 || res.Summary.Similarity != "rougel" || res.Summary.KLET == nil || *res.Summary.KLET != 0.3 {
		t.Errorf("summary %+v", res.Summary)
	}
	var c bytes.Buffer
	if err := res.Artifacts()[0].Write(&c); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(c.String(), "\n")
	row1 := strings.Split(lines[1], ",")
	// ecc comes from an eigensolver, whose last bit differs between the
	// pure-Go build and LAPACK's (1.414213562373095 or ...0951).
	ecc, err := strconv.ParseFloat(row1[6], 64)
	if lines[0] != "id,kernel_entropy,lexical_similarity,kle,eigv,degree,ecc,correct,reason" ||
		!strings.HasPrefix(lines[1], "q1,-0.2926548243364091,0.3,") || row1[5] != "0.525" || err != nil || math.Abs(ecc-math.Sqrt2) > 1e-12 || row1[7] != "true" ||
		lines[6] != "q6,,,,,,,,0 usable sample(s); kernel entropy needs at least 2" {
		t.Errorf("items.csv:\n%s", c.String())
	}
}

// TestEntropyHoldoutFirstGraphScores: with --holdout-first the judged
// sample leaves the graph scores too. q5 holds five "vienna": with
// samples[0] held out or not, W is all ones and degree 0; changing
// samples[0] to another word changes degree only without holdout.
func TestEntropyHoldoutFirstGraphScores(t *testing.T) {
	in := `{"id":"q5","samples":["rome","vienna","vienna","vienna","vienna"],"correct":true}` + "\n"
	fsys := fstest.MapFS{"a.jsonl": {Data: []byte(in)}}
	for _, c := range []struct {
		holdout bool
		want    float64 // degree
	}{
		{true, 0},            // four alike
		{false, 1 - 17.0/25}, // row sums 1, 4×4: 1 − 17/25
	} {
		req := NewEntropyRequest()
		req.In, req.HoldoutFirst, req.Scores = "a.jsonl", c.holdout, "degree"
		res, err := Entropy(context.Background(), job.Env{FS: fsys}, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := float64(*res.Items[0].Score("degree")); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("holdout %v: degree %v, want %v", c.holdout, got, c.want)
		}
		if res.Items[0].Score("kernel_entropy") != nil || res.Summary.Kernel != "" {
			t.Errorf("kernel entropy not asked for: %+v %+v", res.Items[0], res.Summary)
		}
	}
}

// TestEntropyEmbeddingSimilarity: with the embedding similarity and the
// cs kernel, embeddings come from the rows or an .npy as for the vector
// kernels; both give the same scores.
func TestEntropyEmbeddingSimilarity(t *testing.T) {
	rows := `{"id":"a","samples":["x","y","z"],"embeddings":[[1,0],[1,0],[0,1]],"correct":true}` + "\n" +
		`{"id":"b","samples":["x","x","x"],"embeddings":[[1,0],[-1,0],[0,1]],"correct":false}` + "\n"
	plain := `{"id":"a","samples":["x","y","z"],"correct":true}` + "\n" + `{"id":"b","samples":["x","x","x"],"correct":false}` + "\n"
	var npy bytes.Buffer
	if err := dataio.EncodeNPY(&npy, &dataio.Array{Shape: []int{2, 3, 2}, Data: []float64{1, 0, 1, 0, 0, 1, 1, 0, -1, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{"rows.jsonl": {Data: []byte(rows)}, "plain.jsonl": {Data: []byte(plain)}, "e.npy": {Data: npy.Bytes()}}
	var docs []string
	for _, emb := range []string{"", "e.npy"} {
		req := NewEntropyRequest()
		req.In, req.Embeddings, req.Scores, req.Similarity = "rows.jsonl", emb, "all", "embedding"
		if emb != "" {
			req.In = "plain.jsonl"
		}
		res, err := Entropy(context.Background(), job.Env{FS: fsys}, req)
		if err != nil {
			t.Fatal(err)
		}
		// a: W = [J₂ 0; 0 1], degree 1 − 5/9; b: every cosine ≤ 0,
		// W = I, degree 1 − 3/9, although its words all agree (the cs
		// kernel entropy is −1).
		a, b := res.Items[0], res.Items[1]
		if math.Abs(float64(*a.Score("degree"))-4.0/9) > 1e-15 || math.Abs(float64(*b.Score("degree"))-6.0/9) > 1e-15 || float64(*b.Score("kernel_entropy")) != -1 {
			t.Errorf("degrees %v %v, kernel entropy %v", *a.Score("degree"), *b.Score("degree"), *b.Score("kernel_entropy"))
		}
		if *res.Summary.AUROC["eigv"] != 1 || *res.Summary.AUROC["kernel_entropy"] != 0 {
			t.Errorf("AUROC %+v", res.Summary.AUROC)
		}
		b2, _ := json.Marshal(res)
		docs = append(docs, string(b2))
	}
	if docs[0] != docs[1] {
		t.Errorf("rows and .npy differ:\n%s\n%s", docs[0], docs[1])
	}
	// Rows without embeddings: an input error naming the line.
	req := NewEntropyRequest()
	req.In, req.Scores, req.Similarity = "plain.jsonl", "eigv", "embedding"
	_, err := Entropy(context.Background(), job.Env{FS: fsys}, req)
	var ie *fault.InputError
	if !errors.As(err, &ie) || ie.Line != 1 || ie.Field != "embeddings" || !strings.Contains(ie.Msg, "embedding similarity") {
		t.Errorf("no embeddings: %v", err)
	}
}

func TestEntropyValidateScores(t *testing.T) {
	three, yes, neg, big, t1 := 3, true, -0.1, 2e4, 1.0
	for _, tc := range []struct {
		name, field, want string
		edit              func(r *EntropyRequest)
	}{
		{"unknown score", "scores", `{scores}: unknown score "entropy" (want a comma-separated list of kernel-entropy, lexsim, kle, eigv, degree, ecc, pe,`, func(r *EntropyRequest) { r.Scores = "kle,entropy" }},
		{"LM-Polygraph's name", "scores", `{scores}: unknown score "SemanticEntropy"; did you mean se (LM-Polygraph's SemanticEntropy)? (want`, func(r *EntropyRequest) { r.Scores = "SemanticEntropy" }},
		{"snake case", "scores", `{scores}: unknown score "eig_val_laplacian"; did you mean eigv (LM-Polygraph's EigValLaplacian)?`, func(r *EntropyRequest) { r.Scores = "kle, eig_val_laplacian" }},
		{"no score", "scores", `{scores} " , " names no score`, func(r *EntropyRequest) { r.Scores = " , " }},
		{"similarity without graph", "similarity", "{similarity} applies only to {scores} kle, eigv, degree, ecc, cocoa-msp, cocoa-ppl, cocoa-mte, sentence-sar", func(r *EntropyRequest) { r.Similarity = "embedding" }},
		{"unknown similarity", "similarity", `{similarity} "jaccard": want rougel, embedding or nli`, func(r *EntropyRequest) { r.Scores, r.Similarity = "eigv", "jaccard" }},
		{"nli similarity without a judge", "similarity", `{similarity} nli needs an entailment judge`, func(r *EntropyRequest) { r.Scores, r.Similarity = "eigv", "nli" }},
		{"kle_t without kle", "kle_t", "{kle_t} applies only to {scores} kle", func(r *EntropyRequest) { r.Scores, r.KLET = "eigv,degree", &t1 }},
		{"negative kle_t", "kle_t", "{kle_t} -0.1: want a heat-kernel time in (0, 10000]", func(r *EntropyRequest) { r.Scores, r.KLET = "kle", &neg }},
		{"huge kle_t", "kle_t", "{kle_t} 20000", func(r *EntropyRequest) { r.Scores, r.KLET = "all", &big }},
		{"kernel without kernel-entropy", "kernel", "{kernel} applies only to {scores} kernel-entropy", func(r *EntropyRequest) { r.Scores, r.Kernel = "kle", "rbf" }},
		{"t without kernel-entropy", "t", "{t} applies only to {scores} kernel-entropy", func(r *EntropyRequest) { r.Scores, r.T = "lexsim", &three }},
		{"cumulative without kernel-entropy", "cumulative", "{cumulative} applies only to {scores} kernel-entropy", func(r *EntropyRequest) { r.Scores, r.Cumulative = "degree", &yes }},
		{"embeddings with rougel", "embeddings", "{embeddings} applies only to the vector kernels (rbf, laplacian, poly, cosine, linear) and {similarity} embedding", func(r *EntropyRequest) { r.Scores, r.Embeddings = "all", "e.npy" }},
	} {
		r := NewEntropyRequest()
		r.In = "a.jsonl"
		tc.edit(&r)
		var fe *fault.FieldError
		if err := r.Validate(); !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.want) {
			t.Errorf("%s: %v, want a FieldError on %s containing %q", tc.name, err, tc.field, tc.want)
		}
	}
	for _, edit := range []func(r *EntropyRequest){
		func(r *EntropyRequest) { r.Scores = "ALL" },
		func(r *EntropyRequest) { r.Scores, r.Similarity, r.KLET = "kle", "rougel", &t1 },
		func(r *EntropyRequest) { r.Scores, r.Similarity, r.Embeddings = "eigv", "embedding", "e.npy" },
		func(r *EntropyRequest) {
			r.Scores, r.Kernel, r.Similarity = "kernel-entropy,degree", "cosine", "embedding"
		},
	} {
		r := NewEntropyRequest()
		r.In = "a.jsonl"
		edit(&r)
		if err := r.Validate(); err != nil {
			t.Errorf("%+v: %v", r, err)
		}
	}
}

// TestEntropyRequestJSON: the service's request fields are the flags'
// names; the default request carries none of the new ones.
func TestEntropyRequestJSON(t *testing.T) {
	r := NewEntropyRequest()
	if err := json.Unmarshal([]byte(`{"in":"a.jsonl","scores":"kle,eigv","similarity":"embedding","kle_t":1.5,"embeddings":"e.npy"}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.Scores != "kle,eigv" || r.Similarity != "embedding" || r.KLET == nil || *r.KLET != 1.5 || r.Kernel != "cs" {
		t.Errorf("decoded %+v", r)
	}
	if err := r.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	b, err := json.Marshal(NewEntropyRequest())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"scores", "similarity", "kle_t"} {
		if strings.Contains(string(b), `"`+key+`"`) {
			t.Errorf("default request %s has %q", b, key)
		}
	}
}

// TestEntropyGraphSampleBound: a row with more samples than the graph
// scores take is an input error naming its line, before any scoring.
func TestEntropyGraphSampleBound(t *testing.T) {
	samples := make([]string, MaxGraphSamples+1)
	for i := range samples {
		samples[i] = "a"
	}
	row, _ := json.Marshal(map[string]any{"id": "big", "samples": samples})
	fsys := fstest.MapFS{"a.jsonl": {Data: []byte(`{"id":"ok","samples":["a","b"]}` + "\n" + string(row) + "\n")}}
	req := NewEntropyRequest()
	req.In, req.Scores = "a.jsonl", "degree"
	_, err := Entropy(context.Background(), job.Env{FS: fsys}, req)
	var ie *fault.InputError
	if !errors.As(err, &ie) || ie.Line != 2 || ie.Field != "samples" || !strings.Contains(ie.Msg, "at most 1000") {
		t.Errorf("err = %v", err)
	}
	// The default scores are not bounded here.
	req.Scores = ""
	if _, err := Entropy(context.Background(), job.Env{FS: fsys}, req); err != nil {
		t.Errorf("default scores: %v", err)
	}
}

// Empty AUROCs come with the reason: which rows lack what, and the field
// that labels them.
func TestEntropyLabelWarnings(t *testing.T) {
	refsOnly := `{"id":"a","samples":["x y","x y","x"],"reference":"x"}
{"id":"b","samples":["z","w","v"],"reference":"x"}
`
	for _, c := range []struct {
		name, rows string
		holdout    bool
		want       string // "" for no warning
	}{
		{"references, no answer", refsOnly, false, "2 of 2 rows have a reference but no answer, and without {holdout_first} the answer under test is the row's answer; set {holdout_first}"},
		{"references, holdout", refsOnly, true, ""},
		{"nothing to judge by", `{"id":"a","samples":["x","y","z"]}` + "\n", false, "a row is labelled by correct, or by an answer and a reference"},
		{"holdout, no reference", `{"id":"a","samples":["x","y","z"]}` + "\n", true, "no scored row has a reference or a correct label"},
		{"all correct", `{"id":"a","samples":["x","y","z"],"correct":true}` + "\n" + `{"id":"b","samples":["x","x","z"],"correct":true}` + "\n", false, "every one of the 2 labelled answers is correct"},
		{"all incorrect", `{"id":"a","samples":["x","y","z"],"correct":false}` + "\n", false, "every one of the 1 labelled answers is incorrect"},
		{"both", `{"id":"a","samples":["x","y","z"],"correct":false}` + "\n" + `{"id":"b","samples":["x","x","z"],"correct":true}` + "\n", false, ""},
		{"every row skipped", `{"id":"a","samples":["x"],"reference":"x"}` + "\n", false, ""},
	} {
		req := NewEntropyRequest()
		req.In, req.HoldoutFirst = "a.jsonl", c.holdout
		res, err := Entropy(context.Background(), job.Env{FS: fstest.MapFS{"a.jsonl": {Data: []byte(c.rows)}}}, req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		switch {
		case c.want == "" && res.Warnings != nil:
			t.Errorf("%s: warnings %q, want none", c.name, res.Warnings)
		case c.want != "" && (len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], c.want)):
			t.Errorf("%s: warnings %q, want one with %q", c.name, res.Warnings, c.want)
		}
	}
	// The service spells the field by its name.
	b, err := json.Marshal(job.Messages{"set {holdout_first}"})
	if err != nil || string(b) != `["set holdout_first"]` {
		t.Errorf("Messages JSON %s, %v", b, err)
	}
}
