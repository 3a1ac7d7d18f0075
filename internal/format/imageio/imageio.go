package imageio

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"io/fs"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/fields"
	"github.com/genlens/genlens/internal/tensor/membudget"
	"github.com/genlens/genlens/network/features"
)

// Shape is the shape of one image: H rows, W columns, C channels. The
// zero Shape means "infer".
type Shape struct{ H, W, C int }

func (s Shape) String() string {
	if s.C == 1 {
		return fmt.Sprintf("%dx%d", s.H, s.W)
	}
	return fmt.Sprintf("%dx%dx%d", s.H, s.W, s.C)
}

// ParseShape parses "HxW" (grey) or "HxWxC".
func ParseShape(s string) (Shape, error) {
	parts := strings.Split(strings.ToLower(strings.TrimSpace(s)), "x")
	if len(parts) != 2 && len(parts) != 3 {
		return Shape{}, fmt.Errorf("imageio: shape %q: want HxW or HxWxC", s)
	}
	v := []int{0, 0, 1}
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 {
			return Shape{}, fmt.Errorf("imageio: shape %q: want HxW or HxWxC with positive integers", s)
		}
		v[i] = n
	}
	return Shape{v[0], v[1], v[2]}, nil
}

// Range is the interval of source pixel values mapped to [-1, 1]. The
// zero Range means "detect".
type Range struct{ Lo, Hi float64 }

func (r Range) String() string {
	return fmt.Sprintf("[%s, %s]", strconv.FormatFloat(r.Lo, 'g', -1, 64), strconv.FormatFloat(r.Hi, 'g', -1, 64))
}

func (r Range) isZero() bool { return r.Lo == 0 && r.Hi == 0 }

// ParseRange parses "LO,HI" (e.g. "0,255") or "auto" (the zero Range).
func ParseRange(s string) (Range, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "auto") || s == "" {
		return Range{}, nil
	}
	lo, hi, ok := strings.Cut(s, ",")
	a, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
	b, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
	if !ok || err1 != nil || err2 != nil || !(a < b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return Range{}, fmt.Errorf("imageio: pixel range %q: want auto or LO,HI with LO < HI (e.g. 0,255)", s)
	}
	return Range{a, b}, nil
}

// Options control Read.
type Options struct {
	Key   string // .npz member; "" for the only one
	Shape Shape  // needed for flattened (N, D) arrays that are not square grey images
	Range Range  // source range; zero to detect
	Sep   rune   // field separator of a CSV file; 0 is the comma
}

// Set is a set of N images of one shape, one image per row of Images,
// scaled to [-1, 1].
type Set struct {
	Path   string
	Key    string // .npz member it came from, if any
	Shape  Shape
	Range  Range // the source range that was mapped to [-1, 1]
	Images *mat.Dense
}

// Len returns the number of images.
func (s *Set) Len() int { r, _ := s.Images.Dims(); return r }

// Read reads an image set from a .npy/.npz/.csv file (optionally .gz) or
// a folder of PNG files of the host (ReadFS on dataio.HostFS).
func Read(path string, opt Options) (*Set, error) { return ReadFS(dataio.HostFS, path, opt) }

// ReadFS reads an image set from a .npy/.npz/.csv file (optionally .gz)
// or a folder of PNG files in fsys.
func ReadFS(fsys fs.FS, path string, opt Options) (*Set, error) {
	st, err := fs.Stat(fsys, path)
	if err != nil {
		return nil, &fault.InputError{File: path, Msg: "cannot read: " + dataio.Cause(err), Err: err}
	}
	if st.IsDir() {
		if opt.Key != "" {
			return nil, &fault.InputError{File: path, Msg: fmt.Sprintf("a PNG folder has no array %q", opt.Key)}
		}
		return readPNGDir(fsys, path, opt)
	}
	a, err := dataio.ReadArrayFS(fsys, path, dataio.ReadOptions{Key: opt.Key, Sep: opt.Sep})
	if err != nil {
		return nil, err
	}
	return FromArray(path, a, opt)
}

