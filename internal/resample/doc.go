// Package resample resizes images exactly as Pillow's Image.resize does
// with the BILINEAR and BICUBIC filters, so that preprocessing written
// against Pillow (clean-fid's FID, dgm-eval's DINOv2 features, CLIP's
// transforms) gives the same network input in Go, bit for bit.
//
// # Algorithm
//
// Pillow resamples separably: a horizontal pass, then a vertical pass on
// its output, each skipped when that dimension keeps its size. For an
// output sample i of a pass from in to out samples, with
// scale = in/out and filterscale = max(scale, 1):
//
//	center = (i + 0.5)·scale
//	support = filter support · filterscale   (2 for bicubic, 1 for bilinear)
//	taps j in [trunc(center − support + 0.5), trunc(center + support + 0.5)), clipped to [0, in)
//	w_j = filter((j − center + 0.5) / filterscale), then divided by their sum
//
// so that downscaling widens the filter by the scale factor (Pillow's
// antialiasing) and upscaling interpolates. The bicubic filter is Keys'
// cubic convolution with a = −0.5; the bilinear filter is the triangle.
// All of this is float64 arithmetic, evaluated in Pillow's order without
// fused multiply-adds.
//
// Two sample types follow Pillow's two code paths:
//
//   - Uint8 (modes L, RGB, ...): the weights become fixed-point integers
//     with 22 fractional bits (32 − 8 − 2: 8 bits of pixel, 2 of
//     headroom for the negative lobes), rounded half away from zero; each
//     output is the int32 sum of pixel × weight plus one half, shifted
//     right by 22 and clipped to [0, 255]. The horizontal pass is
//     rounded and clipped to 8 bits before the vertical pass reads it.
//     Channels are independent, so an RGB image is three planes.
//   - Float32 (mode F, which clean-fid uses per channel): each output is
//     the float64 sum of float32 pixel × float64 weight, stored as
//     float32 after each pass; nothing is clipped.
//
// Tests compare both against outputs Pillow 9.4 computed (testdata), for
// down- and up-scaling, odd and non-square sizes, byte for byte and bit
// for bit.
//
// A Plan holds the weights for one input and output size and is safe for
// concurrent use; resizing many images of one size reuses it.
package resample
