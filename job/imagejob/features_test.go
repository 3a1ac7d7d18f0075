package imagejob

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/internal/golden"
)

func TestFeaturesValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(r *FeaturesRequest)
		field string // "" means valid
	}{
		{"defaults", func(r *FeaturesRequest) {}, ""},
		{"logits tf", func(r *FeaturesRequest) { r.Dims, r.Mode = "logits_unbiased", "tf" }, ""},
		{"no input", func(r *FeaturesRequest) { r.Input = "" }, "input"},
		{"dims", func(r *FeaturesRequest) { r.Dims = "1000" }, "dims"},
		{"mode", func(r *FeaturesRequest) { r.Mode = "clean-fid" }, "mode"},
		{"batch", func(r *FeaturesRequest) { r.Batch = 0 }, "batch"},
		{"workers", func(r *FeaturesRequest) { r.Workers = -1 }, "workers"},
	} {
		r := NewFeaturesRequest()
		r.Input = "imgs"
		tc.edit(&r)
		err := r.Validate()
		var fe *fault.FieldError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field):
			t.Errorf("%s: got %v, want a FieldError on %s", tc.name, err, tc.field)
		case tc.field != "" && !strings.Contains(fe.Msg, "{"+tc.field+"}"):
			t.Errorf("%s: message %q does not brace {%s}", tc.name, fe.Msg, tc.field)
		}
	}
}

// TestFeaturesFixture runs three fixture images through an in-memory
// file system with the random-weight network and compares with PyTorch's
// features, then reads the .npy artifact back.
func TestFeaturesFixture(t *testing.T) {
	dir := shareddata.Path(t, "fixtures/inception_random")
	t.Setenv("GENLENS_CACHE", t.TempDir()) // never the user's cache
	names := []string{"img000.png", "img001.png", "img002.png"}
	fsys := fstest.MapFS{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, "images", n))
		if err != nil {
			t.Fatal(err)
		}
		fsys["imgs/"+n] = &fstest.MapFile{Data: b}
	}
	fsys["imgs/readme.txt"] = &fstest.MapFile{Data: []byte("not an image")}
	req := NewFeaturesRequest()
	req.Input, req.Dims, req.Mode, req.Batch = "imgs", "768", "tf", 2
	req.Weights = filepath.Join(dir, "inception_random.pth")
	var last int
	res, err := Features(context.Background(), job.Env{Models: testModels, FS: fsys, Progress: func(d, n int) { last = d }}, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Images != 3 || res.Dims != 768 || last != 3 || res.Files[2] != "imgs/img002.png" {
		t.Fatalf("result %+v, progress %d", res, last)
	}
	want, err := dataio.ReadArray(filepath.Join(dir, "expected.npz"), dataio.ReadOptions{Key: "tf_pool768"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range names {
		for j, v := range res.Features[i] {
			if d := math.Abs(float64(v) - want.Data[i*768+j]); d > 1e-4 {
				t.Fatalf("image %d feature %d: %g, want %g", i, j, v, want.Data[i*768+j])
			}
		}
	}
	// The --json contract, without what depends on the machine (timing,
	// BLAS backend) or on where the shared data lives.
	pinned := *res
	pinned.Seconds, pinned.ImagesPerSecond, pinned.Backend = 0, 0, ""
	pinned.Weights.Path = filepath.Base(pinned.Weights.Path)
	golden.Check(t, "features_tf_768", pinned)

	npy := filepath.Join(t.TempDir(), "f.npy")
	f, err := os.Create(npy)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Artifacts()[0].Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	back, err := dataio.ReadArray(npy, dataio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Shape) != 2 || back.Shape[0] != 3 || back.Shape[1] != 768 || back.Data[768+5] != float64(res.Features[1][5]) {
		t.Errorf("npy round trip: shape %v", back.Shape)
	}

	// A missing weights file is bad input naming it, found before any
	// image is run.
	req.Weights = filepath.Join(t.TempDir(), "none.pth")
	_, err = Features(context.Background(), job.Env{Models: testModels, FS: fsys}, req)
	if fault.Classify(err) != fault.KindInput || !strings.Contains(err.Error(), "none.pth") {
		t.Errorf("missing weights: %v (%v)", err, fault.Classify(err))
	}
}

// The --json of `genlens stats` over a folder: what the statistics file
// holds, with the provenance it records.
func TestStatsImagesGolden(t *testing.T) {
	dir := shareddata.Path(t, "fixtures/inception_random")
	t.Setenv("GENLENS_CACHE", t.TempDir())
	fsys := fstest.MapFS{}
	for _, n := range []string{"img000.png", "img001.png", "img002.png"} {
		b, err := os.ReadFile(filepath.Join(dir, "images", n))
		if err != nil {
			t.Fatal(err)
		}
		fsys["imgs/"+n] = &fstest.MapFile{Data: b}
	}
	req := NewStatsRequest()
	req.In, req.Dims, req.Mode = "imgs", "64", "tf"
	req.Weights = filepath.Join(dir, "inception_random.pth")
	res, err := Stats(context.Background(), job.Env{Models: testModels, FS: fsys}, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Provenance == nil || res.Provenance.Embedder != "inception-v3" || res.Provenance.Mode != "tf" || res.Provenance.Dims != "64" {
		t.Fatalf("provenance %+v", res.Provenance)
	}
	res.Path = "real_stats.npz" // as the command line sets it
	im := *res.Images           // without what depends on the machine or the data's place
	im.Seconds, im.DecodeSeconds, im.NetworkSeconds, im.WaitSeconds, im.FeatureSeconds, im.WeightsSeconds = 0, 0, 0, 0, 0, 0
	im.Weights.Path = filepath.Base(im.Weights.Path)
	res.Images = &im
	golden.Check(t, "stats_images", res)
}
