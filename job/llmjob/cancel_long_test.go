package llmjob

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/job"
)

// longPromptFS holds one prompt of n samples of words words each, drawn
// from a small vocabulary so that every pair shares many of them.
func longPromptFS(n, words int) fstest.MapFS {
	r := rand.New(rand.NewPCG(7, 8))
	vocab := strings.Fields("the a city capital country river north south old new large small answer is of in")
	var b strings.Builder
	b.WriteString(`{"id":"p","answer":"the capital city","samples":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for w := 0; w < words; w++ {
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(vocab[r.IntN(len(vocab))])
		}
		b.WriteByte('"')
	}
	b.WriteString("]}\n")
	return fstest.MapFS{"long.jsonl": {Data: []byte(b.String())}}
}

// TestEntropyCancelOneLongPrompt: one prompt of a thousand samples of
// 150 words is half a million pairs of them (RougeL, the CS kernel):
// uncancelled, 3 s (kernel entropy), 25 s (lexsim) and 62 s (eigv) on 2
// shared cores, work that once watched the context only between
// prompts. Cancelled once the job is under way, the job returns the
// context's error within a second or two.
func TestEntropyCancelOneLongPrompt(t *testing.T) {
	fsys := longPromptFS(1000, 150)
	for _, tc := range []struct {
		name   string
		scores string
	}{
		{"cs kernel entropy", "kernel-entropy"},
		{"rougeL graph", "eigv"},
		{"lexical similarity", "lexsim"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req := NewEntropyRequest()
			req.In, req.Scores = "long.jsonl", tc.scores
			var cancelled time.Time
			time.AfterFunc(300*time.Millisecond, func() { cancelled = time.Now(); cancel() })
			start := time.Now()
			_, err := Entropy(ctx, job.Env{FS: fsys}, req)
			t.Logf("returned after %v", time.Since(start))
			if !errors.Is(err, context.Canceled) || fault.Classify(err) != fault.KindCanceled {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if d := time.Since(cancelled); d > 2*time.Second {
				t.Errorf("returned %v after the cancel, want within 2 s", d)
			}
		})
	}
}
