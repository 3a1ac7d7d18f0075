package torchfile

import (
	"fmt"
	"math"
	"testing"
)

// TestFloat16 checks every one of the 65536 half-precision values
// against the format's definition, (−1)^s · 2^(e−15) · (1 + f/1024) for
// normal numbers and (−1)^s · 2^−14 · f/1024 for subnormals, and a few
// by hand.
func TestFloat16(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		s, e, f := h>>15, (h>>10)&0x1f, h&0x3ff
		var want float64
		switch {
		case e == 0x1f && f != 0:
			if got := Float16(uint16(h)); !math.IsNaN(float64(got)) {
				t.Fatalf("Float16(%#04x) = %g, want NaN", h, got)
			}
			continue
		case e == 0x1f:
			want = math.Inf(1)
		case e == 0:
			want = math.Ldexp(float64(f)/1024, -14)
		default:
			want = math.Ldexp(1+float64(f)/1024, e-15)
		}
		if s == 1 {
			want = -want
		}
		got := Float16(uint16(h))
		if float64(got) != want || math.Signbit(float64(got)) != (s == 1) {
			t.Fatalf("Float16(%#04x) = %g, want %g", h, got, want)
		}
	}
	for _, tc := range []struct {
		h    uint16
		want float32
	}{
		{0x3c00, 1}, {0xc000, -2}, {0x7bff, 65504}, {0x0400, 1.0 / (1 << 14)},
		{0x0001, 1.0 / (1 << 24)}, {0x0110, 272.0 / (1 << 24)}, {0x3555, 0.333251953125},
	} {
		if got := Float16(tc.h); got != tc.want {
			t.Errorf("Float16(%#04x) = %g, want %g", tc.h, got, tc.want)
		}
	}
}

func ExampleFloat16() {
	// 0x0110, a subnormal: 272 × 2^−24.
	fmt.Println(Float16(0x3c00), Float16(0x0110), Float16(0xfc00))
	// Output: 1 1.6212463e-05 -Inf
}
