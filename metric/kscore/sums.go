package kscore

import (
	"context"
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/membudget"
	"github.com/genlens/genlens/metric/kernel"
)

// panelRows is the minimum number of rows per cross-Gram call: enough for
// GEMM to run near peak, small enough that one panel against all rows fits
// in cache-friendly memory for typical n·m.
const panelRows = 256

// sums holds kernel sums between sample sets A_0..A_{N-1}.
type sums struct {
	m    []int       // rows per set
	all  [][]float64 // all[a][b] = Σ_{j,t} k(A_aj, A_bt), full symmetric
	diag []float64   // diag[a] = Σ_j k(A_aj, A_aj)
}

// within is the mean of k over distinct pairs of set a.
func (s *sums) within(a int) float64 {
	m := float64(s.m[a])
	return (s.all[a][a] - s.diag[a]) / (m * (m - 1))
}

// between is the mean of k over all pairs of sets a and b (diagonal
// included when a == b).
func (s *sums) between(a, b int) float64 {
	return s.all[a][b] / float64(s.m[a]*s.m[b])
}

// newSums computes the kernel sums of sets, which must all have d columns.
func newSums(k kernel.Kernel, sets []*mat.Dense) (*sums, error) {
	return newSumsCtx(context.Background(), k, sets)
}

// newSumsCtx is newSums that checks ctx before each panel, so that a
// cancelled computation stops after the panel in progress: one cross-Gram
// of at least panelRows rows against the rest, a fraction of a second
// for the data genlens meets.
func newSumsCtx(ctx context.Context, k kernel.Kernel, sets []*mat.Dense) (*sums, error) {
	if len(sets) == 0 {
		return nil, errors.New("kscore: no sample sets")
	}
	_, d := sets[0].Dims()
	off := make([]int, len(sets)+1)
	s := &sums{m: make([]int, len(sets)), all: make([][]float64, len(sets)), diag: make([]float64, len(sets))}
	for a, x := range sets {
		r, c := x.Dims()
		if c != d {
			return nil, fmt.Errorf("kscore: sample set %d has dimension %d, set 0 has %d", a, c, d)
		}
		if r == 0 {
			return nil, fmt.Errorf("kscore: sample set %d is empty", a)
		}
		s.m[a] = r
		off[a+1] = off[a] + r
		s.all[a] = make([]float64, len(sets))
	}
	total := off[len(sets)]
	// The largest block of kernel values one panel holds: a set of many
	// rows is one panel against every row from it on.
	var pr, pc int
	for lo := 0; lo < len(sets); {
		hi := panelEnd(off, lo)
		if r, c := off[hi]-off[lo], total-off[lo]; float64(r)*float64(c) > float64(pr)*float64(pc) {
			pr, pc = r, c
		}
		lo = hi
	}
	if err := membudget.Check("the kernel values between the samples", 1, pr, pc); err != nil {
		return nil, err
	}
	// Stack all rows once so each panel needs one cross-Gram call.
	stacked := mat.NewDense(off[len(sets)], d, nil)
	for a, x := range sets {
		stacked.Slice(off[a], off[a+1], 0, d).(*mat.Dense).Copy(x)
	}
	// Progress in per mille of the kernel evaluations: a panel of rows
	// lo..hi runs against every row from lo on.
	report := progressOf(ctx)
	const steps = 1000
	work := float64(total) * float64(total+1) / 2
	var done float64
	report(0, steps)
	for lo := 0; lo < len(sets); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := panelEnd(off, lo)
		panel := stacked.Slice(off[lo], off[hi], 0, d).(*mat.Dense)
		rest := stacked.Slice(off[lo], total, 0, d).(*mat.Dense)
		kc := k.Cross(panel, rest)
		for a := lo; a < hi; a++ {
			for b := a; b < len(sets); b++ {
				var sum float64
				for j := off[a]; j < off[a+1]; j++ {
					row := kc.RawRowView(j - off[lo])
					for _, v := range row[off[b]-off[lo] : off[b+1]-off[lo]] {
						sum += v
					}
				}
				s.all[a][b], s.all[b][a] = sum, sum
			}
			var tr float64
			for j := off[a]; j < off[a+1]; j++ {
				tr += kc.At(j-off[lo], j-off[lo])
			}
			s.diag[a] = tr
		}
		done += float64(off[hi]-off[lo]) * float64(total-off[lo])
		report(min(steps, int(steps*done/work)), steps)
		lo = hi
	}
	report(steps, steps)
	return s, nil
}

// panelEnd returns the end of the panel of sets that starts at set lo:
// whole sets, at least panelRows rows unless the sets run out (off holds
// the sets' first rows, then the total).
func panelEnd(off []int, lo int) int {
	hi := lo + 1
	for hi < len(off)-1 && off[hi]-off[lo] < panelRows {
		hi++
	}
	return hi
}
