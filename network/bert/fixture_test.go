package bert

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/internal/testkit/goldenbits"
	"github.com/genlens/genlens/internal/text/wordpiece"
	"github.com/genlens/genlens/network/nli"
)

// fixtureTexts are make_fixtures.py's TEXTS.
var fixtureTexts = []string{
	"Hello, world!",
	"The quick brown fox jumps over the lazy dog.",
	"Café naïve résumé Ångström",
	"你好世界 means hello world",
	"emoji \U0001F600 family",
	repeat("word ", 60),
	"",
	"how many legs does a spider have?",
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

func readNPZ(t *testing.T, path string) map[string]*dataio.Array {
	t.Helper()
	out := map[string]*dataio.Array{}
	for _, k := range []string{"ids", "types", "mask", "emb", "logits"} {
		a, err := dataio.ReadArray(path, dataio.ReadOptions{Key: k})
		if err == nil {
			out[k] = a
		}
	}
	return out
}

// checkIDs compares the encodings with the padded ids and types PyTorch
// ran, exactly.
func checkIDs(t *testing.T, encs []wordpiece.Encoding, z map[string]*dataio.Array) {
	t.Helper()
	ids, types, mask := z["ids"], z["types"], z["mask"]
	cols := ids.Shape[1]
	for i, e := range encs {
		n := 0
		for j := range cols {
			if mask.Data[i*cols+j] != 0 {
				n++
			}
		}
		if n != len(e.IDs) {
			t.Fatalf("sequence %d: %d ids, the reference %d", i, len(e.IDs), n)
		}
		for j := range n {
			if float64(e.IDs[j]) != ids.Data[i*cols+j] || float64(e.Types[j]) != types.Data[i*cols+j] {
				t.Fatalf("sequence %d token %d: id %d type %d, the reference %v %v", i, j, e.IDs[j], e.Types[j], ids.Data[i*cols+j], types.Data[i*cols+j])
			}
		}
	}
}

func closeTo(t *testing.T, what string, got [][]float32, want *dataio.Array) {
	t.Helper()
	var big float64
	for _, v := range want.Data {
		big = max(big, math.Abs(v))
	}
	w := want.Shape[1]
	for i, row := range got {
		for j, v := range row {
			if d := math.Abs(float64(v) - want.Data[i*w+j]); !(d <= 1e-4*big) {
				t.Fatalf("%s: row %d col %d: %v, the reference %v (largest %v)", what, i, j, v, want.Data[i*w+j], big)
			}
		}
	}
}

func TestEmbeddersMatchReference(t *testing.T) {
	for _, c := range []struct {
		dir, name string
		prefix    string
	}{
		{"e5", "e5-small-v2", "query: "},
		{"minilm", "all-minilm-l6-v2", ""},
		{"bge", "bge-small-en-v1.5", ""},
	} {
		t.Run(c.dir, func(t *testing.T) {
			m, err := Load("testdata/"+c.dir, false)
			if err != nil {
				t.Fatal(err)
			}
			z := readNPZ(t, "testdata/"+c.dir+"/expected.npz")
			encs := make([]wordpiece.Encoding, len(fixtureTexts))
			for i, s := range fixtureTexts {
				encs[i] = m.Tokenizer().Encode(c.prefix+s, m.Config().MaxPositions)
			}
			checkIDs(t, encs, z)
			spec, _ := Lookup(c.name)
			e := NewEmbedder(spec, c.prefix, m.Config().Hidden, "x", 2, func() (*Model, error) { return m, nil })
			got, err := e.Forward(context.Background(), fixtureTexts)
			if err != nil {
				t.Fatal(err)
			}
			closeTo(t, c.dir, got, z["emb"])
			// One at a time: the batch does not change a text's vector. The
			// pure-Go build gives the same bits; OpenBLAS (-tags openblas)
			// splits its products by the matrices' shapes, so there they
			// agree to float32 rounding only.
			differ := func(a, b float32) bool { return a != b }
			if !linalg.SgemmKernel() {
				differ = func(a, b float32) bool {
					return math.Abs(float64(a-b)) > 1e-5*math.Max(1, math.Abs(float64(b)))
				}
			}
			for i, s := range fixtureTexts {
				one, err := e.Forward(context.Background(), []string{s})
				if err != nil {
					t.Fatal(err)
				}
				for j := range one[0] {
					if differ(one[0][j], got[i][j]) {
						t.Fatalf("text %d alone differs from in the batch at %d: %g, %g", i, j, one[0][j], got[i][j])
					}
				}
			}
		})
	}
}

func TestClassifierMatchesReference(t *testing.T) {
	c, err := LoadClassifier("testdata/nli", "bert-nli-fixture", 2)
	if err != nil {
		t.Fatal(err)
	}
	pairs := []nli.Pair{
		{Premise: fixtureTexts[0], Hypothesis: fixtureTexts[1]},
		{Premise: fixtureTexts[7], Hypothesis: "Spiders have eight legs."},
		{Premise: fixtureTexts[5], Hypothesis: fixtureTexts[2]},
		{Premise: fixtureTexts[6], Hypothesis: fixtureTexts[3]},
	}
	z := readNPZ(t, "testdata/nli/expected.npz")
	encs := make([]wordpiece.Encoding, len(pairs))
	for i, p := range pairs {
		encs[i] = c.m.Tokenizer().EncodePair(p.Premise, p.Hypothesis, c.m.Config().MaxPositions)
	}
	checkIDs(t, encs, z)
	lg, err := c.Logits(context.Background(), pairs)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "logits", lg, z["logits"])
	// config.json's id2label is ENTAILMENT, neutral, Contradiction.
	pr, err := c.Classify(context.Background(), pairs)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pr {
		e, n, k := math.Exp(float64(lg[i][0])), math.Exp(float64(lg[i][1])), math.Exp(float64(lg[i][2]))
		if d := math.Abs(p[nli.Entailment] - e/(e+n+k)); d > 1e-6 {
			t.Errorf("pair %d: P(entailment) %v, want %v", i, p[nli.Entailment], e/(e+n+k))
		}
		if d := math.Abs(p[nli.Contradiction] - k/(e+n+k)); d > 1e-6 {
			t.Errorf("pair %d: P(contradiction) %v, want %v", i, p[nli.Contradiction], k/(e+n+k))
		}
	}
}

