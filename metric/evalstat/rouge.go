package evalstat

import (
	"math"

	"github.com/genlens/genlens/internal/text/tokenize"
)

// RougeLF returns the ROUGE-L F-measure of token sequences a and b,
//
//	2 LCS(a, b) / (len(a) + len(b)),
//
// where LCS is the length of their longest common subsequence. This is the
// harmonic mean of LCS precision and recall, and is symmetric in a and b.
//
// If either sequence is empty the result is 0, including when both are:
// there is nothing to match, and Google's rouge_score package (used by the
// reference implementations) returns 0 in that case too. An empty answer is
// therefore never judged correct.
//
// The LCS is found by the O(len(a) len(b)) dynamic programme keeping only
// two rows, so memory is O(min(len(a), len(b))).
func RougeLF(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	l := lcs(a, b)
	return 2 * float64(l) / float64(len(a)+len(b))
}

// RougeLFText returns RougeLF of the word tokens of a and b, as produced by
// tokenize.Words (lower-cased, punctuation dropped).
func RougeLFText(a, b string) float64 {
	return RougeLF(tokenize.Words(a), tokenize.Words(b))
}

// LexicalSimilarity returns the mean RougeL-F over all unordered pairs
// i < j of the tokenized samples. It is the lexical-similarity baseline of
// Kuhn et al. (2023): answers sampled for one question that agree in wording
// indicate a more certain model, so higher means more certain. It returns
// NaN for fewer than two samples, where no pair exists.
func LexicalSimilarity(samples [][]string) float64 {
	n := len(samples)
	if n < 2 {
		return math.NaN()
	}
	var sum float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			sum += RougeLF(samples[i], samples[j])
		}
	}
	return sum / float64(n*(n-1)/2)
}

// lcs returns the length of the longest common subsequence of a and b.
func lcs(a, b []string) int {
	// Let b be the shorter so the rows are as short as possible.
	if len(b) > len(a) {
		a, b = b, a
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
