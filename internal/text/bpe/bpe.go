package bpe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
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
	maxCache       = 1 << 16
)

// Tokenizer encodes text as token ids. It is safe for concurrent use.
type Tokenizer struct {
	vocab map[string]int
	ranks map[[2]string]int
	unk   int // id of unknown tokens, -1 if the vocabulary has none

	mu    sync.Mutex
	cache map[string][]int
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
	t.mu.Lock()
	if len(t.cache) >= maxCache {
		clear(t.cache)
	}
	t.cache[w] = ids
	t.mu.Unlock()
	return ids
}

// merge applies the best-ranked merge present, at every place it occurs
// left to right, until no pair of neighbours is a merge.
func (t *Tokenizer) merge(parts []string) []string {
	for len(parts) > 1 {
		best, rank := -1, 0
		for i := 0; i+1 < len(parts); i++ {
			if r, ok := t.ranks[[2]string{parts[i], parts[i+1]}]; ok && (best < 0 || r < rank) {
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
