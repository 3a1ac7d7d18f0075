package wordpiece

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type expectedCase struct {
	Lower    bool     `json:"lower"`
	Text     string   `json:"text"`
	TextB    *string  `json:"text_b"`
	Pieces   []string `json:"pieces"`
	IDs      []int32  `json:"ids"`
	IDsCut   []int32  `json:"ids_cut"`
	TypesCut []int32  `json:"types_cut"`
}

func loadVocab(t testing.TB, lower bool) *Tokenizer {
	t.Helper()
	data, err := os.ReadFile("testdata/vocab.txt")
	if err != nil {
		t.Fatal(err)
	}
	vocab, err := ParseVocab("vocab.txt", data)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := New("vocab.txt", vocab, Options{Lower: lower, StripAccents: lower})
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func unb64(t *testing.T, s string) string {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReference compares pieces and ids with those of the reference
// tokenizer (testdata/make_expected.py) on made vocabularies and hostile
// strings, cased and uncased, single texts and pairs, whole and cut.
func TestReference(t *testing.T) {
	data, err := os.ReadFile("testdata/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		MaxLen int            `json:"max_len"`
		Cases  []expectedCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &exp); err != nil {
		t.Fatal(err)
	}
	toks := map[bool]*Tokenizer{true: loadVocab(t, true), false: loadVocab(t, false)}
	for i, c := range exp.Cases {
		tk := toks[c.Lower]
		text := unb64(t, c.Text)
		if c.TextB != nil {
			e := tk.EncodePair(text, unb64(t, *c.TextB), exp.MaxLen)
			if !slices.Equal(e.IDs, c.IDsCut) || !slices.Equal(e.Types, c.TypesCut) {
				t.Errorf("case %d (lower %v) pair %q / %q: ids %v types %v, want %v %v", i, c.Lower, text, unb64(t, *c.TextB), e.IDs, e.Types, c.IDsCut, c.TypesCut)
			}
			continue
		}
		if got := tk.Tokenize(text); !slices.Equal(got, c.Pieces) && !(len(got) == 0 && len(c.Pieces) == 0) {
			t.Errorf("case %d (lower %v) %q: pieces %q, want %q", i, c.Lower, text, got, c.Pieces)
		}
		if e := tk.Encode(text, 0); !slices.Equal(e.IDs, c.IDs) {
			t.Errorf("case %d (lower %v) %q: ids %v, want %v", i, c.Lower, text, e.IDs, c.IDs)
		}
		e := tk.Encode(text, exp.MaxLen)
		if !slices.Equal(e.IDs, c.IDsCut) || len(e.Types) != len(e.IDs) || slices.Max(e.Types) != 0 {
			t.Errorf("case %d (lower %v) %q: cut ids %v types %v, want %v", i, c.Lower, text, e.IDs, e.Types, c.IDsCut)
		}
	}
}

func TestTokenizerJSON(t *testing.T) {
	data, _ := os.ReadFile("testdata/vocab.txt")
	vocab, err := ParseVocab("vocab.txt", data)
	if err != nil {
		t.Fatal(err)
	}
	tj := map[string]any{
		"normalizer": map[string]any{"type": "BertNormalizer", "lowercase": true, "strip_accents": nil, "clean_text": true, "handle_chinese_chars": true},
		"model":      map[string]any{"type": "WordPiece", "vocab": vocab, "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100},
	}
	b, _ := json.Marshal(tj)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	fromJSON, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	fromTxt := loadVocab(t, true)
	for _, s := range []string{"Café naïve résumé", "Hello, world!", "你好 unaffable"} {
		if a, b := fromJSON.Encode(s, 0), fromTxt.Encode(s, 0); !slices.Equal(a.IDs, b.IDs) {
			t.Errorf("%q: tokenizer.json %v, vocab.txt %v", s, a.IDs, b.IDs)
		}
	}
}

func TestHostileFiles(t *testing.T) {
	vocab := `{"model":{"type":"WordPiece","vocab":{"[CLS]":0,"[SEP]":1,"[PAD]":2,"[UNK]":3}}}`
	for _, c := range []struct{ name, data, want string }{
		{"not json", `{"model":`, "not a tokenizer.json"},
		{"no model", `{}`, `"model": missing`},
		{"bpe", `{"model":{"type":"BPE","vocab":{"a":0}}}`, `"model.type"`},
		{"negative id", `{"model":{"type":"WordPiece","vocab":{"a":-1}}}`, `"model.vocab"`},
		{"huge id", `{"model":{"type":"WordPiece","vocab":{"a":99999999999}}}`, `"model.vocab"`},
		{"normalizer", `{"normalizer":{"type":"Lowercase"},"model":{"type":"WordPiece","vocab":{"a":0}}}`, `"normalizer.type"`},
		{"shared id", `{"model":{"type":"WordPiece","vocab":{"[CLS]":0,"[SEP]":0,"[PAD]":0,"[UNK]":0}}}`, `share id 0`},
		{"no cls", `{"model":{"type":"WordPiece","vocab":{"[SEP]":1,"[PAD]":2,"[UNK]":3}}}`, `"[CLS]"`},
		{"ok", vocab, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, o, err := ParseTokenizerJSON("tokenizer.json", []byte(c.data))
			if err == nil {
				_, err = New("tokenizer.json", v, o)
			}
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "tokenizer.json")):
				t.Fatalf("error %v, want one naming tokenizer.json and %s", err, c.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("error on more than one line: %q", err)
			}
		})
	}
	if _, err := ParseVocab("vocab.txt", nil); err == nil {
		t.Error("an empty vocab.txt was accepted")
	}
}

