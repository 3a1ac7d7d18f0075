package imagesynth

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Face regions, the values of FaceRegions.
const (
	Background = iota
	Hair
	Face
	Eyes
	Mouth
)

// RegionNames names the face regions, indexed by their constants.
var RegionNames = []string{"background", "hair", "face", "eyes", "mouth"}

// geometry, in coordinates u (left to right) and v (top to bottom) of the
// unit square.
const (
	faceU, faceV, faceRU, faceRV = 0.5, 0.55, 0.30, 0.36
	eyeV, eyeDU, eyeR            = 0.47, 0.13, 0.085
	mouthV, mouthRU, mouthRV     = 0.72, 0.14, 0.07
	hairTop, hairRU, hairRV      = 0.10, 0.40, 0.52
)

func unit(i, n int) float64 { return (float64(i) + 0.5) / float64(n) }

func sq(x float64) float64 { return x * x }

// FaceRegions returns the region of every pixel of an h×w face image.
func FaceRegions(h, w int) []int {
	out := make([]int, h*w)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			u, v := unit(x, w), unit(y, h)
			r := Background
			switch {
			case sq((u-0.5+eyeDU)/eyeR)+sq((v-eyeV)/eyeR) <= 1 || sq((u-0.5-eyeDU)/eyeR)+sq((v-eyeV)/eyeR) <= 1:
				r = Eyes
			case sq((u-0.5)/mouthRU)+sq((v-mouthV)/mouthRV) <= 1:
				r = Mouth
			case sq((u-faceU)/faceRU)+sq((v-faceV)/faceRV) <= 1:
				r = Face
			case sq((u-0.5)/hairRU)+sq((v-(hairTop+hairRV))/hairRV) <= 1 && v < faceV+0.1:
				r = Hair
			}
			out[y*w+x] = r
		}
	}
	return out
}

// Faces draws n grey h×w face images (one channel), values in [-1, 1].
// Per image and region, independently:
//
//   - background: brightness and a left-right gradient;
//   - hair: darkness, and the phase and strength of a wavy texture;
//   - face: skin brightness and the side of the lighting;
//   - eyes: iris size and darkness and the gaze (shared by both eyes);
//   - mouth: openness and lip darkness.
//
// Every pixel also gets independent noise (sd 0.03) before clipping.
func Faces(r *rand.Rand, n, h, w int) *mat.Dense {
	regions := FaceRegions(h, w)
	x := mat.NewDense(n, h*w, nil)
	for i := 0; i < n; i++ {
		bg, grad := r.Float64()*1.2-0.6, r.NormFloat64()*0.1
		hairDark, hairPhase, hairWave := -0.9+0.5*r.Float64(), 2*math.Pi*r.Float64(), 0.15*r.Float64()
		skin, light := -0.2+0.9*r.Float64(), r.NormFloat64()*0.1
		iris, irisDark, gaze := 0.4+0.5*r.Float64(), -0.9+0.4*r.Float64(), r.NormFloat64()*0.03
		open, lip := 0.2+0.8*r.Float64(), -0.5+0.6*r.Float64()
		row := x.RawRowView(i)
		for y := 0; y < h; y++ {
			for xx := 0; xx < w; xx++ {
				u, v := unit(xx, w), unit(y, h)
				var val float64
				switch regions[y*w+xx] {
				case Background:
					val = bg + grad*(u-0.5)
				case Hair:
					val = hairDark + hairWave*math.Sin(18*u+hairPhase)
				case Face:
					val = skin + light*(u-0.5)
				case Eyes:
					cu := 0.5 - eyeDU
					if u > 0.5 {
						cu = 0.5 + eyeDU
					}
					d := math.Hypot(u-cu-gaze, v-eyeV) / (eyeR * iris)
					// Bright sclera around a dark iris with a soft edge.
					val = 0.8 + (irisDark-0.8)*math.Exp(-d*d*d*d)
				case Mouth:
					d := sq((u-0.5)/mouthRU) + sq((v-mouthV)/(mouthRV*open))
					val = 0.5 + (lip-0.5)*math.Exp(-2*d*d)
				}
				row[y*w+xx] = clip(val + 0.03*r.NormFloat64())
			}
		}
	}
	return x
}

func clip(v float64) float64 { return math.Max(-1, math.Min(1, v)) }

// Rect returns the mask of the pixels in rows [top, bottom) and columns
// [left, right) of an h×w grid.
func Rect(h, w, top, left, bottom, right int) []bool {
	m := make([]bool, h*w)
	for y := max(0, top); y < min(h, bottom); y++ {
		for x := max(0, left); x < min(w, right); x++ {
			m[y*w+x] = true
		}
	}
	return m
}

// RegionMask returns the mask of the pixels whose region is r.
func RegionMask(regions []int, r int) []bool {
	m := make([]bool, len(regions))
	for i, v := range regions {
		m[i] = v == r
	}
	return m
}

// Noise returns a copy of the images x (c channels per pixel) with
// Gaussian noise of standard deviation sigma added to the pixels in mask,
// clipped to [-1, 1].
func Noise(r *rand.Rand, x *mat.Dense, c int, mask []bool, sigma float64) *mat.Dense {
	out := mat.DenseCopyOf(x)
	n, _ := out.Dims()
	for i := 0; i < n; i++ {
		row := out.RawRowView(i)
		for p, in := range mask {
			if in {
				for k := p * c; k < p*c+c; k++ {
					row[k] = clip(row[k] + sigma*r.NormFloat64())
				}
			}
		}
	}
	return out
}

// Fill returns a copy of the images x with every channel of the pixels in
// mask set to value (blanking).
func Fill(x *mat.Dense, c int, mask []bool, value float64) *mat.Dense {
	out := mat.DenseCopyOf(x)
	n, _ := out.Dims()
	for i := 0; i < n; i++ {
		row := out.RawRowView(i)
		for p, in := range mask {
			if in {
				for k := p * c; k < p*c+c; k++ {
					row[k] = value
				}
			}
		}
	}
	return out
}

// Blur returns a copy of the h×w images x (c channels) in which every
// pixel in mask is replaced by the mean of the (2·radius+1)² box around
// it in the original image (clipped at the border). Pixels outside the
// mask are unchanged, so the corruption stays in the region.
func Blur(x *mat.Dense, h, w, c int, mask []bool, radius int) *mat.Dense {
	out := mat.DenseCopyOf(x)
	n, _ := out.Dims()
	for i := 0; i < n; i++ {
		src := x.RawRowView(i)
		dst := out.RawRowView(i)
		for y := 0; y < h; y++ {
			for xx := 0; xx < w; xx++ {
				if !mask[y*w+xx] {
					continue
				}
				for k := 0; k < c; k++ {
					var s float64
					var cnt int
					for yy := max(0, y-radius); yy <= min(h-1, y+radius); yy++ {
						for x2 := max(0, xx-radius); x2 <= min(w-1, xx+radius); x2++ {
							s += src[(yy*w+x2)*c+k]
							cnt++
						}
					}
					dst[(y*w+xx)*c+k] = s / float64(cnt)
				}
			}
		}
	}
	return out
}
