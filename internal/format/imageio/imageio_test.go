package imageio

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/tensor/membudget"
)

func writeNPY(t *testing.T, dir, name string, shape []int, data []float64) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := dataio.WriteNPY(p, &dataio.Array{Shape: shape, Data: data}); err != nil {
		t.Fatal(err)
	}
	return p
}

func seq(n int, f func(i int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// chw reorders n images of p pixels with c channels from channels-last
// to channels-first layout.
func chw(hwc []float64, n, p, c int) []float64 {
	out := make([]float64, len(hwc))
	for i := 0; i < n; i++ {
		for q := 0; q < p; q++ {
			for k := 0; k < c; k++ {
				out[i*p*c+k*p+q] = hwc[i*p*c+q*c+k]
			}
		}
	}
	return out
}

func TestReadShapes(t *testing.T) {
	dir := t.TempDir()
	// 2 images of 2x5 pixels, 3 channels, values 0..59 (channels last).
	hwc := seq(60, func(i int) float64 { return float64(i) })
	scaled := seq(60, func(i int) float64 { return 2*float64(i)/255 - 1 })
	// 2 images of 2x3 pixels, 3 channels: (2, 3, 2, 3) is ambiguous.
	small := seq(36, func(i int) float64 { return float64(i) })
	tests := []struct {
		name  string
		shape []int
		data  []float64
		opt   Options
		want  Shape
		vals  []float64
	}{
		{"NHWC", []int{2, 2, 5, 3}, hwc, Options{}, Shape{2, 5, 3}, scaled},
		{"NCHW", []int{2, 3, 2, 5}, chw(hwc, 2, 10, 3), Options{}, Shape{2, 5, 3}, scaled},
		{"ambiguous read as NHWC", []int{2, 2, 3, 3}, small, Options{}, Shape{2, 3, 3}, scaled[:36]},
		{"ambiguous NCHW by --shape", []int{2, 3, 2, 3}, chw(small, 2, 6, 3), Options{Shape: Shape{2, 3, 3}}, Shape{2, 3, 3}, scaled[:36]},
		{"NHW", []int{3, 4, 5}, hwc, Options{}, Shape{4, 5, 1}, scaled},
		{"flat with shape", []int{2, 30}, hwc, Options{Shape: Shape{2, 5, 3}}, Shape{2, 5, 3}, scaled},
		{"flat square", []int{4, 9}, small, Options{}, Shape{3, 3, 1}, scaled[:36]},
		{"explicit range", []int{2, 30}, hwc, Options{Shape: Shape{2, 5, 3}, Range: Range{0, 59}},
			Shape{2, 5, 3}, seq(60, func(i int) float64 { return 2*float64(i)/59 - 1 })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeNPY(t, dir, strings.ReplaceAll(tc.name, " ", "_")+".npy", tc.shape, tc.data)
			s, err := Read(p, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if s.Shape != tc.want {
				t.Fatalf("shape %v, want %v", s.Shape, tc.want)
			}
			got := s.Images.RawMatrix().Data
			for i, v := range tc.vals {
				if math.Abs(got[i]-v) > 1e-15 {
					t.Fatalf("value %d = %v, want %v", i, got[i], v)
				}
			}
		})
	}
}

func TestDetectRange(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   Range
	}{
		{-1, 1, Range{-1, 1}},
		{-0.5, 0.9, Range{-1, 1}},
		{0, 1, Range{0, 1}},
		{0.2, 0.3, Range{0, 1}},
		{0, 16, Range{0, 255}},
		{3, 255, Range{0, 255}},
		{0, 4095, Range{0, 65535}},
	}
	for _, tc := range tests {
		if got, err := DetectRange(tc.lo, tc.hi); err != nil || got != tc.want {
			t.Errorf("DetectRange(%v, %v) = %v, %v; want %v", tc.lo, tc.hi, got, err, tc.want)
		}
	}
	for _, bad := range [][2]float64{{-2, 1}, {0, 70000}, {-1, 2}} {
		if _, err := DetectRange(bad[0], bad[1]); err == nil {
			t.Errorf("DetectRange(%v): no error", bad)
		}
	}
}

func writePNG(t *testing.T, path string, img image.Image) {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadPNGFolder(t *testing.T) {
	dir := t.TempDir()
	grey := filepath.Join(dir, "grey")
	os.Mkdir(grey, 0o755)
	// Written out of name order; read in name order.
	for _, i := range []int{2, 0, 1} {
		img := image.NewGray(image.Rect(0, 0, 3, 2))
		for p := range img.Pix {
			img.Pix[p] = uint8(100*i + p)
		}
		writePNG(t, filepath.Join(grey, "img"+string(rune('0'+i))+".png"), img)
	}
	os.WriteFile(filepath.Join(grey, "notes.txt"), []byte("ignored"), 0o644)
	s, err := Read(grey, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Shape != (Shape{2, 3, 1}) || s.Len() != 3 {
		t.Fatalf("shape %v, %d images", s.Shape, s.Len())
	}
	for i := 0; i < 3; i++ {
		for p := 0; p < 6; p++ {
			if want := 2*float64(100*i+p)/255 - 1; math.Abs(s.Images.At(i, p)-want) > 1e-12 {
				t.Fatalf("image %d pixel %d = %v, want %v", i, p, s.Images.At(i, p), want)
			}
		}
	}

	// One colour image makes the set RGB; a 16-bit grey one is scaled by 65535.
	mixed := filepath.Join(dir, "mixed")
	os.Mkdir(mixed, 0o755)
	rgb := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	rgb.Set(0, 0, color.NRGBA{255, 0, 51, 255})
	rgb.Set(1, 0, color.NRGBA{0, 255, 0, 128})
	writePNG(t, filepath.Join(mixed, "a.png"), rgb)
	g16 := image.NewGray16(image.Rect(0, 0, 2, 1))
	g16.SetGray16(0, 0, color.Gray16{65535})
	g16.SetGray16(1, 0, color.Gray16{0})
	writePNG(t, filepath.Join(mixed, "b.png"), g16)
	s, err = Read(mixed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, -1, 2*51.0/255 - 1, -1, 1, -1, 1, 1, 1, -1, -1, -1}
	if s.Shape != (Shape{1, 2, 3}) || !slices.EqualFunc(s.Images.RawMatrix().Data, want, func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }) {
		t.Errorf("mixed folder: shape %v, data %v; want %v", s.Shape, s.Images.RawMatrix().Data, want)
	}

	// Bad folders.
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	sizes := filepath.Join(dir, "sizes")
	os.Mkdir(sizes, 0o755)
	writePNG(t, filepath.Join(sizes, "a.png"), image.NewGray(image.Rect(0, 0, 2, 2)))
	writePNG(t, filepath.Join(sizes, "b.png"), image.NewGray(image.Rect(0, 0, 3, 2)))
	broken := filepath.Join(dir, "broken")
	os.Mkdir(broken, 0o755)
	os.WriteFile(filepath.Join(broken, "a.png"), []byte("\x89PNG\r\n\x1a\nnot really"), 0o644)
	for _, tc := range []struct{ dir, want string }{
		{empty, "no .png files"},
		{sizes, "b.png: image is 2x3"},
		{broken, "a.png: not a readable image"},
	} {
		_, err := Read(tc.dir, Options{})
		var ie *fault.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want an InputError containing %q", tc.dir, err, tc.want)
		}
	}
}

func TestReadBadInput(t *testing.T) {
	dir := t.TempDir()
	nan := filepath.Join(dir, "nan.csv")
	os.WriteFile(nan, []byte("0,1,2,3\n1,NaN,3,4\n"), 0o644)
	tests := []struct {
		name, path string
		opt        Options
		want       string
	}{
		{"missing", filepath.Join(dir, "nope.npy"), Options{}, "cannot read"},
		{"not square", writeNPY(t, dir, "flat.npy", []int{2, 6}, make([]float64, 12)), Options{}, "give --shape"},
		{"shape mismatch", writeNPY(t, dir, "flat2.npy", []int{2, 6}, make([]float64, 12)), Options{Shape: Shape{2, 2, 1}}, "check --shape"},
		{"shape disagrees", writeNPY(t, dir, "cube.npy", []int{2, 2, 3}, make([]float64, 12)), Options{Shape: Shape{3, 2, 1}}, "--shape says"},
		{"rank 1", writeNPY(t, dir, "vec.npy", []int{4}, make([]float64, 4)), Options{}, "want images"},
		{"5 channels", writeNPY(t, dir, "c5.npy", []int{1, 5, 6, 7}, make([]float64, 210)), Options{}, "C from 1 to 4"},
		{"range", writeNPY(t, dir, "wide.npy", []int{1, 2, 2}, []float64{0, 1, 2, 70000}), Options{}, "--pixel-range"},
		{"outside range", writeNPY(t, dir, "out.npy", []int{2, 2, 2}, []float64{0, 1, 2, 3, 4, 5, 6, 300}), Options{Range: Range{0, 255}},
			"row 2: pixel (1, 1) channel 0: value 300 outside the pixel range [0, 255]"},
		{"NaN", nan, Options{}, "NaN"},
		{"key on folder", dir, Options{Key: "x"}, "has no array"},
	}
	for _, tc := range tests {
		_, err := Read(tc.path, tc.opt)
		var ie *fault.InputError
		// The message names request fields, which the command line
		// spells as its flags.
		if !errors.As(err, &ie) || !strings.Contains(ie.Render(func(f string) string { return "--" + strings.ReplaceAll(f, "_", "-") }), tc.want) {
			t.Errorf("%s: error %v, want an InputError containing %q", tc.name, err, tc.want)
		}
	}
}

func TestParseShapeAndRange(t *testing.T) {
	for s, want := range map[string]Shape{"28x28": {28, 28, 1}, "64X64x3": {64, 64, 3}, " 8x8 ": {8, 8, 1}} {
		if got, err := ParseShape(s); err != nil || got != want {
			t.Errorf("ParseShape(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"28", "0x3", "axb", "1x2x3x4", "-1x4"} {
		if _, err := ParseShape(s); err == nil {
			t.Errorf("ParseShape(%q): no error", s)
		}
	}
	for s, want := range map[string]Range{"auto": {}, "0,255": {0, 255}, "-1, 1": {-1, 1}} {
		if got, err := ParseRange(s); err != nil || got != want {
			t.Errorf("ParseRange(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"1,0", "0", "a,b", "0,inf"} {
		if _, err := ParseRange(s); err == nil {
			t.Errorf("ParseRange(%q): no error", s)
		}
	}
}

func TestCheckSameShape(t *testing.T) {
	a := &Set{Path: "a.npy", Shape: Shape{8, 8, 1}}
	b := &Set{Path: "b.npy", Shape: Shape{8, 8, 3}}
	if err := CheckSameShape(a, a); err != nil {
		t.Error(err)
	}
	err := CheckSameShape(a, a, b)
	if err == nil || !strings.Contains(err.Error(), "b.npy") || !strings.Contains(err.Error(), "a.npy has 8x8") {
		t.Errorf("error %v", err)
	}
}

// The pixel matrix of a folder is priced (n × H·W·C × 8 bytes) before it
// is allocated, and each image at its decoded price before its pixels
// are decoded: over the budget, a one-line InputError names the figure
// that did not fit and what to change; within it the folder reads.
func TestReadPNGFolderBudget(t *testing.T) {
	dir := t.TempDir()
	three := filepath.Join(dir, "three") // 3 grey 16x16: a 6 KiB matrix, 4 KiB to decode each
	os.Mkdir(three, 0o755)
	for _, name := range []string{"a.png", "b.png", "c.png"} {
		writePNG(t, filepath.Join(three, name), image.NewGray(image.Rect(0, 0, 16, 16)))
	}
	one := filepath.Join(dir, "one") // 1 grey 32x32: an 8 KiB matrix, 16 KiB to decode
	os.Mkdir(one, 0o755)
	writePNG(t, filepath.Join(one, "a.png"), image.NewGray(image.Rect(0, 0, 32, 32)))
	// An array read (and priced) by dataio becomes the matrix itself,
	// but channels first it is copied channels last: a 6 KiB copy here.
	nchw := func() (*Set, error) {
		return FromArray("nchw.npy", &dataio.Array{Shape: []int{4, 3, 8, 8}, Data: make([]float64, 4*3*8*8)}, Options{Range: Range{0, 255}})
	}
	read := func(path string) func() (*Set, error) {
		return func() (*Set, error) { return Read(path, Options{Range: Range{0, 255}}) }
	}
	for _, tc := range []struct {
		name   string
		read   func() (*Set, error)
		budget int64
		want   []string // nil when it fits
	}{
		{"matrix over", read(three), 5 << 10, []string{"three: the pixel matrix of 3 images of 16x16", "takes 6 KiB", "budget of 5 KiB", "fewer images or smaller ones", "--matrix-budget-mb"}},
		{"matrix fits", read(three), 6 << 10, nil},
		{"decoding over", read(one), 12 << 10, []string{"a.png: decoding and preprocessing the image (32x32", "takes 16 KiB", "budget of 12 KiB", "downsample", "--matrix-budget-mb"}},
		{"decoding fits", read(one), 16 << 10, nil},
		{"channels-last copy over", nchw, 5 << 10, []string{"nchw.npy: the pixel matrix of 4 images of 8x8x3", "takes 6 KiB"}},
		{"channels-last copy fits", nchw, 6 << 10, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer membudget.SetLimit(membudget.SetLimit(tc.budget))
			s, err := tc.read()
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if s.Len() < 1 || mat.Min(s.Images) != -1 {
					t.Errorf("read %d images, least value %v; want black images at -1", s.Len(), mat.Min(s.Images))
				}
				return
			}
			var ie *fault.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v, want an InputError", err)
			}
			msg := ie.Render(func(f string) string { return "--" + strings.ReplaceAll(f, "_", "-") })
			if strings.Contains(msg, "\n") {
				t.Errorf("message of more than one line: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
		})
	}
}
