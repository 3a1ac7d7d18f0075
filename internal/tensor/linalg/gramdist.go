package linalg

import "gonum.org/v1/gonum/mat"

// SqDistFromGram turns the Gram matrix X Xᵀ held in the upper triangle of
// g into the squared distances ||x_i − x_j||² = G_ii + G_jj − 2 G_ij of
// the rows of X, in place: the diagonal becomes 0 and every entry is
// clamped at 0, since rounding can leave a tiny negative where two rows
// (nearly) coincide. Only the upper triangle is read and written. Centre
// rows with a large common offset before taking their Gram matrix, or the
// offset cancels the distances.
func SqDistFromGram(g *mat.SymDense) {
	raw := g.RawSymmetric()
	n := raw.N
	sq := make([]float64, n)
	for i := range sq {
		sq[i] = raw.Data[i*raw.Stride+i]
	}
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		row[i] = 0
		for j := i + 1; j < n; j++ {
			row[j] = max(0, sq[i]+sq[j]-2*row[j])
		}
	}
}

// CentreGram writes H K H into dst, for the n×n matrix K (all n² entries,
// row stride ks) in k and H = I − 11ᵀ/n: entry (i, j) becomes
// K_ij − r_i − r_j + m, with r_i the mean of row i and m the mean of all
// entries. For a Gram matrix of rows x_i this is the Gram matrix of the
// rows x_i − x̄, computed without forming them. dst (row stride ds) may be
// k itself with ds = ks. rm, of length at least n, receives the row means;
// nil allocates it.
func CentreGram(dst []float64, ds int, k []float64, ks, n int, rm []float64) {
	if rm == nil {
		rm = make([]float64, n)
	}
	var all float64
	for i := 0; i < n; i++ {
		var t float64
		for _, v := range k[i*ks : i*ks+n] {
			t += v
		}
		rm[i] = t / float64(n)
		all += t
	}
	all /= float64(n * n)
	for i := 0; i < n; i++ {
		ki, di, ri := k[i*ks:i*ks+n], dst[i*ds:i*ds+n], rm[i]
		for j, v := range ki {
			di[j] = v - ri - rm[j] + all
		}
	}
}
