package bpe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func loadFixture(t testing.TB) *Tokenizer {
	t.Helper()
	tk, err := Load("testdata/vocab.json", "testdata/merges.txt", "[UNK]")
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestReference compares the ids with those of the reference procedure
// (testdata/make_fixtures.py) on ordinary and hostile text.
func TestReference(t *testing.T) {
	tk := loadFixture(t)
	b, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Text string `json:"text"`
		IDs  []int  `json:"ids"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	unk := 0
	for _, c := range cases {
		got := tk.Encode(c.Text)
		if !slices.Equal(got, c.IDs) && !(len(got) == 0 && len(c.IDs) == 0) {
			t.Errorf("Encode(%.40q) =\n%v, want\n%v", c.Text, got, c.IDs)
		}
		for _, id := range got {
			if id == 3 {
				unk++
			}
		}
		// Twice, through the cache.
		if again := tk.Encode(c.Text); !slices.Equal(again, got) {
			t.Errorf("Encode(%.40q) differs the second time", c.Text)
		}
	}
	if unk == 0 {
		t.Error("no case reached [UNK]; the fixture should")
	}
}

func TestInvalidUTF8(t *testing.T) {
	tk := loadFixture(t)
	for _, c := range [][2]string{
		{"a\xffb", "a\ufffdb"},
		{"\xc3\x28 x", "\ufffd( x"},
		{"\xe2\x82 end", "\ufffd\ufffd end"},
	} {
		if got, want := tk.Encode(c[0]), tk.Encode(c[1]); !slices.Equal(got, want) {
			t.Errorf("Encode(%q) = %v, want that of %q, %v", c[0], got, c[1], want)
		}
	}
}

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"Hello world", []string{"Hello", " world"}},
		{"I'm here's", []string{"I", "'m", " here", "'s"}},
		{"a   b", []string{"a", "  ", " b"}},
		{"a \t\tb", []string{"a", " \t", "\t", "b"}},
		{"end  ", []string{"end", "  "}},
		{"x!!  ?y", []string{"x", "!!", " ", " ?", "y"}},
		{"12abc", []string{"12", "abc"}},
	} {
		if got := Split(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Split(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestHostileFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("m.txt", "#version: 0.2\na b\n")
	gv := write("v.json", `{"a":0,"b":1,"ab":2}`)
	for _, c := range []struct {
		vocab, merges, want string
	}{
		{write("bad.json", `{"a":`), good, "bad.json"},
		{write("neg.json", `{"a":-1}`), good, `"a"`},
		{write("frac.json", `{"a":1.5}`), good, `"a"`},
		{write("dup.json", `{"a":1,"b":1}`), good, "already the id"},
		{write("arr.json", `[1,2]`), good, "arr.json"},
		{gv, write("m3.txt", "#version: 0.2\na b c\n"), "line 2"},
		{gv, write("m1.txt", "a\n"), "line 1"},
		{filepath.Join(dir, "absent.json"), good, "absent.json"},
		{dir, good, "not a regular file"},
	} {
		_, err := Load(c.vocab, c.merges, "")
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Load(%s, %s) = %v, want a one-line error with %q", filepath.Base(c.vocab), filepath.Base(c.merges), err, c.want)
		}
	}
	if _, err := Load(gv, good, ""); err != nil {
		t.Errorf("good files: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"a":0,"b":1}`), []byte("#version: 0.2\na b\n"))
	f.Add([]byte(`{"[UNK]":3}`), []byte("Ġ t\nĠt he\n"))
	f.Fuzz(func(t *testing.T, v, m []byte) {
		vocab, err := ParseVocab("v", v)
		if err != nil {
			return
		}
		merges, err := ParseMerges("m", m)
		if err != nil {
			return
		}
		tk := New(vocab, merges, "[UNK]")
		tk.Encode(string(m))
	})
}

func FuzzEncode(f *testing.F) {
	tk := loadFixture(f)
	f.Add("The quick brown fox's 42 🙂")
	f.Add("\xff\xfe  \t\n'll")
	f.Fuzz(func(t *testing.T, s string) {
		ws := Split(s)
		if got := strings.Join(ws, ""); got != string([]rune(s)) {
			t.Fatalf("words of %q join to %q", s, got)
		}
		for _, w := range ws {
			if w == "" || !utf8.ValidString(w) {
				t.Fatalf("bad word %q in %q", w, s)
			}
		}
		for _, id := range tk.Encode(s) {
			if id < 0 || id >= len(tk.vocab) {
				t.Fatalf("id %d out of the vocabulary", id)
			}
		}
	})
}
