package imagejob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/jpeg"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/network/features"
	"github.com/genlens/genlens/network/inception"
)

// TestWeightsInfo: every result whose features came from Inception
// weights names them with their SHA-256 and whether they are the
// published FID file; the random-weight fixture is not.
func TestWeightsInfo(t *testing.T) {
	dir, fsys := imageFixture(t)
	t.Setenv("GENLENS_CACHE", t.TempDir())
	weights := filepath.Join(dir, "inception_random.pth")
	env := job.Env{Models: testModels, FS: fsys}
	ctx := context.Background()

	req := NewCompareRequest()
	req.Real, req.Fake, req.Weights = "real", "fake", weights
	res, err := Compare(ctx, env, req)
	if err != nil {
		t.Fatal(err)
	}
	w := res.Images.Weights
	if w.Path != weights || len(w.SHA256) != 64 || w.SHA256 == inception.OfficialWeightsSHA256 || w.Official == nil || *w.Official || !w.Unofficial() {
		t.Fatalf("compare: weights %+v, want the fixture's path and hash, official false", w)
	}
	b, _ := json.Marshal(res)
	if want := `"weights":{"path":` + mustJSON(weights) + `,"sha256":"` + w.SHA256 + `","official":false}`; !strings.Contains(string(b), want) {
		t.Errorf("compare JSON %s lacks %s", b, want)
	}

	is := NewISRequest()
	is.Images, is.Weights, is.Splits = "real", weights, 1
	isr, err := IS(ctx, env, is)
	if err != nil {
		t.Fatal(err)
	}
	sel := NewSelectRequest()
	sel.Pools, sel.Ref, sel.Weights = []string{"real", "fake"}, "real", weights
	sel.Steps, sel.Batch, sel.Trials, sel.Algos = 2, 1, 1, "greedy"
	sr, err := Select(ctx, env, sel)
	if err != nil {
		t.Fatal(err)
	}
	f := NewFeaturesRequest()
	f.Input, f.Weights = "fake", weights
	fr, err := Features(ctx, env, f)
	if err != nil {
		t.Fatal(err)
	}
	sreq := statsOf("real")
	sreq.Weights = weights
	st, err := Stats(ctx, env, sreq)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]WeightsInfo{"is": isr.Images.Weights, "select": sr.Images.Weights, "features": fr.Weights, "stats": st.Images.Weights} {
		if got != (WeightsInfo{Path: weights, SHA256: w.SHA256, Official: got.Official}) || got.Official == nil || *got.Official {
			t.Errorf("%s: weights %+v, want %+v", name, got, w)
		}
	}

	if !inception.IsOfficialWeights(strings.ToUpper(inception.OfficialWeightsSHA256)) || inception.IsOfficialWeights(w.SHA256) {
		t.Error("IsOfficialWeights does not tell the published hash from the fixture's")
	}
	if o := (&extractor{whash: inception.OfficialWeightsSHA256, net: inceptionNetwork(inception.ModePyTorchFID)}).weightsInfo(); o.Official == nil || !*o.Official || o.Unofficial() {
		t.Errorf("the published file's hash: %+v, want official", o)
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestJPEGNoNote: JPEG files decode to PIL's pixels, so a job that reads
// them gives no warning about the decoder, and a folder of JPEG copies of
// PNG images yields features (the network runs on them).
func TestJPEGNoNote(t *testing.T) {
	dir, fsys := imageFixture(t)
	t.Setenv("GENLENS_CACHE", t.TempDir())
	weights := filepath.Join(dir, "inception_random.pth")
	img, err := features.DecodeImage(fsys, "fake/img003.png")
	if err != nil {
		t.Fatal(err)
	}
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	fsys["fake/img009.jpg"] = &fstest.MapFile{Data: jb.Bytes()}
	fsys["real/img010.JPEG"] = &fstest.MapFile{Data: jb.Bytes()}
	var warns []string
	env := job.Env{Models: testModels, FS: fsys, Warn: func(m string) { warns = append(warns, m) }}
	req := NewCompareRequest()
	req.Real, req.Fake, req.Weights = "real", "fake", weights
	if _, err := Compare(context.Background(), env, req); err != nil {
		t.Fatal(err)
	}
	for _, w := range warns {
		if strings.Contains(w, "JPEG") || strings.Contains(w, "decoder") {
			t.Errorf("warning %q on JPEG input", w)
		}
	}
}

// TestCompareFoldersKIDRefusedFirst: a KID subset larger than a folder's
// image count is refused before any image runs through the network.
func TestCompareFoldersKIDRefusedFirst(t *testing.T) {
	dir, fsys := imageFixture(t)
	t.Setenv("GENLENS_CACHE", t.TempDir())
	steps := 0
	env := job.Env{Models: testModels, FS: fsys, Progress: func(done, total int) { steps += done }}
	req := NewCompareRequest()
	req.Real, req.Fake, req.Weights, req.Metrics, req.KIDSubsetSize = "real", "fake", filepath.Join(dir, "inception_random.pth"), "kid", 4
	_, err := Compare(context.Background(), env, req)
	var fe *fault.FieldError
	if !errors.As(err, &fe) || fe.Field != "kid_subset_size" || !strings.Contains(err.Error(), "(real 3, generated 3)") || steps != 0 {
		t.Errorf("got %v after %d progress steps, want a {kid_subset_size} error before any image", err, steps)
	}
}
