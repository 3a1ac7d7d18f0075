package suggest

import (
	"slices"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"batch-siz", "batch-size", 1}, {"se", "es", 2}, {"flaw", "lawn", 2}} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestAmong(t *testing.T) {
	names := []string{"workers", "num-workers", "batch", "weights", "seed"}
	for _, c := range []struct {
		typed string
		want  []string
	}{
		{"workrs", []string{"workers"}},
		{"batch-size", []string{"batch"}},
		{"num-worker", []string{"num-workers"}},
		{"seed", nil}, // itself: nothing to suggest
		{"zzzzzz", nil},
		{"sed", []string{"seed"}},
	} {
		if got := Among(c.typed, names); !slices.Equal(got, c.want) {
			t.Errorf("Among(%q) = %q, want %q", c.typed, got, c.want)
		}
	}
	// Nearest first, whatever the order given.
	if got := Among("abcd", []string{"abcdxx", "abcdx", "abcdx"}); !slices.Equal(got, []string{"abcdx", "abcdxx"}) {
		t.Errorf("Among = %q, want the nearest first, each once", got)
	}
}

func TestFold(t *testing.T) {
	for _, s := range []string{"SemanticEntropy", "semantic_entropy", "semantic-entropy", "Semantic Entropy"} {
		if got := Fold(s); got != "semanticentropy" {
			t.Errorf("Fold(%q) = %q", s, got)
		}
	}
}

func TestOtherToolsFlags(t *testing.T) {
	if !PytorchFIDFlag("batch-size") || PytorchFIDFlag("input1") {
		t.Error("pytorch-fid's flags: batch-size is one, input1 is not")
	}
	// torch-fidelity's input1 is the generated set.
	if s, ok := TorchFidelityFlag("input1"); !ok || s != "is {fake} here" {
		t.Errorf("input1: %q, %v", s, ok)
	}
	if _, ok := TorchFidelityFlag("batch-size"); ok {
		t.Error("batch-size is not torch-fidelity's")
	}
}
