package wordpiece

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/genlens/genlens/fault"
)

// MaxFileBytes bounds a vocab.txt or tokenizer.json (BERT's are 0.2 to
// 0.7 MB, multilingual ones a few MB).
const MaxFileBytes = 64 << 20

// MaxVocab bounds the number of tokens of a vocabulary.
const MaxVocab = 1 << 21

// readBounded reads a whole file of at most MaxFileBytes, its size
// checked before the read.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &fault.InputError{File: path, Msg: "cannot read the tokenizer file", Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &fault.InputError{File: path, Msg: "cannot read the tokenizer file", Err: err}
	}
	if !st.Mode().IsRegular() {
		return nil, &fault.InputError{File: path, Msg: "is not a regular file"}
	}
	if st.Size() > MaxFileBytes {
		return nil, &fault.InputError{File: path, Msg: fmt.Sprintf("%d bytes, more than the %d a tokenizer file may have", st.Size(), MaxFileBytes)}
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, &fault.InputError{File: path, Msg: "cannot read the tokenizer file", Err: err}
	}
	if len(b) > MaxFileBytes {
		return nil, &fault.InputError{File: path, Msg: fmt.Sprintf("more than the %d bytes a tokenizer file may have", MaxFileBytes)}
	}
	return b, nil
}

// ParseVocab reads a vocab.txt: one token a line, its id the line's
// index from 0, the line stripped of surrounding whitespace as the
// reference reader does (a token repeated keeps its last id). file names
// the source in errors.
func ParseVocab(file string, data []byte) (map[string]int32, error) {
	if len(data) > MaxFileBytes {
		return nil, &fault.InputError{File: file, Msg: fmt.Sprintf("more than the %d bytes a tokenizer file may have", MaxFileBytes)}
	}
	if n := bytes.Count(data, []byte{'\n'}); n > MaxVocab {
		return nil, &fault.InputError{File: file, Msg: fmt.Sprintf("%d lines, more than the %d tokens a vocabulary may have", n, MaxVocab)}
	}
	vocab := make(map[string]int32)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, MaxFileBytes+1)
	id := int32(0)
	for sc.Scan() {
		vocab[strings.TrimSpace(sc.Text())] = id
		id++
	}
	if err := sc.Err(); err != nil {
		return nil, &fault.InputError{File: file, Line: int(id) + 1, Msg: err.Error()}
	}
	if id == 0 {
		return nil, &fault.InputError{File: file, Msg: "the vocabulary is empty"}
	}
	return vocab, nil
}

// tokenizerJSON is what genlens reads of a tokenizer.json.
type tokenizerJSON struct {
	Normalizer *struct {
		Type         string `json:"type"`
		Lowercase    *bool  `json:"lowercase"`
		StripAccents *bool  `json:"strip_accents"`
	} `json:"normalizer"`
	Model *struct {
		Type         string           `json:"type"`
		Vocab        map[string]int64 `json:"vocab"`
		Unk          string           `json:"unk_token"`
		Prefix       string           `json:"continuing_subword_prefix"`
		MaxWordChars int64            `json:"max_input_chars_per_word"`
	} `json:"model"`
}

