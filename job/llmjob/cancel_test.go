package llmjob

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/metric/uncertainty"
)

// TestSimilaritiesStopOnCancel counts the rows whose RougeL similarities
// are computed once the run is cancelled: none. The loop over the rows
// did not watch the context, and a cancelled entropy run over thousands
// of rows of long samples went on for minutes.
func TestSimilaritiesStopOnCancel(t *testing.T) {
	const rows = 200
	sample := strings.Repeat("the quick brown fox jumps over the lazy dog ", 20)
	ps := make([]*promptScores, rows)
	prompts := make([]uncertainty.Prompt, rows)
	scored := make([]bool, rows)
	for i := range ps {
		ps[i] = newPromptScores(dataio.Record{Samples: []string{sample, sample + "again", "a different answer"}}, true)
		scored[i] = true
	}
	computed := func() int {
		n := 0
		for _, p := range ps {
			if p.sampleSim != nil {
				n++
			}
		}
		return n
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := attachSimilarities(ctx, prompts, ps, scored, uncertainty.SimilarityRougeL, true)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if n := computed(); n != 0 {
		t.Fatalf("%d of %d rows computed after the run was cancelled", n, rows)
	}
	if err := attachSimilarities(context.Background(), prompts, ps, scored, uncertainty.SimilarityRougeL, true); err != nil {
		t.Fatal(err)
	}
	if n := computed(); n != rows {
		t.Fatalf("%d of %d rows computed", n, rows)
	}
}
