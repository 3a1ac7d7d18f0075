package llmjob

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"gonum.org/v1/gonum/mat"

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
