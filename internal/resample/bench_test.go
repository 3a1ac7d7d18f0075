package resample

import "testing"

// go test ./resample -run '^$' -bench . -count 5
func BenchmarkUint8RGB256to224(b *testing.B) {
	p, _ := NewPlan(256, 256, 224, 224, Bicubic)
	src := bytesOf("noise", splitmix(1, 3*256*256))
	dst := make([]uint8, 3*224*224)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		p.Uint8(dst, src)
	}
}

func BenchmarkFloat32RGB512to299(b *testing.B) {
	p, _ := NewPlan(512, 512, 299, 299, Bicubic)
	src := floatsOf("noise", splitmix(1, 3*512*512))
	dst := make([]float32, 3*299*299)
	b.SetBytes(int64(4 * len(src)))
	for b.Loop() {
		p.Float32(dst, src)
	}
}
