package bpe

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/genlens/genlens/fault"
)

// Limits on the files read, checked before anything is allocated for
// them: GPT-2's vocab.json is about 1 MB, its merges.txt 0.5 MB.
const (
	maxVocabBytes  = 64 << 20
	maxMergesBytes = 64 << 20
)

// The word cache is bounded by its bytes, not its entries: 65,536
// entries of words a megabyte long held gigabytes. A word longer than
// maxCachedWord bytes is not cached (Hugging Face's tokenizers cache
// none over 256 characters either); an entry costs its word, its ids
// and entryOverhead, and the cache is emptied when the next entry would
// take it past maxCacheBytes.
const (
	maxCacheBytes = 8 << 20
	maxCachedWord = 256
	entryOverhead = 64
)

// Tokenizer encodes text as token ids. It is safe for concurrent use.
type Tokenizer struct {
	vocab map[string]int
	ranks map[[2]string]int
	unk   int // id of unknown tokens, -1 if the vocabulary has none

	mu         sync.Mutex
	cache      map[string][]int
	cacheBytes int64
}

// byteRune is the bytes-to-unicode table: the printable Latin-1 bytes
// stand for themselves, the others (controls, space, soft hyphen...) for
// 256 and on, in byte order.
var byteRune = func() (t [256]rune) {
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			t[b] = rune(b)
		} else {
			t[b] = rune(256 + n)
			n++
		}
	}
	return t
}()

// New builds a tokenizer from a vocabulary (token to id) and the merges
// in rank order; unk names the token for pieces absent from the
// vocabulary ("" for none).
func New(vocab map[string]int, merges [][2]string, unk string) *Tokenizer {
	t := &Tokenizer{vocab: vocab, ranks: make(map[[2]string]int, len(merges)), unk: -1, cache: map[string][]int{}}
	for i, m := range merges {
		if _, ok := t.ranks[m]; !ok {
			t.ranks[m] = i
		}
	}
	if id, ok := vocab[unk]; ok {
		t.unk = id
	}
	return t
}

// Load reads vocab.json and merges.txt.
func Load(vocabPath, mergesPath, unk string) (*Tokenizer, error) {
	vb, err := readCapped(vocabPath, maxVocabBytes)
	if err != nil {
		return nil, err
	}
	vocab, err := ParseVocab(vocabPath, vb)
	if err != nil {
		return nil, err
	}
	mb, err := readCapped(mergesPath, maxMergesBytes)
	if err != nil {
		return nil, err
	}
	merges, err := ParseMerges(mergesPath, mb)
	if err != nil {
		return nil, err
	}
	return New(vocab, merges, unk), nil
}

func readCapped(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &fault.InputError{File: path, Msg: "cannot read tokenizer file", Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &fault.InputError{File: path, Msg: "cannot read tokenizer file", Err: err}
	}
	if !st.Mode().IsRegular() {
		return nil, &fault.InputError{File: path, Msg: "is not a regular file"}
	}
	if st.Size() > limit {
		return nil, &fault.InputError{File: path, Msg: fmt.Sprintf("has %d bytes, over the %d a tokenizer file may have", st.Size(), limit)}
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && st.Size() > 0 {
		return nil, &fault.InputError{File: path, Msg: "cannot read tokenizer file", Err: err}
	}
	return b, nil
}

// ParseVocab reads a vocab.json: one JSON object of token to
// non-negative id. Ids need not be dense (DeBERTa's are not), but two
// tokens may not share one.
func ParseVocab(file string, b []byte) (map[string]int, error) {
	var raw map[string]json.Number
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return nil, &fault.InputError{File: file, Msg: "not a JSON object of token to id: " + err.Error()}
	}
	if raw == nil {
		return nil, &fault.InputError{File: file, Msg: "not a JSON object of token to id"}
	}
	vocab := make(map[string]int, len(raw))
	seen := make(map[int]string, len(raw))
	for tok, n := range raw {
		id, err := n.Int64()
		if err != nil || id < 0 || id > 1<<31-1 {
			return nil, &fault.InputError{File: file, Key: tok, Msg: fmt.Sprintf("has id %s, want a non-negative integer", n)}
		}
		if o, dup := seen[int(id)]; dup {
			return nil, &fault.InputError{File: file, Key: tok, Msg: fmt.Sprintf("has id %d, already the id of %q", id, o)}
		}
		seen[int(id)] = tok
		vocab[tok] = int(id)
	}
	return vocab, nil
}

