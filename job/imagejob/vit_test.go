package imagejob

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/frechet"
	"github.com/genlens/genlens/network/vit"
)

// tinyDINO registers a small DINOv2 whose random weights package vit's
// fixtures hold (checked there against PyTorch), so that the job layer
// runs the whole path — embedder, preset, weights hash, cache,
// provenance — in milliseconds.
func tinyDINO(t *testing.T) string {
	t.Helper()
	const name = "dinov2-testtiny"
	vit.Configs[name] = vit.Config{Name: name, Family: vit.DINOv2, Patch: 14, Width: 32, Depth: 2, Heads: 2, Hidden: 128, Input: 56}
	t.Cleanup(func() { delete(vit.Configs, name) })
	return name
}

func pngFolder(t *testing.T, fsys fstest.MapFS, dir string, n int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	for i := 0; i < n; i++ {
		img := image.NewNRGBA(image.Rect(0, 0, 40+i, 30))
		for j := range img.Pix {
			img.Pix[j] = uint8(r.IntN(256))
		}
		img.Set(0, 0, color.NRGBA{uint8(seed), 0, 0, 255})
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		fsys[filepath.Join(dir, string(rune('a'+i))+".png")] = &fstest.MapFile{Data: b.Bytes()}
	}
}

func TestViTEmbedder(t *testing.T) {
	name := tinyDINO(t)
	t.Setenv("GENLENS_CACHE", t.TempDir())
	weights := filepath.Join("..", "..", "network", "vit", "testdata", "dinov2_small.pth")
	fsys := fstest.MapFS{}
	pngFolder(t, fsys, "real", 4, 1)
	pngFolder(t, fsys, "fake", 4, 2)
	ctx := context.Background()

	f := NewFeaturesRequest()
	f.Input, f.Embedder, f.Weights = "real", name, weights
	res, err := Features(ctx, job.Env{Models: testModels, FS: fsys}, f)
	if err != nil {
		t.Fatal(err)
	}
	if res.Dims != 32 || res.Embedder != name || res.Preset != "dgm-eval" || res.Mode != "" || len(res.WeightsSHA256) != 64 || res.Computed != 4 || res.Output != "x_norm_clstoken" {
		t.Fatalf("features: %+v", res)
	}
	// The features are the network's on the dgm-eval input.
	m, err := vit.Load(weights, vit.Configs[name])
	if err != nil {
		t.Fatal(err)
	}
	x, err := vit.LoadImageFS(fsys, "real/a.png", vit.PresetDGMEval, 56)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Forward(ctx, [][]float32{x}, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Equal to float32 round-off: the job runs the images as one batch,
	// and a BLAS may sum a batch's GEMM in another order than one image's
	// (OpenBLAS does).
	var scale float64
	for _, v := range want[0] {
		scale = max(scale, math.Abs(float64(v)))
	}
	for j, v := range want[0] {
		if d := math.Abs(float64(res.Features[0][j]) - float64(v)); d > 1e-5*scale {
			t.Fatalf("feature %d: %v, want %v (|diff| %.3g > 1e-5 of the largest, %.3g)", j, res.Features[0][j], v, d, scale)
		}
	}
	// A second run reads the cache; another preset has its own entries.
	again, err := Features(ctx, job.Env{Models: testModels, FS: fsys}, f)
	if err != nil || again.Cached != 4 || again.Computed != 0 {
		t.Fatalf("second run: %+v, %v", again, err)
	}
	f.Preset = "torch-fidelity"
	tfid, err := Features(ctx, job.Env{Models: testModels, FS: fsys}, f)
	if err != nil || tfid.Computed != 4 || tfid.Features[0][0] == res.Features[0][0] {
		t.Fatalf("torch-fidelity preset: %+v, %v", tfid, err)
	}

	// compare: fd_dinov2 beside fid, and the provenance in images.
	req := NewCompareRequest()
	req.Real, req.Fake, req.Embedder, req.Weights = "real", "fake", name, weights
	cmp, err := Compare(ctx, job.Env{Models: testModels, FS: fsys}, req)
	if err != nil {
		t.Fatal(err)
	}
	if cmp.FID == nil || cmp.FDDINOv2 == nil || *cmp.FID != *cmp.FDDINOv2 || cmp.Dim != 32 || cmp.Images.Embedder != name || cmp.Images.Preset != "dgm-eval" {
		t.Fatalf("compare: %+v %+v", cmp, cmp.Images)
	}

	// A statistics file records how its features were made; comparing it
	// with features made otherwise is refused, naming both.
	s := NewStatsRequest()
	s.In, s.Embedder, s.Weights = "real", name, weights
	st, err := Stats(ctx, job.Env{Models: testModels, FS: fsys}, s)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := st.Artifact("real.npz").Write(&buf); err != nil {
		t.Fatal(err)
	}
	fsys["real.npz"] = &fstest.MapFile{Data: buf.Bytes()}
	req.Real = "real.npz"
	same, err := Compare(ctx, job.Env{Models: testModels, FS: fsys}, req)
	if err != nil || !relClose(float64(*same.FID), float64(*cmp.FID), 1e-9) || same.FDDINOv2 == nil {
		t.Fatalf("stats file of the same features: %+v, %v", same, err)
	}
	req.Preset = "torch-fidelity"
	_, err = Compare(ctx, job.Env{Models: testModels, FS: fsys}, req)
	var ie *fault.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "real.npz") || !strings.Contains(err.Error(), "preset dgm-eval") || !strings.Contains(err.Error(), "preset torch-fidelity") {
		t.Errorf("other preset: %v", err)
	}
	req.Preset, req.Embedder, req.Weights = "", "", ""
	_, err = Compare(ctx, job.Env{Models: testModels, FS: fsys}, req)
	if err == nil || !strings.Contains(err.Error(), "real.npz") {
		// Inception may be missing here (no weights offline): then the
		// error is about its weights, not about the comparison.
		t.Logf("inception against a dinov2 statistics file: %v", err)
	}
	// pytorch-fid reads mu and sigma of the file as before.
	mu, err := dataio.ReadArrayFS(fsys, "real.npz", dataio.ReadOptions{Key: "mu"})
	if err != nil || len(mu.Data) != 32 {
		t.Fatalf("mu: %v %v", mu, err)
	}
	if p, err := frechet.ReadProvenance(fsys, "real.npz"); err != nil || p.Embedder != name || p.Mode != "preset dgm-eval" || p.Dims != "x_norm_clstoken" || p.Weights != res.WeightsSHA256 || len(p.Input) != 64 {
		t.Errorf("provenance %+v, %v", p, err)
	}
	if _, err := frechet.ReadStatsFS(fsys, "real.npz"); err != nil {
		t.Error(err)
	}
}