// FromArray turns an array read from path into an image set: it infers
// the image shape (see the package documentation), moves channels last
// and scales to [-1, 1]. It takes a's values over: the set's matrix is
// a.Data itself, scaled in place, unless the channels came first.
func FromArray(path string, a *dataio.Array, opt Options) (*Set, error) {
	bad := func(format string, args ...any) error {
		return &fault.InputError{File: path, Key: opt.Key, Msg: fmt.Sprintf(format, args...)}
	}
	if a.Size() == 0 {
		return nil, bad("no images")
	}
	var sh Shape
	first := false // channels first: (N, C, H, W)
	data := a.Data
	n := a.Shape[0]
	switch a.Rank() {
	case 2:
		d := a.Shape[1]
		switch {
		case opt.Shape != (Shape{}):
			sh = opt.Shape
			if sh.H*sh.W*sh.C != d {
				return nil, bad("rows of %d values do not hold %v images (%d values); check {shape}", d, sh, sh.H*sh.W*sh.C)
			}
		default:
			side := int(math.Round(math.Sqrt(float64(d))))
			if side*side != d {
				return nil, bad("rows of %d values are flattened images of unknown shape; give {shape} HxW or HxWxC", d)
			}
			sh = Shape{side, side, 1}
		}
	case 3:
		sh = Shape{a.Shape[1], a.Shape[2], 1}
	case 4:
		nhwc := Shape{a.Shape[1], a.Shape[2], a.Shape[3]}
		nchw := Shape{a.Shape[2], a.Shape[3], a.Shape[1]}
		switch {
		case opt.Shape != (Shape{}) && opt.Shape == nhwc:
			sh = nhwc
		case opt.Shape != (Shape{}) && opt.Shape == nchw:
			sh, first = nchw, true
		case opt.Shape != (Shape{}):
			return nil, bad("shape %v holds neither (N, H, W, C) nor (N, C, H, W) images of {shape} %v", a.Shape, opt.Shape)
		case nhwc.C <= 4:
			sh = nhwc
		case nchw.C <= 4:
			sh, first = nchw, true
		default:
			return nil, bad("shape %v: want (N, H, W, C) or (N, C, H, W) with C from 1 to 4", a.Shape)
		}
	default:
		return nil, bad("shape %v: want images as (N, H, W), (N, H, W, C), (N, C, H, W) or flattened (N, D)", a.Shape)
	}
	if a.Rank() > 2 && opt.Shape != (Shape{}) && opt.Shape != sh {
		return nil, bad("images are %v, {shape} says %v", sh, opt.Shape)
	}
	if n < 1 {
		return nil, bad("no images")
	}
	// The array's values become the matrix (FromArray takes them over),
	// unless the channels come first: their copy, channels last, is a
	// new matrix, priced before it is made.
	if first {
		if err := checkMatrix(path, opt.Key, n, sh); err != nil {
			return nil, err
		}
		data = channelsLast(a.Data, n, sh.C, sh.H*sh.W)
	}
	x := mat.NewDense(n, sh.H*sh.W*sh.C, data)
	r, err := scale(path, opt.Key, x, sh, opt.Range)
	if err != nil {
		return nil, err
	}
	return &Set{Path: path, Key: opt.Key, Shape: sh, Range: r, Images: x}, nil
}

// channelsLast reorders n images from (C, P) to (P, C) layout.
func channelsLast(src []float64, n, c, p int) []float64 {
	out := make([]float64, len(src))
	for i := 0; i < n; i++ {
		s := src[i*c*p : (i+1)*c*p]
		d := out[i*c*p : (i+1)*c*p]
		for k := 0; k < c; k++ {
			for q := 0; q < p; q++ {
				d[q*c+k] = s[k*p+q]
			}
		}
	}
	return out
}

// DetectRange returns the source range of pixel values in [lo, hi] by
// the rules of the package documentation.
func DetectRange(lo, hi float64) (Range, error) {
	switch {
	case lo >= -1 && hi <= 1 && lo < 0:
		return Range{-1, 1}, nil
	case lo >= 0 && hi <= 1:
		return Range{0, 1}, nil
	case lo >= 0 && hi <= 255:
		return Range{0, 255}, nil
	case lo >= 0 && hi <= 65535:
		return Range{0, 65535}, nil
	}
	return Range{}, fields.Errorf("pixel values span [%g, %g], not a known image range; give {pixel_range} LO,HI", lo, hi)
}

// scale maps x from its source range to [-1, 1] in place.
func scale(path, key string, x *mat.Dense, sh Shape, r Range) (Range, error) {
	lo, hi := mat.Min(x), mat.Max(x)
	if r.isZero() {
		var err error
		if r, err = DetectRange(lo, hi); err != nil {
			return Range{}, &fault.InputError{File: path, Key: key, Msg: err.(*fields.Error).Msg}
		}
	}
	raw := x.RawMatrix()
	for i := 0; i < raw.Rows; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
		for j, v := range row {
			if v < r.Lo || v > r.Hi {
				p := j / sh.C
				return Range{}, &fault.InputError{File: path, Key: key, Line: i + 1,
					Field: fmt.Sprintf("pixel (%d, %d) channel %d", p/sh.W, p%sh.W, j%sh.C),
					Msg:   fmt.Sprintf("value %g outside the pixel range %v", v, r)}
			}
			row[j] = 2*(v-r.Lo)/(r.Hi-r.Lo) - 1
		}
	}
	return r, nil
}