// ParseMerges reads a merges.txt: a "#version" line, then one merge a
// line, two tokens separated by a space, highest priority first. Empty
// lines are skipped.
func ParseMerges(file string, b []byte) ([][2]string, error) {
	var merges [][2]string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSuffix(sc.Text(), "\r")
		if s == "" || (line == 1 && strings.HasPrefix(s, "#version")) {
			continue
		}
		a, c, ok := strings.Cut(s, " ")
		if !ok || a == "" || c == "" || strings.Contains(c, " ") {
			return nil, &fault.InputError{File: file, Key: fmt.Sprintf("line %d", line), Msg: fmt.Sprintf("%.40q is not two tokens separated by one space", s)}
		}
		merges = append(merges, [2]string{a, c})
	}
	if err := sc.Err(); err != nil {
		return nil, &fault.InputError{File: file, Key: fmt.Sprintf("line %d", line+1), Msg: err.Error()}
	}
	return merges, nil
}

// Encode returns the ids of text, without special tokens.
func (t *Tokenizer) Encode(text string) []int {
	var ids []int
	for _, w := range Split(text) {
		ids = append(ids, t.word(w)...)
	}
	return ids
}

// word encodes one pre-tokenised word, through the cache.
func (t *Tokenizer) word(w string) []int {
	t.mu.Lock()
	ids, ok := t.cache[w]
	t.mu.Unlock()
	if ok {
		return ids
	}
	var sb strings.Builder
	for i := 0; i < len(w); i++ {
		sb.WriteRune(byteRune[w[i]])
	}
	mapped := sb.String()
	parts := make([]string, 0, utf8.RuneCountInString(mapped))
	for _, r := range mapped {
		parts = append(parts, string(r))
	}
	parts = t.merge(parts)
	ids = make([]int, 0, len(parts))
	for _, p := range parts {
		if id, ok := t.vocab[p]; ok {
			ids = append(ids, id)
		} else if t.unk >= 0 {
			ids = append(ids, t.unk)
		}
	}
	if len(w) <= maxCachedWord {
		cost := int64(len(w) + 8*len(ids) + entryOverhead)
		t.mu.Lock()
		if t.cacheBytes+cost > maxCacheBytes {
			clear(t.cache)
			t.cacheBytes = 0
		}
		if _, ok := t.cache[w]; !ok {
			t.cache[w] = ids
			t.cacheBytes += cost
		}
		t.mu.Unlock()
	}
	return ids
}

// merge applies the best-ranked merge present, at every place it occurs
// left to right, until no pair of neighbours is a merge (GPT-2's bpe).
// The pairs wait in a heap by rank and place, so a word of n characters
// costs O(n log n): rescanning the word for the best pair after every
// merge cost n² (a single 1 MB word was minutes).
func (t *Tokenizer) merge(parts []string) []string {
	out, _ := t.mergeCount(parts)
	return out
}

