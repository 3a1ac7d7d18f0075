package wordpiece

import (
	"fmt"

	"unicode/utf8"

	"github.com/genlens/genlens/fault"
)

// DefaultMaxWordChars is the longest word, in characters, that WordPiece
// splits; a longer one is [UNK], as in Hugging Face's BERT tokenizers.
const DefaultMaxWordChars = 100

// Tokenizer turns text into the token ids of a BERT vocabulary. It is
// safe for concurrent use.
type Tokenizer struct {
	vocab        map[string]int32
	size         int // one more than the largest id
	unk          string
	prefix       string
	maxWordChars int
	// prefixes maps every prefix of a token of the vocabulary, cut at a
	// byte, to the token's id when it is a token itself, else -1: a
	// piece that is not a prefix of any token cannot grow into one.
	prefixes   map[string]int32
	lower      bool
	strip      bool
	cls, sep   int32
	pad, unkID int32
}

// Options are the settings of the basic tokenizer and of WordPiece.
type Options struct {
	// Lower lower-cases the text (the uncased models); StripAccents
	// decomposes it and drops the nonspacing marks. The reference
	// tokenizer strips accents exactly when it lower-cases.
	Lower, StripAccents bool
	// Unknown is the token of a word WordPiece cannot split, [UNK] by
	// default; Prefix marks a piece that continues a word, ## by default.
	Unknown, Prefix string
	// MaxWordChars is DefaultMaxWordChars when zero.
	MaxWordChars int
}

// New returns the tokenizer of vocab (token → id). The vocabulary must
// hold [CLS], [SEP], [PAD] and the unknown token; file names the source
// in errors.
func New(file string, vocab map[string]int32, o Options) (*Tokenizer, error) {
	t := &Tokenizer{vocab: vocab, unk: o.Unknown, prefix: o.Prefix, maxWordChars: o.MaxWordChars, lower: o.Lower, strip: o.StripAccents}
	if t.unk == "" {
		t.unk = "[UNK]"
	}
	if t.prefix == "" {
		t.prefix = "##"
	}
	if t.maxWordChars <= 0 {
		t.maxWordChars = DefaultMaxWordChars
	}
	for _, id := range vocab {
		if id < 0 {
			return nil, &fault.InputError{File: file, Msg: fmt.Sprintf("negative token id %d", id)}
		}
		t.size = max(t.size, int(id)+1)
	}
	t.prefixes = make(map[string]int32, 4*len(vocab))
	for tok, id := range vocab {
		for i := 1; i < len(tok); i++ {
			if _, ok := t.prefixes[tok[:i]]; !ok {
				t.prefixes[tok[:i]] = -1
			}
		}
		t.prefixes[tok] = id
	}
	for _, s := range []struct {
		tok string
		id  *int32
	}{{"[CLS]", &t.cls}, {"[SEP]", &t.sep}, {"[PAD]", &t.pad}, {t.unk, &t.unkID}} {
		id, ok := vocab[s.tok]
		if !ok {
			return nil, &fault.InputError{File: file, Key: s.tok, Msg: "the vocabulary has no such token"}
		}
		*s.id = id
	}
	return t, nil
}

// VocabSize is one more than the largest id.
func (t *Tokenizer) VocabSize() int { return t.size }

// Pad is the id of [PAD].
func (t *Tokenizer) Pad() int32 { return t.pad }

// Tokenize returns the word pieces of text (no [CLS] or [SEP]).
func (t *Tokenizer) Tokenize(text string) []string {
	var out []string
	for _, w := range t.basic(text) {
		n := len(out)
		if !t.walk(w, func(s string, _ int32) { out = append(out, s) }) {
			out = append(out[:n], t.unk)
		}
	}
	return out
}

// ids returns the ids of the word pieces of text.
func (t *Tokenizer) ids(text string) []int32 {
	var out []int32
	for _, w := range t.basic(text) {
		n := len(out)
		if !t.walk(w, func(_ string, id int32) { out = append(out, id) }) {
			out = append(out[:n], t.unkID)
		}
	}
	return out
}

