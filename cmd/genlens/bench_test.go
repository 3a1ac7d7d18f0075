package main

import (
	"io"
	"testing"

	"github.com/genlens/genlens/internal/testkit/shareddata"
)

// The performance target: `genlens entropy` with the cs kernel on the 1000-row
// Qwen file in under 2 s end to end (reading, scoring, AUROC, JSON).
// Run: go test ./cmd/genlens -run XXX -bench EntropyCS -benchtime 5x
func BenchmarkEntropyCSQwen1000(b *testing.B) {
	path := shareddata.Path(b, "llm/triviaqa_qwen2.5-7b_1000x10.jsonl")
	for b.Loop() {
		if code := run([]string{"entropy", "--in", path, "--holdout-first", "--json"}, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

// BenchmarkEntropyAllScoresQwen1000 is BenchmarkEntropyCSQwen1000 with
// every score (--scores all): the graph scores' RougeL matrix and two
// eigensolves per prompt on top.
func BenchmarkEntropyAllScoresQwen1000(b *testing.B) {
	path := shareddata.Path(b, "llm/triviaqa_qwen2.5-7b_1000x10.jsonl")
	for b.Loop() {
		if code := run([]string{"entropy", "--in", path, "--holdout-first", "--scores", "all", "--json"}, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}
