package simdblas

import "math"

// LayerNormCols normalises every column of the w×n matrix x into dst
// (which may be x): (x − mean)/√(var + eps)·g[r] + b[r] on row r of the
// column, with the biased variance and the statistics in float64. It
// goes through the matrix in bands of 64 columns that stay in cache for
// its three passes (sums, squared deviations, the normalisation); where
// the CPU has AVX-512 the passes of whole bands run eight columns to a
// register, with the same bits as the Go loops (each product rounded
// before its sum, in the same order).
func LayerNormCols(x []float32, w, n int, g, b []float32, eps float32, dst []float32) {
	const band = 64
	if w <= 0 || n <= 0 {
		return
	}
	_, _, _, _ = x[(w-1)*n+n-1], dst[(w-1)*n+n-1], g[w-1], b[w-1]
	var sum, ss [band]float64
	for c0 := 0; c0 < n; c0 += band {
		cw := min(band, n-c0)
		s, q := sum[:cw], ss[:cw]
		avx := expAVX512 && cw == band
		if avx {
			colSums64(&x[c0], n, w, &s[0])
		} else {
			clear(s)
			for r := 0; r < w; r++ {
				for j, v := range x[r*n+c0:][:cw] {
					s[j] += float64(v)
				}
			}
		}
		for j := range s {
			s[j] /= float64(w) // the mean
		}
		if avx {
			colSqDev64(&x[c0], n, w, &s[0], &q[0])
		} else {
			clear(q)
			for r := 0; r < w; r++ {
				for j, v := range x[r*n+c0:][:cw] {
					d := float64(v) - s[j]
					q[j] += float64(d * d)
				}
			}
		}
		for j := range q {
			q[j] = 1 / math.Sqrt(q[j]/float64(w)+float64(eps))
		}
		if avx {
			layerNormApply64(&x[c0], n, w, &s[0], &q[0], &g[0], &b[0], &dst[c0])
			continue
		}
		for r := 0; r < w; r++ {
			gr, br := g[r], b[r]
			out := dst[r*n+c0:][:cw]
			for j, v := range x[r*n+c0:][:cw] {
				out[j] = float32(float32((float64(v)-s[j])*q[j])*gr) + br
			}
		}
	}
}
