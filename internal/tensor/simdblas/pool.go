package simdblas

// The element-wise steps of a separable 3×3 pool (a network's max and
// average pools): three taps combined per output, over whole rows or
// whole planes at once, sixteen values at a time where the CPU has
// AVX-512, with the same values as the Go loops (the same operations in
// the same order per element; equal zeros of opposite sign may keep
// either sign in a maximum there).

// poolAVX512 selects the AVX-512 kernels; the tests clear it to run the
// Go loops on the same inputs.
var poolAVX512 = hasAVX512

// Max3 sets dst[i] = max(a[i], b[i], c[i]) for i < len(dst) (a, b and c
// at least as long), NaN in any giving NaN as Go's max does. dst may be
// one of the inputs but must not overlap them otherwise.
func Max3(dst, a, b, c []float32) {
	n := len(dst)
	a, b, c = a[:n], b[:n], c[:n]
	done := 0
	if poolAVX512 && n >= 16 {
		max3AVX512(&dst[0], &a[0], &b[0], &c[0], n/16)
		done = n &^ 15
	}
	for i := done; i < n; i++ {
		dst[i] = max(a[i], b[i], c[i])
	}
}

// Sum3 sets dst[i] = (a[i] + b[i]) + c[i] for i < len(dst), with the
// aliasing of Max3.
func Sum3(dst, a, b, c []float32) {
	n := len(dst)
	a, b, c = a[:n], b[:n], c[:n]
	done := 0
	if poolAVX512 && n >= 16 {
		sum3AVX512(&dst[0], &a[0], &b[0], &c[0], n/16)
		done = n &^ 15
	}
	for i := done; i < n; i++ {
		dst[i] = a[i] + b[i] + c[i]
	}
}

// Sum3Div sets dst[i] = ((a[i] + b[i]) + c[i]) / d[i] for i < len(dst),
// with the aliasing of Max3: an average pool's vertical step, d holding
// each output's count of taps.
func Sum3Div(dst, a, b, c, d []float32) {
	n := len(dst)
	a, b, c, d = a[:n], b[:n], c[:n], d[:n]
	done := 0
	if poolAVX512 && n >= 16 {
		sum3DivAVX512(&dst[0], &a[0], &b[0], &c[0], &d[0], n/16)
		done = n &^ 15
	}
	for i := done; i < n; i++ {
		dst[i] = (a[i] + b[i] + c[i]) / d[i]
	}
}

// MaxStride2 sets dst[i] = max(src[2i], src[2i+1], src[2i+2]) for
// i < len(dst), NaN in any giving NaN: a 3-wide window at stride 2 along
// a row. src must hold at least 2·len(dst)+1 values; dst must not
// overlap it.
func MaxStride2(dst, src []float32) {
	n := len(dst)
	if n == 0 {
		return
	}
	_ = src[2*n]
	done := 0
	// The kernel reads 32·groups+2 values of src.
	if g := min(n/16, (len(src)-2)/32); poolAVX512 && g > 0 {
		maxStride2AVX512(&dst[0], &src[0], g)
		done = 16 * g
	}
	for i := done; i < n; i++ {
		dst[i] = max(src[2*i], src[2*i+1], src[2*i+2])
	}
}