// mergeCount is merge, also returning the heap operations it made.
func (t *Tokenizer) mergeCount(parts []string) ([]string, int) {
	n := len(parts)
	if n < 2 {
		return parts, 0
	}
	sym := slices.Clone(parts)
	next, prev, ver := make([]int, n), make([]int, n), make([]int32, n)
	for i := range n {
		next[i], prev[i] = i+1, i-1
	}
	next[n-1] = -1
	h := &pairHeap{}
	ops := 0
	push := func(l int) {
		r := next[l]
		if l < 0 || r < 0 {
			return
		}
		if rank, ok := t.ranks[[2]string{sym[l], sym[r]}]; ok {
			heap.Push(h, pair{rank: rank, left: l, right: r, lv: ver[l], rv: ver[r]})
			ops++
		}
	}
	valid := func(p pair) bool {
		return ver[p.left] == p.lv && ver[p.right] == p.rv && next[p.left] == p.right
	}
	for i := 0; i+1 < n; i++ {
		push(i)
	}
	var pass []pair
	for h.Len() > 0 {
		p := heap.Pop(h).(pair)
		ops++
		if !valid(p) {
			continue
		}
		// Every place of this pair, as one pass left to right: a pair
		// has one rank, and no merge of the pass makes the pair anew.
		pass = append(pass[:0], p)
		for h.Len() > 0 && (*h)[0].rank == p.rank {
			q := heap.Pop(h).(pair)
			ops++
			if valid(q) {
				pass = append(pass, q)
			}
		}
		slices.SortFunc(pass, func(a, b pair) int { return a.left - b.left })
		for _, q := range pass {
			if !valid(q) { // taken by the merge on its left
				continue
			}
			l, r := q.left, q.right
			sym[l] += sym[r]
			ver[l]++
			ver[r] = -1 // gone: no pair of it is valid
			next[l] = next[r]
			if next[l] >= 0 {
				prev[next[l]] = l
			}
			if prev[l] >= 0 {
				push(prev[l])
			}
			push(l)
		}
	}
	out := parts[:0:0]
	for i := 0; i >= 0; i = next[i] {
		out = append(out, sym[i])
	}
	return out, ops
}

// pair is two neighbours that a merge joins, at the versions of their
// symbols when it was pushed.
type pair struct {
	rank, left, right int
	lv, rv            int32
}

// pairHeap orders pairs by rank, then left to right.
type pairHeap []pair

func (h pairHeap) Len() int { return len(h) }
func (h pairHeap) Less(i, j int) bool {
	return h[i].rank < h[j].rank || h[i].rank == h[j].rank && h[i].left < h[j].left
}
func (h pairHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pairHeap) Push(x any)   { *h = append(*h, x.(pair)) }
func (h *pairHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Split cuts text into the words of GPT-2's pre-tokenisation, invalid
// UTF-8 bytes replaced by U+FFFD.
func Split(text string) []string {
	rs := []rune(text) // invalid bytes become utf8.RuneError
	var words []string
	i := 0
	for i < len(rs) {
		j := matchAt(rs, i)
		words = append(words, string(rs[i:j]))
		i = j
	}
	return words
}

var contractions = []string{"s", "t", "re", "ve", "m", "ll", "d"}

// matchAt returns the end of the word that starts at rs[i], trying the
// alternatives of the pattern in its order.
func matchAt(rs []rune, i int) int {
	n := len(rs)
	if rs[i] == '\'' {
		for _, c := range contractions {
			if i+1+len(c) <= n && string(rs[i+1:i+1+len(c)]) == c {
				return i + 1 + len(c)
			}
		}
	}
	j := i
	if rs[j] == ' ' && j+1 < n {
		j++
	}
	run := func(j int, in func(rune) bool) int {
		k := j
		for k < n && in(rs[k]) {
			k++
		}
		return k
	}
	for _, class := range []func(rune) bool{unicode.IsLetter, unicode.IsNumber, isOther} {
		if class(rs[j]) {
			return run(j, class)
		}
	}
	// White space: \s+(?!\S) takes the run but, when a non-space follows,
	// gives back its last character; \s+ takes a lone one.
	k := run(i, unicode.IsSpace)
	if k == n || k-i == 1 {
		return k
	}
	return k - 1
}

func isOther(r rune) bool {
	return !unicode.IsSpace(r) && !unicode.IsLetter(r) && !unicode.IsNumber(r)
}

// Special returns the id of a token looked up whole in the vocabulary
// ("[CLS]"), or -1.
func (t *Tokenizer) Special(tok string) int {
	if id, ok := t.vocab[tok]; ok {
		return id
	}
	return -1
}
