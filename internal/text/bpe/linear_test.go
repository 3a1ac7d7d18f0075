package bpe

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// naiveMerge is GPT-2's bpe as written: find the best-ranked pair
// present, merge it at every place left to right, again.
func naiveMerge(ranks map[[2]string]int, parts []string) []string {
	for len(parts) > 1 {
		best, rank := -1, 0
		for i := 0; i+1 < len(parts); i++ {
			if r, ok := ranks[[2]string{parts[i], parts[i+1]}]; ok && (best < 0 || r < rank) {
				best, rank = i, r
			}
		}
		if best < 0 {
			break
		}
		a, b := parts[best], parts[best+1]
		out := parts[:0:0]
		for i := 0; i < len(parts); i++ {
			if i+1 < len(parts) && parts[i] == a && parts[i+1] == b {
				out = append(out, a+b)
				i++
				continue
			}
			out = append(out, parts[i])
		}
		parts = out
	}
	return parts
}

// The heap's merges are those of GPT-2's loop on random words and
// random merge lists, consistent or not (a merge of a token no earlier
// merge makes, ranks in any order).
func TestMergeMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	letters := []string{"a", "b", "c", "d"}
	for trial := range 300 {
		// Merges over the letters and some of their joins.
		toks := slices.Clone(letters)
		var merges [][2]string
		for range 5 + r.IntN(25) {
			m := [2]string{toks[r.IntN(len(toks))], toks[r.IntN(len(toks))]}
			merges = append(merges, m)
			if r.IntN(3) > 0 {
				toks = append(toks, m[0]+m[1])
			}
		}
		r.Shuffle(len(merges), func(i, j int) {
			if trial%2 == 0 {
				merges[i], merges[j] = merges[j], merges[i]
			}
		})
		tk := New(map[string]int{}, merges, "")
		for range 20 {
			parts := make([]string, 1+r.IntN(40))
			for i := range parts {
				parts[i] = letters[r.IntN(len(letters))]
			}
			want := naiveMerge(tk.ranks, slices.Clone(parts))
			if got := tk.merge(slices.Clone(parts)); !slices.Equal(got, want) {
				t.Fatalf("merges %v, word %v: %v, want %v", merges, parts, got, want)
			}
		}
	}
}

// A long word costs heap operations about linear in its length: twice
// the characters, about twice the operations, and a few a character.
// The loop rescanning the word after every merge made a pass over the
// whole word for every distinct merge it applied: with every bigram and
// trigram of 26 letters a merge (18,252 of them), a random word of n
// letters took hundreds of passes of n.
func TestMergeLinear(t *testing.T) {
	var merges [][2]string
	for a := 'a'; a <= 'z'; a++ {
		for b := 'a'; b <= 'z'; b++ {
			merges = append(merges, [2]string{string(a), string(b)})
		}
	}
	for _, m := range slices.Clone(merges) {
		for c := 'a'; c <= 'z'; c++ {
			merges = append(merges, [2]string{m[0] + m[1], string(c)})
		}
	}
	r := rand.New(rand.NewPCG(9, 10))
	r.Shuffle(676, func(i, j int) { merges[i], merges[j] = merges[j], merges[i] })
	tk := New(map[string]int{}, merges, "")
	ops := func(n int) int {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = string(rune('a' + r.IntN(26)))
		}
		_, k := tk.mergeCount(parts)
		return k
	}
	n1, n2 := ops(20000), ops(40000)
	if 10*n2 > 22*n1 || n1 > 10*20000 {
		t.Errorf("heap operations: %d for 20,000 characters, %d for 40,000: want linear, a few a character", n1, n2)
	}
}

// The word cache is bounded by bytes: long words are not cached, and
// the entries never hold more than maxCacheBytes, however many distinct
// words pass.
func TestCacheBoundedByBytes(t *testing.T) {
	vocab := map[string]int{}
	for c := 'a'; c <= 'z'; c++ {
		vocab[string(c)] = len(vocab)
	}
	tk := New(vocab, nil, "")
	r := rand.New(rand.NewPCG(7, 8))
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		return b.String()
	}
	for range 50 {
		tk.Encode(word(maxCachedWord + 1 + r.IntN(4000)))
	}
	if len(tk.cache) != 0 {
		t.Errorf("%d words over %d bytes cached", len(tk.cache), maxCachedWord)
	}
	most := int64(0)
	for i := range 10000 {
		tk.Encode(fmt.Sprintf("%d%s", i, word(200)))
		if tk.cacheBytes > most {
			most = tk.cacheBytes
		}
	}
	var held int64
	for w, ids := range tk.cache {
		held += int64(len(w) + 8*len(ids) + entryOverhead)
	}
	if most > maxCacheBytes || held != tk.cacheBytes {
		t.Errorf("cache held up to %d bytes (counted %d, summed %d), bound %d", most, tk.cacheBytes, held, maxCacheBytes)
	}
}
