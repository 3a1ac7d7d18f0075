package imagesynth

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

func TestFaceRegions(t *testing.T) {
	for _, s := range []int{8, 28, 64} {
		reg := FaceRegions(s, s)
		count := make([]int, len(RegionNames))
		for _, r := range reg {
			count[r]++
		}
		for r, c := range count {
			if c == 0 {
				t.Errorf("%dx%d: region %s is empty", s, s, RegionNames[r])
			}
		}
		// Left-right symmetric.
		for y := 0; y < s; y++ {
			for x := 0; x < s; x++ {
				if reg[y*s+x] != reg[y*s+s-1-x] {
					t.Fatalf("%dx%d: not symmetric at (%d, %d)", s, s, y, x)
				}
			}
		}
	}
}

// Pixels of one region move together; pixels of different regions are
// uncorrelated (independent by construction).
func TestFacesIndependentRegions(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const s, n = 32, 2000
	x := Faces(r, n, s, s)
	if lo, hi := mat.Min(x), mat.Max(x); lo < -1 || hi > 1 {
		t.Fatalf("values in [%v, %v], want within [-1, 1]", lo, hi)
	}
	reg := FaceRegions(s, s)
	pick := func(region int) int { return slices.Index(reg, region) }
	col := func(p int) []float64 { return mat.Col(nil, p, x) }
	// Two pixels of the face region (first and last).
	f1 := pick(Face)
	lastFace := -1
	for p, v := range reg {
		if v == Face {
			lastFace = p
		}
	}
	if c := stat.Correlation(col(f1), col(lastFace), nil); c < 0.5 {
		t.Errorf("two face pixels: correlation %.3f, want strong", c)
	}
	for _, pair := range [][2]int{{Background, Face}, {Hair, Eyes}, {Face, Mouth}, {Background, Hair}} {
		c := stat.Correlation(col(pick(pair[0])), col(pick(pair[1])), nil)
		if math.Abs(c) > 4/math.Sqrt(n) {
			t.Errorf("%s vs %s pixel: correlation %.3f, want ~0", RegionNames[pair[0]], RegionNames[pair[1]], c)
		}
	}
}

func TestCorruptionsStayInMask(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const h, w, c = 5, 6, 2
	x := mat.NewDense(3, h*w*c, nil)
	for i := range x.RawMatrix().Data {
		x.RawMatrix().Data[i] = r.Float64()*2 - 1
	}
	mask := Rect(h, w, 1, 2, 3, 10) // rows 1-2, columns 2-5 (clipped)
	if got := countTrue(mask); got != 8 {
		t.Fatalf("Rect: %d pixels, want 8", got)
	}
	for name, y := range map[string]*mat.Dense{
		"noise": Noise(r, x, c, mask, 0.5),
		"fill":  Fill(x, c, mask, -1),
		"blur":  Blur(x, h, w, c, mask, 1),
	} {
		changed := 0
		for i := 0; i < 3; i++ {
			for p := 0; p < h*w; p++ {
				for k := 0; k < c; k++ {
					a, b := x.At(i, p*c+k), y.At(i, p*c+k)
					if !mask[p] && a != b {
						t.Errorf("%s changed pixel %d outside the mask", name, p)
					}
					if mask[p] && a != b {
						changed++
					}
				}
			}
		}
		if changed == 0 {
			t.Errorf("%s changed nothing", name)
		}
	}
	// Blur by hand: pixel (1, 2), channel 0, of image 0 is the mean of
	// rows 0-2 and columns 1-3.
	var s float64
	for yy := 0; yy <= 2; yy++ {
		for xx := 1; xx <= 3; xx++ {
			s += x.At(0, (yy*w+xx)*c)
		}
	}
	if got := Blur(x, h, w, c, mask, 1).At(0, (1*w+2)*c); math.Abs(got-s/9) > 1e-15 {
		t.Errorf("blurred pixel = %v, want %v", got, s/9)
	}
	if got := Fill(x, c, mask, 0.25).At(2, (2*w+5)*c+1); got != 0.25 {
		t.Errorf("filled pixel = %v", got)
	}
}

func countTrue(m []bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}
