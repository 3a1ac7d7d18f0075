package tokenize

import (
	"strings"
	"unicode"
)

// Words splits s into lower-cased word tokens: maximal runs of Unicode
// letters or decimal digits. Everything else (spaces, punctuation, symbols)
// separates tokens and is dropped, so
//
//	"Botswana, South-Africa!" -> ["botswana" "south" "africa"]
//	"don't"                   -> ["don" "t"]
//
// Combining marks (Unicode category M) are kept inside a word. They are not
// letters by themselves, but in decomposed text (NFD "e\u0301") and in
// scripts such as Devanagari they are part of the written word; treating
// them as separators would cut words into fragments.
//
// Words returns nil when s contains no word characters.
func Words(s string) []string {
	fields := strings.FieldsFunc(s, isSeparator)
	if len(fields) == 0 {
		return nil
	}
	for i, f := range fields {
		fields[i] = strings.ToLower(f)
	}
	return fields
}

// isSeparator reports whether r splits tokens.
func isSeparator(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
}
