package imagejob

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/internal/golden"
	"github.com/genlens/genlens/metric/frechet"
)

// fidNPY encodes an array as an .npy file in memory.
func fidNPY(t *testing.T, shape []int, data []float64) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := dataio.EncodeNPY(&b, &dataio.Array{Shape: shape, Data: data}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fidStatsNPZ encodes statistics as a pytorch-fid .npz in memory (with n
// when s.N > 0).
func fidStatsNPZ(t *testing.T, s frechet.Stats) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := frechet.EncodeStats(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fidFS holds the inputs of the feature-based goldens: real and fake
// feature rows (d = 6), the statistics of the real rows, three Gaussian
// pools of growing spread and three pools of class-probability rows of
// falling confidence. It is the data the command line was run on before
// the job layer existed, so the goldens of stats, compare and is hold the
// numbers it printed then.
func fidFS(t *testing.T) fstest.MapFS {
	r := rand.New(rand.NewPCG(1, 2))
	rows := func(n, d int, scale, shift float64) []float64 {
		v := make([]float64, n*d)
		for i := range v {
			v[i] = scale*r.NormFloat64() + shift
		}
		return v
	}
	rd := rows(80, 6, 1, 0)
	fs := fstest.MapFS{
		"real.npy":       {Data: fidNPY(t, []int{80, 6}, rd)},
		"fake.npy":       {Data: fidNPY(t, []int{70, 6}, rows(70, 6, 1.2, 0.3))},
		"real_stats.npz": {Data: fidStatsNPZ(t, frechet.StatsOf(mat.NewDense(80, 6, rd), 1))},
	}
	for i, s := range []float64{0.3, 1.0, 1.8} {
		fs["g"+string(rune('0'+i))+".npy"] = &fstest.MapFile{Data: fidNPY(t, []int{200, 6}, rows(200, 6, s, 0))}
	}
	const k = 5
	for g := 0; g < 3; g++ {
		p := make([]float64, 100*k)
		for i := 0; i < 100; i++ {
			c := r.IntN(k)
			eps := 0.02 * float64(g+1)
			for j := 0; j < k; j++ {
				p[i*k+j] = eps
			}
			p[i*k+c] = 1 - eps*float64(k-1)
		}
		fs["p"+string(rune('0'+g))+".npy"] = &fstest.MapFile{Data: fidNPY(t, []int{100, k}, p)}
	}
	return fs
}

func TestStatsGolden(t *testing.T) {
	fs := fidFS(t)
	req := NewStatsRequest()
	req.In = "real.npy"
	res, err := Stats(context.Background(), job.Env{FS: fs}, req)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "stats", res)
	// The artifact is the file `genlens stats` wrote, byte for byte.
	var b bytes.Buffer
	if err := res.Artifact("stats.npz").Write(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), fs["real_stats.npz"].Data) {
		t.Error("stats artifact differs from frechet.WriteStats of the same rows")
	}
}

// TestCompareKIDSubsetSize: a KID subset larger than a side is refused as
// torch-fidelity refuses it, naming the field and the row counts; one equal
// to a side computes with a warning that the std is no spread (0 when both
// sides are whole), instead of a silent "± 0".
func TestCompareKIDSubsetSize(t *testing.T) {
	for _, c := range []struct {
		name, real, fake string
		size             int
		field, warn      string // the refusal's field, or the warning's words
	}{
		{"above both", "real.npy", "fake.npy", 1000, "kid_subset_size", ""},
		{"above the smaller", "real.npy", "fake.npy", 71, "kid_subset_size", ""},
		{"whole of both", "fake.npy", "fake.npy", 70, "", "every subset is the same, so its std 0 is no spread"},
		{"whole of one", "real.npy", "fake.npy", 70, "", "the whole of generated fake.npy"},
		{"below both", "real.npy", "fake.npy", 35, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var warns []string
			env := job.Env{FS: fidFS(t), Warn: func(m string) { warns = append(warns, m) }}
			req := NewCompareRequest()
			req.Real, req.Fake, req.Metrics, req.KIDSubsets, req.KIDSubsetSize = c.real, c.fake, "kid", 5, c.size
			res, err := Compare(context.Background(), env, req)
			if c.field != "" {
				var fe *fault.FieldError
				if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(err.Error(), "(real 80, generated 70)") {
					t.Fatalf("got %v, want a {%s} error naming the row counts", err, c.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.warn == "" {
				if len(warns) != 0 || res.KID.Std == 0 {
					t.Errorf("warnings %q, std %v: want none and a spread", warns, res.KID.Std)
				}
				return
			}
			if len(warns) != 1 || !strings.Contains(warns[0], c.warn) {
				t.Errorf("warnings %q, want one saying %q", warns, c.warn)
			}
		})
	}
}

func TestCompareGolden(t *testing.T) {
	env := job.Env{FS: fidFS(t)}
	for _, c := range []struct {
		name string
		edit func(*CompareRequest)
	}{
		// Subsets of 70: the whole generated side, as the golden was
		// made when a larger size was capped at the smaller side.
		{"compare_rows", func(r *CompareRequest) { r.Metrics, r.KIDSubsetSize = "all", 70 }},
		{"compare_laplacian_kid", func(r *CompareRequest) {
			r.Metrics, r.Kernel, r.Gamma, r.KIDSubsets, r.KIDSubsetSize, r.Seed = "all", "laplacian", "dim", 7, 30, 3
		}},
		{"compare_real_stats", func(r *CompareRequest) { r.Real = "real_stats.npz" }},
		// The statistics on the generated side, as
		// `python -m pytorch_fid A B` accepts either way round.
		{"compare_fake_stats", func(r *CompareRequest) { r.Real, r.Fake = "fake.npy", "real_stats.npz" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := NewCompareRequest()
			req.Real, req.Fake = "real.npy", "fake.npy"
			c.edit(&req)
			res, err := Compare(context.Background(), env, req)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, c.name, res)
		})
	}
	// FID is symmetric: rows against statistics, either way round.
	fid := func(real, fake string) float64 {
		req := NewCompareRequest()
		req.Real, req.Fake, req.Metrics = real, fake, "fid"
		res, err := Compare(context.Background(), env, req)
		if err != nil {
			t.Fatal(err)
		}
		return float64(*res.FID)
	}
	a, b := fid("real_stats.npz", "fake.npy"), fid("fake.npy", "real_stats.npz")
	if math.Abs(a-b) > 1e-12*a {
		t.Errorf("FID(stats, rows) = %v, FID(rows, stats) = %v", a, b)
	}
}

// TestComparePytorchFIDStats is pytorch-fid's own check of the distance
// (tests/test_fid_score.py): two statistics files, means 0 and 1 in every
// coordinate, identity covariances, d = 2048: FID = ||μ₁ - μ₂||² = 2048
// exactly.
func TestComparePytorchFIDStats(t *testing.T) {
	const d = 2048
	id := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		id.SetSym(i, i, 1)
	}
	zeros, ones := make([]float64, d), make([]float64, d)
	for i := range ones {
		ones[i] = 1
	}
	fs := fstest.MapFS{
		"a.npz": {Data: fidStatsNPZ(t, frechet.Stats{Mu: zeros, Sigma: id})},
		"b.npz": {Data: fidStatsNPZ(t, frechet.Stats{Mu: ones, Sigma: id})},
	}
	req := NewCompareRequest()
	req.Real, req.Fake = "a.npz", "b.npz"
	res, err := Compare(context.Background(), job.Env{FS: fs}, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.FID == nil || *res.FID != d || res.KID != nil || res.MMD2 != nil || res.CMS != nil {
		t.Errorf("got %+v, want FID exactly %d and nothing else", res, d)
	}
	if res.NReal != nil || res.NFake != nil || res.Dim != d {
		t.Errorf("n_real %v, n_fake %v, dim %d: want null, null, %d", res.NReal, res.NFake, res.Dim, d)
	}
}

// TestCompareNotPSDFake: a statistics file whose sigma is no covariance
// is reported as that file's fault on whichever side it is.
func TestCompareNotPSDFake(t *testing.T) {
	fs := fidFS(t)
	bad := mat.NewSymDense(6, nil)
	for i := 0; i < 6; i++ {
		bad.SetSym(i, i, 1)
	}
	// Every entry within its variances, still indefinite.
	bad.SetSym(0, 1, 0.9)
	bad.SetSym(1, 2, 0.9)
	bad.SetSym(0, 2, -0.9)
	fs["bad.npz"] = &fstest.MapFile{Data: fidStatsNPZ(t, frechet.Stats{Mu: make([]float64, 6), Sigma: bad})}
	for _, c := range [][2]string{{"real.npy", "bad.npz"}, {"bad.npz", "real.npy"}} {
		req := NewCompareRequest()
		req.Real, req.Fake = c[0], c[1]
		_, err := Compare(context.Background(), job.Env{FS: fs}, req)
		var ie *fault.InputError
		if !errors.As(err, &ie) || ie.File != "bad.npz" || ie.Key != "sigma" || !strings.HasPrefix(ie.Msg, "covariance is not positive semidefinite") {
			t.Errorf("real %s, fake %s: got %v, want an input error about bad.npz's sigma", c[0], c[1], err)
		}
	}
}

func TestCompareValidate(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(*CompareRequest)
		field string // "" for valid
	}{
		{"defaults", func(r *CompareRequest) {}, ""},
		{"no real", func(r *CompareRequest) { r.Real = "" }, "real"},
		{"unknown metric", func(r *CompareRequest) { r.Metrics = "fid,fud" }, "metrics"},
		{"kid subsets", func(r *CompareRequest) { r.Metrics, r.KIDSubsets = "kid", 0 }, "kid_subsets"},
		{"kid subsets all", func(r *CompareRequest) { r.Metrics, r.KIDSubsets = "all", 0 }, "kid_subsets"},
		{"kid subsets default", func(r *CompareRequest) { r.KIDSubsets = 0 }, ""},
		{"kid subsets at the bound", func(r *CompareRequest) { r.Metrics, r.KIDSubsets = "kid", MaxKIDSubsets }, ""},
		{"kid subsets huge", func(r *CompareRequest) { r.Metrics, r.KIDSubsets = "kid", math.MaxInt }, "kid_subsets"},
		{"kid subsets huge all", func(r *CompareRequest) { r.Metrics, r.KIDSubsets = "all", MaxKIDSubsets+1 }, "kid_subsets"},
		{"kid subsets huge unused", func(r *CompareRequest) { r.Metrics, r.KIDSubsets = "fid", math.MaxInt }, "kid_subsets"},
		{"kid subset size at the bound", func(r *CompareRequest) { r.Metrics, r.KIDSubsetSize = "kid", MaxKIDSubsetSize }, ""},
		{"kid subset size huge", func(r *CompareRequest) { r.Metrics, r.KIDSubsetSize = "kid", math.MaxInt }, "kid_subset_size"},
		{"kernel default metrics", func(r *CompareRequest) { r.Kernel = "rbf" }, "kernel"},
		{"dims", func(r *CompareRequest) { r.Dims = "logits" }, "dims"},
		{"mode", func(r *CompareRequest) { r.Mode = "tensorflow" }, "mode"},
		{"batch", func(r *CompareRequest) { r.Batch = -1 }, "batch"},
		{"kid subsets unused", func(r *CompareRequest) { r.Metrics, r.KIDSubsets = "fid", 0 }, ""},
		{"kernel unused", func(r *CompareRequest) { r.Metrics, r.Kernel = "fid,kid", "rbf" }, "kernel"},
		{"gamma unused", func(r *CompareRequest) { r.Metrics, r.Gamma = "fid", "dim" }, "kernel"},
		{"gamma with linear", func(r *CompareRequest) { r.Metrics, r.Kernel, r.Gamma = "mmd", "linear", "0.5" }, "gamma"},
		{"gamma with rbf", func(r *CompareRequest) { r.Metrics, r.Gamma = "cms", "0.5" }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := NewCompareRequest()
			r.Real, r.Fake = "r.npy", "f.npy"
			c.edit(&r)
			fidWantField(t, r.Validate(), c.field)
		})
	}
	// Which metrics a statistics file allows is known once it is read.
	req := NewCompareRequest()
	req.Real, req.Fake, req.Metrics = "real_stats.npz", "fake.npy", "fid,kid"
	_, err := Compare(context.Background(), job.Env{FS: fidFS(t)}, req)
	fidWantField(t, err, "metrics")
}

