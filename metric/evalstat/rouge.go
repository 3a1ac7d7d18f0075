package evalstat

import (
	"context"
	"math"
	"math/bits"

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
// The LCS is found bit-parallel (Allison and Dix; Crochemore et al.):
// a row of the dynamic programme is a bit vector over the shorter
// sequence, updated a machine word at a time, so two samples of 20,000
// words cost 6 million word operations rather than 400 million cells,
// with the same result; memory is O(len(a) + len(b)).
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
	v, _ := LexicalSimilarityContext(context.Background(), samples)
	return v
}

// LexicalSimilarityContext is LexicalSimilarity stopping, with ctx's
// error, within 64 pairs once ctx is done: thousands of long samples are
// millions of pairs.
func LexicalSimilarityContext(ctx context.Context, samples [][]string) (float64, error) {
	n := len(samples)
	if n < 2 {
		return math.NaN(), ctx.Err()
	}
	var sum float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if (j-i)%64 == 1 {
				if err := ctx.Err(); err != nil {
					return math.NaN(), err
				}
			}
			sum += RougeLF(samples[i], samples[j])
		}
	}
	return sum / float64(n*(n-1)/2), nil
}

// lcs returns the length of the longest common subsequence of a and b,
// bit-parallel: V holds, for each position j of the shorter sequence b,
// a 0 where row i of the dynamic programme steps up (L[i][j+1] >
// L[i][j]); with M the positions of b holding a[i], the next row is
// (V + (V & M)) | (V &^ M), and the LCS is the number of 0 bits. Bits
// past len(b) stay 1 (M is 0 there) and carries only move up, so they
// never change the count.
func lcs(a, b []string) int {
	if len(b) > len(a) {
		a, b = b, a
	}
	m := len(b)
	if m == 0 {
		return 0
	}
	at := make(map[string][]int32, m)
	for j, t := range b {
		at[t] = append(at[t], int32(j))
	}
	words := (m + 63) / 64
	v := make([]uint64, words)
	for w := range v {
		v[w] = ^uint64(0)
	}
	mask := make([]uint64, words)
	for _, t := range a {
		ps, ok := at[t]
		if !ok {
			continue // M is 0: the row does not change
		}
		for _, p := range ps {
			mask[p>>6] |= 1 << (p & 63)
		}
		var carry uint64
		for w := range v {
			x := v[w]
			sum, c := bits.Add64(x, x&mask[w], carry)
			carry = c
			v[w] = sum | (x &^ mask[w])
		}
		for _, p := range ps {
			mask[p>>6] = 0
		}
	}
	zeros := 0
	for w, x := range v {
		if w == words-1 && m%64 != 0 {
			x |= ^uint64(0) << (m % 64)
		}
		zeros += 64 - bits.OnesCount64(x)
	}
	return zeros
}
