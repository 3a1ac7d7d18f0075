package resample

// tfTaps returns TensorFlow 1.x's bilinear taps (align_corners=False,
// half_pixel_centers=False): source coordinate i·in/out, no half-pixel
// shift, in float32 as torch-fidelity's port computes them.
func tfTaps(in, out int) (lo, hi []int, d []float32) {
	scale := float32(float64(in) / float64(out))
	lo, hi, d = make([]int, out), make([]int, out), make([]float32, out)
	for i := 0; i < out; i++ {
		s := float32(i) * scale
		a := int(s)
		lo[i], hi[i], d[i] = a, min(a+1, in-1), s-float32(a)
	}
	return
}

// BilinearTF1 resizes one h×w plane into an oh×ow one as TensorFlow 1.x's
// bilinear resize (align_corners=False, no half-pixel centres) does, in
// the form of torch-fidelity's interpolate_bilinear_2d_like_tensorflow1x
// (the exact "slow" method), which its Inception and DINOv2 extractors
// use: lerp along x in both source rows, then along y, in that order, so
// rounding matches.
func BilinearTF1(src []float32, h, w int, dst []float32, oh, ow int) {
	ylo, yhi, dy := tfTaps(h, oh)
	xlo, xhi, dx := tfTaps(w, ow)
	for y := 0; y < oh; y++ {
		r0, r1 := src[ylo[y]*w:], src[yhi[y]*w:]
		for x := 0; x < ow; x++ {
			a00, a01 := r0[xlo[x]], r0[xhi[x]]
			a10, a11 := r1[xlo[x]], r1[xhi[x]]
			v0 := a00 + (a01-a00)*dx[x]
			v1 := a10 + (a11-a10)*dx[x]
			dst[y*ow+x] = v0 + (v1-v0)*dy[y]
		}
	}
}
