package uncertainty

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/likelihood"
	"github.com/genlens/genlens/network/nli"
)

// crossencSim is the test double of LM-Polygraph's cross-encoder in
// make_polygraph_expected.py: the length of the common prefix of two
// ASCII texts plus one, over their lengths plus one.
func crossencSim(a, b string) float64 {
	n := 0
	for n < min(len(a), len(b)) && a[n] == b[n] {
		n++
	}
	return float64(n+1) / float64(len(a)+len(b)+1)
}

// tableJudge judges a pair by the table of label probabilities
// ([contradiction, neutral, entailment]) stored with a case.
type tableJudge map[[2]string][3]float64

func (j tableJudge) Name() string { return "table" }

func (j tableJudge) Classify(_ context.Context, pairs []nli.Pair) ([][3]float64, error) {
	out := make([][3]float64, len(pairs))
	for i, p := range pairs {
		v, ok := j[[2]string{p.Premise, p.Hypothesis}]
		if !ok {
			return nil, fmt.Errorf("no judgement of %q, %q in the table", p.Premise, p.Hypothesis)
		}
		out[i] = v
	}
	return out, nil
}

// TestPolygraphCalculatorsReference builds the statistics of token-sar,
// sar, ccp and the nli graph from token texts, their alternatives and
// samples' texts as genlens builds them, and compares them, and the
// estimators on them, with what LM-Polygraph's statistic calculators
// (CrossEncoderSimilarityMatrixCalculator, BlackboxGreedyTextsCalculator,
// GreedyAlternativesNLICalculator, SemanticMatrixCalculator) and
// estimators (TokenSAR, SAR, ClaimConditionedProbability,
// EigValLaplacian, DegMat, Eccentricity, KernelLanguageEntropy's graph)
// make of the same inputs (testdata/polygraph_calculators.json, written
// by make_polygraph_expected.py with LM-Polygraph's code and test doubles
// of its models), to 1e-12. LM-Polygraph prefixes the prompt to both
// texts of a token similarity; genlens does not, so the similarity here
// prefixes it itself.
func TestPolygraphCalculatorsReference(t *testing.T) {
	b, err := os.ReadFile("testdata/polygraph_calculators.json")
	if err != nil {
		t.Fatal(err)
	}
	type token struct {
		Token   string
		Logprob float64
		Top     []struct {
			Token   string
			Logprob float64
		}
	}
	var doc struct {
		Cases []struct {
			Name        string
			Answer      []token
			Samples     [][]token
			SampleTexts []string `json:"sample_texts"`
			NLI         [][3]json.RawMessage
			Expected    struct {
				TokenSimilarity          []float64   `json:"token_similarity"`
				SampleTokenSimilarity    [][]float64 `json:"sample_token_similarity"`
				SampleSentenceSimilarity [][]float64 `json:"sample_sentence_similarity"`
				Alternatives             [][][2]json.RawMessage
				KLEGraph                 [][]float64 `json:"kle_graph"`
				KernelLanguageEntropy    float64
				TokenSAR, SAR, CCP       float64
				EigValLaplacian, DegMat  float64
				Eccentricity             float64
			}
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) < 4 {
		t.Fatalf("%d cases", len(doc.Cases))
	}
	worst := map[string]float64{}
	near := func(name, what string, got, want float64) {
		t.Helper()
		key := what
		if i := strings.IndexAny(key, "0123456789("); i > 0 {
			key = strings.TrimSpace(key[:i])
		}
		worst[key] = math.Max(worst[key], math.Abs(got-want))
		if !(math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want))) {
			t.Errorf("%s: %s = %.17g, LM-Polygraph's %.17g", name, what, got, want)
		}
	}
	sim := func(a string, without []string) ([]float64, error) {
		out := make([]float64, len(without))
		for i, w := range without {
			out[i] = crossencSim("Q "+a, "Q "+w)
		}
		return out, nil
	}
	for _, c := range doc.Cases {
		judge := tableJudge{}
		for _, e := range c.NLI {
			var a, b string
			var p [3]float64
			if json.Unmarshal(e[0], &a) != nil || json.Unmarshal(e[1], &b) != nil || json.Unmarshal(e[2], &p) != nil {
				t.Fatalf("%s: bad judgement %s", c.Name, e)
			}
			judge[[2]string{a, b}] = p
		}
		texts := func(ts []token) []string {
			out := make([]string, len(ts))
			for i, x := range ts {
				out[i] = x.Token
			}
			return out
		}
		lps := func(ts []token) []likelihood.Token {
			out := make([]likelihood.Token, len(ts))
			for i, x := range ts {
				out[i].Logprob = x.Logprob
			}
			return out
		}
		// TokenSAR: the answer with and without each token.
		ts, err := TokenSimilarities(texts(c.Answer), sim)
		if err != nil || len(ts) != len(c.Expected.TokenSimilarity) {
			t.Fatalf("%s: token similarities %v, %v", c.Name, ts, err)
		}
		for i := range ts {
			near(c.Name, fmt.Sprintf("token similarity %d", i), ts[i], c.Expected.TokenSimilarity[i])
		}
		v, err := TokenSAR(lps(c.Answer), ts)
		if err != nil {
			t.Fatal(err)
		}
		near(c.Name, "TokenSAR", v, c.Expected.TokenSAR)
		// SAR: each sample's, and the samples' similarity.
		var samples [][]likelihood.Token
		var sampleSims [][]float64
		for k, s := range c.Samples {
			v, err := TokenSimilarities(texts(s), sim)
			if err != nil {
				t.Fatal(err)
			}
			for i := range v {
				near(c.Name, fmt.Sprintf("sample %d token similarity %d", k, i), v[i], c.Expected.SampleTokenSimilarity[k][i])
			}
			samples, sampleSims = append(samples, lps(s)), append(sampleSims, v)
		}
		m := len(c.SampleTexts)
		w := mat.NewDense(m, m, nil)
		for i, a := range c.SampleTexts {
			for j, b := range c.SampleTexts {
				w.Set(i, j, crossencSim(a, b))
				near(c.Name, "sample similarity", w.At(i, j), c.Expected.SampleSentenceSimilarity[i][j])
			}
		}
		v, err = SAR(samples, sampleSims, w)
		if err != nil {
			t.Fatal(err)
		}
		near(c.Name, "SAR", v, c.Expected.SAR)
		// CCP: the alternatives as LM-Polygraph lists them, judged.
		cands := make([]CCPCandidate, len(c.Answer))
		for i, x := range c.Answer {
			cands[i] = CCPCandidate{Text: x.Token, Logprob: x.Logprob}
			for _, a := range x.Top {
				cands[i].Alternatives = append(cands[i].Alternatives, Alternative{Text: a.Token, Logprob: a.Logprob})
			}
		}
		pairs := CCPPairs(cands)
		probs, err := judge.Classify(context.Background(), pairs)
		if err != nil {
			t.Fatal(err)
		}
		ccp, err := CCPTokens(cands, probs)
		if err != nil || len(ccp) != len(c.Expected.Alternatives) {
			t.Fatalf("%s: %d CCP tokens (%v), LM-Polygraph %d", c.Name, len(ccp), err, len(c.Expected.Alternatives))
		}
		for i, alts := range c.Expected.Alternatives {
			if len(alts) != len(ccp[i].Logprobs) {
				t.Fatalf("%s: token %d: %d alternatives, LM-Polygraph's %d", c.Name, i, len(ccp[i].Logprobs), len(alts))
			}
			for k, a := range alts {
				var lp float64
				if json.Unmarshal(a[1], &lp) != nil || lp != ccp[i].Logprobs[k] {
					t.Errorf("%s: token %d alternative %d: logprob %v, LM-Polygraph's %s", c.Name, i, k, ccp[i].Logprobs[k], a[1])
				}
			}
		}
		v, err = CCP(ccp)
		if err != nil {
			t.Fatal(err)
		}
		near(c.Name, "CCP", v, c.Expected.CCP)
		// The nli graph of the samples, each pair and each sample with
		// itself judged.
		ent := make([][][3]float64, m)
		for i, a := range c.SampleTexts {
			for _, b := range c.SampleTexts {
				p, err := judge.Classify(context.Background(), []nli.Pair{{Premise: a, Hypothesis: b}})
				if err != nil {
					t.Fatal(err)
				}
				ent[i] = append(ent[i], p[0])
			}
		}
		g := EntailmentGraph(ent)
		near(c.Name, "EigValLaplacian", EigV(g), c.Expected.EigValLaplacian)
		near(c.Name, "DegMat", Degree(g), c.Expected.DegMat)
		near(c.Name, "Eccentricity", Ecc(g, EccThreshold), c.Expected.Eccentricity)
		k := KLEEntailmentGraph(ent)
		for i := range m {
			for j := range m {
				near(c.Name, fmt.Sprintf("kle graph (%d, %d), doubled", i, j), 2*k.At(i, j), c.Expected.KLEGraph[i][j])
			}
		}
		// On that graph, LM-Polygraph's kernel and entropy as the docs
		// describe them reproduce its KernelLanguageEntropy: what
		// separates it from KLE is said exactly, not guessed.
		k2 := mat.NewSymDense(m, nil)
		k2.ScaleSym(2, k)
		near(c.Name, "KernelLanguageEntropy", lmPolygraphKLE(t, k2, 0.3), c.Expected.KernelLanguageEntropy)
	}
	for _, k := range slices.Sorted(maps.Keys(worst)) {
		t.Logf("%-24s max |genlens − LM-Polygraph| = %.3g", k, worst[k])
	}
}

