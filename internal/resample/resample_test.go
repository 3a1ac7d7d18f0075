package resample

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"testing"
)

// fixture is testdata/pillow.json, written by testdata/pillow_fixture.py
// with Pillow.
type fixture struct {
	Pillow string        `json:"pillow"`
	Cases  []fixtureCase `json:"cases"`
}

type fixtureCase struct {
	Mode, Filter, Kind string
	Seed               uint64
	W, H, OW, OH       int
	SHA256             string
	Head, Values       []float64
}

// splitmix returns the first n outputs of splitmix64 from seed, as the
// fixture script generates its inputs.
func splitmix(seed uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		z := seed + uint64(i+1)*0x9E3779B97F4A7C15
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		out[i] = z ^ (z >> 31)
	}
	return out
}

func bytesOf(kind string, z []uint64) []uint8 {
	b := make([]uint8, len(z))
	for i, v := range z {
		switch kind {
		case "noise":
			b[i] = uint8(v >> 56)
		case "binary":
			b[i] = uint8(v>>63) * 255
		default:
			panic(kind)
		}
	}
	return b
}

func floatsOf(kind string, z []uint64) []float32 {
	f := make([]float32, len(z))
	switch kind {
	case "frac":
		for i, v := range z {
			f[i] = float32(v>>40) / 65536
		}
	case "signed":
		for i, v := range z {
			f[i] = float32(int64(v>>40)-1<<23) / 65536
		}
	default:
		for i, b := range bytesOf(kind, z) {
			f[i] = float32(b)
		}
	}
	return f
}

// toPlanes turns interleaved h×w×c samples into c planes.
func toPlanes[T any](hwc []T, c int) []T {
	n := len(hwc) / c
	out := make([]T, len(hwc))
	for i := 0; i < n; i++ {
		for ch := 0; ch < c; ch++ {
			out[ch*n+i] = hwc[i*c+ch]
		}
	}
	return out
}

func loadFixture(t *testing.T) fixture {
	t.Helper()
	b, err := os.ReadFile("testdata/pillow.json")
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) == 0 {
		t.Fatal("no cases in testdata/pillow.json")
	}
	return f
}

func filterOf(t *testing.T, name string) Filter {
	switch name {
	case "bicubic":
		return Bicubic
	case "bilinear":
		return Bilinear
	}
	t.Fatalf("unknown filter %q", name)
	return 0
}

// TestPillow checks every fixture case byte for byte (8-bit) and bit for
// bit (float32) against what Pillow computed.
func TestPillow(t *testing.T) {
	f := loadFixture(t)
	for _, c := range f.Cases {
		name := c.Mode + "/" + c.Filter + "/" + c.Kind + "/" +
			itoa(c.W) + "x" + itoa(c.H) + "to" + itoa(c.OW) + "x" + itoa(c.OH)
		t.Run(name, func(t *testing.T) {
			flt := filterOf(t, c.Filter)
			ch := 1
			if c.Mode == "RGB" {
				ch = 3
			}
			z := splitmix(c.Seed, c.W*c.H*ch)
			var got []float64 // interleaved h×w×c, as numpy gave Pillow's output
			var raw []byte
			if c.Mode == "F" {
				out, err := Float32(floatsOf(c.Kind, z), c.W, c.H, c.OW, c.OH, flt)
				if err != nil {
					t.Fatal(err)
				}
				raw = make([]byte, 4*len(out))
				for i, v := range out {
					binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
					got = append(got, float64(v))
				}
			} else {
				planes, err := Uint8(toPlanes(bytesOf(c.Kind, z), ch), c.W, c.H, c.OW, c.OH, flt)
				if err != nil {
					t.Fatal(err)
				}
				n := c.OW * c.OH
				raw = make([]byte, len(planes))
				for i := 0; i < n; i++ {
					for k := 0; k < ch; k++ {
						raw[i*ch+k] = planes[k*n+i]
					}
				}
				for _, v := range raw {
					got = append(got, float64(v))
				}
			}
			want := c.Values
			if want == nil {
				want = c.Head
			}
			for i, w := range want {
				if got[i] != w {
					t.Fatalf("value %d (row %d, column %d) = %v, Pillow %s gives %v",
						i, i/ch/c.OW, i/ch%c.OW, got[i], f.Pillow, w)
				}
			}
			sum := sha256.Sum256(raw)
			if h := hex.EncodeToString(sum[:]); h != c.SHA256 {
				t.Fatalf("output differs from Pillow %s's (sha256 %s, want %s); first %d values agree",
					f.Pillow, h, c.SHA256, len(want))
			}
		})
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func TestNewPlanErrors(t *testing.T) {
	for _, c := range []struct {
		w, h, ow, oh int
		f            Filter
	}{
		{0, 1, 1, 1, Bicubic},
		{1, 1, 1, -1, Bicubic},
		{MaxSize + 1, 1, 1, 1, Bilinear},
		{1, 1, 1, 1, 0},
		{1, 1, 1, 1, Filter(7)},
	} {
		if _, err := NewPlan(c.w, c.h, c.ow, c.oh, c.f); err == nil {
			t.Errorf("NewPlan(%d, %d, %d, %d, %v) accepted", c.w, c.h, c.ow, c.oh, c.f)
		}
	}
	if _, err := Uint8(make([]uint8, 5), 2, 2, 1, 1, Bicubic); err == nil {
		t.Error("Uint8 accepted 5 samples as 2x2 planes")
	}
	if _, err := Float32(nil, 2, 2, 1, 1, Bicubic); err == nil {
		t.Error("Float32 accepted no samples")
	}
}

func TestPlanPanicsOnLengths(t *testing.T) {
	p, err := NewPlan(4, 4, 2, 2, Bicubic)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dst, src int }{{4, 15}, {8, 16}, {0, 0}, {4, 32}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Uint8 with %d destination and %d source samples did not panic", c.dst, c.src)
				}
			}()
			p.Uint8(make([]uint8, c.dst), make([]uint8, c.src))
		}()
	}
}

