package imagesynth_test

import (
	"fmt"

	"github.com/genlens/genlens/internal/demo/imagesynth"
)

func ExampleFaceRegions() {
	// 0 background, 1 hair, 2 face, 3 eyes, 4 mouth.
	r := imagesynth.FaceRegions(8, 8)
	for y := 0; y < 8; y++ {
		fmt.Println(r[y*8 : y*8+8])
	}
	// Output:
	// [0 0 0 0 0 0 0 0]
	// [0 0 1 1 1 1 0 0]
	// [0 1 2 2 2 2 1 0]
	// [0 1 3 3 3 3 1 0]
	// [0 1 2 2 2 2 1 0]
	// [0 0 2 4 4 2 0 0]
	// [0 0 2 2 2 2 0 0]
	// [0 0 0 0 0 0 0 0]
}