// lmPolygraphKLE is KernelLanguageEntropy of LM-Polygraph (t, normalize
// and scale at their defaults) on its graph w: the heat kernel
// K = expm(−t (D − W)), normalised to a unit diagonal (with 1e-12 added
// to each square root) and divided by m, the von Neumann entropy of its
// eigenvalues above 1e-8 in magnitude, divided by log m.
func lmPolygraphKLE(t *testing.T, w *mat.SymDense, time float64) float64 {
	t.Helper()
	m := w.SymmetricDim()
	l := mat.NewSymDense(m, nil)
	for i := range m {
		var d float64
		for j := range m {
			d += w.At(i, j)
		}
		for j := i; j < m; j++ {
			l.SetSym(i, j, -w.At(i, j))
		}
		l.SetSym(i, i, d-w.At(i, i))
	}
	var eig mat.EigenSym
	if !eig.Factorize(l, true) {
		t.Fatal("eigendecomposition of the Laplacian failed")
	}
	var v mat.Dense
	eig.VectorsTo(&v)
	mu := eig.Values(nil)
	k := mat.NewDense(m, m, nil)
	for i := range m {
		for j := range m {
			var s float64
			for q := range m {
				s += v.At(i, q) * math.Exp(-time*mu[q]) * v.At(j, q)
			}
			k.Set(i, j, s)
		}
	}
	n := mat.NewSymDense(m, nil)
	for i := range m {
		for j := i; j < m; j++ {
			di, dj := math.Sqrt(k.At(i, i))+1e-12, math.Sqrt(k.At(j, j))+1e-12
			n.SetSym(i, j, k.At(i, j)/(di*dj)/float64(m))
		}
	}
	if !eig.Factorize(n, false) {
		t.Fatal("eigendecomposition of the normalised kernel failed")
	}
	var h float64
	for _, e := range eig.Values(nil) {
		if math.Abs(e) > 1e-8 {
			h -= e * math.Log(e)
		}
	}
	return h / math.Log(float64(m))
}
