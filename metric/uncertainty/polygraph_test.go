package uncertainty

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"os"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/metric/likelihood"
	"github.com/genlens/genlens/metric/semantic"
	"github.com/genlens/genlens/network/nli"
)

type polygraphCase struct {
	Name           string
	SampleTexts    []string    `json:"sample_texts"`
	Samples        [][]float64 `json:"samples"`
	Greedy         []float64   `json:"greedy"`
	Top            [][]float64 `json:"top"`
	CCP            []CCPToken  `json:"ccp"`
	AnswerSim      []float64   `json:"answer_sim"`
	SampleSim      [][]float64 `json:"sample_sim"`
	AnswerTokenSim []float64   `json:"answer_token_sim"`
	SampleTokenSim [][]float64 `json:"sample_token_sim"`
	NLI            [][][3]float64
	AnswerNLI      [][3]float64 `json:"answer_nli"`
	Expected       map[string]any
}

func toks(lps []float64) []likelihood.Token {
	out := make([]likelihood.Token, len(lps))
	for i, l := range lps {
		out[i].Logprob = l
	}
	return out
}

func dense(rows [][]float64) *mat.Dense {
	m := mat.NewDense(len(rows), len(rows), nil)
	for i, r := range rows {
		m.SetRow(i, r)
	}
	return m
}

