package kernel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/tensor/linalg"
)

// Rule says how a Bandwidth turns data into a kernel parameter gamma.
type Rule int

const (
	// Fixed uses Bandwidth.Value as gamma.
	Fixed Rule = iota
	// Dim uses gamma = 1/d for d-dimensional rows: scikit-learn's default,
	// and what Gruber & Buettner (ICML 2024) used for e5-small-v2 text
	// embeddings (d = 384).
	Dim
	// Median uses gamma = 1/median of the pairwise squared distances of a
	// sample, the n diagonal zeros included (numpy's median over the full
	// n×n matrix, as in the code of Gruber, Ziegler & Buettner,
	// "Disentangling mean embeddings for better diagnostics of image
	// generators", 2024).
	Median
)

// Bandwidth is a rule for gamma, parsed from "VALUE", "dim" or "median".
type Bandwidth struct {
	Rule  Rule
	Value float64 // gamma, when Rule is Fixed
}

// ParseBandwidth parses the --gamma flag syntax: "dim", "median" or a
// positive number.
func ParseBandwidth(s string) (Bandwidth, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "dim":
		return Bandwidth{Rule: Dim}, nil
	case "median":
		return Bandwidth{Rule: Median}, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return Bandwidth{}, fmt.Errorf("kernel: gamma %q: want dim, median or a positive number", s)
	}
	return Bandwidth{Rule: Fixed, Value: v}, nil
}

func (b Bandwidth) String() string {
	switch b.Rule {
	case Dim:
		return "dim"
	case Median:
		return "median"
	}
	return strconv.FormatFloat(b.Value, 'g', -1, 64)
}

// ErrZeroMedian is returned when the median rule meets a sample whose
// median pairwise distance is zero (most rows identical), which would make
// gamma infinite.
var ErrZeroMedian = errors.New("kernel: median pairwise distance is 0 (most rows are identical); give gamma as a number")

// Gamma resolves the rule on a sample x of rows. For Median, dist says
// which distance: squared Euclidean (RBF) or L1 (Laplacian).
func (b Bandwidth) gamma(x *mat.Dense, l1dist bool) (float64, error) {
	switch b.Rule {
	case Dim:
		_, d := x.Dims()
		return 1 / float64(d), nil
	case Median:
		var m float64
		if l1dist {
			m = MedianL1(x)
		} else {
			m = MedianSqDist(x)
		}
		if !(m > 0) {
			return 0, ErrZeroMedian
		}
		return 1 / m, nil
	}
	return b.Value, nil
}

// MedianSqDist returns the median of ||x_i - x_j||² over all n² ordered
// pairs of rows, the n zero distances of the diagonal included. Rows with
// a large common offset are centred first, so the offset does not cancel
// the distances.
func MedianSqDist(x *mat.Dense) float64 {
	g := linalg.Gram(centred(x, offsetMeans(x)))
	linalg.SqDistFromGram(g)
	raw := g.RawSymmetric()
	n := raw.N
	off := make([]float64, 0, n*(n-1)/2)
	for i := 0; i < n; i++ {
		off = append(off, raw.Data[i*raw.Stride+i+1:i*raw.Stride+n]...)
	}
	return medianWithDiagonal(off, n)
}

// MedianSqDistContext is MedianSqDist through linalg.GramContext: it
// stops, with ctx's error, between blocks of rows of the Gram matrix
// once ctx is done. Up to a block of rows it is MedianSqDist bit for
// bit; above, to the rounding of the distances.
func MedianSqDistContext(ctx context.Context, x *mat.Dense) (float64, error) {
	g, err := linalg.GramContext(ctx, centred(x, offsetMeans(x)))
	if err != nil {
		return math.NaN(), err
	}
	linalg.SqDistFromGram(g)
	raw := g.RawSymmetric()
	n := raw.N
	off := make([]float64, 0, n*(n-1)/2)
	for i := 0; i < n; i++ {
		off = append(off, raw.Data[i*raw.Stride+i+1:i*raw.Stride+n]...)
	}
	return medianWithDiagonal(off, n), ctx.Err()
}

