package vit

import "math"

// cubicA is the Keys cubic-convolution parameter PyTorch's bicubic
// interpolation uses.
const cubicA = -0.75

// cubicTaps returns, for each of out outputs, the four source indices
// (clamped to the input) and weights of torch's upsample_bicubic2d with
// align_corners=False and an explicit scale factor, in float32 as
// PyTorch computes them for float32 tensors: the source coordinate is
// (i + 0.5)/scale − 0.5, where 1/scale is taken in float64 and rounded to
// float32 once (area_pixel_compute_scale with a given scale), and the
// fractional part t weighs taps −1..2 by the Keys kernel at t+1, t, 1−t,
// 2−t.
func cubicTaps(in, out int, scale float64) (idx [][4]int, wt [][4]float32) {
	s := float32(1 / scale)
	idx, wt = make([][4]int, out), make([][4]float32, out)
	const a = float32(cubicA)
	cc1 := func(x float32) float32 { // |x| <= 1
		return float32(float32(float32(float32((a+2)*x)-(a+3))*x)*x) + 1
	}
	cc2 := func(x float32) float32 { // 1 < |x| < 2
		return float32(float32(float32(float32(float32(a*x)-5*a)*x)+8*a)*x) - 4*a
	}
	for i := 0; i < out; i++ {
		real := float32(s*float32(float32(i)+0.5)) - 0.5
		i0 := min(int(math.Floor(float64(real))), in-1)
		t := min(max(real-float32(i0), 0), 1)
		wt[i] = [4]float32{cc2(t + 1), cc1(t), cc1(1 - t), cc2(2 - t)}
		for j := 0; j < 4; j++ {
			idx[i][j] = min(max(i0-1+j, 0), in-1)
		}
	}
	return idx, wt
}

// bicubicTokens resizes a token grid: src holds ih·iw rows of c values
// (row-major over the grid, a channel per column, the layout of a ViT's
// patch tokens), dst receives oh·ow rows. Every channel is interpolated
// as torch.nn.functional.interpolate(mode="bicubic",
// align_corners=False, antialias=False, scale_factor=(scaleH, scaleW))
// interpolates a 1×c×ih×iw tensor, summing the four rows of four columns
// in the order PyTorch's CPU kernel does.
func bicubicTokens(src []float32, ih, iw, c int, dst []float32, oh, ow int, scaleH, scaleW float64) {
	yi, yw := cubicTaps(ih, oh, scaleH)
	xi, xw := cubicTaps(iw, ow, scaleW)
	row := make([]float32, c)
	for y := 0; y < oh; y++ {
		for x := 0; x < ow; x++ {
			out := dst[(y*ow+x)*c : (y*ow+x+1)*c]
			for j := 0; j < 4; j++ {
				r := src[yi[y][j]*iw*c:]
				for ch := range row {
					v := float32(r[xi[x][0]*c+ch] * xw[x][0])
					v += float32(r[xi[x][1]*c+ch] * xw[x][1])
					v += float32(r[xi[x][2]*c+ch] * xw[x][2])
					v += float32(r[xi[x][3]*c+ch] * xw[x][3])
					row[ch] = v
				}
				for ch, v := range row {
					if j == 0 {
						out[ch] = float32(v * yw[y][0])
					} else {
						out[ch] += float32(v * yw[y][j])
					}
				}
			}
		}
	}
}
