package disentangle

import (
	"context"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/internal/demo/imagesynth"
)

// On synthetic faces whose five regions (background, hair, face, eyes,
// mouth) are independent by construction, the five pixel clusters are
// exactly the five regions, with either distance.
func TestFacesRegionsRecovered(t *testing.T) {
	for _, tc := range []struct {
		size int
		dist Distance
	}{{24, RowDistance}, {32, OneMinusCKA}} {
		r := rand.New(rand.NewPCG(uint64(tc.size), 5))
		s := tc.size
		train, test := imagesynth.Faces(r, 200, s, s), imagesynth.Faces(r, 150, s, s)
		g := Grid{s, s, 1}
		res, err := Analyze(context.Background(), train, test, []*mat.Dense{imagesynth.Faces(r, 150, s, s)}, g, Options{CKABatch: 50, Distance: tc.dist})
		if err != nil {
			t.Fatal(err)
		}
		regions := imagesynth.FaceRegions(s, s)
		regionOf := map[int]int{} // cluster -> region
		clusterOf := map[int]int{}
		for p, c := range res.Labels {
			if _, ok := regionOf[c]; !ok {
				regionOf[c] = regions[p]
			}
			if _, ok := clusterOf[regions[p]]; !ok {
				clusterOf[regions[p]] = c
			}
			if regionOf[c] != regions[p] || clusterOf[regions[p]] != c {
				t.Fatalf("%dx%d %v: clusters are not the face regions\n%s", s, s, tc.dist, asciiMap(res.Labels, g))
			}
		}
		t.Logf("%dx%d %v: sizes %v, CKA within %.3v", s, s, tc.dist, res.Sizes, res.Within)
	}
}