// ParseTokenizerJSON reads a Hugging Face tokenizer.json holding a
// WordPiece model and, if any, a BertNormalizer (its lowercase and
// strip_accents; strip_accents null follows lowercase).
func ParseTokenizerJSON(file string, data []byte) (map[string]int32, Options, error) {
	var o Options
	if len(data) > MaxFileBytes {
		return nil, o, &fault.InputError{File: file, Msg: fmt.Sprintf("more than the %d bytes a tokenizer file may have", MaxFileBytes)}
	}
	var tj tokenizerJSON
	if err := json.Unmarshal(data, &tj); err != nil {
		return nil, o, &fault.InputError{File: file, Msg: "not a tokenizer.json: " + fault.Printable(err.Error(), 200)}
	}
	m := tj.Model
	if m == nil {
		return nil, o, &fault.InputError{File: file, Key: "model", Msg: "missing"}
	}
	if m.Type != "WordPiece" {
		return nil, o, &fault.InputError{File: file, Key: "model.type", Msg: fmt.Sprintf("is %q; genlens reads WordPiece tokenizers here", fault.Printable(m.Type, 40))}
	}
	if len(m.Vocab) == 0 {
		return nil, o, &fault.InputError{File: file, Key: "model.vocab", Msg: "missing or empty"}
	}
	if len(m.Vocab) > MaxVocab {
		return nil, o, &fault.InputError{File: file, Key: "model.vocab", Msg: fmt.Sprintf("%d tokens, more than %d", len(m.Vocab), MaxVocab)}
	}
	vocab := make(map[string]int32, len(m.Vocab))
	// Two tokens with one id would encode differently and read the same
	// embedding row: a vocabulary whose every token is id 0 runs, and
	// every text embeds alike.
	seen := make(map[int64]string, len(m.Vocab))
	for k, v := range m.Vocab {
		if v < 0 || v >= MaxVocab {
			return nil, o, &fault.InputError{File: file, Key: "model.vocab", Msg: fmt.Sprintf("token %q has id %d, outside [0, %d)", fault.Printable(k, 40), v, MaxVocab)}
		}
		if other, dup := seen[v]; dup {
			a, b := min(k, other), max(k, other)
			return nil, o, &fault.InputError{File: file, Key: "model.vocab", Msg: fmt.Sprintf("tokens %q and %q share id %d; each token needs its own", fault.Printable(a, 40), fault.Printable(b, 40), v)}
		}
		seen[v] = k
		vocab[k] = int32(v)
	}
	if m.MaxWordChars < 0 || m.MaxWordChars > 1<<20 {
		return nil, o, &fault.InputError{File: file, Key: "model.max_input_chars_per_word", Msg: fmt.Sprintf("is %d", m.MaxWordChars)}
	}
	o.Unknown, o.Prefix, o.MaxWordChars = m.Unk, m.Prefix, int(m.MaxWordChars)
	if n := tj.Normalizer; n != nil {
		if n.Type != "BertNormalizer" {
			return nil, o, &fault.InputError{File: file, Key: "normalizer.type", Msg: fmt.Sprintf("is %q; genlens reads BertNormalizer", fault.Printable(n.Type, 40))}
		}
		o.Lower = n.Lowercase == nil || *n.Lowercase
		o.StripAccents = o.Lower
		if n.StripAccents != nil {
			o.StripAccents = *n.StripAccents
		}
	}
	return vocab, o, nil
}

// Load reads the tokenizer of a model directory: tokenizer.json if the
// directory has one, else vocab.txt, lower-cased (and accents stripped)
// unless tokenizer_config.json says "do_lower_case": false.
func Load(dir string) (*Tokenizer, error) {
	tj := filepath.Join(dir, "tokenizer.json")
	if _, err := os.Stat(tj); err == nil {
		data, err := readBounded(tj)
		if err != nil {
			return nil, err
		}
		vocab, o, err := ParseTokenizerJSON(tj, data)
		if err != nil {
			return nil, err
		}
		return New(tj, vocab, o)
	}
	vt := filepath.Join(dir, "vocab.txt")
	data, err := readBounded(vt)
	if err != nil {
		return nil, err
	}
	vocab, err := ParseVocab(vt, data)
	if err != nil {
		return nil, err
	}
	o := Options{Lower: true, StripAccents: true}
	tc := filepath.Join(dir, "tokenizer_config.json")
	if _, err := os.Stat(tc); err == nil {
		data, err := readBounded(tc)
		if err != nil {
			return nil, err
		}
		var cfg struct {
			Lower        *bool `json:"do_lower_case"`
			StripAccents *bool `json:"strip_accents"`
		}
		if err := json.Unmarshal(data, &cfg); err != nil {
			return nil, &fault.InputError{File: tc, Msg: "not a JSON object: " + fault.Printable(err.Error(), 200)}
		}
		if cfg.Lower != nil {
			o.Lower, o.StripAccents = *cfg.Lower, *cfg.Lower
		}
		if cfg.StripAccents != nil {
			o.StripAccents = *cfg.StripAccents
		}
	}
	return New(vt, vocab, o)
}
