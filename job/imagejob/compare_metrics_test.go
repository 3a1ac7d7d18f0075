package imagejob

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/internal/golden"
	"github.com/genlens/genlens/metric/diversity"
	"github.com/genlens/genlens/metric/frechet"
	"github.com/genlens/genlens/metric/manifold"
)

// readRowsFS reads an .npy of fidFS as a matrix.
func readRowsFS(t *testing.T, env job.Env, name string) *mat.Dense {
	t.Helper()
	x, err := rowsSpec{}.features(env.InputFS(), name)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestCompareRowMetrics runs prdc, vendi and cmmd through Compare and
// checks each against its method package on the same rows, the --json
// keys, the golden, and the seeded subsampling of --prdc-max-rows.
func TestCompareRowMetrics(t *testing.T) {
	env := job.Env{FS: fidFS(t)}
	ctx := context.Background()
	req := NewCompareRequest()
	req.Real, req.Fake, req.Metrics = "real.npy", "fake.npy", "prdc,vendi,cmmd"
	res, err := Compare(ctx, env, req)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "compare_prdc_vendi_cmmd", res)
	real, fake := readRowsFS(t, env, "real.npy"), readRowsFS(t, env, "fake.npy")
	p, err := manifold.Compute(ctx, real, fake, 5)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := diversity.Vendi(fake)
	vr, _ := diversity.Vendi(real)
	c, _ := frechet.CMMD(ctx, real, fake)
	for _, g := range []struct {
		name      string
		got, want float64
	}{
		{"precision", float64(*res.Precision), p.Precision}, {"recall", float64(*res.Recall), p.Recall},
		{"density", float64(*res.Density), p.Density}, {"coverage", float64(*res.Coverage), p.Coverage},
		{"vendi", float64(*res.Vendi), v}, {"vendi_real", float64(*res.VendiReal), vr}, {"cmmd", float64(*res.CMMD), c},
	} {
		if g.got != g.want {
			t.Errorf("%s: %v, method package %v", g.name, g.got, g.want)
		}
	}
	b, _ := json.Marshal(res)
	var keys map[string]any
	json.Unmarshal(b, &keys)
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	if got := strings.Join(names, ","); got != "cmmd,coverage,density,dim,n_fake,n_real,precision,recall,vendi,vendi_real" {
		t.Errorf("JSON keys %s", got)
	}

	// --prdc-max-rows: 30 rows a side drawn with the seed; the same seed
	// gives the same numbers, and they are those of the drawn rows.
	req.Metrics, req.PRDCMaxRows, req.NearestK = "prdc", 30, 3
	a, err := Compare(ctx, env, req)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := Compare(ctx, env, req)
	if *a.Precision != *b2.Precision || *a.Density != *b2.Density || *a.Recall != *b2.Recall {
		t.Errorf("same seed, different results: %+v %+v", a, b2)
	}
	sub, _ := manifold.Compute(ctx, subsampleRows(real, 30, 1, 0), subsampleRows(fake, 30, 1, 1), 3)
	if float64(*a.Density) != sub.Density || float64(*a.Coverage) != sub.Coverage {
		t.Errorf("subsampled: density %v coverage %v, of the drawn rows %v %v", *a.Density, *a.Coverage, sub.Density, sub.Coverage)
	}
	if s := subsampleRows(real, 30, 1, 0); s.RawMatrix().Rows != 30 || !isRowSubset(real, s) {
		t.Error("subsample is not 30 distinct rows of the input in order")
	}
	if subsampleRows(real, 500, 1, 0) != real {
		t.Error("a cap above the row count copied the rows")
	}

	// "all" is every metric but cmmd.
	req.Metrics, req.PRDCMaxRows, req.KIDSubsetSize = "all", 0, 35
	all, err := Compare(ctx, env, req)
	if err != nil {
		t.Fatal(err)
	}
	if all.Precision == nil || all.Vendi == nil || all.CMMD != nil || all.FID == nil || all.KID == nil {
		t.Errorf("all: %+v", all)
	}

	// "all" with a side too small for prdc's k or KID's subset size: the
	// other metrics, and a warning for each (asked for by name, both
	// are refused; see below and TestCompareKIDSubsetSize...).
	var warned []string
	wenv := env
	wenv.Warn = func(s string) { warned = append(warned, s) }
	req.Metrics, req.NearestK, req.KIDSubsetSize = "all", 75, 1000
	all, err = Compare(ctx, wenv, req)
	if err != nil {
		t.Fatal(err)
	}
	if all.Precision != nil || all.KID == nil || all.Vendi == nil {
		t.Errorf("all with k 75 of 70 rows: %+v; want no prdc, kid and vendi", all)
	}
	joined := strings.Join(warned, "\n")
	if !strings.Contains(joined, "prdc left out of {metrics} all: fake.npy: 70 rows") || !strings.Contains(joined, "lowered to 70") {
		t.Errorf("warnings %q; want prdc left out (fake.npy: 70 rows) and KID's subset size lowered to 70", warned)
	}
	req.NearestK, req.KIDSubsetSize = manifold.DefaultK, 35

	// Too few rows for k: an input error naming the file.
	req.Metrics, req.NearestK, req.PRDCMaxRows = "prdc", 75, 0
	_, err = Compare(ctx, env, req)
	var ie *fault.InputError
	if !errors.As(err, &ie) || ie.File != "fake.npy" {
		t.Errorf("k = 75 with 70 fake rows: %v, want an input error naming fake.npy", err)
	}
	// A statistics file has no rows.
	req.Real, req.NearestK = "real_stats.npz", 5
	_, err = Compare(ctx, env, req)
	fidWantField(t, err, "metrics")
}

