package inception

import (
	"fmt"
	"math/big"

	"github.com/genlens/genlens/internal/tensor/simdblas"
)

// winograd1d is a 1×r or r×1 stride-1 convolution in the one-dimensional
// minimal filtering form F(m, r) (Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks", CVPR 2016): along the filter's axis,
// every m outputs come from a = m+r−1 inputs d as Aᵀ[(G g) ⊙ (Bᵀ d)],
// a multiplications per channel pair where a direct convolution does
// m·r. Element e of the transformed tiles is one GEMM, the transformed
// weights (cout × cin) times the transformed inputs (cin × tiles), the
// tiles spanning the whole map.
type winograd1d struct {
	m, a     int
	vertical bool      // the filter runs down the columns (r×1)
	bt, at   []float32 // Bᵀ (a×a) and Aᵀ (m×a), row-major
	u        []*simdblas.Packed
	zero     []float32 // cout zeros: the products start from them
}

// winograd1dForm is the form a filter length takes: m outputs a tile
// and the finite interpolation points (the last point is ∞).
type winograd1dForm struct {
	m      int
	points []*big.Rat
}

// winograd1dForms lists the filter lengths that take a one-dimensional
// form and the form each takes. The points are symmetric, 0 then pairs
// ±p, the order the transforms of simdblas.Winograd1DInput want. For
// seven taps, F(4, 7) on 0, ±1, ±2, ±½, ±¾ was the most accurate of the
// ten-point sets measured (6e-7 of Σ|w·x| on 160 channels, where ±3 gave
// 1.3e-6 and ±4 2.9e-6); F(6, 7), as fast on the 17×17 maps (fewer
// products but a narrower GEMM), was three times less accurate. For three
// taps on the 8×8 maps of Mixed_7b/c, F(2, 3) makes every product one
// 32-column sliver of the GEMM kernel, where F(4, 3)'s 16 tiles would
// fill half of one.
var winograd1dForms = map[int]winograd1dForm{
	3: {2, rats("0", "1", "-1")},
	7: {4, rats("0", "1", "-1", "2", "-2", "1/2", "-1/2", "3/4", "-3/4")},
}

func rats(s ...string) []*big.Rat {
	r := make([]*big.Rat, len(s))
	for i, v := range s {
		r[i], _ = new(big.Rat).SetString(v)
	}
	return r
}

// useWinograd1D reports whether a convolution of this shape takes a
// one-dimensional Winograd form (with the packed kernels of the pure-Go
// build only).
func useWinograd1D(s convSpec) bool {
	if s.stride != 1 {
		return false
	}
	switch {
	case s.kh == 1 && s.kw > 1:
		_, ok := winograd1dForms[s.kw]
		return ok && s.padW == (s.kw-1)/2
	case s.kw == 1 && s.kh > 1:
		_, ok := winograd1dForms[s.kh]
		return ok && s.padH == (s.kh-1)/2
	}
	return false
}

// toomCook returns the matrices of F(m, r) on the finite points p and ∞
// (a = len(p)+1 = m+r−1), exactly: with N_j(x) = Π_{l≠j}(x − p_l) and
// c_j = N_j(p_j), row j of Bᵀ holds the coefficients of N_j and row ∞
// those of Π_l(x − p_l); G's row j is p_j^k / c_j and its row ∞ picks
// the last tap; Aᵀ's column j is p_j^i and its column ∞ picks the last
// output. The products of the evaluations at the points, interpolated
// back, are the linear convolution; Aᵀ and Bᵀ are its transpose, the
// correlation a convolution layer computes.
func toomCook(m, r int, p []*big.Rat) (bt, g, at [][]*big.Rat) {
	a := m + r - 1
	if len(p) != a-1 {
		panic(fmt.Sprintf("inception: F(%d, %d) needs %d finite points, have %d", m, r, a-1, len(p)))
	}
	zero := func(rows, cols int) [][]*big.Rat {
		x := make([][]*big.Rat, rows)
		for i := range x {
			x[i] = make([]*big.Rat, cols)
			for j := range x[i] {
				x[i][j] = new(big.Rat)
			}
		}
		return x
	}
	bt, g, at = zero(a, a), zero(a, r), zero(m, a)
	// poly returns the coefficients of Π_{l≠skip}(x − p_l), lowest first.
	poly := func(skip int) []*big.Rat {
		c := []*big.Rat{big.NewRat(1, 1)}
		for l, pl := range p {
			if l == skip {
				continue
			}
			next := make([]*big.Rat, len(c)+1)
			for i := range next {
				next[i] = new(big.Rat)
			}
			for i, ci := range c {
				next[i+1].Add(next[i+1], ci)
				next[i].Sub(next[i], new(big.Rat).Mul(ci, pl))
			}
			c = next
		}
		return c
	}
	for j, pj := range p {
		copy(bt[j], poly(j))
		cj := big.NewRat(1, 1)
		for l, pl := range p {
			if l != j {
				cj.Mul(cj, new(big.Rat).Sub(pj, pl))
			}
		}
		pow := big.NewRat(1, 1)
		for k := range max(r, m) {
			if k < r {
				g[j][k].Quo(pow, cj)
			}
			if k < m {
				at[k][j].Set(pow)
			}
			pow = new(big.Rat).Mul(pow, pj)
		}
	}
	copy(bt[a-1], poly(-1))
	g[a-1][r-1].SetInt64(1)
	at[m-1][a-1].SetInt64(1)
	return bt, g, at
}

