package jpeg_test

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/genlens/genlens/internal/format/jpeg"
)

func Example() {
	data, err := os.ReadFile(filepath.Join("testdata", "q95_420_75x61.jpg"))
	if err != nil {
		log.Fatal(err)
	}
	// Check the size before committing memory to the pixels.
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Width, cfg.Height, cfg.ColorSpace, len(cfg.Components), cfg.Progressive)

	img, err := jpeg.DecodeWith(bytes.NewReader(data), jpeg.Options{MaxPixels: 1 << 24})
	if err != nil {
		log.Fatal(err)
	}
	p := img.Pix[3*(10*img.Width+20):] // pixel (20, 10); Pillow gives (229, 86, 56)
	fmt.Println(len(img.Pix), p[0], p[1], p[2])
	// Output:
	// 75 61 YCbCr 3 false
	// 13725 229 86 56
}
