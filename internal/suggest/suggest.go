// Package suggest finds the names a mistyped one is close to, for the
// "did you mean" of unknown flags, commands' values and score names.
package suggest

import (
	"slices"
	"strings"
)

// Close reports whether typed is a likely misspelling of name: at most
// two edits away, or, both being 4 bytes or longer, one contains the
// other ("batch-size" for "batch", "workers" for "num-workers"). Equal
// strings are not close: nothing is to be suggested.
func Close(typed, name string) bool {
	if typed == name {
		return false
	}
	if len(typed) >= 4 && len(name) >= 4 && (strings.Contains(typed, name) || strings.Contains(name, typed)) {
		return true
	}
	return Distance(typed, name) <= 2
}

// Among returns the names typed is Close to, nearest first (by edit
// distance; ties in the order given), each once.
func Among(typed string, names []string) []string {
	var out []string
	for _, n := range names {
		if Close(typed, n) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return Distance(typed, a) - Distance(typed, b) })
	return out
}

// Fold is a name reduced to what distinguishes it: lower case, without
// the dashes, underscores, dots and spaces that different tools spell it
// with ("SemanticEntropy", "semantic_entropy" and "semantic-entropy" all
// fold to "semanticentropy").
func Fold(name string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', '.', ' ':
			return -1
		}
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, name)
}

// Distance is the Levenshtein distance of a and b, by bytes (the names
// compared are ASCII).
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
