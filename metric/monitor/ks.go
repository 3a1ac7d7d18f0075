package monitor

import (
	"math"
	"sort"
	"sync"
)

// MaxExactKS is the largest sample size on either side for which
// KSPValue computes the exact distribution of the two-sample statistic;
// beyond it the p-value is asymptotic. It is SciPy's ks_2samp's bound
// for method "auto".
const MaxExactKS = 10000

// KSStatistic returns the two-sample Kolmogorov-Smirnov statistic
// sup_x |F_a(x) - F_b(x)| of two sorted samples, the empirical
// distribution functions being right-continuous (tied values step
// together). Both samples must be non-empty.
//
// When one sample is much smaller (a chunk of a few rows against the
// reference) the statistic is evaluated at its values alone, with binary
// searches in the other: the same value, without walking the larger one.
func KSStatistic(a, b []float64) float64 {
	switch {
	case len(b)*16 <= len(a):
		return ksFew(a, b)
	case len(a)*16 <= len(b):
		return ksFew(b, a)
	}
	return ksWalk(a, b)
}

// ksFew is KSStatistic of a large sorted sample l and a small one s.
// Between two consecutive distinct values of s, F_s is constant and F_l
// grows, so |F_s - F_l| is largest at one end: at the first value (F_l
// counting l's values up to it) or just before the next (counting those
// below it); before s's first value F_s is 0.
func ksFew(l, s []float64) float64 {
	nl, ns := float64(len(l)), float64(len(s))
	d := float64(sort.SearchFloat64s(l, s[0])) / nl
	for k := 0; k < len(s); {
		x := s[k]
		for k < len(s) && s[k] <= x {
			k++
		}
		upTo := sort.Search(len(l), func(i int) bool { return l[i] > x })
		d = math.Max(d, math.Abs(float64(upTo)/nl-float64(k)/ns))
		below := len(l)
		if k < len(s) {
			below = sort.SearchFloat64s(l, s[k])
		}
		d = math.Max(d, math.Abs(float64(below)/nl-float64(k)/ns))
	}
	return d
}

// ksWalk is KSStatistic by one walk through both samples.
func ksWalk(a, b []float64) float64 {
	na, nb := float64(len(a)), float64(len(b))
	var i, j int
	var d float64
	for i < len(a) && j < len(b) {
		x := math.Min(a[i], b[j])
		for i < len(a) && a[i] <= x {
			i++
		}
		for j < len(b) && b[j] <= x {
			j++
		}
		d = math.Max(d, math.Abs(float64(i)/na-float64(j)/nb))
	}
	// Past the end of one sample the difference only shrinks.
	return d
}

// KSPValue returns the two-sided p-value P(D ≥ d) of the two-sample
// Kolmogorov-Smirnov statistic d for samples of n1 and n2 values under
// the null hypothesis of one continuous distribution, as SciPy's
// ks_2samp with method "auto": exact up to MaxExactKS values a side
// (every arrangement of the pooled sample equally likely), asymptotic
// beyond.
func KSPValue(d float64, n1, n2 int) float64 {
	if n1 < 1 || n2 < 1 || math.IsNaN(d) {
		return math.NaN()
	}
	if max(n1, n2) > MaxExactKS {
		return ksAsymptotic(d, n1, n2)
	}
	g := gcd(n1, n2)
	lcm := int64(n1/g) * int64(n2)
	h := int64(math.Round(d * float64(lcm)))
	if h <= 0 {
		return 1
	}
	key := ksKey{h, n1, n2}
	ksCache.Lock()
	p, ok := ksCache.m[key]
	ksCache.Unlock()
	if ok {
		return p
	}
	if n1 == n2 {
		p = ksSquare(n1, int(h))
	} else {
		p = ksOutside(n1, n2, h*int64(g))
	}
	p = math.Max(0, math.Min(1, p))
	ksCache.Lock()
	if len(ksCache.m) >= maxKSCache {
		clear(ksCache.m)
	}
	ksCache.m[key] = p
	ksCache.Unlock()
	return p
}

// ksCache remembers exact p-values: a monitor's chunks are tested against
// the same reference at the same sizes on every read (each dashboard
// load, each scrape), and an exact p-value of 10,000 against 1,000 values
// costs up to tens of milliseconds.
var ksCache = struct {
	sync.Mutex
	m map[ksKey]float64
}{m: map[ksKey]float64{}}

type ksKey struct {
	h      int64
	n1, n2 int
}

