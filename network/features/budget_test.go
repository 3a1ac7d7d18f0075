package features

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/tensor/membudget"
)

// An image is priced from its header at its decoded form plus its RGB
// copy and float planes: a 16-bit RGBA 4096² PNG (8 bytes a pixel) at
// 368 MiB, an 8-bit grey one at 256 MiB.
func TestDecodedBytes(t *testing.T) {
	for _, tc := range []struct {
		depth, ctype byte
		want         int64
	}{{16, 6, 4096 * 4096 * (8 + PixelWorkBytes)}, {8, 6, 4096 * 4096 * (4 + PixelWorkBytes)}, {16, 0, 4096 * 4096 * (2 + PixelWorkBytes)}, {8, 0, 4096 * 4096 * (1 + PixelWorkBytes)}} {
		cfg, err := png.DecodeConfig(bytes.NewReader(headerPNG(4096, 4096, tc.depth, tc.ctype)))
		if err != nil {
			t.Fatal(err)
		}
		if got := DecodedBytes(cfg); got != tc.want {
			t.Errorf("%d-bit colour type %d: %d bytes, want %d", tc.depth, tc.ctype, got, tc.want)
		}
	}
}

// An image whose price is over the budget is refused from its header,
// before a pixel is decoded (the file has none: decoding would fail
// otherwise), naming its price, the budget and what to change; Decode
// and the pipeline alike.
func TestImageOverBudgetRefusedBeforeDecoding(t *testing.T) {
	defer membudget.SetLimit(membudget.SetLimit(256 << 20))
	fsys := fstest.MapFS{"big.png": {Data: headerPNG(4096, 4096, 16, 6)}}
	check := func(what string, err error) {
		t.Helper()
		var ie *fault.InputError
		if !errors.As(err, &ie) || ie.File != "big.png" {
			t.Fatalf("%s: %v", what, err)
		}
		for _, want := range []string{"368 MiB", "256 MiB", "{matrix_budget_mb}", "4096x4096, 8 bytes a pixel", "downsample"} {
			if !strings.Contains(ie.Msg, want) {
				t.Errorf("%s: %q lacks %q", what, ie.Msg, want)
			}
		}
	}
	_, err := Decode(fsys, "big.png")
	check("Decode", err)
	p := &Pipeline{FS: fsys, Batch: 4, Workers: 8}
	err = p.Run(context.Background(), &fakeEmbedder{}, nil, []string{"big.png"}, func([][]float32) error { return nil }, func(int) {})
	check("Pipeline", err)
}

// fakeEmbedder preprocesses an image to its mean and records, at each
// call, the bytes membudget holds reserved and how many images are being
// preprocessed at once.
type fakeEmbedder struct {
	mu                        sync.Mutex
	calls, inFlight, most     int
	reservedMin, reservedMost int64
}

func (f *fakeEmbedder) Settings() Settings { return Settings{Embedder: "fake", Dim: 1} }
func (f *fakeEmbedder) Load() error        { return nil }
func (f *fakeEmbedder) Forward(_ context.Context, batch [][]float32) ([][]float32, error) {
	return batch, nil
}
func (f *fakeEmbedder) Preprocess(img *RGB) ([]float32, error) {
	r := membudget.Reserved()
	f.mu.Lock()
	f.calls++
	f.inFlight++
	f.most = max(f.most, f.inFlight)
	if f.calls == 1 || r < f.reservedMin {
		f.reservedMin = r
	}
	f.reservedMost = max(f.reservedMost, r)
	f.mu.Unlock()
	var s float32
	for _, v := range img.Pix {
		s += float32(v)
	}
	f.mu.Lock()
	f.inFlight--
	f.mu.Unlock()
	return []float32{s / float32(len(img.Pix))}, nil
}

// Every image is admitted through membudget while it is decoded and
// preprocessed, and the images decoding at once stay within the budget:
// with room for one image, the reservations never pass one image's price
// however many workers there are, and each image is held while it is
// preprocessed.
func TestPipelineHoldsImagesWithinBudget(t *testing.T) {
	img := image.NewNRGBA64(image.Rect(0, 0, 64, 64))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	var files []string
	for i := range 16 {
		name := string(rune('a'+i)) + ".png"
		fsys[name] = &fstest.MapFile{Data: b.Bytes()}
		files = append(files, name)
	}
	price := DecodedBytes(image.Config{ColorModel: color.NRGBA64Model, Width: 64, Height: 64})
	defer membudget.SetLimit(membudget.SetLimit(price + price/2))
	base := membudget.Reserved()
	f := &fakeEmbedder{}
	p := &Pipeline{FS: fsys, Batch: 8, Workers: 8}
	if err := p.Run(context.Background(), f, nil, files, func([][]float32) error { return nil }, func(int) {}); err != nil {
		t.Fatal(err)
	}
	if f.calls != 16 {
		t.Fatalf("%d images preprocessed, want 16", f.calls)
	}
	if f.reservedMin-base < price {
		t.Errorf("an image preprocessed with %d bytes reserved, want its price %d held", f.reservedMin-base, price)
	}
	if f.reservedMost-base > price {
		t.Errorf("%d bytes reserved at once, over the budget's room for one image (%d)", f.reservedMost-base, price)
	}
	if f.most != 1 {
		t.Errorf("%d images preprocessed at once, want 1", f.most)
	}
	if got := membudget.Reserved(); got != base {
		t.Errorf("%d bytes still reserved after the run", got-base)
	}
}

// Workers are capped at the CPUs the process may use.
func TestWorkersCapped(t *testing.T) {
	c := runtime.GOMAXPROCS(0)
	for _, tc := range [][2]int{{0, c}, {-1, c}, {1, 1}, {c, c}, {c + 1, c}, {1024, c}} {
		if got := Workers(tc[0]); got != tc[1] {
			t.Errorf("Workers(%d) = %d, want %d", tc[0], got, tc[1])
		}
	}
}