func TestCompareStages(t *testing.T) {
	for _, c := range []struct {
		metrics string
		folders bool
		want    string
	}{
		{"", false, "fid"},
		{"", true, "images/fid"},
		{"kid", false, "kid subsets"},
		{" KID , fid", false, "fid/kid subsets"},
		{"cms", true, "images/mmd, cms"},
		{"mmd,cms", false, "mmd, cms"},
		{"all", false, "fid/kid subsets/mmd, cms/prdc/vendi"},
		{"ALL", true, "images/fid/kid subsets/mmd, cms/prdc/vendi"},
	} {
		r := NewCompareRequest()
		r.Real, r.Fake, r.Metrics = "r.npy", "f.npy", c.metrics
		if got := strings.Join(r.Stages(c.folders), "/"); got != c.want {
			t.Errorf("metrics %q, folders %v: stages %q, want %q", c.metrics, c.folders, got, c.want)
		}
	}
}

// fidWantField fails unless err is a *FieldError for field, or nil when
// field is "".
func fidWantField(t *testing.T, err error, field string) {
	t.Helper()
	var fe *fault.FieldError
	switch {
	case field == "" && err != nil:
		t.Errorf("unexpected error %v", err)
	case field != "" && (!errors.As(err, &fe) || fe.Field != field):
		t.Errorf("got %v, want a field error for %s", err, field)
	}
}

