package dataio

import (
	"fmt"
	"io"
	"io/fs"

	"github.com/genlens/genlens/fault"
)

// MaxCompressionRatio bounds how many times its compressed size a
// compressed input (.gz file, deflated .npz member) may grow to once it
// is past bombFloor. Real data compresses far less (features about 1.1:1,
// 8-bit images 1.1:1, integer CSV 5:1), while a decompression bomb grows
// 1000:1 per deflate layer: a 285 KB .npz became 2.9 GB of memory and a
// 204 KB .csv.gz 2 GB. Genuinely sparse data beyond the bound can be
// stored uncompressed (numpy.savez, gunzip).
var MaxCompressionRatio int64 = 100

// bombFloor is the decompressed size below which any ratio is accepted:
// small inputs cannot hurt, and tiny files of zeros compress very well.
var bombFloor int64 = 64 << 20

// decompressedLimit is the number of bytes a compressed input of the
// given size may decompress to.
func decompressedLimit(compressed int64) int64 {
	if compressed <= 0 {
		return bombFloor
	}
	if compressed > (1<<62)/MaxCompressionRatio {
		return 1 << 62
	}
	return max(bombFloor, compressed*MaxCompressionRatio)
}

// bombError is the message of an input refused by decompressedLimit;
// what says what grew too large ("" for the decompressed bytes).
func bombError(s src, compressed int64, what string) *fault.InputError {
	if what == "" {
		what = "decompresses to more than " + fmtBytes(decompressedLimit(compressed)) + ","
	}
	return s.errf(0, "", fmt.Sprintf("%s more than %d times its %s compressed size (a decompression bomb?); store it uncompressed if it is genuine (dataio.MaxCompressionRatio)",
		what, MaxCompressionRatio, fmtBytes(compressed)))
}

func fmtBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// bombReader reads a decompressor's output and fails with bombError once
// more than decompressedLimit(compressed) bytes came out.
type bombReader struct {
	r          io.Reader
	s          src
	compressed int64
	left       int64
}

func newBombReader(r io.Reader, s src, compressed int64) *bombReader {
	return &bombReader{r: r, s: s, compressed: compressed, left: decompressedLimit(compressed)}
}

func (b *bombReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a stream that ends exactly at the limit
		// from one that goes on.
		var one [1]byte
		if n, _ := b.r.Read(one[:]); n > 0 {
			return 0, bombError(b.s, b.compressed, "")
		}
		return b.r.Read(p)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// fileSize is the size of path in fsys, 0 when it cannot be read.
func fileSize(fsys fs.FS, path string) int64 {
	st, err := fs.Stat(fsys, path)
	if err != nil {
		return 0
	}
	return st.Size()
}
