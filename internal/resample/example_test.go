package resample_test

import (
	"fmt"

	"github.com/genlens/genlens/internal/resample"
)

// A 4×1 grey ramp halved in width with Pillow's bicubic filter: the
// filter widens to twice its support (antialiasing), so each output
// weighs all four inputs. The values are what Pillow 9.4 prints for the
// same arrays in modes L and F.
func Example() {
	ramp := []uint8{0, 100, 200, 255}
	half, err := resample.Uint8(ramp, 4, 1, 2, 1, resample.Bicubic)
	if err != nil {
		panic(err)
	}
	f, err := resample.Float32([]float32{0, 100, 200, 255}, 4, 1, 2, 1, resample.Bicubic)
	if err != nil {
		panic(err)
	}
	fmt.Println(half)
	fmt.Printf("%.4f\n", f)
	// Output:
	// [60 221]
	// [60.3512 220.6818]
}

// Resizing many images of one size: compute the weights once. The
// three planes of an RGB image are resized independently, as Pillow does;
// the output is Pillow's for the same RGB image.
func ExamplePlan() {
	p, err := resample.NewPlan(3, 2, 2, 2, resample.Bilinear)
	if err != nil {
		panic(err)
	}
	rgb := []uint8{ // three 3×2 planes: R, G, B
		0, 90, 180, 0, 90, 180,
		10, 10, 10, 20, 20, 20,
		255, 0, 255, 0, 255, 0,
	}
	out := make([]uint8, 3*2*2)
	p.Uint8(out, rgb)
	fmt.Println(out)
	// Output:
	// [34 146 34 146 10 10 20 20 159 159 96 96]
}