func TestISGolden(t *testing.T) {
	fs := fidFS(t)
	req := NewISRequest()
	req.Probs = "p0.npy"
	res, err := IS(context.Background(), job.Env{FS: fs}, req)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "is", res)
	for _, c := range []struct {
		name  string
		edit  func(*ISRequest)
		field string
	}{
		{"defaults", func(r *ISRequest) {}, ""},
		{"no probs", func(r *ISRequest) { r.Probs = "" }, "probs"},
		{"splits", func(r *ISRequest) { r.Splits = 0 }, "splits"},
		{"tolerance", func(r *ISRequest) { r.Tolerance = 1 }, "tolerance"},
		{"negative tolerance", func(r *ISRequest) { r.Tolerance = -1e-9 }, "tolerance"},
		{"NaN tolerance", func(r *ISRequest) { r.Tolerance = math.NaN() }, "tolerance"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := NewISRequest()
			r.Probs = "p.npy"
			c.edit(&r)
			fidWantField(t, r.Validate(), c.field)
		})
	}
}

func TestSelectGolden(t *testing.T) {
	env := job.Env{FS: fidFS(t)}
	for _, c := range []struct {
		name string
		edit func(*SelectRequest)
	}{
		// The paper's bonus, as these numbers were pinned with; the
		// default (auto) is TestSelectAutoBonus's.
		{"select_fid", func(r *SelectRequest) { r.FIDBonus = "paper" }},
		{"select_fid_stats", func(r *SelectRequest) { r.Ref, r.FIDBonus = "real_stats.npz", "paper" }},
		{"select_is", func(r *SelectRequest) {
			r.Score, r.Ref, r.Pools, r.Steps, r.Trials, r.Algos = "is", "", []string{"p0.npy", "p1.npy", "p2.npy"}, 40, 3, "greedy,is-ucb"
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := NewSelectRequest()
			req.Ref, req.Pools, req.Steps, req.Trials = "real.npy", []string{"g0.npy", "g1.npy", "g2.npy"}, 50, 4
			c.edit(&req)
			var calls []int
			env.Progress = func(done, total int) { calls = append(calls, done) }
			res, err := Select(context.Background(), env, req)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, c.name, res)
			if len(calls) != req.Trials || calls[len(calls)-1] != req.Trials {
				t.Errorf("progress calls %v, want 1..%d", calls, req.Trials)
			}
			if want := strings.Split(req.Algos, ","); req.Algos != "" && strings.Join(res.Order, ",") != req.Algos {
				t.Errorf("order %v, want %v", res.Order, want)
			}
		})
	}
}