// maxKSCache bounds the cache (about 3 MB); when full it starts over.
const maxKSCache = 1 << 16

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// ksSquare returns P(D ≥ h/n) for two samples of n values each: by the
// reflection principle 2 Σ_{k≥1} (-1)^{k-1} C(2n, n-kh) / C(2n, n), each
// term's ratio of binomials a product of h factors, summed from the
// smallest term in nested form (A₁(1 - A₂(1 - A₃(...)))) so that the
// alternating series loses no precision.
func ksSquare(n, h int) float64 {
	if h > n {
		return 0
	}
	var p float64
	for k := n / h; k >= 1; k-- {
		// A_k = C(2n, n-kh) / C(2n, n-(k-1)h)
		//     = Π_{j<h} (n-(k-1)h-j) / (n+(k-1)h+j+1).
		a := 1.0
		for j := range h {
			a *= float64(n-(k-1)*h-j) / float64(n+(k-1)*h+j+1)
		}
		p = a * (1 - p)
	}
	return 2 * p
}

// ksOutside returns the probability that a path through the lattice from
// (0, 0) to (n1, n2), uniform over the C(n1+n2, n1) paths, reaches a
// point (i, j) with |i·n2 - j·n1| ≥ c: P(D ≥ c/(n1·n2)). It follows the
// probability mass of the paths that stayed inside row by row, a step
// from (i, j) going right with probability (n1-i)/(n1-i+n2-j), and adds
// up the mass that leaves, so that small p-values keep their relative
// precision.
func ksOutside(n1, n2 int, c int64) float64 {
	N1, N2 := int64(n1), int64(n2)
	inside := func(i, j int64) bool { x := i*N2 - j*N1; return x < c && -x < c }
	cur := make([]float64, n2+1)
	next := make([]float64, n2+1)
	cur[0] = 1
	var out float64
	lo, hi := int64(0), int64(0) // the j range of row i that holds mass
	for i := int64(0); i <= N1; i++ {
		nlo, nhi := N2+1, int64(-1)
		for j := lo; j <= hi; j++ {
			q := cur[j]
			if q == 0 {
				continue
			}
			cur[j] = 0
			ri, rj := N1-i, N2-j
			if ri+rj == 0 {
				continue
			}
			pr := float64(ri) / float64(ri+rj)
			if ri > 0 {
				if inside(i+1, j) {
					next[j] += q * pr
					nlo, nhi = min(nlo, j), max(nhi, j)
				} else {
					out += q * pr
				}
			}
			if rj > 0 {
				if inside(i, j+1) {
					cur[j+1] += q * (1 - pr)
					hi = max(hi, j+1)
				} else {
					out += q * (1 - pr)
				}
			}
		}
		cur, next = next, cur
		lo, hi = nlo, nhi
		if hi < lo {
			break
		}
	}
	return out
}

// ksAsymptotic returns the two-sided p-value for large samples: the
// distribution of the one-sample statistic for an effective size
// N = round(n1·n2/(n1+n2)), which SciPy uses there, approximated by
// Kolmogorov's limit at √N·d with the small-sample correction of Vrbik
// (2018), z + 1/(6√N) + (z-1)/(4N).
func ksAsymptotic(d float64, n1, n2 int) float64 {
	en := math.Round(float64(n1) * float64(n2) / float64(n1+n2))
	s := math.Sqrt(en)
	z := s * d
	return KolmogorovSF(z + 1/(6*s) + (z-1)/(4*en))
}

// KolmogorovSF returns P(K > z) for Kolmogorov's limiting distribution,
// 2 Σ_{k≥1} (-1)^{k-1} exp(-2k²z²), from the theta-function form
// 1 - √(2π)/z Σ exp(-(2k-1)²π²/(8z²)) for small z where the first series
// converges slowly.
func KolmogorovSF(z float64) float64 {
	switch {
	case math.IsNaN(z):
		return math.NaN()
	case z <= 0:
		return 1
	case z < 1:
		var s float64
		for k := 1; k <= 20; k++ {
			t := float64(2*k - 1)
			s += math.Exp(-t * t * math.Pi * math.Pi / (8 * z * z))
		}
		return 1 - math.Sqrt(2*math.Pi)/z*s
	}
	var s float64
	sign := 1.0
	for k := 1; k <= 100; k++ {
		t := math.Exp(-2 * float64(k*k) * z * z)
		s += sign * t
		if t < 1e-300 {
			break
		}
		sign = -sign
	}
	return math.Max(0, math.Min(1, 2*s))
}
