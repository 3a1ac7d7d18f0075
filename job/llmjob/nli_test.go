package llmjob

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/entail"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/likelihood"
	"github.com/genlens/genlens/metric/uncertainty"
	"github.com/genlens/genlens/network/nli"
)

// tinyDeBERTaDir returns a model directory holding deberta's tiny
// test model, as a Hugging Face checkout lays it out.
func tinyDeBERTaDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for src, dst := range map[string]string{"config.json": "config.json", "vocab.json": "vocab.json", "merges.txt": "merges.txt", "tiny.safetensors": "model.safetensors"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "network", "deberta", "testdata", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestOpenNLI(t *testing.T) {
	dir := tinyDeBERTaDir(t)
	m, err := entail.Open("deberta", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.Name(), "deberta sha256:") {
		t.Errorf("Name %q", m.Name())
	}
	p, err := m.Classify(context.Background(), []nli.Pair{{Premise: "A dog.", Hypothesis: "A cat."}})
	if err != nil || len(p) != 1 {
		t.Fatal(p, err)
	}
	_, err = entail.Open("deberta-large-mnli", dir)
	var ie *fault.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "not deberta-large-mnli") {
		t.Errorf("the tiny model taken for deberta-large-mnli: %v", err)
	}
	if _, err := entail.Open("roberta", dir); fault.Classify(err) != fault.KindField {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := entail.Open("deberta", ""); fault.Classify(err) != fault.KindField {
		t.Errorf("no directory: %v", err)
	}
	// A BERT cross-encoder: the tiny fixture, labels from its config.
	b, err := entail.Open("bert", filepath.Join("..", "..", "network", "bert", "testdata", "nli"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.Name(), "bert sha256:") {
		t.Errorf("Name %q", b.Name())
	}
	if p, err := b.Classify(context.Background(), []nli.Pair{{Premise: "A dog.", Hypothesis: "A cat."}}); err != nil || len(p) != 1 || math.Abs(p[0][0]+p[0][1]+p[0][2]-1) > 1e-9 {
		t.Errorf("bert Classify = %v, %v; want one distribution", p, err)
	}
}

// TestEntropyJudgeProbabilities: semantic-density and luq read the NLI
// model's probabilities (not one label) of the pairs the clustering
// judges, each answer prefixed with the question; computed here from
// the model's own judgements, they agree.
func TestEntropyJudgeProbabilities(t *testing.T) {
	dir := tinyDeBERTaDir(t)
	rows := `{"id":"q1","prompt":"Capital of France?","samples":["Paris","Paris, France","Lyon","Paris"],"logprobs":[[{"token":"Paris","logprob":-0.1}],[{"token":"Paris","logprob":-0.5},{"token":",","logprob":-0.2},{"token":" France","logprob":-0.3}],[{"token":"Lyon","logprob":-1.5}],[{"token":"Paris","logprob":-0.1}]],"reference":"Paris"}` + "\n"
	req := NewEntropyRequest()
	req.In, req.HoldoutFirst, req.Scores, req.NLI, req.NLIWeights = "a.jsonl", true, "semantic-density,luq", "deberta", dir
	res, err := Entropy(context.Background(), job.Env{FS: fstest.MapFS{"a.jsonl": {Data: []byte(rows)}}}, req)
	if err != nil {
		t.Fatal(err)
	}
	m, err := entail.Open("deberta", dir)
	if err != nil {
		t.Fatal(err)
	}
	q := "Capital of France? "
	answer, samples := "Paris", []string{"Paris, France", "Lyon", "Paris"}
	judge := func(a, b string) [3]float64 {
		p, err := m.Classify(context.Background(), []nli.Pair{{Premise: q + a, Hypothesis: q + b}})
		if err != nil {
			t.Fatal(err)
		}
		return p[0]
	}
	probs := make([][][3]float64, 3)
	var answerNLI [][3]float64
	for i, a := range samples {
		probs[i] = make([][3]float64, 3)
		for j, b := range samples {
			if i != j {
				probs[i][j] = judge(a, b)
			}
		}
		answerNLI = append(answerNLI, judge(answer, a))
	}
	tok := func(lps ...float64) []likelihood.Token {
		out := make([]likelihood.Token, len(lps))
		for i, l := range lps {
			out[i].Logprob = l
		}
		return out
	}
	wantSD, err := uncertainty.SemanticDensity(tok(-0.1), [][]likelihood.Token{tok(-0.5, -0.2, -0.3), tok(-1.5), tok(-0.1)}, samples, answerNLI)
	if err != nil {
		t.Fatal(err)
	}
	wantLUQ, err := uncertainty.LUQ(probs)
	if err != nil {
		t.Fatal(err)
	}
	it := res.Items[0]
	for key, want := range map[string]float64{"semantic_density": wantSD, "luq": wantLUQ} {
		// The judge batches the pairs here and the reference asks them one
		// by one: with OpenBLAS, float32 products round by the batch's
		// shape (differences near 1e-8), so agree to 1e-6, which still
		// catches a wrong constant or weight.
		if v := it.Score(key); v == nil || math.Abs(float64(*v)-want) > 1e-6 {
			t.Errorf("%s = %v, want %v (warnings %q)", key, v, want, res.Warnings)
		}
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "one label") {
			t.Errorf("warning %q for an NLI model", w)
		}
	}
}

// TestEntropyCCPNLIModel: ccp judges each token's word against its
// alternatives' with the NLI model, the words alone (no question), and
// skips punctuation; computed here from the model's own judgements of
// those pairs, it agrees. Its classes are the model's most probable
// labels.
func TestEntropyCCPNLIModel(t *testing.T) {
	dir := tinyDeBERTaDir(t)
	rows := `{"id":"q1","prompt":"Capital of France?","samples":["Paris","Lyon"],"answer":"Paris, France",` +
		`"answer_logprobs":[{"token":"Paris","logprob":-0.2,"top":[{"token":"Paris","logprob":-0.2},{"token":"Lyon","logprob":-2},{"token":"London","logprob":-3}]},` +
		`{"token":",","logprob":-0.1,"top":[{"token":",","logprob":-0.1},{"token":" in","logprob":-2.5}]},` +
		`{"token":" France","logprob":-0.3,"top":[{"token":" France","logprob":-0.3},{"token":".","logprob":-1.5},{"token":" Texas","logprob":-2}]}]}` + "\n"
	req := NewEntropyRequest()
	req.In, req.Scores, req.NLI, req.NLIWeights = "a.jsonl", "ccp", "deberta", dir
	res, err := Entropy(context.Background(), job.Env{FS: fstest.MapFS{"a.jsonl": {Data: []byte(rows)}}}, req)
	if err != nil {
		t.Fatal(err)
	}
	m, err := entail.Open("deberta", dir)
	if err != nil {
		t.Fatal(err)
	}
	judge := func(a, b string) [3]float64 {
		p, err := m.Classify(context.Background(), []nli.Pair{{Premise: a, Hypothesis: b}})
		if err != nil {
			t.Fatal(err)
		}
		return p[0]
	}
	tok := func(lps []float64, words []string) uncertainty.CCPToken {
		c := uncertainty.CCPToken{Logprobs: lps, Forward: [][3]float64{{}}, Backward: [][3]float64{{}}}
		for _, w := range words[1:] {
			c.Forward = append(c.Forward, judge(words[0], w))
			c.Backward = append(c.Backward, judge(w, words[0]))
		}
		return c
	}
	want, err := uncertainty.CCP([]uncertainty.CCPToken{
		tok([]float64{-0.2, -2, -3}, []string{"Paris", "Lyon", "London"}),
		tok([]float64{-0.3, -2}, []string{"France", "Texas"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Items[0].Score("ccp"); v == nil || math.Abs(float64(*v)-want) > 1e-12 {
		t.Errorf("ccp = %v, want %v (warnings %q)", v, want, res.Warnings)
	}
}

// TestEntropyNLISimilarity: with {similarity} nli the graph scores read
// the NLI model's entailment probabilities of every ordered pair of the
// question-prefixed samples, the diagonal as judged, averaged both ways
// (LM-Polygraph's default graph); cocoa the same of the answer with each
// sample; token-sar that of the answer alone with itself without each
// token. Computed here from the model's own judgements, they agree.
func TestEntropyNLISimilarity(t *testing.T) {
	dir := tinyDeBERTaDir(t)
	rows := `{"id":"q1","prompt":"Capital of France?","samples":["Paris","Paris, France","Lyon","Paris"],"answer":"The capital is Paris",` +
		`"answer_logprobs":[{"token":"The","logprob":-0.3},{"token":" capital","logprob":-0.2},{"token":" is","logprob":-0.1},{"token":" Paris","logprob":-0.4}],"correct":true}` + "\n"
	req := NewEntropyRequest()
	req.In, req.Scores, req.Similarity, req.NLI, req.NLIWeights = "a.jsonl", "eigv,degree,ecc,kle,cocoa-msp,token-sar", "nli", "deberta", dir
	res, err := Entropy(context.Background(), job.Env{FS: fstest.MapFS{"a.jsonl": {Data: []byte(rows)}}}, req)
	if err != nil {
		t.Fatal(err)
	}
	m, err := entail.Open("deberta", dir)
	if err != nil {
		t.Fatal(err)
	}
	judge := func(a, b string) [3]float64 {
		p, err := m.Classify(context.Background(), []nli.Pair{{Premise: a, Hypothesis: b}})
		if err != nil {
			t.Fatal(err)
		}
		return p[0]
	}
	q := "Capital of France? "
	samples := []string{"Paris", "Paris, France", "Lyon", "Paris"}
	probs := make([][][3]float64, len(samples))
	for i, a := range samples {
		for _, b := range samples {
			probs[i] = append(probs[i], judge(q+a, q+b))
		}
	}
	w := uncertainty.EntailmentGraph(probs)
	if w.At(0, 0) == 1 {
		t.Fatal("the diagonal is 1: not as judged")
	}
	answer := "The capital is Paris"
	var dissim float64
	for _, s := range samples {
		dissim += (1 - (judge(q+answer, q+s)[nli.Entailment]+judge(q+s, q+answer)[nli.Entailment])/2) / 4
	}
	without := []string{" capital is Paris", "The is Paris", "The capital Paris", "The capital is"}
	lps := []float64{-0.3, -0.2, -0.1, -0.4}
	var rel []float64
	for _, wo := range without {
		rel = append(rel, 1-(judge(answer, wo)[nli.Entailment]+judge(wo, answer)[nli.Entailment])/2)
	}
	var z, tokenSAR float64
	for _, r := range rel {
		z += r
	}
	for k, r := range rel {
		tokenSAR -= lps[k] * r / z
	}
	it := res.Items[0]
	for key, want := range map[string]float64{
		"eigv": uncertainty.EigV(w), "degree": uncertainty.Degree(w), "ecc": uncertainty.Ecc(w, uncertainty.EccThreshold),
		"kle":       uncertainty.KLE(uncertainty.KLEEntailmentGraph(probs), uncertainty.DefaultKLETime),
		"cocoa_msp": 1.0 * dissim, "token_sar": tokenSAR,
	} {
		// The judge batches the pairs here and the reference asks them one
		// by one: with OpenBLAS, float32 products round by the batch's
		// shape (differences near 1e-8), so agree to 1e-6, which still
		// catches a wrong constant or weight.
		if v := it.Score(key); v == nil || math.Abs(float64(*v)-want) > 1e-6 {
			t.Errorf("%s = %v, want %v (warnings %q)", key, v, want, res.Warnings)
		}
	}
	if res.Summary.Similarity != "nli" {
		t.Errorf("summary similarity %q", res.Summary.Similarity)
	}
}
