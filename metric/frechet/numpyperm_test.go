package frechet

import (
	"slices"
	"testing"
)

// Known answers: the reference MT19937's first output for its default
// seed 5489, and NumPy's numpy.random.RandomState(seed).permutation(10)
// for seeds 42 and 0.
func TestNumPyPermutation(t *testing.T) {
	if got := newMT19937(5489).next(); got != 3499211612 {
		t.Errorf("MT19937(5489) first output %d, want 3499211612", got)
	}
	for _, c := range []struct {
		seed uint32
		want []int
	}{
		{42, []int{8, 1, 5, 0, 7, 2, 9, 4, 3, 6}},
		{0, []int{2, 8, 4, 9, 1, 6, 7, 3, 0, 5}},
	} {
		if got := NumPyPermutation(10, c.seed); !slices.Equal(got, c.want) {
			t.Errorf("RandomState(%d).permutation(10) = %v, want %v", c.seed, got, c.want)
		}
	}
	if p := NumPyPermutation(1, 2020); !slices.Equal(p, []int{0}) {
		t.Errorf("permutation(1) = %v", p)
	}
}