// readPNGDir reads every .png file of dir, in name order. The headers
// come first: they give the images' size and whether the set is grey, so
// that the pixel matrix is priced (checkMatrix) before it is allocated,
// and each image is then decoded (admitted at its own price), copied
// into its row and dropped, so that no more than one decoded image is
// held beside the matrix.
func readPNGDir(fsys fs.FS, dir string, opt Options) (*Set, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, &fault.InputError{File: dir, Msg: "cannot list: " + dataio.Cause(err), Err: err}
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && strings.EqualFold(path.Ext(e.Name()), ".png") {
			files = append(files, path.Join(dir, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, &fault.InputError{File: dir, Msg: "no .png files in the folder"}
	}
	slices.Sort(files)
	var first image.Config
	colour := false
	for i, f := range files {
		cfg, err := features.ImageConfig(fsys, f)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			first = cfg
		} else if cfg.Width != first.Width || cfg.Height != first.Height {
			return nil, &fault.InputError{File: f, Msg: fmt.Sprintf("image is %dx%d, %s is %dx%d (all images must have one size)",
				cfg.Height, cfg.Width, path.Base(files[0]), first.Height, first.Width)}
		}
		switch cfg.ColorModel {
		case color.GrayModel, color.Gray16Model:
		default:
			colour = true
		}
	}
	sh := Shape{first.Height, first.Width, 1}
	if colour {
		sh.C = 3
	}
	if opt.Shape != (Shape{}) && opt.Shape != sh {
		return nil, &fault.InputError{File: dir, Msg: fmt.Sprintf("images are %v, {shape} says %v", sh, opt.Shape)}
	}
	if err := checkMatrix(dir, "", len(files), sh); err != nil {
		return nil, err
	}
	x := mat.NewDense(len(files), sh.H*sh.W*sh.C, nil)
	for i, f := range files {
		img, release, err := features.DecodeImageReserved(fsys, f)
		if err != nil {
			return nil, err
		}
		row := x.RawRowView(i)
		bi := img.Bounds()
		for y := 0; y < sh.H; y++ {
			for xx := 0; xx < sh.W; xx++ {
				c := color.NRGBA64Model.Convert(img.At(bi.Min.X+xx, bi.Min.Y+y)).(color.NRGBA64)
				p := (y*sh.W + xx) * sh.C
				if sh.C == 1 {
					row[p] = float64(c.R)
					continue
				}
				row[p], row[p+1], row[p+2] = float64(c.R), float64(c.G), float64(c.B)
			}
		}
		release()
	}
	// Any bit depth arrives as 16-bit; an 8-bit value v is v·257, so
	// [0, 65535] maps it exactly like [0, 255] maps v.
	r := Range{0, 65535}
	if !opt.Range.isZero() {
		// An explicit range is in the files' own bit depth: 8-bit
		// ranges are rescaled to the 16-bit values.
		r = Range{opt.Range.Lo * 257, opt.Range.Hi * 257}
	}
	used, err := scale(dir, "", x, sh, r)
	if err != nil {
		return nil, err
	}
	if !opt.Range.isZero() {
		used = opt.Range
	}
	return &Set{Path: dir, Shape: sh, Range: used, Images: x}, nil
}

// checkMatrix prices the n × (H·W·C) float64 matrix of n images of shape
// sh read from path through membudget.CheckBytes, before it is
// allocated: over the budget it is an *fault.InputError naming the
// matrix, its price and what to change; beside other work, the
// *membudget.BusyError.
func checkMatrix(path, key string, n int, sh Shape) error {
	d := int64(sh.H) * int64(sh.W) * int64(sh.C)
	need := int64(math.MaxInt64)
	if d > 0 && int64(n) <= math.MaxInt64/8/d {
		need = int64(n) * d * 8
	}
	err := membudget.CheckBytes(fmt.Sprintf("the pixel matrix of %d images of %v", n, sh), n, int(min(d, math.MaxInt32)), need)
	if me := (*membudget.Error)(nil); errors.As(err, &me) {
		price := "more than 8 EiB"
		if need < math.MaxInt64 {
			price = membudget.FormatBytes(need)
		}
		return &fault.InputError{File: path, Key: key, Msg: fmt.Sprintf("the pixel matrix of %d images of %v (8 bytes a value) takes %s, over the matrix memory budget of %s; use fewer images or smaller ones, or raise {%s} (MiB) on a machine with the memory",
			n, sh, price, membudget.FormatBytes(me.Limit), membudget.Field), Err: err}
	}
	return err
}

// CheckSameShape reports an error naming both files when the sets do not
// all have the shape of the first.
func CheckSameShape(sets ...*Set) error {
	for _, s := range sets[1:] {
		if s.Shape != sets[0].Shape {
			return &fault.InputError{File: s.Path, Msg: fmt.Sprintf("images are %v, but %s has %v images (all sets must have one shape)",
				s.Shape, sets[0].Path, sets[0].Shape)}
		}
	}
	return nil
}