func TestSelectArtifacts(t *testing.T) {
	req := NewSelectRequest()
	req.Ref, req.Pools, req.Steps, req.Trials = "real.npy", []string{"g0.npy", "g1.npy", "g2.npy"}, 30, 2
	res, err := Select(context.Background(), job.Env{FS: fidFS(t)}, req)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range res.Artifacts() {
		var b bytes.Buffer
		if err := a.Write(&b); err != nil || b.Len() == 0 {
			t.Errorf("%s: %d bytes, %v", a.Name, b.Len(), err)
		}
		names = append(names, a.Name)
		if a.Name != "steps.csv" {
			continue
		}
		recs, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 31 || len(recs[0]) != 1+3*6 || recs[0][1] != "fid-ucb_regret_mean" || recs[30][0] != "30" {
			t.Errorf("steps.csv: %d rows, header %v", len(recs), recs[0])
		}
	}
	if strings.Join(names, " ") != "steps.csv regret.png optimal_pick_ratio.png select.json" {
		t.Errorf("artifacts %v", names)
	}
}

// TestSelectCancel: cancelling a selection stops the simulation within
// seconds (a million steps would take hours) and returns context.Canceled.
// The bound leaves room for a loaded CI machine.
func TestSelectCancel(t *testing.T) {
	req := NewSelectRequest()
	req.Ref, req.Pools, req.Steps, req.Trials = "real.npy", []string{"g0.npy", "g1.npy", "g2.npy"}, 1_000_000, 4
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	res, err := Select(ctx, job.Env{FS: fidFS(t)}, req)
	if !errors.Is(err, context.Canceled) || res != nil || fault.Classify(err) != fault.KindCanceled {
		t.Fatalf("got %v, %v; want context.Canceled", res, err)
	}
	if d := time.Since(start) - 100*time.Millisecond; d > 3*time.Second {
		t.Errorf("returned %v after the cancel, want within 3 s", d)
	}
}

