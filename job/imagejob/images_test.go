package imagejob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/diversity"
	"github.com/genlens/genlens/metric/frechet"
	"github.com/genlens/genlens/metric/manifold"
)

// testModels keeps the networks the tests of this package load, as a
// process's cache would: the tests run many jobs on the same weights.
var testModels = job.NewModelCache(0)

// TestCompareDefaultIsFID: compare's defaults once computed FID,
// KID, MMD² and CMS with n² kernel matrices and went silent for minutes
// on 5,000 rows. The default is FID alone; "all" asks for the rest.
func TestCompareDefaultIsFID(t *testing.T) {
	env := job.Env{Models: testModels, FS: fidFS(t)}
	req := NewCompareRequest()
	req.Real, req.Fake = "real.npy", "fake.npy"
	res, err := Compare(context.Background(), env, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.FID == nil || res.KID != nil || res.MMD2 != nil || res.CMS != nil {
		t.Errorf("default metrics: fid %v kid %v mmd %v cms %v; want fid alone", res.FID, res.KID, res.MMD2, res.CMS)
	}
	// Every metric reports its progress as a stage that ends complete.
	var ends [][2]int
	env.Progress = func(d, n int) {
		if d == 0 {
			ends = append(ends, [2]int{0, n})
		}
		ends[len(ends)-1][0] = d
	}
	req.Metrics, req.KIDSubsets, req.KIDSubsetSize = "all", 7, 30
	if res, err = Compare(context.Background(), env, req); err != nil {
		t.Fatal(err)
	}
	// prdc reports as many steps as its passes (3); vendi one per side (2).
	if len(ends) != 5 || ends[0] != [2]int{3, 3} || ends[1][0] != ends[1][1] || ends[1][1] < 7 || ends[2] != [2]int{2, 2} || ends[3] != [2]int{3, 3} || ends[4] != [2]int{2, 2} {
		t.Errorf("progress stages (done, total) = %v; want fid (3, 3), kid (n, n ≥ 7 subsets), mmd and cms (2, 2), prdc (3, 3), vendi (2, 2)", ends)
	}
	if res.FID == nil || res.KID == nil || res.MMD2 == nil || res.CMS == nil || res.Precision == nil || res.Vendi == nil || res.CMMD != nil {
		t.Errorf("--metrics all: fid %v kid %v mmd %v cms %v precision %v vendi %v cmmd %v; want all but cmmd", res.FID, res.KID, res.MMD2, res.CMS, res.Precision, res.Vendi, res.CMMD)
	}
}

// TestCompareTwoStatsFiles is pytorch-fid's own test: two
// statistics files, mu = 0 and mu = 1, identity covariances, d = 2048.
// The covariance term vanishes (tr(I + I - 2 I) = 0) and the mean term is
// ‖0 - 1‖² = 2048, so the FID is exactly 2048.
func TestCompareTwoStatsFiles(t *testing.T) {
	const d = 2048
	stats := func(mu float64) frechet.Stats {
		m := make([]float64, d)
		for i := range m {
			m[i] = mu
		}
		sigma := mat.NewSymDense(d, nil)
		for i := 0; i < d; i++ {
			sigma.SetSym(i, i, 1)
		}
		return frechet.Stats{Mu: m, Sigma: sigma}
	}
	fsys := fstest.MapFS{
		"s1.npz": {Data: fidStatsNPZ(t, stats(0))},
		"s2.npz": {Data: fidStatsNPZ(t, stats(1))},
	}
	for _, sides := range [][2]string{{"s1.npz", "s2.npz"}, {"s2.npz", "s1.npz"}} {
		req := NewCompareRequest()
		req.Real, req.Fake, req.Metrics = sides[0], sides[1], "fid"
		res, err := Compare(context.Background(), job.Env{Models: testModels, FS: fsys}, req)
		if err != nil {
			t.Fatalf("%v: %v", sides, err)
		}
		if got := float64(*res.FID); math.Abs(got-d) > 1e-9*d {
			t.Errorf("%v: FID %.12g, want exactly %d", sides, got, d)
		}
		if res.NReal != nil || res.NFake != nil || res.Dim != d {
			t.Errorf("%v: n_real %v, n_fake %v, dim %d; want null, null, %d", sides, res.NReal, res.NFake, res.Dim, d)
		}
	}
}

// TestImageOptionsUnused: image flags on inputs that are no folders would
// go silently unused; they are refused instead.
func TestImageOptionsUnused(t *testing.T) {
	env := job.Env{Models: testModels, FS: fidFS(t)}
	req := NewCompareRequest()
	req.Real, req.Fake, req.Mode = "real.npy", "fake.npy", "tf"
	_, err := Compare(context.Background(), env, req)
	fidWantField(t, err, "mode")
	req.Mode, req.Dims = "", "768"
	_, err = Compare(context.Background(), env, req)
	fidWantField(t, err, "dims")
	s := NewStatsRequest()
	s.In, s.NoCache = "real.npy", true
	_, err = Stats(context.Background(), env, s)
	fidWantField(t, err, "no_cache")
	is := NewISRequest()
	is.Probs, is.Recursive = "p0.npy", true
	fidWantField(t, is.Validate(), "recursive")
	is.Probs, is.Recursive, is.Images = "p0.npy", false, "imgs"
	fidWantField(t, is.Validate(), "probs")
}

// imageFixture returns the fixture's directory and a file system with
// real/ (images 0-2) and fake/ (images 3-5) of the random-weight fixture,
// whose PyTorch features are in expected.npz.
func imageFixture(t *testing.T) (string, fstest.MapFS) {
	dir := shareddata.Path(t, "fixtures/inception_random")
	fsys := fstest.MapFS{}
	for i := 0; i < 6; i++ {
		name := filepath.Join("images", "img00"+string(rune('0'+i))+".png")
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		side := "real/"
		if i >= 3 {
			side = "fake/"
		}
		fsys[side+filepath.Base(name)] = &fstest.MapFile{Data: b}
	}
	fsys["real/notes.txt"] = &fstest.MapFile{Data: []byte("not an image")}
	return dir, fsys
}

// expectedRows returns rows lo..hi-1 of array key of the fixture's
// expected.npz (PyTorch's features).
func expectedRows(t *testing.T, dir, key string, lo, hi int) *mat.Dense {
	a, err := dataio.ReadArray(filepath.Join(dir, "expected.npz"), dataio.ReadOptions{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	d := a.Shape[1]
	return mat.NewDense(hi-lo, d, a.Data[lo*d:hi*d])
}

func relClose(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

// TestImageFolders runs compare, stats, features, is and select on folders
// of the random-weight fixture's images, with the feature cache in a
// temporary directory, and checks each against PyTorch's features, the
// feature-file route and the cache's bookkeeping.
func TestImageFolders(t *testing.T) {
	dir, fsys := imageFixture(t)
	cacheDir := t.TempDir()
	t.Setenv("GENLENS_CACHE", cacheDir)
	weights := filepath.Join(dir, "inception_random.pth")
	ctx := context.Background()

	// Folders against folders: statistics streamed, FID as PyTorch's
	// features give it; every image runs through the network once.
	var done, total int
	env := job.Env{Models: testModels, FS: fsys, Progress: func(d, n int) {
		if done != total || total == 0 { // the first stage: the images; then fid's
			done, total = d, n
		}
	}}
	req := NewCompareRequest()
	req.Real, req.Fake, req.Weights, req.Batch = "real", "fake", weights, 2
	res, err := Compare(ctx, env, req)
	if err != nil {
		t.Fatal(err)
	}
	fid := float64(*res.FID)
	want, err := frechet.Distance(frechet.StatsOf(expectedRows(t, dir, "pool2048", 0, 3), 1), frechet.StatsOf(expectedRows(t, dir, "pool2048", 3, 6), 1))
	if err != nil {
		t.Fatal(err)
	}
	if !relClose(fid, want, 1e-4) {
		t.Errorf("FID of folders %.8g, of PyTorch's features %.8g", fid, want)
	}
	if res.Images == nil || res.Images.Computed != 6 || res.Images.Cached != 0 || *res.NReal != 3 || *res.NFake != 3 || res.Dim != 2048 {
		t.Fatalf("compare folders: %+v, images %+v", res, res.Images)
	}
	if done != 6 || total != 6 {
		t.Errorf("progress ended at %d of %d, want 6 of 6", done, total)
	}

	// features reads them back from the cache, without the network, and
	// the files it writes give the same FID as the folders.
	feats := map[string]*FeaturesResult{}
	for _, side := range []string{"real", "fake"} {
		f := NewFeaturesRequest()
		f.Input, f.Weights = side, weights
		r, err := Features(ctx, job.Env{Models: testModels, FS: fsys}, f)
		if err != nil {
			t.Fatal(err)
		}
		if r.Cached != 3 || r.Computed != 0 {
			t.Fatalf("features %s after compare: %d cached, %d computed; want 3 and 0", side, r.Cached, r.Computed)
		}
		var b bytes.Buffer
		if err := r.WriteNPY(&b); err != nil {
			t.Fatal(err)
		}
		fsys[side+".npy"] = &fstest.MapFile{Data: b.Bytes()}
		feats[side] = r
	}
	req2 := NewCompareRequest()
	req2.Real, req2.Fake = "real.npy", "fake.npy"
	res2, err := Compare(ctx, job.Env{Models: testModels, FS: fsys}, req2)
	if err != nil {
		t.Fatal(err)
	}
	if got := float64(*res2.FID); !relClose(got, fid, 1e-12) {
		t.Errorf("FID of the extracted feature files %.15g, of the folders %.15g", got, fid)
	}

	// A cache hit is exactly what the network computes. Same batches as
	// the compare that filled the cache: under OpenBLAS an image alone in
	// its batch runs a multi-threaded SGEMM, whose sums round differently
	// in the last bit.
	f := NewFeaturesRequest()
	f.Input, f.Weights, f.NoCache, f.Batch = "real", weights, true, req.Batch
	// Without a model cache the job loads the network for itself.
	fresh, err := Features(ctx, job.Env{FS: fsys}, f)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Computed != 3 || fresh.Cached != 0 {
		t.Fatalf("--no-cache: %d computed, %d cached", fresh.Computed, fresh.Cached)
	}
	for i, row := range fresh.Features {
		for j, v := range row {
			if feats["real"].Features[i][j] != v {
				t.Fatalf("image %d feature %d: cached %v, computed %v", i, j, feats["real"].Features[i][j], v)
			}
		}
	}

	// Damaged entries (cut short, bytes flipped) are ignored and rewritten.
	var entries []string
	err = filepath.WalkDir(cacheDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			entries = append(entries, p)
		}
		return err
	})
	if err != nil || len(entries) != 6 {
		t.Fatalf("%d cache entries (%v), want 6", len(entries), err)
	}
	for i, p := range entries[:2] {
		b, _ := os.ReadFile(p)
		if i == 0 {
			b = b[:len(b)/2]
		} else {
			b[len(b)-1] ^= 0x40
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	statsReq := func(in string) StatsRequest {
		s := NewStatsRequest()
		s.In, s.Weights = in, weights
		return s
	}
	s := statsReq("real")
	st, err := Stats(ctx, job.Env{Models: testModels, FS: fsys}, s)
	if err != nil {
		t.Fatal(err)
	}
	st2, err := Stats(ctx, job.Env{Models: testModels, FS: fsys}, statsReq("fake"))
	if err != nil {
		t.Fatal(err)
	}
	if c := st.Images.Computed + st2.Images.Computed; c != 2 {
		t.Errorf("after damaging 2 entries, stats ran %d images through the network, want 2", c)
	}
	if d, err := frechet.Distance(st.Stats, st2.Stats); err != nil || !relClose(d, fid, 1e-12) {
		t.Errorf("FID of stats of the folders %v (%v), want %v", d, err, fid)
	}
	st, err = Stats(ctx, job.Env{Models: testModels, FS: fsys}, s)
	if err != nil || st.Images.Computed != 0 || st.N != 3 || st.Dim != 2048 {
		t.Fatalf("stats after the rewrite: %+v %+v, %v", st, st.Images, err)
	}

	// --mode tf: torch-fidelity's preprocessing, its own cache entries,
	// and rows kept for KID.
	req.Mode, req.Metrics, req.KIDSubsets, req.KIDSubsetSize = "tf", "all", 2, 3
	tf, err := Compare(ctx, job.Env{Models: testModels, FS: fsys}, req)
	if err != nil {
		t.Fatal(err)
	}
	wantTF, err := frechet.Distance(frechet.StatsOf(expectedRows(t, dir, "tf_pool2048", 0, 3), 1), frechet.StatsOf(expectedRows(t, dir, "tf_pool2048", 3, 6), 1))
	if err != nil {
		t.Fatal(err)
	}
	if got := float64(*tf.FID); !relClose(got, wantTF, 1e-4) || relClose(got, fid, 1e-3) {
		t.Errorf("--mode tf: FID %.8g, PyTorch's tf features %.8g, pytorch-fid mode %.8g", got, wantTF, fid)
	}
	if tf.Images.Computed != 6 || tf.Images.Mode != "tf" || tf.KID == nil || tf.MMD2 == nil {
		t.Errorf("--mode tf: %+v, images %+v", tf, tf.Images)
	}

	// --mode clean: clean-fid's preprocessing (its input is checked
	// against Pillow in package inception), its own cache entries, and a
	// FID unlike the other two modes'; features in mode clean read the
	// same entries back. prdc, vendi and cmmd run on the folders' rows.
	req.Mode, req.Metrics, req.NearestK = "clean", "fid,prdc,vendi,cmmd", 2
	clean, err := Compare(ctx, job.Env{Models: testModels, FS: fsys}, req)
	if err != nil {
		t.Fatal(err)
	}
	cf := float64(*clean.FID)
	if clean.Images.Computed != 6 || clean.Images.Mode != "clean" || relClose(cf, fid, 1e-3) || relClose(cf, wantTF, 1e-3) {
		t.Errorf("--mode clean: FID %.8g (pytorch-fid mode %.8g, tf %.8g), images %+v", cf, fid, wantTF, clean.Images)
	}
	var cleanStats [2]frechet.Stats
	var cleanRows [2]*mat.Dense
	for i, side := range []string{"real", "fake"} {
		f := NewFeaturesRequest()
		f.Input, f.Weights, f.Mode = side, weights, "clean"
		r, err := Features(ctx, job.Env{Models: testModels, FS: fsys}, f)
		if err != nil {
			t.Fatal(err)
		}
		if r.Cached != 3 || r.Computed != 0 || r.Mode != "clean" {
			t.Fatalf("features --mode clean of %s: %d cached, %d computed, mode %q", side, r.Cached, r.Computed, r.Mode)
		}
		cleanRows[i] = rowsDense(r.Features)
		cleanStats[i] = frechet.StatsOf(cleanRows[i], 1)
	}
	if d, err := frechet.Distance(cleanStats[0], cleanStats[1]); err != nil || !relClose(d, cf, 1e-12) {
		t.Errorf("--mode clean: FID of the features %v (%v), compare %v", d, err, cf)
	}
	pr, err := manifold.Compute(ctx, cleanRows[0], cleanRows[1], 2)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := diversity.Vendi(cleanRows[1])
	cm, _ := frechet.CMMD(ctx, cleanRows[0], cleanRows[1])
	if clean.Precision == nil || float64(*clean.Precision) != pr.Precision || float64(*clean.Coverage) != pr.Coverage ||
		float64(*clean.Vendi) != v || float64(*clean.CMMD) != cm {
		t.Errorf("folders: prdc %+v vendi %v cmmd %v; of the features %+v, %v, %v", clean, clean.Vendi, clean.CMMD, pr, v, cm)
	}

	// is --images: softmax of logits_unbiased, as torch-fidelity.
	is := NewISRequest()
	is.Images, is.Weights, is.Splits = "real", weights, 1
	isr, err := IS(ctx, job.Env{Models: testModels, FS: fsys}, is)
	if err != nil {
		t.Fatal(err)
	}
	p := expectedRows(t, dir, "logits_unbiased", 0, 3)
	for i := 0; i < 3; i++ {
		softmaxInPlace(p.RawRowView(i))
	}
	wantIS, _, err := frechet.InceptionScore(p, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := float64(isr.IS.Mean); !relClose(got, wantIS, 1e-5) {
		t.Errorf("IS of the folder %.8g, of PyTorch's logits %.8g", got, wantIS)
	}

	// select: folders as pools and as the reference, all from the cache.
	sel := NewSelectRequest()
	sel.Pools, sel.Ref, sel.Weights = []string{"real", "fake"}, "real", weights
	sel.Steps, sel.Batch, sel.Trials, sel.Algos = 4, 1, 1, "fid-ucb"
	sr, err := Select(ctx, job.Env{Models: testModels, FS: fsys}, sel)
	if err != nil {
		t.Fatal(err)
	}
	if len(sr.Scores) != 2 || !(sr.Scores[0] < sr.Scores[1]) {
		t.Errorf("select scores %v: want the real folder (FID to itself) first", sr.Scores)
	}

	// The JSON document says how the images became features.
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"images":{"embedder":"inception","mode":"pytorch-fid"`) {
		t.Errorf("compare JSON %s lacks the images summary", b)
	}
}

// TestImageFolderBadImage: a broken file in a folder is bad input naming
// it, before any network runs on the folder's other side.
func TestImageFolderBadImage(t *testing.T) {
	dir, fsys := imageFixture(t)
	t.Setenv("GENLENS_CACHE", t.TempDir())
	fsys["fake/zz_broken.png"] = &fstest.MapFile{Data: []byte("\x89PNG\r\n\x1a\nshort")}
	req := NewCompareRequest()
	req.Real, req.Fake, req.Weights, req.NoCache = "real", "fake", filepath.Join(dir, "inception_random.pth"), true
	_, err := Compare(context.Background(), job.Env{Models: testModels, FS: fsys}, req)
	if fault.Classify(err) != fault.KindInput || !strings.Contains(err.Error(), "fake/zz_broken.png") {
		t.Errorf("broken image: %v (%v)", err, fault.Classify(err))
	}
}

// TestISShuffle: --shuffle permutes the rows with NumPy's RandomState(2020)
// before the consecutive splits, as torch-fidelity does.
func TestISShuffle(t *testing.T) {
	fsys := fidFS(t)
	req := NewISRequest()
	req.Probs, req.Splits, req.Shuffle = "p1.npy", 5, true
	got, err := IS(context.Background(), job.Env{Models: testModels, FS: fsys}, req)
	if err != nil {
		t.Fatal(err)
	}
	a, err := dataio.ReadArrayFS(fsys, "p1.npy", dataio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := a.Matrix()
	n, k := p.Dims()
	q := mat.NewDense(n, k, nil)
	for i, r := range frechet.NumPyPermutation(n, 2020) {
		q.SetRow(i, p.RawRowView(r))
	}
	m, s, err := frechet.InceptionScore(q, 5)
	if err != nil {
		t.Fatal(err)
	}
	if float64(got.IS.Mean) != m || float64(got.IS.Std) != s {
		t.Errorf("shuffled IS %v ± %v, want %v ± %v", got.IS.Mean, got.IS.Std, m, s)
	}
	req.Shuffle = false
	plain, err := IS(context.Background(), job.Env{Models: testModels, FS: fsys}, req)
	if err != nil {
		t.Fatal(err)
	}
	if plain.IS.Std == got.IS.Std {
		t.Error("shuffling left the split scores unchanged: the test data cannot tell")
	}
}

// TestMissingInputNamed: a mistyped folder is "no such file or folder",
// not the `unknown file type ""` a new user once met.
func TestMissingInputNamed(t *testing.T) {
	req := NewCompareRequest()
	req.Real, req.Fake = "real_imgs/", "fake.npy"
	_, err := Compare(context.Background(), job.Env{Models: testModels, FS: fidFS(t)}, req)
	if fault.Classify(err) != fault.KindInput || !strings.Contains(err.Error(), "real_imgs/: no such file or folder") {
		t.Errorf("missing folder: %v", err)
	}
}

// rowsDense copies float32 feature rows into a float64 matrix.
func rowsDense(rows [][]float32) *mat.Dense {
	x := mat.NewDense(len(rows), len(rows[0]), nil)
	for i, r := range rows {
		for j, v := range r {
			x.Set(i, j, float64(v))
		}
	}
	return x
}

// Every request that reads images has the image options of ImageOptions,
// with one default and one rule: a batch of 0 is refused by every command
// alike, naming the field and the default, as the service decodes it
// (JSON over the command's defaults); a batch left out is the default.
func TestImageBatchOneRule(t *testing.T) {
	type request interface{ Validate() error }
	for _, tc := range []struct {
		cmd, field, body string
		req              request
	}{
		{"features", "batch", `{"input":"imgs"}`, ptr(NewFeaturesRequest())},
		{"stats", "batch", `{"in":"imgs"}`, ptr(NewStatsRequest())},
		{"compare", "batch", `{"real":"a","fake":"b"}`, ptr(NewCompareRequest())},
		{"is", "batch", `{"images":"imgs"}`, ptr(NewISRequest())},
		{"select", "image_batch", `{"pools":["a","b"],"ref":"r"}`, ptr(NewSelectRequest())},
	} {
		if err := json.Unmarshal([]byte(tc.body), tc.req); err != nil {
			t.Fatal(err)
		}
		if err := tc.req.Validate(); err != nil {
			t.Errorf("%s %s: %v", tc.cmd, tc.body, err)
		}
		zero := strings.TrimSuffix(tc.body, "}") + `,"` + tc.field + `":0}`
		if err := json.Unmarshal([]byte(zero), tc.req); err != nil {
			t.Fatal(err)
		}
		err := tc.req.Validate()
		fidWantField(t, err, tc.field)
		if want := fmt.Sprintf("%s: {%s} 0: want at least 1 (the default is %d)", tc.cmd, tc.field, DefaultImageBatch); err == nil || err.(*fault.FieldError).Msg != want {
			t.Errorf("%s %s: %v, want %q", tc.cmd, zero, err, want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// select's image batch is image_batch (its batch is the rows drawn per
// step): both decode, encode and bind to their own fields, and an
// unknown field is named.
func TestSelectImageBatchJSON(t *testing.T) {
	r := NewSelectRequest()
	if err := json.Unmarshal([]byte(`{"batch":7,"image_batch":3,"workers":2,"pools":["a","b"]}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.Batch != 7 || r.ImageOptions.Batch != 3 || r.Workers != 2 || len(r.Pools) != 2 || r.Steps != NewSelectRequest().Steps {
		t.Errorf("decoded %+v", r)
	}
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["batch"] != 7.0 || m["image_batch"] != 3.0 {
		t.Errorf("encoded %s", b)
	}
	var back SelectRequest
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, r) {
		t.Errorf("round trip: %+v, %v; want %+v", back, err, r)
	}
	err = json.Unmarshal([]byte(`{"pools":["a","b"],"image_batchh":3}`), &r)
	var fe *fault.FieldError
	if !errors.As(err, &fe) || fe.Field != "image_batchh" {
		t.Errorf("unknown field: %v", err)
	}
}
