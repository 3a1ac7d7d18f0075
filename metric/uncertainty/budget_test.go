package uncertainty

import (
	"errors"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/tensor/membudget"
	"github.com/genlens/genlens/metric/kernel"
)

// The cs kernel's t-grams are priced (t × words) before they are
// counted: a long answer with a long t is refused as over the budget.
func TestCSGramsPriced(t *testing.T) {
	defer membudget.SetLimit(membudget.SetLimit(64 << 20))
	long := strings.Repeat("word another thing ", 2000) // 6,000 words
	p := Prompt{ID: "p", Samples: []string{long, long + "x", long + "y"}}
	opt := Options{Sequence: kernel.CS{T: 1000}, Scores: []Score{ScoreKernelEntropy}}
	_, _, err := Evaluate(t.Context(), []Prompt{p}, opt)
	var be *membudget.Error
	if !errors.As(err, &be) {
		t.Fatalf("t = 1000 on 18,000 words: %v, want a budget error", err)
	}
	opt.Sequence.T = 2
	if _, _, err := Evaluate(t.Context(), []Prompt{p}, opt); err != nil {
		t.Errorf("t = 2: %v", err)
	}
}
