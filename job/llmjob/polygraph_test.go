package llmjob

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/llm"
	"github.com/genlens/genlens/metric/likelihood"
	"github.com/genlens/genlens/metric/semantic"
	"github.com/genlens/genlens/metric/uncertainty"
	"github.com/genlens/genlens/network/nli"
)

// TestLMPolygraphCrossCheck computes the scores on the inputs of
// testdata/polygraph_fixture.json and compares them with LM-Polygraph's
// estimators on the same inputs (testdata/polygraph_expected.json, written
// by make_polygraph_expected.py with LM-Polygraph's own code), to 1e-9:
// equal where the definitions agree, through the stated transform where
// LM-Polygraph reports a monotone function of genlens's score, and
// different, as documented in docs/llm-baselines.md, where they do not.
func TestLMPolygraphCrossCheck(t *testing.T) {
	var fixture struct {
		Cases []struct {
			Name         string
			Samples      [][]float64
			NLI          [][][3]float64
			Greedy       []float64
			Top          [][]float64
			PTrueLogprob float64 `json:"ptrue_logprob"`
		}
	}
	var expected struct {
		Cases []map[string]any
	}
	for path, v := range map[string]any{"testdata/polygraph_fixture.json": &fixture, "testdata/polygraph_expected.json": &expected} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if len(fixture.Cases) != len(expected.Cases) || len(fixture.Cases) < 5 {
		t.Fatalf("%d cases, %d expected", len(fixture.Cases), len(expected.Cases))
	}
	for ci, c := range fixture.Cases {
		want := expected.Cases[ci]
		check := func(what string, got float64, key string, f func(float64) float64) {
			t.Helper()
			v, ok := want[key].(float64)
			if !ok {
				t.Fatalf("%s: no %s", c.Name, key)
			}
			if w := f(v); math.Abs(got-w) > 1e-9 || math.IsNaN(got) {
				t.Errorf("%s: %s = %.15g, LM-Polygraph's %s gives %.15g", c.Name, what, got, key, w)
			}
		}
		same := func(x float64) float64 { return x }
		tokens := func(lps []float64) []likelihood.Token {
			out := make([]likelihood.Token, len(lps))
			for i, l := range lps {
				out[i].Logprob = l
			}
			return out
		}
		var samples [][]likelihood.Token
		logp := make([]float64, len(c.Samples))
		for i, s := range c.Samples {
			samples = append(samples, tokens(s))
			logp[i], _ = likelihood.Sequence(tokens(s))
		}
		v, _ := likelihood.PE(samples)
		check("pe", v, "MonteCarloSequenceEntropy", same)
		v, _ = likelihood.NE(samples)
		check("ne", v, "MonteCarloNormalizedSequenceEntropy", same)
		// LM-Polygraph's MaximumSequenceProbability is −log p(answer), its
		// Perplexity −mean token logprob: monotone in genlens's 1 − p and
		// exp(−mean).
		v, _ = likelihood.MSP(tokens(c.Greedy))
		check("msp", v, "MaximumSequenceProbability", func(x float64) float64 { return -math.Expm1(-x) })
		v, _ = likelihood.Perplexity(tokens(c.Greedy))
		check("perplexity", v, "Perplexity", math.Exp)
		if c.Top != nil {
			toks := tokens(c.Greedy[:len(c.Top)])
			for i := range toks {
				toks[i].Top = c.Top[i]
			}
			v, _ = likelihood.MTE(toks)
			check("mte", v, "MeanTokenEntropyRenormalised", same)
			if c.Name == "identical" { // a whole distribution: no tail to renormalise
				check("mte", v, "MeanTokenEntropy", same)
			}
		}
		clusters, err := semantic.Clusters(len(c.Samples), func(i, j int) (bool, error) {
			return nli.Predict(c.NLI[i][j]) == nli.Entailment, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range want["classes"].([]any) {
			if int(k.(float64)) != clusters[i] {
				t.Errorf("%s: clusters %v, LM-Polygraph's %v", c.Name, clusters, want["classes"])
				break
			}
		}
		v, _ = semantic.SEMonteCarlo(clusters, logp)
		check("SEMonteCarlo", v, "SemanticEntropy", same)
		v, _ = semantic.SEDiscrete(clusters)
		check("se-discrete", v, "SemanticEntropyEmpirical", same)
		// NumSemSets counts the connected components of "entailment more
		// likely than contradiction, both ways"; genlens the clusters
		// above. They differ when that relation is not transitive.
		n := float64(semantic.NumSets(clusters))
		if c.Name == "not transitive" {
			if w := want["NumSemSets"].(float64); n != 3 || w != 1 {
				t.Errorf("%s: numsets %v, LM-Polygraph's %v; want 3 and 1", c.Name, n, w)
			}
		} else {
			check("numsets", n, "NumSemSets", same)
		}
		// Eccentricity on LM-Polygraph's default graph: the entailment
		// probabilities, symmetrised.
		m := len(c.Samples)
		w := mat.NewSymDense(m, nil)
		for i := range m {
			for j := i; j < m; j++ {
				w.SetSym(i, j, (c.NLI[i][j][nli.Entailment]+c.NLI[j][i][nli.Entailment])/2)
			}
		}
		check("ecc", uncertainty.Ecc(w, uncertainty.EccThreshold), "Eccentricity", same)
		// LM-Polygraph's PTrue is −log p(True), genlens's 1 − p(True).
		pt, err := llm.PTrueOf([]llm.TokenLogprob{{Token: " True", Logprob: c.PTrueLogprob}})
		if err != nil {
			t.Fatal(err)
		}
		check("ptrue", 1-pt, "PTrue", func(x float64) float64 { return -math.Expm1(-x) })
	}
}

// token-sar, sar and ccp need the tokens' texts (and, for ccp, their
// alternatives'): rows without them leave the scores out, saying which
// field would have given them; so does the embedding similarity without
// the embedder in process, which alone can embed an answer without one
// of its tokens.
func TestEntropyTokenScoreReasons(t *testing.T) {
	noTexts := `{"id":"q1","samples":["a b","a c"],"answer":"a b","correct":true,"logprobs":[[{"logprob":-0.1},{"logprob":-0.2}],[{"logprob":-0.3},{"logprob":-0.4}]],"answer_logprobs":[{"logprob":-0.1,"top":[{"logprob":-0.1}]},{"logprob":-0.2,"top":[{"logprob":-0.2}]}]}` + "\n"
	noAltTexts := `{"id":"q1","samples":["a b","a c"],"answer":"a b","correct":true,"logprobs":[[{"token":"a","logprob":-0.1},{"token":" b","logprob":-0.2}],[{"token":"a","logprob":-0.3},{"token":" c","logprob":-0.4}]],"answer_logprobs":[{"token":"a","logprob":-0.1,"top":[{"logprob":-0.1}]},{"token":" b","logprob":-0.2,"top":[{"logprob":-0.2}]}]}` + "\n"
	noTop := strings.ReplaceAll(strings.ReplaceAll(noAltTexts, `,"top":[{"logprob":-0.1}]`, ""), `,"top":[{"logprob":-0.2}]`, "")
	for _, tc := range []struct {
		name, rows, scores, similarity, want string
	}{
		{"no token texts", noTexts, "token-sar,sar", "", `token-sar, sar: the tokens have no texts (each token's "token" in the rows' logprobs; genlens sample writes them)`},
		{"no alternatives' texts", noAltTexts, "ccp", "", `ccp: the tokens' top-K alternatives have no texts`},
		{"no alternatives", noTop, "ccp", "", `ccp: no top-K alternatives of the tokens (sample with {top_logprobs} K)`},
		{"embeddings without an embedder", strings.ReplaceAll(noAltTexts, `"correct":true`, `"correct":true,"embeddings":[[1,0],[0,1]]`), "token-sar", "embedding",
			"token-sar: the embedding similarity of an answer without one of its tokens needs the embedder in process"},
	} {
		req := NewEntropyRequest()
		req.In, req.Scores, req.Similarity = "a.jsonl", tc.scores+",pe", tc.similarity
		if tc.scores == "ccp" {
			req.NLIBaseURL, req.NLIModel = "http://127.0.0.1:1/v1", "judge" // never asked: no pair to judge
		}
		res, err := Entropy(context.Background(), job.Env{FS: fstest.MapFS{"a.jsonl": {Data: []byte(tc.rows)}}}, req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, "left out: "+tc.want) {
			t.Errorf("%s: warnings %q, want %q", tc.name, w, tc.want)
		}
		if res.Items[0].Score("pe") == nil {
			t.Errorf("%s: pe missing", tc.name)
		}
	}
}
