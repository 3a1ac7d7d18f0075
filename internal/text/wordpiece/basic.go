package wordpiece

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// clean drops NUL, U+FFFD (which is also what an invalid UTF-8 byte
// decodes to, so invalid bytes are dropped as a decoder ignoring errors
// would) and control characters, turns whitespace into spaces, and puts
// spaces around CJK ideographs.
func clean(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range text {
		switch {
		case r == 0 || r == utf8RuneError || isControl(r):
			continue
		case isWhitespace(r):
			b.WriteByte(' ')
		case isCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

const utf8RuneError = '\uFFFD'

// isWhitespace is space, tab, newline, carriage return and category Zs.
func isWhitespace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || unicode.Is(unicode.Zs, r)
}

// isControl is categories Cc and Cf but tab, newline and carriage return,
// which count as whitespace.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r)
}

// isPunct is every ASCII character that is neither a letter, a digit nor
// a space ("$", "^" and "`" are not Unicode punctuation but split all
// the same), and category P.
func isPunct(r rune) bool {
	if r >= 33 && r <= 47 || r >= 58 && r <= 64 || r >= 91 && r <= 96 || r >= 123 && r <= 126 {
		return true
	}
	return unicode.IsPunct(r)
}

// isCJK is the CJK Unified Ideographs blocks and their extensions and
// compatibility ideographs; Hangul, Hiragana and Katakana are written
// with spaces between words and are not split.
func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF ||
		r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F ||
		r >= 0x2B740 && r <= 0x2B81F ||
		r >= 0x2B820 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF ||
		r >= 0x2F800 && r <= 0x2FA1F
}

// isSpace is what separates words once the text is clean: Python's
// str.split, which the reference tokenizer uses, splits on White_Space
// and on the paragraph and line separators.
func isSpace(r rune) bool { return unicode.IsSpace(r) }

// lower lower-cases a word as Python's str.lower does: the simple
// mappings, İ to i and a combining dot, and a capital sigma that ends a
// word to the final ς.
func lower(word string) string {
	rs := []rune(word)
	var b strings.Builder
	b.Grow(len(word))
	for i, r := range rs {
		switch {
		case r == 'İ':
			b.WriteString("i\u0307")
		case r == 'Σ':
			if finalSigma(rs, i) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma is Unicode's Final_Sigma condition at rs[i]: a cased letter
// before it and none after it, case-ignorable characters skipped.
func finalSigma(rs []rune, i int) bool {
	j := i - 1
	for j >= 0 && caseIgnorable(rs[j]) {
		j--
	}
	if j < 0 || !cased(rs[j]) {
		return false
	}
	k := i + 1
	for k < len(rs) && caseIgnorable(rs[k]) {
		k++
	}
	return k == len(rs) || !cased(rs[k])
}

func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '^', '`', 0xB7, 0xAD, 0x2018, 0x2019, 0x2024, 0xFE52, 0xFF07, 0xFF0E:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// stripAccents decomposes (NFD) and drops the nonspacing marks.
func stripAccents(word string) string {
	d := norm.NFD.String(word)
	var b strings.Builder
	b.Grow(len(d))
	for _, r := range d {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// basic splits text into words: cleaned, each whitespace-separated word
// lower-cased and stripped of accents as asked, then split so that every
// punctuation character is a word of its own.
func (t *Tokenizer) basic(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(clean(text), isSpace) {
		if t.lower {
			w = lower(w)
		}
		if t.strip {
			w = stripAccents(w)
		}
		start := -1
		for i, r := range w {
			if isPunct(r) {
				if start >= 0 {
					out = append(out, w[start:i])
					start = -1
				}
				out = append(out, string(r))
				continue
			}
			if start < 0 {
				start = i
			}
		}
		if start >= 0 {
			out = append(out, w[start:])
		}
	}
	// Lower-casing or accent stripping can make whitespace of a word
	// (rarely); the reference splits its output once more.
	var final []string
	for _, w := range out {
		if strings.IndexFunc(w, isSpace) < 0 {
			final = append(final, w)
			continue
		}
		final = append(final, strings.FieldsFunc(w, isSpace)...)
	}
	return final
}