func TestSelectValidate(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(*SelectRequest)
		field string
	}{
		{"defaults", func(r *SelectRequest) {}, ""},
		{"score", func(r *SelectRequest) { r.Score = "kid" }, "score"},
		{"one pool", func(r *SelectRequest) { r.Pools = r.Pools[:1] }, "pools"},
		{"steps", func(r *SelectRequest) { r.Steps = 0 }, "steps"},
		{"batch", func(r *SelectRequest) { r.Batch = -1 }, "steps"},
		{"steps 9e18", func(r *SelectRequest) { r.Steps = 9e18 }, "steps"},
		{"trials 9e18", func(r *SelectRequest) { r.Trials = 9e18 }, "trials"},
		{"batch 9e18", func(r *SelectRequest) { r.Batch = 9e18 }, "batch"},
		{"steps x trials", func(r *SelectRequest) { r.Steps, r.Trials = 1e6, 1e4 }, "steps"},
		{"bonus scale", func(r *SelectRequest) { r.BonusScale = 0 }, "bonus_scale"},
		{"delta", func(r *SelectRequest) { r.Delta = 1 }, "delta"},
		{"empty algo", func(r *SelectRequest) { r.Algos = "fid-ucb," }, "algos"},
		{"algo twice", func(r *SelectRequest) { r.Algos = "greedy, greedy" }, "algos"},
		{"unknown algo", func(r *SelectRequest) { r.Algos = "magic" }, "algos"},
		{"is algo for fid", func(r *SelectRequest) { r.Algos = "is-ucb" }, "algos"},
		{"fid without ref", func(r *SelectRequest) { r.Ref = "" }, "ref"},
		{"is with ref", func(r *SelectRequest) { r.Score = "is" }, "ref"},
		{"is with ref key", func(r *SelectRequest) { r.Score, r.Ref, r.RefKey = "is", "", "feats" }, "ref"},
		{"is", func(r *SelectRequest) { r.Score, r.Ref = "is", "" }, ""},
		{"is tolerance", func(r *SelectRequest) { r.Score, r.Ref, r.Tolerance = "is", "", 1 }, "tolerance"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := NewSelectRequest()
			r.Ref, r.Pools = "ref.npy", []string{"a.npy", "b.npy"}
			c.edit(&r)
			fidWantField(t, r.Validate(), c.field)
		})
	}
}

// FuzzCompareValidate: whatever the metric list, kernel and bandwidth
// strings, Validate returns nil or a *FieldError naming a request field,
// and never panics.
func FuzzCompareValidate(f *testing.F) {
	f.Add("fid,kid", "", "", 100, 1000)
	f.Add("mmd", "linear", "0.5", 1, 2)
	f.Add(" cms , fid", "rbf", "median", 0, 0)
	f.Fuzz(func(t *testing.T, metrics, kernel, gamma string, subsets, size int) {
		r := CompareRequest{Real: "r.npy", Fake: "f.npy", Metrics: metrics, Kernel: kernel, Gamma: gamma, KIDSubsets: subsets, KIDSubsetSize: size}
		err := r.Validate()
		var fe *fault.FieldError
		if err != nil && (!errors.As(err, &fe) || fe.Field == "") {
			t.Errorf("Validate() = %v, want nil or a field error", err)
		}
	})
}
