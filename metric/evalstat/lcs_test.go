package evalstat

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// lcsDP is the dynamic programme over two rows, the reference.
func lcsDP(a, b []string) int {
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

// The bit-parallel LCS equals the dynamic programme on random sequences
// of every length around the word boundaries and alphabets small and
// large, either way round.
func TestLCSBitParallelMatchesDP(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	words := strings.Fields("the a cat sat on mat dog ran far away quickly slowly red blue green one two three four five")
	seq := func(n, k int) []string {
		s := make([]string, n)
		for i := range s {
			s[i] = words[r.IntN(k)]
		}
		return s
	}
	lengths := []int{0, 1, 2, 5, 63, 64, 65, 127, 128, 129, 200, 300}
	for range 3 {
		for _, n := range lengths {
			for _, m := range lengths {
				for _, k := range []int{1, 2, 4, len(words)} {
					a, b := seq(n, k), seq(m, k)
					want := lcsDP(a, b)
					if got := lcs(a, b); got != want {
						t.Fatalf("len %d × %d, alphabet %d: lcs %d, want %d", n, m, k, got, want)
					}
					if got := lcs(b, a); got != want {
						t.Fatalf("len %d × %d, alphabet %d, swapped: lcs %d, want %d", m, n, k, got, want)
					}
				}
			}
		}
	}
}