// exact32 converts x to float32, panicking unless it is exact: the
// transforms must add no rounding of their own.
func exact32(x [][]*big.Rat) []float32 {
	var out []float32
	for _, row := range x {
		for _, v := range row {
			f, exact := v.Float32()
			if !exact {
				panic(fmt.Sprintf("inception: Winograd coefficient %v is not a float32", v))
			}
			out = append(out, f)
		}
	}
	return out
}

// newWinograd1D transforms the folded weights w (cout × cin × r, the
// taps of a 1×r or r×1 filter) in float64 into G g, rounding each
// transformed weight once.
func newWinograd1D(cout, cin, r int, vertical bool, form winograd1dForm, w []float32) *winograd1d {
	bt, gr, at := toomCook(form.m, r, form.points)
	a := form.m + r - 1
	g := make([][]float64, a)
	for e := range g {
		g[e] = make([]float64, r)
		for k := range r {
			g[e][k], _ = gr[e][k].Float64()
		}
	}
	u := make([][]float32, a)
	for e := range u {
		u[e] = make([]float32, cout*cin)
	}
	for i := range cout * cin {
		taps := w[i*r : (i+1)*r]
		for e := range a {
			var v float64
			for k, t := range taps {
				v += g[e][k] * float64(t)
			}
			u[e][i] = float32(v)
		}
	}
	wg := &winograd1d{m: form.m, a: a, vertical: vertical, bt: exact32(bt), at: exact32(at),
		u: make([]*simdblas.Packed, a), zero: make([]float32, cout)}
	for e := range u {
		wg.u[e] = simdblas.Pack(cout, cin, u[e], cin)
	}
	return wg
}

// applyWinograd1D computes out = ReLU(conv(in) + b) for cv (1×r or r×1,
// stride 1, the map's size kept), out being cout planes of in.h×in.w.
// Tiles of m outputs run along every row (1×r) or down every column
// (r×1) of a zero-padded copy of each input plane, the whole map at
// once: on the 17×17 maps of Mixed_6 a 1×7 layer is 85 tiles, and every
// one of the a products is cout × cin × 85.
func (cv *conv) applyWinograd1D(in fmap, out []float32, scratch *[]float32) {
	wg := cv.w1
	m, a := wg.m, wg.a
	h, w := in.h, in.w
	r, pad := cv.kw, cv.pw
	if wg.vertical {
		r, pad = cv.kh, cv.ph
	}
	// The padded plane is ph × pw; the outputs go to a plane of whole
	// tiles, oh × ow, and are copied out of it.
	var ph, pw, oh, ow, n, inStep, outStep int
	if wg.vertical {
		t := (h + m - 1) / m
		ph, pw, oh, ow, n = m*t+r-1, w, m*t, w, t*w
		inStep, outStep = w, w
	} else {
		t := (w + m - 1) / m
		ph, pw, oh, ow, n = h, m*t+r-1, h, m*t, h*t
		inStep, outStep = 1, 1
	}
	g := (n + 15) / 16
	ld := 16 * g
	nv, nm, np, no := a*cv.cin*ld, a*cv.cout*ld, ph*pw, oh*ow
	size := nv + nm + np + no
	if cap(*scratch) < size {
		*scratch = make([]float32, size)
	}
	buf := (*scratch)[:size]
	v, prod, plane, tmp := buf[:nv], buf[nv:nv+nm], buf[nv+nm:nv+nm+np], buf[nv+nm+np:]
	// Tile j's first input in the padded plane and first output in tmp;
	// the tiles past n read the plane's start.
	var offStore [2 * 16 * 16]int32
	offs := offStore[:]
	if 2*ld > len(offs) {
		offs = make([]int32, 2*ld)
	}
	offIn, offOut := offs[:ld], offs[ld:2*ld]
	clear(offIn)
	if wg.vertical {
		// The columns of a row of tiles in runs of 16 first, the rest
		// after: a group of 16 tiles side by side is loaded and stored
		// where others are gathered and scattered (GEMM columns may come
		// in any order).
		j, full := 0, w/16*16
		for _, xs := range [][2]int{{0, full}, {full, w}} {
			for ty := range oh / m {
				for x := xs[0]; x < xs[1]; x++ {
					offIn[j], offOut[j] = int32(m*ty*pw+x), int32(m*ty*ow+x)
					j++
				}
			}
		}
	} else {
		for j := range n {
			y, t := j/(ow/m), j%(ow/m)
			offIn[j], offOut[j] = int32(y*pw+m*t), int32(m*j)
		}
	}
	clear(plane)
	for c := range cv.cin {
		src := in.d[c*h*w : (c+1)*h*w]
		if wg.vertical {
			copy(plane[pad*pw:], src)
		} else {
			for y := range h {
				copy(plane[y*pw+pad:y*pw+pad+w], src[y*w:(y+1)*w])
			}
		}
		simdblas.Winograd1DInput(wg.bt, a, plane, offIn, inStep, n, v[c*ld:], cv.cin*ld)
	}
	for e := range a {
		simdblas.MulPackedBias(wg.u[e], n, v[e*cv.cin*ld:], ld, wg.zero, prod[e*cv.cout*ld:], ld, false)
	}
	for o := range cv.cout {
		simdblas.Winograd1DOutput(wg.at, a, m, prod[o*ld:], cv.cout*ld, offOut, outStep, n, cv.b[o], tmp)
		dst := out[o*h*w : (o+1)*h*w]
		if wg.vertical {
			copy(dst, tmp[:h*w])
		} else {
			for y := range h {
				copy(dst[y*w:(y+1)*w], tmp[y*ow:y*ow+w])
			}
		}
	}
}
