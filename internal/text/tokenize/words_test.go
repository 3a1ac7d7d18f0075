package tokenize

import (
	"slices"
	"testing"
)

func TestWords(t *testing.T) {
	for _, test := range []struct {
		in   string
		want []string
	}{
		{in: "", want: nil},
		{in: "   \t\n ", want: nil},
		{in: "!?,. -- ;", want: nil},
		{in: "Botswana, South-Africa!", want: []string{"botswana", "south", "africa"}},
		{in: "don't", want: []string{"don", "t"}},
		{in: "Don’t stop", want: []string{"don", "t", "stop"}}, // typographic apostrophe
		{in: "  leading and trailing  ", want: []string{"leading", "and", "trailing"}},
		{in: "In 1969, Apollo 11 landed.", want: []string{"in", "1969", "apollo", "11", "landed"}},
		{in: "3.14", want: []string{"3", "14"}},
		{in: "abc123def", want: []string{"abc123def"}},
		{in: "Café CRÈME, naïve", want: []string{"café", "crème", "naïve"}},
		{in: "cafe\u0301 au lait", want: []string{"cafe\u0301", "au", "lait"}}, // NFD accent stays in the word
		{in: "ÅNGSTRÖM Straße", want: []string{"ångström", "straße"}},
		{in: "東京は日本の首都", want: []string{"東京は日本の首都"}}, // CJK runes are letters; no spaces, one token
		{in: "東京 大阪", want: []string{"東京", "大阪"}},
		{in: "ΑΘΗΝΑ is Athens", want: []string{"αθηνα", "is", "athens"}},
		{in: "नमस्ते दुनिया", want: []string{"नमस्ते", "दुनिया"}}, // Devanagari vowel signs are marks
		{in: "٣ apples", want: []string{"٣", "apples"}},           // Arabic-Indic digit
		{in: "x² + y²", want: []string{"x", "y"}},                 // superscripts are not decimal digits
		{in: "e-mail@example.com", want: []string{"e", "mail", "example", "com"}},
		{in: "$100 €5 ☺", want: []string{"100", "5"}},
	} {
		got := Words(test.in)
		if !slices.Equal(got, test.want) {
			t.Errorf("Words(%q) = %q, want %q", test.in, got, test.want)
		}
	}
}