// MedianL1 is MedianSqDist for L1 distances.
func MedianL1(x *mat.Dense) float64 {
	raw := x.RawMatrix()
	n := raw.Rows
	off := make([]float64, 0, n*(n-1)/2)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			off = append(off, l1(raw.Data[i*raw.Stride:i*raw.Stride+raw.Cols], raw.Data[j*raw.Stride:j*raw.Stride+raw.Cols]))
		}
	}
	return medianWithDiagonal(off, n)
}

// medianWithDiagonal is the median of the multiset made of n zeros and two
// copies of every value in off (the full symmetric distance matrix).
func medianWithDiagonal(off []float64, n int) float64 {
	if n == 0 {
		return math.NaN()
	}
	slices.Sort(off)
	total := n * n
	at := func(k int) float64 { // k-th smallest of the multiset, 0-based
		if k < n {
			return 0
		}
		return off[(k-n)/2]
	}
	if total%2 == 1 {
		return at(total / 2)
	}
	return (at(total/2-1) + at(total/2)) / 2
}

// Names lists the kernel names New accepts.
var Names = []string{"rbf", "laplacian", "poly", "cosine", "linear"}

// ValidName returns nil when New knows the kernel name, else the error New
// would return.
func ValidName(name string) error {
	if slices.Contains(Names, name) {
		return nil
	}
	return fmt.Errorf("kernel: unknown kernel %q (want one of %s)", name, strings.Join(Names, ", "))
}

// needsSample reports whether the rule looks at data: Dim at the number
// of columns, Median at the values.
func (b Bandwidth) needsSample() bool { return b.Rule != Fixed }

// MedianRows is how many rows Resolve looks at: the median rule costs
// O(n² d) time and O(n²) memory in the rows it sees, and 2000 rows evenly
// spaced over the data give a median as good as all of them for a kernel
// bandwidth.
const MedianRows = 2000

// SampleRows returns up to limit rows evenly spaced over the rows of sets
// taken in order (every step-th row, step = ceil(total/limit), from the
// first), as one matrix; nil when sets hold no rows. All sets must have
// the same number of columns.
func SampleRows(sets []*mat.Dense, limit int) *mat.Dense {
	total, d := 0, 0
	for _, s := range sets {
		if s == nil || s.IsEmpty() {
			continue
		}
		r, c := s.Dims()
		total, d = total+r, c
	}
	if total == 0 {
		return nil
	}
	step := max(1, (total+limit-1)/limit)
	var data []float64
	i := 0
	for _, s := range sets {
		if s == nil || s.IsEmpty() {
			continue
		}
		r, _ := s.Dims()
		for j := 0; j < r; j++ {
			if i%step == 0 {
				data = append(data, s.RawRowView(j)...)
			}
			i++
		}
	}
	return mat.NewDense(len(data)/d, d, data)
}

// Resolve builds the named vector kernel with its bandwidth rule resolved
// on up to MedianRows rows evenly spaced over sets (SampleRows): the
// kernel every genlens command that scores vectors uses. The median rule
// on data whose sampled rows are mostly identical returns ErrZeroMedian.
func Resolve(name string, bw Bandwidth, sets []*mat.Dense) (Kernel, error) {
	var sample *mat.Dense
	if bw.needsSample() {
		sample = SampleRows(sets, MedianRows)
	}
	return New(name, bw, sample)
}

// New builds the named vector kernel, resolving the bandwidth on sample (a
// representative set of rows; only the Median rule looks at its values).
// The polynomial kernel is (gamma <x,y> + 1)³, the KID kernel when gamma is
// "dim"; cosine and linear ignore the bandwidth.
func New(name string, bw Bandwidth, sample *mat.Dense) (Kernel, error) {
	switch name {
	case "rbf", "laplacian", "poly":
		if bw.Rule != Fixed && (sample == nil || sample.IsEmpty()) {
			return nil, fmt.Errorf("kernel: %s with gamma %s needs sample rows", name, bw)
		}
	}
	switch name {
	case "rbf":
		g, err := bw.gamma(sample, false)
		return RBF{Gamma: g}, err
	case "laplacian":
		g, err := bw.gamma(sample, true)
		return Laplacian{Gamma: g}, err
	case "poly":
		g, err := bw.gamma(sample, false)
		return Polynomial{Gamma: g, Coef0: 1, Degree: 3}, err
	case "cosine":
		return Cosine{}, nil
	case "linear":
		return Linear{}, nil
	}
	return nil, ValidName(name)
}