func FuzzEncode(f *testing.F) {
	data, err := os.ReadFile("testdata/expected.json")
	if err != nil {
		f.Fatal(err)
	}
	var exp struct {
		Cases []expectedCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &exp); err != nil {
		f.Fatal(err)
	}
	for _, c := range exp.Cases {
		b, _ := base64.StdEncoding.DecodeString(c.Text)
		f.Add(string(b), "second", 16)
	}
	tk := loadVocab(f, true)
	f.Fuzz(func(t *testing.T, a, b string, maxLen int) {
		maxLen = maxLen%600 + 3
		if maxLen < 3 {
			maxLen = 3
		}
		e := tk.EncodePair(a, b, maxLen)
		if len(e.IDs) > maxLen || len(e.IDs) != len(e.Types) || len(e.IDs) < 3 {
			t.Fatalf("pair of %d ids, %d types, max %d", len(e.IDs), len(e.Types), maxLen)
		}
		s := tk.Encode(a, maxLen)
		if len(s.IDs) > maxLen || len(s.IDs) < 2 {
			t.Fatalf("%d ids, max %d", len(s.IDs), maxLen)
		}
		for _, id := range e.IDs {
			if id < 0 || int(id) >= tk.VocabSize() {
				t.Fatalf("id %d outside the vocabulary", id)
			}
		}
		if len(tk.Tokenize(a)) != len(tk.Encode(a, 0).IDs)-2 {
			t.Fatal("Tokenize and Encode disagree on the number of pieces")
		}
	})
}

func FuzzReaders(f *testing.F) {
	f.Add([]byte(`{"normalizer":{"type":"BertNormalizer","lowercase":false},"model":{"type":"WordPiece","vocab":{"[CLS]":0,"[SEP]":1,"[PAD]":2,"[UNK]":3,"a":4,"##b":5}}}`))
	f.Add([]byte("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n##lo\n"))
	f.Add([]byte{0xff, 0xfe, '\n', 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if v, o, err := ParseTokenizerJSON("tokenizer.json", data); err == nil {
			if tk, err := New("tokenizer.json", v, o); err == nil {
				tk.Encode("Hello, wörld 你好 ab", 8)
			}
		} else if strings.Contains(err.Error(), "\n") {
			t.Fatalf("error on more than one line: %q", err)
		}
		if v, err := ParseVocab("vocab.txt", data); err == nil {
			if tk, err := New("vocab.txt", v, Options{Lower: true, StripAccents: true}); err == nil {
				tk.Encode("Hello, wörld 你好 ab", 8)
			}
		}
	})
}