// TestPolygraphReference computes each estimator on the inputs of
// testdata/polygraph.json and compares it with what LM-Polygraph's class
// of the same name computes from them (written there by
// make_polygraph_expected.py, which runs LM-Polygraph's own code), to
// 1e-12.
func TestPolygraphReference(t *testing.T) {
	b, err := os.ReadFile("testdata/polygraph.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Cases []polygraphCase }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) < 6 {
		t.Fatalf("%d cases", len(doc.Cases))
	}
	worst := map[string]float64{}
	for _, c := range doc.Cases {
		check := func(key string, got float64, err error) {
			t.Helper()
			if err != nil {
				t.Errorf("%s: %s: %v", c.Name, key, err)
				return
			}
			want, ok := c.Expected[key].(float64)
			if !ok {
				t.Fatalf("%s: no %s", c.Name, key)
			}
			d := math.Abs(got - want)
			worst[key] = math.Max(worst[key], d)
			if !(d <= 1e-12*math.Max(1, math.Abs(want))) {
				t.Errorf("%s: %s = %.17g, LM-Polygraph's gives %.17g", c.Name, key, got, want)
			}
		}
		var samples [][]likelihood.Token
		for _, s := range c.Samples {
			samples = append(samples, toks(s))
		}
		answer := toks(c.Greedy)
		clusters, err := semantic.Clusters(len(c.Samples), func(i, j int) (bool, error) {
			return nli.Predict(c.NLI[i][j]) == nli.Entailment, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range c.Expected["classes"].([]any) {
			if int(k.(float64)) != clusters[i] {
				t.Fatalf("%s: clusters %v, LM-Polygraph's %v", c.Name, clusters, c.Expected["classes"])
			}
		}
		v, err := LabelProb(clusters)
		check("LabelProb", v, err)
		v, err = CocoaMSP(answer, c.AnswerSim)
		check("CocoaMSP", v, err)
		v, err = CocoaPPL(answer, c.AnswerSim)
		check("CocoaPPL", v, err)
		withTop := toks(c.Greedy)
		for i := range withTop {
			withTop[i].Top = c.Top[i]
		}
		v, err = CocoaMTE(withTop, c.AnswerSim)
		check("CocoaMTE", v, err)
		v, err = SentenceSAR(samples, dense(c.SampleSim))
		check("SentenceSAR", v, err)
		v, err = TokenSAR(answer, c.AnswerTokenSim)
		check("TokenSAR", v, err)
		v, err = SAR(samples, c.SampleTokenSim, dense(c.SampleSim))
		check("SAR", v, err)
		v, err = SemanticDensity(answer, samples, c.SampleTexts, c.AnswerNLI)
		check("SemanticDensity", v, err)
		v, err = LUQ(c.NLI)
		check("LUQ", v, err)
		v, err = CCP(c.CCP)
		check("CCP", v, err)
	}
	for _, k := range slices.Sorted(maps.Keys(worst)) {
		t.Logf("%-16s max |genlens − LM-Polygraph| = %.3g", k, worst[k])
	}
}

// TestPolygraphClosedForm checks each estimator on a case worked by hand,
// so that a wrong constant, sign or off-by-one shows whatever the
// reference file says.
func TestPolygraphClosedForm(t *testing.T) {
	near := func(name string, got float64, err error, want float64) {
		t.Helper()
		if err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %.17g (%v), want %.17g", name, got, err, want)
		}
	}
	// Five samples in clusters of 3, 1, 1.
	v, err := LabelProb([]int{0, 1, 0, 2, 0})
	near("LabelProb", v, err, 1-3.0/5)

	answer := toks([]float64{-0.2, -0.3})
	sim := []float64{1, 0.5} // mean dissimilarity 0.25
	v, err = CocoaMSP(answer, sim)
	near("CocoaMSP", v, err, 0.5*0.25)
	v, err = CocoaPPL(answer, sim)
	near("CocoaPPL", v, err, 0.25*0.25)
	// Two equal alternatives per token: entropy log 2 each.
	top := []likelihood.Token{{Logprob: -1, Top: []float64{-1, -1}}, {Logprob: -2, Top: []float64{-2, -2}}}
	v, err = CocoaMTE(top, sim)
	near("CocoaMTE", v, err, math.Ln2*0.25)

	// TokenSAR: relevances 0.5 and 0.25 weigh the tokens 2/3 and 1/3.
	v, err = TokenSAR(answer, []float64{0.5, 0.75})
	near("TokenSAR", v, err, 0.2*2/3+0.3/3)
	// One token of similarity 0.5 (LM-Polygraph's single-token case):
	// its whole −log p.
	v, err = TokenSAR(toks([]float64{-0.7}), []float64{SingleTokenRelevanceSimilarity})
	near("TokenSAR one token", v, err, 0.7)

	// SentenceSAR of two samples, p = e^-1 and e^-2, similarity 0.5:
	// −½ [log(e^-1 + 500 e^-2) + log(e^-2 + 500 e^-1)].
	two := [][]likelihood.Token{toks([]float64{-1}), toks([]float64{-0.5, -1.5})}
	w := mat.NewDense(2, 2, []float64{7, 0.5, 0.5, 7}) // the diagonal is not read
	p1, p2 := math.Exp(-1), math.Exp(-2)
	v, err = SentenceSAR(two, w)
	near("SentenceSAR", v, err, -(math.Log(p1+500*p2)+math.Log(p2+500*p1))/2)
	// SAR with token similarities 0.5 (sample 1) and 0.8, 0.4 (sample 2):
	// tokenSAR 1 and 0.5/4 + 1.5·3/4 = 1.25.
	q1, q2 := math.Exp(-1), math.Exp(-1.25)
	v, err = SAR(two, [][]float64{{0.5}, {0.8, 0.4}}, w)
	near("SAR", v, err, -(math.Log(q1+500*q2)+math.Log(q2+500*q1))/2)

	// SemanticDensity: answer p̄ = e^-0.25; "Paris" twice (counted once,
	// p̄ = e^-0.375, kernel 1), "Lyon" (p̄ = e^-1, contradiction 0.5 and
	// neutral 0.5: kernel 1 − 0.75).
	g, s1, s2 := math.Exp(-0.25), math.Exp(-0.375), math.Exp(-1)
	v, err = SemanticDensity(answer,
		[][]likelihood.Token{toks([]float64{-0.5, -0.25}), toks([]float64{-1}), toks([]float64{-0.75})},
		[]string{"Paris", "Lyon", "Paris"},
		[][3]float64{{0, 0, 1}, {0.5, 0.5, 0}, {1, 0, 0}})
	near("SemanticDensity", v, err, -(g+s1+0.25*s2)/(g+s1+s2))

	// LUQ: 0.2/(0.2+0.6) and 0.4/(0.4+0.3).
	v, err = LUQ([][][3]float64{{{9, 9, 9}, {0.6, 0.2, 0.2}}, {{0.3, 0.3, 0.4}, {9, 9, 9}}})
	near("LUQ", v, err, 1-(0.25+0.4/0.7)/2)
	// A one-label judge: entailment counts 1, contradiction 0, neutral ½.
	v, err = LUQ([][][3]float64{
		{{}, {0, 0, 1}, {0, 1, 0}},
		{{0, 0, 1}, {}, {1, 0, 0}},
		{{0, 1, 0}, {1, 0, 0}, {}},
	})
	near("LUQ one-hot", v, err, 1-(1+0.5+1+0+0.5+0)/6)

	// CCP: token 1 has a contradicting alternative (e^-2) and an
	// entailing one (e^-3, entailment forward and neutral backward);
	// token 2's only alternative is entailed one way and contradicted the
	// other: neutral, left out, so the token counts 1.
	fwd1 := [][3]float64{{}, {0.9, 0.05, 0.05}, {0.1, 0.1, 0.8}}
	bwd1 := [][3]float64{{}, {0.8, 0.1, 0.1}, {0.2, 0.7, 0.1}}
	v, err = CCP([]CCPToken{
		{Logprobs: []float64{-0.2, -2, -3}, Forward: fwd1, Backward: bwd1},
		{Logprobs: []float64{-0.3, -1.5}, Forward: [][3]float64{{}, {0.1, 0.1, 0.8}}, Backward: [][3]float64{{}, {0.7, 0.2, 0.1}}},
	})
	e := func(x float64) float64 { return math.Exp(x) }
	near("CCP", v, err, -(e(-0.2)+e(-3))/(e(-0.2)+e(-3)+e(-2)))
	// A tie of entailment with contradiction is entailment.
	v, err = CCP([]CCPToken{{Logprobs: []float64{-1, -1}, Forward: [][3]float64{{}, {0.4, 0.2, 0.4}}, Backward: [][3]float64{{}, {0.4, 0.2, 0.4}}}})
	near("CCP tie", v, err, -1)

	if w := CCPWord(" Paris,\n"); w != "Paris" {
		t.Errorf("CCPWord = %q", w)
	}
	if w := CCPWord(" ."); w != "" {
		t.Errorf("CCPWord of punctuation = %q", w)
	}
}

// TestPolygraphRefusals checks that the estimators say why they cannot
// score rather than return NaN where LM-Polygraph's code would.
func TestPolygraphRefusals(t *testing.T) {
	for name, f := range map[string]func() (float64, error){
		"TokenSAR all irrelevant": func() (float64, error) { return TokenSAR(toks([]float64{-1, -2}), []float64{1, 1}) },
		"LUQ one sample":          func() (float64, error) { return LUQ([][][3]float64{{{0, 0, 1}}}) },
		"CocoaMSP no similarity":  func() (float64, error) { return CocoaMSP(toks([]float64{-1}), nil) },
		"CCP no tokens":           func() (float64, error) { return CCP(nil) },
		"SemanticDensity empty sample": func() (float64, error) {
			return SemanticDensity(toks([]float64{-1}), [][]likelihood.Token{{}}, []string{""}, [][3]float64{{0, 0, 1}})
		},
	} {
		if v, err := f(); err == nil {
			t.Errorf("%s: %v, want an error", name, v)
		}
	}
}

// TestTokenSimilarities checks the answers without one token that
// TokenSAR and SAR compare with the whole, on a case worked by hand, and
// LM-Polygraph's value for an answer of one token.
func TestTokenSimilarities(t *testing.T) {
	var seen [][2]string
	sim := func(a string, without []string) ([]float64, error) {
		out := make([]float64, len(without))
		for i, b := range without {
			seen = append(seen, [2]string{a, b})
			out[i] = float64(len(b)) / float64(len(a))
		}
		return out, nil
	}
	got, err := TokenSimilarities([]string{"The", " capital", " is", " Paris"}, sim)
	if err != nil {
		t.Fatal(err)
	}
	full := "The capital is Paris"
	want := [][2]string{{full, " capital is Paris"}, {full, "The is Paris"}, {full, "The capital Paris"}, {full, "The capital is"}}
	if !slices.Equal(seen, want) {
		t.Errorf("pairs %q, want %q", seen, want)
	}
	n := float64(len(full))
	if wantSim := []float64{17 / n, 12 / n, 17 / n, 14 / n}; !slices.Equal(got, wantSim) {
		t.Errorf("similarities %v, want %v", got, wantSim)
	}
	seen = nil
	if got, err := TokenSimilarities([]string{"Paris"}, sim); err != nil || !slices.Equal(got, []float64{0.5}) || seen != nil {
		t.Errorf("one token: %v, %v, asked %q", got, err, seen)
	}
	if got, err := TokenSimilarities(nil, sim); err != nil || len(got) != 0 {
		t.Errorf("no token: %v, %v", got, err)
	}
}

// TestCCPTokens checks the words CCP judges and the tokens it builds from
// the judgements, on a case worked by hand: punctuation is skipped, as a
// token and as an alternative, and the token among its own alternatives
// is dropped.
func TestCCPTokens(t *testing.T) {
	cands := []CCPCandidate{
		{Text: " Paris", Logprob: -0.2, Alternatives: []Alternative{{" Paris", -0.2}, {" Lyon", -2}, {",", -2.5}, {" paris", -3}}},
		{Text: ".", Logprob: -0.01, Alternatives: []Alternative{{".", -0.01}, {" is", -5}}},
		{Text: " is", Logprob: -0.3, Alternatives: []Alternative{{" was", -1.5}}},
	}
	pairs := CCPPairs(cands)
	want := []nli.Pair{{Premise: "Paris", Hypothesis: "Lyon"}, {Premise: "Lyon", Hypothesis: "Paris"},
		{Premise: "Paris", Hypothesis: "paris"}, {Premise: "paris", Hypothesis: "Paris"},
		{Premise: "is", Hypothesis: "was"}, {Premise: "was", Hypothesis: "is"}}
	if !slices.Equal(pairs, want) {
		t.Fatalf("pairs %q, want %q", pairs, want)
	}
	c, e, n := [3]float64{nli.Contradiction: 0.8, nli.Neutral: 0.1, nli.Entailment: 0.1}, [3]float64{0.1, 0.1, 0.8}, [3]float64{0.1, 0.8, 0.1}
	// Lyon contradicts Paris both ways; paris entails it one way (and is
	// neutral the other); was is neutral both ways, and left out.
	toks, err := CCPTokens(cands, [][3]float64{c, c, e, n, n, n})
	if err != nil {
		t.Fatal(err)
	}
	if len(toks) != 2 || !slices.Equal(toks[0].Logprobs, []float64{-0.2, -2, -3}) || !slices.Equal(toks[1].Logprobs, []float64{-0.3, -1.5}) {
		t.Fatalf("tokens %+v", toks)
	}
	v, err := CCP(toks)
	x := math.Exp
	if want := -(x(-0.2) + x(-3)) / (x(-0.2) + x(-3) + x(-2)); err != nil || math.Abs(v-want) > 1e-15 {
		t.Errorf("CCP = %v, %v; want %v", v, err, want)
	}
	if _, err := CCPTokens(cands, [][3]float64{c, c}); err == nil {
		t.Error("fewer judgements than pairs: no error")
	}
	if _, err := CCPTokens(cands[1:2], nil); err == nil || cands[1].Text != "." {
		t.Error("a punctuation token alone: no error")
	}
	if _, err := CCPTokens([]CCPCandidate{{Text: "—!", Logprob: -1}}, nil); err != nil {
		t.Errorf("a token of non-ASCII punctuation is not skipped (LM-Polygraph strips ASCII only): %v", err)
	}
}

// The scores of the table that read token similarities or the judge's
// alternatives say why they are unavailable when those are missing.
func TestPolygraphTokenScoresReasons(t *testing.T) {
	why := errors.New("no token texts")
	for name, in := range map[string]Input{
		"token-sar": {Answer: toks([]float64{-1}), TokenSimErr: why},
		"sar":       {Logprobs: [][]likelihood.Token{toks([]float64{-1})}, SampleSim: mat.NewDense(1, 1, []float64{1}), TokenSimErr: why},
		"ccp":       {Answer: toks([]float64{-1}), CCPErr: why},
	} {
		d, ok := Lookup(name)
		if !ok {
			t.Fatalf("no score %s", name)
		}
		if _, err := d.Value(in); !errors.Is(err, why) {
			t.Errorf("%s: %v, want %v", name, err, why)
		}
	}
	d, _ := Lookup("token-sar")
	v, err := d.Value(Input{Answer: toks([]float64{-0.2, -0.3}), AnswerTokenSim: []float64{0.5, 0.75}})
	if err != nil || math.Abs(v-(0.2*2/3+0.3/3)) > 1e-15 {
		t.Errorf("token-sar = %v, %v", v, err)
	}
}
