package simdblas

// AttnScratch holds the buffers of Attention, kept between calls by one
// goroutine; the zero value is ready to use.
type AttnScratch struct {
	kp, vp, qp, s, tile []float32
	mx                  []float32
	sum                 []float64
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// Attention computes one head of dot-product attention over t tokens:
// out[d][i] = Σ_j softmax_j(Σ_e k[e][j]·q[e][i])·v[d][j], for the dh×t
// matrices q, k and v (rows the head's dimensions, columns the tokens,
// leading dimension ld) into the dh×t matrix out (leading dimension
// ldo). The queries come already scaled.
//
// It works on blocks of as many queries as the SGEMM micro-kernel has
// columns, with the keys and values packed once for the micro-kernel:
// the scores of a block (t × 32 with AVX-512, 33 KB at 257 tokens) are
// written straight in the layout in which the second product reads them,
// and stay in L1 through the softmax and that product. No score matrix
// of the whole head is ever formed, and the sum over the keys runs in one
// stretch of t steps.
//
// The softmax takes its exponentials as SoftmaxExp (after the largest
// score), sums them in float64 in key order and divides the output by
// the sum. Every query's result depends only on q, k and v: not on the
// tokens around it, nor on which goroutine runs it.
func Attention(q, k, v []float32, ld, t, dh int, out []float32, ldo int, sc *AttnScratch) {
	if t <= 0 || dh <= 0 {
		return
	}
	_, _, _ = q[(dh-1)*ld+t-1], k[(dh-1)*ld+t-1], v[(dh-1)*ld+t-1]
	_ = out[(dh-1)*ldo+t-1]
	kn := sgemmK
	mr, nr := kn.mr, kn.nr
	tPad := (t + mr - 1) / mr * mr
	dPad := (dh + mr - 1) / mr * mr

	// Kᵀ as the left-hand matrix of the scores: slivers of mr tokens,
	// step e holding k[e][j0..j0+mr).
	kp := grow(sc.kp, tPad*dh)
	for j0 := 0; j0 < tPad; j0 += mr {
		s := kp[j0*dh:][:mr*dh]
		cols := min(mr, t-j0)
		for e := 0; e < dh; e++ {
			d := s[e*mr : (e+1)*mr]
			copy(d, k[e*ld+j0:][:cols])
			clear(d[cols:])
		}
	}
	// V as the left-hand matrix of the output: slivers of mr dimensions,
	// step j holding v[d0..d0+mr)[j].
	vp := grow(sc.vp, dPad*t)
	for d0 := 0; d0 < dPad; d0 += mr {
		s := vp[d0*t:][:mr*t]
		rows := min(mr, dh-d0)
		if rows < mr {
			clear(s)
		}
		for r := 0; r < rows; r++ {
			src := v[(d0+r)*ld:][:t]
			for j, x := range src {
				s[j*mr+r] = x
			}
		}
	}
	qp := grow(sc.qp, dh*nr)
	s := grow(sc.s, tPad*nr)
	tile := grow(sc.tile, mr*nr)
	mx := grow(sc.mx, nr)
	if cap(sc.sum) < nr {
		sc.sum = make([]float64, nr)
	}
	sum := sc.sum[:nr]
	sc.kp, sc.vp, sc.qp, sc.s, sc.tile, sc.mx = kp, vp, qp, s, tile, mx

	for i0 := 0; i0 < t; i0 += nr {
		cols := min(nr, t-i0)
		// The block of queries as the right-hand sliver of the scores.
		for e := 0; e < dh; e++ {
			d := qp[e*nr : (e+1)*nr]
			copy(d, q[e*ld+i0:][:cols])
			clear(d[cols:])
		}
		// Scores: a tPad×nr matrix with rows nr apart, which is the
		// packed layout of a right-hand sliver of t steps.
		if kn.microBias != nil {
			for j0 := 0; j0 < tPad; j0 += mr {
				kn.microBias(dh, &kp[j0*dh], &qp[0], &s[j0*nr], nr, &zeros[0], false)
			}
		} else {
			clear(s)
			for j0 := 0; j0 < tPad; j0 += mr {
				kn.micro(dh, &kp[j0*dh], &qp[0], &s[j0*nr], nr, 1, false)
			}
		}
		// Softmax down each column, over the t real keys.
		copy(mx, s[:nr])
		for j := 1; j < t; j++ {
			MaxInto(mx, s[j*nr:(j+1)*nr])
		}
		clear(sum)
		for j := 0; j < t; j++ {
			SoftmaxExp(s[j*nr:(j+1)*nr], mx, sum)
		}
		for i := range mx {
			mx[i] = float32(1 / sum[i])
		}
		// Output: V times the exponentials, divided by their sums.
		for d0 := 0; d0 < dh; d0 += mr {
			clear(tile)
			kn.micro(t, &vp[d0*t], &s[0], &tile[0], nr, 1, false)
			for r := 0; r < min(mr, dh-d0); r++ {
				dst := out[(d0+r)*ldo+i0:][:cols]
				for i, x := range tile[r*nr:][:cols] {
					dst[i] = x * mx[i]
				}
			}
		}
	}
}

// zeros is a bias of zeros for the micro-kernels that start a tile from
// a bias (no kernel has more than 16 rows).
var zeros [16]float32