// walk calls f with the WordPiece pieces of one word: greedy longest
// match first, a piece after the first looked up with the prefix. It
// returns false, having perhaps called f for some pieces, when the word
// is [UNK]: a position matches nothing or the word is longer than
// MaxWordChars. The longest match is found forward: a piece grows a
// character at a time while it is the prefix of some token, so a word of
// n characters costs about n lookups of a few characters each, where
// trying every end from the word's end down cost n² of up to n (a
// 100-letter word that matches nothing cost 5,050 lookups of 50 bytes on
// average).
func (t *Tokenizer) walk(w string, f func(piece string, id int32)) bool {
	ok, _ := t.walkCount(w, f)
	return ok
}

// walkCount is walk, also returning the number of lookups it made.
func (t *Tokenizer) walkCount(w string, f func(piece string, id int32)) (bool, int) {
	if utf8.RuneCountInString(w) > t.maxWordChars {
		return false, 0
	}
	lookups := 0
	buf := make([]byte, 0, len(t.prefix)+len(w))
	start := 0
	for start < len(w) {
		buf = buf[:0]
		if start > 0 {
			buf = append(buf, t.prefix...)
		}
		end, id := -1, int32(-1)
		for i := start; i < len(w); {
			_, size := utf8.DecodeRuneInString(w[i:])
			buf = append(buf, w[i:i+size]...)
			i += size
			lookups++
			v, ok := t.prefixes[string(buf)]
			if !ok {
				break
			}
			if v >= 0 {
				end, id = i, v
			}
		}
		if end < 0 {
			return false, lookups
		}
		piece := w[start:end]
		if start > 0 {
			piece = t.prefix + piece
		}
		f(piece, id)
		start = end
	}
	return true, lookups
}

// Encoding is a tokenized input as the model reads it.
type Encoding struct {
	// IDs are [CLS], the first text's pieces, [SEP] (and the second's,
	// [SEP]); Types are 0 over the first part and 1 over the second.
	IDs   []int32
	Types []int32
}

// Encode returns [CLS] text [SEP], cut to maxLen ids (maxLen >= 2; no
// limit when <= 0) by dropping pieces from the end of the text.
func (t *Tokenizer) Encode(text string, maxLen int) Encoding {
	a := t.ids(text)
	if maxLen > 0 && len(a) > maxLen-2 {
		a = a[:max(0, maxLen-2)]
	}
	e := Encoding{IDs: make([]int32, 0, len(a)+2)}
	e.IDs = append(e.IDs, t.cls)
	e.IDs = append(e.IDs, a...)
	e.IDs = append(e.IDs, t.sep)
	e.Types = make([]int32, len(e.IDs))
	return e
}

// EncodePair returns [CLS] a [SEP] b [SEP], cut to maxLen ids (>= 3; no
// limit when <= 0) longest first: a piece at a time from the end of the
// longer text, of the second on a tie.
func (t *Tokenizer) EncodePair(a, b string, maxLen int) Encoding {
	x, y := t.ids(a), t.ids(b)
	if maxLen > 0 {
		for len(x)+len(y) > max(0, maxLen-3) {
			if len(x) > len(y) {
				x = x[:len(x)-1]
			} else {
				y = y[:len(y)-1]
			}
		}
	}
	e := Encoding{IDs: make([]int32, 0, len(x)+len(y)+3), Types: make([]int32, 0, len(x)+len(y)+3)}
	e.IDs = append(e.IDs, t.cls)
	e.IDs = append(e.IDs, x...)
	e.IDs = append(e.IDs, t.sep)
	for range len(x) + 2 {
		e.Types = append(e.Types, 0)
	}
	e.IDs = append(e.IDs, y...)
	e.IDs = append(e.IDs, t.sep)
	for range len(y) + 1 {
		e.Types = append(e.Types, 1)
	}
	return e
}