// isRowSubset reports whether the rows of s are distinct rows of x, in x's order.
func isRowSubset(x, s *mat.Dense) bool {
	n, _ := x.Dims()
	m, _ := s.Dims()
	j := 0
	for i := 0; i < m; i++ {
		for j < n && !slices.Equal(x.RawRowView(j), s.RawRowView(i)) {
			j++
		}
		if j == n {
			return false
		}
		j++
	}
	return true
}

func TestCompareRowMetricsValidate(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(*CompareRequest)
		field string
	}{
		{"prdc defaults", func(r *CompareRequest) { r.Metrics = "prdc" }, ""},
		{"nearest k 0", func(r *CompareRequest) { r.Metrics, r.NearestK = "prdc", 0 }, "nearest_k"},
		{"nearest k huge", func(r *CompareRequest) { r.Metrics, r.NearestK = "prdc", math.MaxInt }, "nearest_k"},
		{"nearest k unused", func(r *CompareRequest) { r.Metrics, r.NearestK = "fid", 0 }, ""},
		{"max rows", func(r *CompareRequest) { r.Metrics, r.PRDCMaxRows = "prdc", 1000 }, ""},
		{"max rows below k", func(r *CompareRequest) { r.Metrics, r.PRDCMaxRows = "prdc", 5 }, "prdc_max_rows"},
		{"max rows negative", func(r *CompareRequest) { r.Metrics, r.PRDCMaxRows = "prdc", -1 }, "prdc_max_rows"},
		{"max rows unused", func(r *CompareRequest) { r.Metrics, r.PRDCMaxRows = "fid", 100 }, "prdc_max_rows"},
		{"vendi cmmd", func(r *CompareRequest) { r.Metrics = "vendi, CMMD" }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := NewCompareRequest()
			r.Real, r.Fake = "r.npy", "f.npy"
			c.edit(&r)
			fidWantField(t, r.Validate(), c.field)
		})
	}
	r := NewCompareRequest()
	r.Real, r.Fake, r.Metrics = "r.npy", "f.npy", "fid,prdc,vendi,cmmd"
	if got := strings.Join(r.Stages(true), "/"); got != "images/fid/prdc/vendi/cmmd" {
		t.Errorf("stages %s", got)
	}
}
