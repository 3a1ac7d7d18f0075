package weights

import (
	"path/filepath"
	"testing"
)

// BenchmarkLoad reads the random-weight BERT fixtures, one in each
// format; -benchmem shows what a load allocates beside the file's size.
func BenchmarkLoad(b *testing.B) {
	for _, f := range []string{"e5/model.safetensors", "minilm/pytorch_model.bin"} {
		b.Run(filepath.Base(f), func(b *testing.B) {
			path := filepath.Join("..", "..", "..", "network", "bert", "testdata", f)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Load(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