func TestViTEmbedderFields(t *testing.T) {
	name := tinyDINO(t)
	fsys := fstest.MapFS{}
	pngFolder(t, fsys, "real", 2, 1)
	for _, tc := range []struct {
		opt   ImageOptions
		dims  string
		field string
		msg   string
	}{
		{ImageOptions{Embedder: "dinov2-vitx14"}, "", "embedder", "want inception, "},
		{ImageOptions{Embedder: name, Mode: "tf"}, "", "mode", "takes preset"},
		{ImageOptions{Embedder: name, Preset: "cmmd"}, "", "preset", "want dgm-eval or torch-fidelity"},
		{ImageOptions{Preset: "dgm-eval"}, "", "preset", "applies to the DINOv2 and CLIP embedders"},
		{ImageOptions{Embedder: name}, "768", "dims", "has one"},
	} {
		req := NewStatsRequest()
		req.In, req.ImageOptions, req.Dims = "real", tc.opt, tc.dims
		req.Batch = DefaultImageBatch
		err := req.Validate()
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%+v: %v, want field %s and %q", tc.opt, err, tc.field, tc.msg)
		}
	}
	// Without --weights a ViT says which file it needs.
	req := NewStatsRequest()
	req.In, req.Embedder = "real", name
	_, err := Stats(context.Background(), job.Env{Models: testModels, FS: fsys}, req)
	if err == nil || !strings.Contains(err.Error(), "weights is required") || !strings.Contains(err.Error(), "_pretrain.pth") {
		t.Errorf("no weights: %v", err)
	}
	// is is Inception's.
	is := NewISRequest()
	is.Images, is.Embedder = "real", name
	if err := is.Validate(); err == nil || !strings.Contains(err.Error(), "Inception Score") {
		t.Errorf("is: %v", err)
	}
	// So is select's: a ViT's features are no class probabilities.
	sel := NewSelectRequest()
	sel.Pools, sel.Score, sel.Embedder = []string{"real", "real"}, "is", name
	var fe *fault.FieldError
	if err := sel.Validate(); !errors.As(err, &fe) || fe.Field != "embedder" || !strings.Contains(err.Error(), "Inception Score") {
		t.Errorf("select --score is: %v", err)
	}
}

// A part of a sharded ViT run reports the ViT's dimension, not
// Inception's pool3 width.
func TestViTShardDim(t *testing.T) {
	name := tinyDINO(t)
	t.Setenv("GENLENS_CACHE", t.TempDir())
	fsys := fstest.MapFS{}
	pngFolder(t, fsys, "real", 4, 1)
	s := NewStatsRequest()
	s.In, s.Embedder, s.Weights = "real", name, filepath.Join("..", "..", "network", "vit", "testdata", "dinov2_small.pth")
	s.Shards, s.Shard = 2, 0
	res, err := Stats(context.Background(), job.Env{Models: testModels, FS: fsys}, s)
	if err != nil {
		t.Fatal(err)
	}
	if res.Part == nil || res.Dim != 32 || res.Part.Dim() != 32 {
		t.Fatalf("dim %d, part %+v: want 32", res.Dim, res.Part)
	}
}
