package llmjob

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
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
	m, err := OpenNLI("deberta", dir)
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
	_, err = OpenNLI("deberta-large-mnli", dir)
	var ie *fault.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "not deberta-large-mnli") {
		t.Errorf("the tiny model taken for deberta-large-mnli: %v", err)
	}
	if _, err := OpenNLI("roberta", dir); fault.Classify(err) != fault.KindField {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := OpenNLI("deberta", ""); fault.Classify(err) != fault.KindField {
		t.Errorf("no directory: %v", err)
	}
	// A BERT cross-encoder: the tiny fixture, labels from its config.
	b, err := OpenNLI("bert", filepath.Join("..", "..", "network", "bert", "testdata", "nli"))
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
