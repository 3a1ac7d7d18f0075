package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
)

// demo --data writes the README examples' inputs: 30 prompts of
// docs/llm.md's tour and their answers (10 samples, a greedy answer and
// embeddings each), 500 labelled reference rows, and a week of traffic
// at 96 rows a day labelled on days 0-2 only; a second run into the same
// folder replaces nothing, and the same seed gives the same files.
func TestWriteTourData(t *testing.T) {
	dir := t.TempDir()
	if err := WriteTourData(context.Background(), dir, 1); err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	prompts := strings.Split(strings.TrimSpace(string(read("prompts.jsonl"))), "\n")
	if len(prompts) != 30 {
		t.Fatalf("%d prompts, want 30", len(prompts))
	}
	// docs/llm.md's rule: example j of prompt i is mislabelled when
	// 7i + 3j is a multiple of 3, that is, in every example of the cat
	// prompts (i a multiple of 3) and none of the others.
	for _, tc := range []struct {
		i                 int
		prompt, reference string
	}{
		{3, strings.Repeat("Input: cat\nLabel: no\n\n", 3) + "Input: cat\nLabel:", "yes"},
		{4, strings.Repeat("Input: dog\nLabel: no\n\n", 4) + "Input: dog\nLabel:", "no"},
		{6, "Input: cat\nLabel:", "yes"},
	} {
		var p struct{ ID, Prompt, Reference string }
		if err := json.Unmarshal([]byte(prompts[tc.i]), &p); err != nil {
			t.Fatal(err)
		}
		if p.ID != fmt.Sprintf("q%d", tc.i) || p.Prompt != tc.prompt || p.Reference != tc.reference {
			t.Errorf("prompt %d: %+v, want prompt %q, reference %s", tc.i, p, tc.prompt, tc.reference)
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(read("answers.jsonl")))
	sc.Buffer(nil, 1<<20)
	ids := map[string]bool{}
	for sc.Scan() {
		var a struct {
			ID         string
			Samples    []string
			Answer     *string
			Embeddings [][]float64
		}
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		if len(a.Samples) != 10 || a.Answer == nil || len(a.Embeddings) != 10 {
			t.Errorf("answers %s: %d samples, answer %v, %d embeddings; want 10, one, 10", a.ID, len(a.Samples), a.Answer, len(a.Embeddings))
		}
		ids[a.ID] = true
	}
	if len(ids) != 30 {
		t.Errorf("answers for %d prompts, want 30", len(ids))
	}
	ref := strings.Split(strings.TrimSpace(string(read("reference.csv"))), "\n")
	if len(ref) != 501 || ref[0] != "x0,x1,price_pred,price" {
		t.Errorf("reference.csv: %d lines, header %q", len(ref), ref[0])
	}
	today := strings.Split(strings.TrimSpace(string(read("today.csv"))), "\n")
	if len(today) != 1+7*96 || today[0] != "ts,x0,x1,price_pred,price" {
		t.Fatalf("today.csv: %d lines, header %q", len(today), today[0])
	}
	for i, line := range today[1:] {
		labelled := !strings.HasSuffix(line, ",")
		if labelled != (i < 3*96) {
			t.Fatalf("today.csv row %d (%s): labelled %v, want labels on days 0-2 only", i, line, labelled)
		}
	}
	if !strings.HasPrefix(today[1], "2026-11-23T00:00:00Z,") || !strings.HasPrefix(today[len(today)-1], "2026-11-29T23:45:00Z,") {
		t.Errorf("today.csv spans %q to %q, want 2026-11-23 to 2026-11-29 every 15 minutes", today[1][:20], today[len(today)-1][:20])
	}
	before := read("today.csv")
	var ie *fault.InputError
	if err := WriteTourData(context.Background(), dir, 2); !errors.As(err, &ie) || ie.File != filepath.Join(dir, "prompts.jsonl") || !strings.Contains(err.Error(), "exists") {
		t.Errorf("second run into the same folder: %v, want an input error naming prompts.jsonl", err)
	}
	if !bytes.Equal(read("today.csv"), before) {
		t.Error("the refused run changed today.csv")
	}
	again := t.TempDir()
	if err := WriteTourData(context.Background(), again, 1); err != nil {
		t.Fatal(err)
	}
	for _, name := range TourFiles {
		b, err := os.ReadFile(filepath.Join(again, name))
		if err != nil || !bytes.Equal(b, read(name)) {
			t.Errorf("%s differs between two runs with the same seed (%v)", name, err)
		}
	}
}