// TestPlanes checks that a plan resizes several planes as it resizes each
// one alone, and that it can be reused (it keeps no state between calls).
func TestPlanes(t *testing.T) {
	p, err := NewPlan(37, 21, 16, 40, Bicubic)
	if err != nil {
		t.Fatal(err)
	}
	src := bytesOf("noise", splitmix(7, 3*37*21))
	all := make([]uint8, 3*16*40)
	p.Uint8(all, src)
	fsrc := floatsOf("frac", splitmix(8, 3*37*21))
	fall := make([]float32, 3*16*40)
	p.Float32(fall, fsrc)
	for c := 0; c < 3; c++ {
		one := make([]uint8, 16*40)
		p.Uint8(one, src[c*37*21:(c+1)*37*21])
		fone := make([]float32, 16*40)
		p.Float32(fone, fsrc[c*37*21:(c+1)*37*21])
		for i := range one {
			if one[i] != all[c*16*40+i] || fone[i] != fall[c*16*40+i] {
				t.Fatalf("plane %d sample %d: alone %d/%v, among three %d/%v",
					c, i, one[i], fone[i], all[c*16*40+i], fall[c*16*40+i])
			}
		}
	}
}

// TestWeights checks the weight tables against closed forms: bicubic
// upscaling by 2 puts output 0's centre at 0.25 in input coordinates,
// where input j is centred at j + 0.5: inputs 0 and 1 at distances 0.25
// and 1.25 get Keys' cubic (a = −0.5); inputs −1 and −2 (0.75, 1.75) fall
// outside the image and are dropped before normalising; input 2 (2.25)
// is beyond the support.
func TestWeights(t *testing.T) {
	keys := func(x float64) float64 {
		x = math.Abs(x)
		switch {
		case x < 1:
			return 1.5*x*x*x - 2.5*x*x + 1
		case x < 2:
			return -0.5*x*x*x + 2.5*x*x - 4*x + 2
		}
		return 0
	}
	tp := newTaps(8, 16, Bicubic)
	raw := []float64{keys(0.25), keys(1.25)}
	sum := raw[0] + raw[1]
	if tp.start[0] != 0 || tp.n[0] != 2 {
		t.Fatalf("output 0 reads inputs [%d, %d), want [0, 2)", tp.start[0], tp.start[0]+tp.n[0])
	}
	for j, r := range raw {
		if got := tp.k[j]; math.Abs(got-r/sum) > 1e-15 {
			t.Errorf("weight %d = %v, want %v", j, got, r/sum)
		}
	}
	// Downscaling by 4 widens the support to 8 input samples each side.
	td := newTaps(64, 16, Bicubic)
	if td.n[5] != 16 {
		t.Errorf("downscaling by 4 reads %d inputs per output, want 16", td.n[5])
	}
	// Fixed-point weights carry 22 fractional bits and sum to 2^22 within
	// rounding of each.
	var s int32
	for j := 0; j < td.n[5]; j++ {
		s += td.fixed[5*td.ksize+j]
	}
	if d := s - 1<<22; d < -int32(td.n[5]) || d > int32(td.n[5]) {
		t.Errorf("fixed-point weights sum to %d, want 2^22 = %d within %d", s, 1<<22, td.n[5])
	}
}