func TestLabelOrderRefused(t *testing.T) {
	for _, labels := range []map[string]string{
		{"0": "LABEL_0", "1": "LABEL_1", "2": "LABEL_2"},
		{"0": "entailment", "1": "entailment", "2": "neutral"},
		{"0": "entailment", "1": "neutral"},
		{"0": "entailment", "1": "neutral", "5": "contradiction"},
	} {
		if _, err := (Config{ID2Label: labels}).labelOrder("config.json"); err == nil || !strings.Contains(err.Error(), "id2label") {
			t.Errorf("%v: error %v, want one naming id2label", labels, err)
		}
	}
}

// An embedder made for another width refuses the model it loads, on
// Load and on every Forward, rather than give vectors of the wrong
// length.
func TestEmbedderRefusesOtherWidth(t *testing.T) {
	m, err := Load("testdata/e5", false)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := Lookup("e5-small-v2")
	loads := 0
	e := NewEmbedder(spec, "", m.Config().Hidden+1, "x", 1, func() (*Model, error) { loads++; return m, nil })
	if err := e.Load(); err == nil || !strings.Contains(err.Error(), "wide") {
		t.Errorf("Load: %v, want the width refused", err)
	}
	if _, err := e.Forward(context.Background(), []string{"a"}); err == nil {
		t.Error("Forward ran a model of another width")
	}
	if loads != 1 {
		t.Errorf("loaded %d times, want once", loads)
	}
}

// TestArithmetic fails when the encoders' output bits on the fixture
// texts change while Arithmetic, which keys the feature cache, stays:
// raise it and record the bits with -update-bits.
func TestArithmetic(t *testing.T) {
	var rows [][]float32
	for _, c := range []struct{ dir, name, prefix string }{
		{"e5", "e5-small-v2", "query: "},
		{"minilm", "all-minilm-l6-v2", ""},
	} {
		m, err := Load("testdata/"+c.dir, false)
		if err != nil {
			t.Fatal(err)
		}
		spec, _ := Lookup(c.name)
		e := NewEmbedder(spec, c.prefix, m.Config().Hidden, "x", 2, func() (*Model, error) { return m, nil })
		got, err := e.Forward(context.Background(), fixtureTexts)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, got...)
	}
	goldenbits.Check(t, "testdata/arithmetic.golden", Arithmetic, rows)
}
