package wordpiece

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// naiveWalk is WordPiece as the reference writes it: at every start,
// every end from the word's end down.
func naiveWalk(t *Tokenizer, w string) ([]string, bool) {
	var out []string
	start := 0
	for start < len(w) {
		end := len(w)
		found := false
		for end > start {
			s := w[start:end]
			if start > 0 {
				s = t.prefix + s
			}
			if _, ok := t.vocab[s]; ok {
				out = append(out, s)
				found = true
				break
			}
			_, size := utf8.DecodeLastRuneInString(w[:end])
			end -= size
		}
		if !found {
			return out, false
		}
		start = end
	}
	return out, true
}

func smallVocab(t *testing.T, maxWord int) *Tokenizer {
	t.Helper()
	vocab := map[string]int32{"[CLS]": 0, "[SEP]": 1, "[PAD]": 2, "[UNK]": 3}
	add := func(s string) {
		if _, ok := vocab[s]; !ok {
			vocab[s] = int32(len(vocab))
		}
	}
	for _, s := range []string{"a", "b", "é", "ab", "aba", "abab", "ba", "bé", "ééa", strings.Repeat("ab", 10)} {
		add(s)
		add("##" + s)
	}
	tk, err := New("v", vocab, Options{MaxWordChars: maxWord})
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// WordPiece's lookups grow linearly with a word's length: twice the
// letters, twice the lookups (they grew fourfold), and the pieces are
// those of the reference's walk on random words, multi-byte letters
// included.
func TestWalkLinear(t *testing.T) {
	tk := smallVocab(t, 1<<20)
	maxPiece := 0
	for tok := range tk.vocab {
		maxPiece = max(maxPiece, len(tok))
	}
	count := func(w string) int {
		ok, n := tk.walkCount(w, func(string, int32) {})
		if !ok {
			t.Fatalf("%q: [UNK]", w)
		}
		return n
	}
	n1, n2 := count(strings.Repeat("a", 1000)), count(strings.Repeat("a", 2000))
	if 10*n2 > 21*n1 || n1 > 1000*maxPiece {
		t.Errorf("lookups: %d for 1,000 letters, %d for 2,000: want linear, at most %d a letter", n1, n2, maxPiece)
	}
	// A 100-letter word that matches nothing: one lookup (it was 100).
	if ok, n := tk.walkCount(strings.Repeat("z", 100), func(string, int32) {}); ok || n != 1 {
		t.Errorf("unmatched 100-letter word: ok %v after %d lookups", ok, n)
	}
	r := rand.New(rand.NewPCG(1, 2))
	letters := []string{"a", "b", "é", "z"}
	for range 2000 {
		var b strings.Builder
		for range 1 + r.IntN(60) {
			b.WriteString(letters[r.IntN(len(letters))])
		}
		w := b.String()
		want, wok := naiveWalk(tk, w)
		var got []string
		gok := tk.walk(w, func(s string, _ int32) { got = append(got, s) })
		if gok != wok || (gok && !slices.Equal(got, want)) {
			t.Fatalf("%q: %q %v, want %q %v", w, got, gok, want, wok)
		}
	}
}
