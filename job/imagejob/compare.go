package imagejob

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/fields"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/internal/suggest"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/diversity"
	"github.com/genlens/genlens/metric/frechet"
	"github.com/genlens/genlens/metric/kscore"
	"github.com/genlens/genlens/metric/manifold"
)

// CompareRequest is a request of `genlens compare`: two-sample metrics
// between feature rows of real data and of a generator. FID is the
// Fréchet distance of Heusel et al., "GANs Trained by a Two Time-Scale
// Update Rule Converge to a Local Nash Equilibrium" (NeurIPS 2017); KID
// the polynomial-kernel MMD² of Bińkowski et al., "Demystifying MMD GANs"
// (ICLR 2018). Either side may be a statistics .npz (mu, sigma), as
// `python -m pytorch_fid A B` accepts; then only FID can be computed.
// Either side may also be a folder of images, whose Inception features
// (Dims, pool3 by default; see ImageOptions) are computed here: streamed
// into their mean and covariance when only FID is asked for, kept as rows
// (d numbers per image, never the images) when a metric needs rows.
// Start from NewCompareRequest, which holds the command line's defaults.
type CompareRequest struct {
	Real    string `json:"real" help:"real data: folder of images, feature rows (.npy/.npz/.csv) or statistics .npz (mu, sigma)"`
	Fake    string `json:"fake" help:"generated data: folder of images, feature rows (.npy/.npz/.csv) or statistics .npz (mu, sigma)"`
	RealKey string `json:"real_key,omitempty" help:"array of feature rows inside an .npz {real} (rather than its mu, sigma)"` // array of rows in an .npz (rather than its mu, sigma)
	FakeKey string `json:"fake_key,omitempty" help:"array of feature rows inside an .npz {fake} (rather than its mu, sigma)"`
	// Metrics is a comma-separated list of fid, kid, mmd, cms, prdc,
	// vendi and cmmd, or "all" (every one but cmmd, as far as the inputs
	// allow; cmmd, meaningful on CLIP embeddings only, is asked for by
	// name); "" is fid alone, the one that costs seconds at any sample
	// size.
	Metrics string `json:"metrics,omitempty" help:"comma-separated subset of fid,kid,mmd,cms,prdc,vendi,cmmd, or all (fid,kid,mmd,cms,prdc,vendi; default: fid)"`
	// Kernel and Gamma configure mmd and cms; "" is rbf and median. They
	// are refused when neither metric is computed, so that a kernel never
	// goes silently unused.
	Kernel        string `json:"kernel,omitempty"`
	Gamma         string `json:"gamma,omitempty"`
	KIDSubsets    int    `json:"kid_subsets" help:"KID: number of subsets"`
	KIDSubsetSize int    `json:"kid_subset_size" help:"KID: subset size, at most the smaller side's rows (below them for a meaningful std)"`
	Seed          uint64 `json:"seed" help:"random seed for the KID subsets and {prdc_max_rows}"`
	Dims          string `json:"dims,omitempty" help:"folders: Inception feature, 64, 192, 768 or 2048 (default)"` // folders: 64, 192, 768 or 2048 (default)

	// NearestK is prdc's k. PRDCMaxRows, when not 0, caps the rows of
	// each side prdc uses: a larger side is subsampled without
	// replacement, drawn with Seed.
	NearestK    int `json:"nearest_k" help:"prdc: neighbours k of the radii"`
	PRDCMaxRows int `json:"prdc_max_rows,omitempty" help:"prdc: use at most this many rows of each side, drawn at random with {seed} (0: all)"`

	ImageOptions

	job.CSVOptions // sep: how the fields of CSV inputs are separated
}

// NewCompareRequest returns a request with the command line's defaults.
func NewCompareRequest() CompareRequest {
	return CompareRequest{KIDSubsets: frechet.KIDSubsets, KIDSubsetSize: frechet.KIDSubsetSize, Seed: 1, NearestK: manifold.DefaultK, ImageOptions: NewImageOptions()}
}

// Validate checks the fields that need no input file; which metrics a
// statistics file allows is checked once the inputs are known.
func (r *CompareRequest) Validate() (verr error) {
	defer func() { verr = job.WithDefault(verr, r, NewCompareRequest()) }()
	if err := job.CheckLimits("compare", append(r.limits("batch"), job.Lim("kid_subsets", r.KIDSubsets, MaxKIDSubsets),
		job.Lim("kid_subset_size", r.KIDSubsetSize, MaxKIDSubsetSize), job.Lim("nearest_k", r.NearestK, MaxNearestK),
		job.Lim("prdc_max_rows", r.PRDCMaxRows, maxPRDCRows))...); err != nil {
		return err
	}
	if err := r.CSVOptions.ValidateSep(); err != nil {
		return err
	}
	if r.Real == "" || r.Fake == "" {
		return fault.Fieldf("real", "compare: {real} and {fake} are required")
	}
	if _, err := r.metrics(false, false); err != nil {
		return err
	}
	if _, err := featureDims("compare", r.Dims); err != nil {
		return err
	}
	if _, err := r.check("compare", "batch"); err != nil {
		return err
	}
	return r.checkDims("compare", r.Dims)
}

// metrics returns the metrics to compute, given which sides are
// statistics files, and checks the fields that only some metrics use.
func (r *CompareRequest) metrics(realStats, fakeStats bool) (map[Metric]bool, error) {
	want := map[Metric]bool{}
	rows := !realStats && !fakeStats
	switch strings.ToLower(strings.TrimSpace(r.Metrics)) {
	case "":
		want[MetricFID] = true
	case "all":
		for _, m := range AllMetrics {
			want[m] = rows || !m.NeedsRows()
		}
		return want, r.checkMetricFields(want)
	}
	for _, s := range strings.Split(r.Metrics, ",") {
		m := Metric(strings.ToLower(strings.TrimSpace(s)))
		switch {
		case m == "":
		case !m.Valid():
			return nil, fault.Fieldf("metrics", "compare: unknown metric %q%s (want fid, kid, mmd, cms, prdc, vendi, cmmd or all)", string(m), metricHint(string(m)))
		case m.NeedsRows() && !rows:
			side, path := "real", r.Real
			if !realStats {
				side, path = "generated", r.Fake
			}
			return nil, fault.Fieldf("metrics", "compare: {metrics} %s needs %s feature rows, but %s is a statistics file (mu, sigma)", m, side, path)
		default:
			want[m] = true
		}
	}
	return want, r.checkMetricFields(want)
}

// checkMetricFields checks the fields that only some metrics use.
func (r *CompareRequest) checkMetricFields(want map[Metric]bool) error {
	if want[MetricMMD] || want[MetricCMS] {
		if _, err := job.KernelBandwidth("compare", r.kernel(), r.Gamma, "median"); err != nil {
			return err
		}
	} else if r.Kernel != "" || r.Gamma != "" {
		return fault.Fieldf("kernel", "compare: {kernel} and {gamma} apply only to {metrics} mmd and cms")
	}
	if want[MetricPRDC] {
		switch {
		case r.NearestK < 1 || r.NearestK > MaxNearestK:
			return fault.Fieldf("nearest_k", "compare: {nearest_k} %d: want 1 to %d", r.NearestK, MaxNearestK)
		case r.PRDCMaxRows < 0 || r.PRDCMaxRows > 0 && r.PRDCMaxRows <= r.NearestK:
			return fault.Fieldf("prdc_max_rows", "compare: {prdc_max_rows} %d: want 0 (every row) or more than {nearest_k} %d", r.PRDCMaxRows, r.NearestK)
		}
	} else if r.PRDCMaxRows != 0 {
		return fault.Fieldf("prdc_max_rows", "compare: {prdc_max_rows} applies only to {metrics} prdc")
	}
	if !want[MetricKID] {
		return nil
	}
	switch {
	case r.KIDSubsets < 1 || r.KIDSubsetSize < 2:
		return fault.Fieldf("kid_subsets", "compare: {kid_subsets} must be >= 1 and {kid_subset_size} >= 2")
	case r.KIDSubsets > MaxKIDSubsets:
		return fault.Fieldf("kid_subsets", "compare: {kid_subsets} %d: want at most %d", r.KIDSubsets, MaxKIDSubsets)
	case r.KIDSubsetSize > MaxKIDSubsetSize:
		return fault.Fieldf("kid_subset_size", "compare: {kid_subset_size} %d: want at most %d", r.KIDSubsetSize, MaxKIDSubsetSize)
	}
	return nil
}

// MaxKIDSubsets and MaxKIDSubsetSize bound the KID fields: KID keeps one
// number per subset, and a subset of m rows costs 2 m² d multiply-adds,
// so larger values ask for memory or time no run has (torch-fidelity's
// defaults are 100 subsets of 1000 rows).
const (
	MaxKIDSubsets    = 1_000_000
	MaxKIDSubsetSize = 1_000_000
)

// MaxNearestK bounds nearest_k: prdc keeps k+1 distances per row of each
// side, and the papers use k from 3 to 10.
const MaxNearestK = 1000

// Stages names the stages of Compare's progress in order, for a transport
// that labels them: "images" when a side is a folder (folders), then
// "fid", "kid subsets" and "mmd, cms" as the request asks for them.
func (r *CompareRequest) Stages(folders bool) []string {
	var st []string
	if folders {
		st = append(st, "images")
	}
	want, _ := r.metrics(false, false)
	if want[MetricFID] {
		st = append(st, "fid")
	}
	if want[MetricKID] {
		st = append(st, "kid subsets")
	}
	if want[MetricMMD] || want[MetricCMS] {
		st = append(st, "mmd, cms")
	}
	if want[MetricPRDC] {
		st = append(st, "prdc")
	}
	if want[MetricVendi] {
		st = append(st, "vendi")
	}
	if want[MetricCMMD] {
		st = append(st, "cmmd")
	}
	return st
}

func (r *CompareRequest) kernel() string {
	if r.Kernel == "" {
		return "rbf"
	}
	return r.Kernel
}

// CompareResult is the result of `genlens compare`; it marshals to the
// command's --json document. Metrics not computed are omitted; n_real
// (n_fake) is null when that side is a statistics file that does not
// record its sample count (pytorch-fid's do not).
type CompareResult struct {
	FID *jsonnum.Num `json:"fid,omitempty"`
	// FDDINOv2 repeats the Fréchet distance under the name dgm-eval
	// reports it by when the features are a DINOv2 network's.
	FDDINOv2 *jsonnum.Num  `json:"fd_dinov2,omitempty"`
	KID      *ScoreMeanStd `json:"kid,omitempty"`
	MMD2     *jsonnum.Num  `json:"mmd2,omitempty"`
	CMS      *jsonnum.Num  `json:"cms,omitempty"`

	// prdc: Kynkäänniemi et al.'s precision and recall, Naeem et al.'s
	// density and coverage; vendi: the Vendi score of the fake rows and
	// of the real rows; cmmd: CLIP-MMD.
	Precision *jsonnum.Num `json:"precision,omitempty"`
	Recall    *jsonnum.Num `json:"recall,omitempty"`
	Density   *jsonnum.Num `json:"density,omitempty"`
	Coverage  *jsonnum.Num `json:"coverage,omitempty"`
	Vendi     *jsonnum.Num `json:"vendi,omitempty"`
	VendiReal *jsonnum.Num `json:"vendi_real,omitempty"`
	CMMD      *jsonnum.Num `json:"cmmd,omitempty"`

	NReal  *int        `json:"n_real"`
	NFake  *int        `json:"n_fake"`
	Dim    int         `json:"dim"`
	Kernel string      `json:"kernel,omitempty"`
	Images *ImagesInfo `json:"images,omitempty"` // when a side was a folder

	realDir, fakeDir bool // the side was a folder of images (for the text)
}

// Compare runs `genlens compare`, reading both sides through env.FS.
func Compare(ctx context.Context, env job.Env, req CompareRequest) (*CompareResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	fsys := env.InputFS()
	realDir, fakeDir := isFolder(fsys, req.Real), isFolder(fsys, req.Fake)
	switch {
	case realDir && req.RealKey != "":
		return nil, fault.Fieldf("real_key", "compare: {real_key} names an array in an .npz; %s is a folder of images", req.Real)
	case fakeDir && req.FakeKey != "":
		return nil, fault.Fieldf("fake_key", "compare: {fake_key} names an array in an .npz; %s is a folder of images", req.Fake)
	case !realDir && !fakeDir && req.Dims != "":
		return nil, fault.Fieldf("dims", "compare: {dims} applies only to folders of images, and neither side is one")
	case !realDir && !fakeDir:
		if err := req.unused("compare", "batch"); err != nil {
			return nil, err
		}
	}
	// Files first: a bad file is reported before hours of images.
	fake, real := &featureSide{path: req.Fake}, &featureSide{path: req.Real}
	var err error
	// In the order given, real first: with two bad paths the first is named.
	if !realDir {
		if real, err = readSide(fsys, req.Real, req.RealKey, "{real_key}", req.Separator()); err != nil {
			return nil, err
		}
	}
	if !fakeDir {
		if fake, err = readSide(fsys, req.Fake, req.FakeKey, "{fake_key}", req.Separator()); err != nil {
			return nil, err
		}
	}
	want, err := req.metrics(real.isStats, fake.isStats)
	if err != nil {
		return nil, err
	}
	chk := frechet.Sides{Cmd: "compare"}
	for _, s := range []*featureSide{real, fake} {
		if !isFolder(fsys, s.path) {
			if err := chk.Add(s.path, s.prov, s.isStats); err != nil {
				return nil, err
			}
		}
	}
	var x *extractor
	prov := chk.First
	start := time.Now()
	if realDir || fakeDir {
		if x, err = newExtractor(env, "compare", "batch", req.ImageOptions); err != nil {
			return nil, err
		}
		// Resolve and hash the weights first: a statistics file made
		// with other settings is refused before hours of images.
		if err := x.prepare(ctx); err != nil {
			return nil, err
		}
		folder := req.Real
		if !realDir {
			folder = req.Fake
		}
		out, _ := featureDims("compare", req.Dims)
		prov = x.provenance(out)
		if err := chk.Add(folder, prov, false); err != nil {
			return nil, err
		}
		if err = compareImages(ctx, env, x, req, want, real, fake); err != nil {
			return nil, err
		}
	}
	out := &CompareResult{NReal: real.n(), NFake: fake.n(), Dim: fake.dim(), Images: x.info(start), realDir: realDir, fakeDir: fakeDir}
	if dr := real.dim(); dr != out.Dim {
		what, other := "features have", fmt.Sprintf("%s has %d", req.Real, dr)
		if fake.isStats {
			what = "statistics have"
		}
		if real.isStats {
			other = fmt.Sprintf("statistics %s have %d", req.Real, dr)
		}
		return nil, &fault.InputError{File: req.Fake, Msg: fmt.Sprintf("%s dimension %d, %s", what, out.Dim, other)}
	}
	// A KID subset size the rows cannot fill is refused before any metric.
	if want[MetricKID] {
		if w := req.fitAllKID(real.rows.RawMatrix().Rows, fake.rows.RawMatrix().Rows); w != "" {
			env.Warning(w)
		}
		if err := kidSubsetCheck(&env, req, real.rows.RawMatrix().Rows, fake.rows.RawMatrix().Rows); err != nil {
			return nil, err
		}
	}
	// Progress after the images, a stage per metric: fid (the two
	// covariances, then the distance), kid (its subsets), mmd and cms.
	if want[MetricFID] {
		if err := frechet.CheckDistanceDim(out.Dim); err != nil {
			return nil, fields.Errorf("%s: %w", req.Fake, err)
		}
		for _, s := range []*featureSide{real, fake} {
			if n := s.n(); n != nil {
				if w := singularWarning("compare", s.path, *n, s.dim(), "the Fréchet distance (FID)"); w != "" {
					env.Warning(w)
				}
			}
		}
		env.ReportProgress(0, 3)
		real.gaussian()
		env.ReportProgress(1, 3)
		fake.gaussian()
		env.ReportProgress(2, 3)
		d, err := frechet.Distance(real.gaussian(), fake.gaussian())
		env.ReportProgress(3, 3)
		if err != nil {
			return nil, compareFault(real, fake, err)
		}
		v := jsonnum.Num(d)
		out.FID = &v
		if prov != nil && strings.HasPrefix(prov.Embedder, "dinov2-") {
			out.FDDINOv2 = &v
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if want[MetricKID] {
		m, s, err := frechet.KIDProgress(ctx, real.rows, fake.rows, req.KIDSubsets, req.KIDSubsetSize, req.Seed, env.Progress)
		if err != nil {
			return nil, err
		}
		out.KID = &ScoreMeanStd{jsonnum.Num(m), jsonnum.Num(s)}
	}
	if want[MetricMMD] || want[MetricCMS] {
		// The median rule looks at up to kernel.MedianRows rows evenly
		// spaced over both sides.
		bw, err := job.KernelBandwidth("compare", req.kernel(), req.Gamma, "median")
		if err != nil {
			return nil, err
		}
		k, err := job.ResolveKernel(req.kernel(), bw, []*mat.Dense{real.rows, fake.rows}, req.Real)
		if err != nil {
			return nil, err
		}
		out.Kernel = k.String()
		steps, done := 0, 0
		for _, m := range []Metric{MetricMMD, MetricCMS} {
			if want[m] {
				steps++
			}
		}
		env.ReportProgress(0, steps)
		if want[MetricMMD] {
			v, err := kscore.MMD2(k, real.rows, fake.rows)
			if err != nil {
				return nil, err
			}
			n := jsonnum.Num(v)
			out.MMD2 = &n
			done++
			env.ReportProgress(done, steps)
		}
		if want[MetricCMS] {
			v, err := kscore.CMS(k, real.rows, fake.rows)
			if err != nil {
				return nil, err
			}
			n := jsonnum.Num(v)
			out.CMS = &n
			env.ReportProgress(done+1, steps)
		}
	}
	if err := compareRows(ctx, env, req, want, real, fake, out); err != nil {
		return nil, err
	}
	// Said of a comparison that ran, not of one refused for its input.
	if w := chk.Note(); w != "" {
		env.Warning(w)
	}
	return out, nil
}

// all reports whether the request asks for every metric.
func (r *CompareRequest) all() bool { return strings.EqualFold(strings.TrimSpace(r.Metrics), "all") }

// fitAllKID lowers the KID subset size to the smaller side's rows when
// the metrics are "all" and the size is more than that side holds, and
// returns the warning that says so ("" when nothing changed). Asked for by
// name, KID keeps torch-fidelity's rule and refuses such a size (see
// kidSubsetCheck); "all" means every metric the inputs allow, and a
// subset size of the whole side still gives KID's unbiased estimate.
func (r *CompareRequest) fitAllKID(nr, nf int) string {
	n := min(nr, nf)
	if !r.all() || r.KIDSubsetSize <= n || n < 2 {
		return ""
	}
	w := fmt.Sprintf("compare: KID's {kid_subset_size} %d is more than the %d rows of the smaller side (real %d, generated %d); with {metrics} all it is lowered to %d", r.KIDSubsetSize, n, nr, nf, n)
	r.KIDSubsetSize = n
	return w
}

// kidSubsetCheck refuses a KID subset larger than either side, as
// torch-fidelity does (its subsets are drawn without replacement, and a
// silently smaller subset makes the number differ from torch-fidelity's for
// the same settings), and warns when a subset is the whole of a side: every
// subset of that side is then the same rows, so the standard deviation over
// subsets is 0 by construction (both sides) or spreads over the other side's
// draws only, and says nothing about the estimate's uncertainty.
//
// nr and nf are the rows of each side; env nil only refuses (folders
// check their image counts before any image runs through the network).
func kidSubsetCheck(env *job.Env, req CompareRequest, nr, nf int) error {
	size := req.KIDSubsetSize
	n := min(nr, nf)
	half := max(2, n/2)
	if size > n {
		return fault.Fieldf("kid_subset_size", "compare: {kid_subset_size} %d is more than the %d rows of %s (real %d, generated %d): KID draws each subset without replacement from each side; give {kid_subset_size} %d or less, e.g. %d, so that subsets differ",
			size, n, sideName(nr <= nf, req), nr, nf, n, half)
	}
	switch {
	case env == nil:
	case nr == size && nf == size:
		env.Warning(fmt.Sprintf("compare: KID's subsets of %d rows are the whole of both sides (real %d, generated %d): every subset is the same, so its std 0 is no spread; for a spread, give {kid_subset_size} below %d, e.g. %d", size, nr, nf, size, half))
	case nr == size || nf == size:
		env.Warning(fmt.Sprintf("compare: KID's subsets of %d rows are the whole of %s (real %d, generated %d): its std spreads over the other side's draws only; give {kid_subset_size} below %d, e.g. %d, for subsets of both", size, sideName(nr == size, req), nr, nf, n, half))
	}
	return nil
}

// sideName names the real side (real) or the generated one by its path.
func sideName(real bool, req CompareRequest) string {
	if real {
		return "real " + req.Real
	}
	return "generated " + req.Fake
}

// compareRows computes the metrics of feature rows beyond the kernel
// scores, a progress stage each: prdc, vendi, cmmd.
func compareRows(ctx context.Context, env job.Env, req CompareRequest, want map[Metric]bool, real, fake *featureSide, out *CompareResult) error {
	num := func(v float64) *jsonnum.Num { n := jsonnum.Num(v); return &n }
	if want[MetricPRDC] {
		r, f := real.rows, fake.rows
		if req.PRDCMaxRows > 0 {
			r = subsampleRows(r, req.PRDCMaxRows, req.Seed, 0)
			f = subsampleRows(f, req.PRDCMaxRows, req.Seed, 1)
		}
		var short *fault.InputError
		for _, s := range []struct {
			x    *mat.Dense
			path string
		}{{r, req.Real}, {f, req.Fake}} {
			if n, _ := s.x.Dims(); n <= req.NearestK && short == nil {
				short = &fault.InputError{File: s.path, Msg: fmt.Sprintf("%d rows: prdc with k = %d nearest neighbours needs more than k rows", n, req.NearestK)}
			}
		}
		switch {
		case short != nil && !req.all():
			return short
		case short != nil:
			// "all" is every metric the inputs allow: this one they do not.
			env.Warning(fmt.Sprintf("compare: prdc left out of {metrics} all: %s: %s", short.File, short.Msg))
			want[MetricPRDC] = false
		}
	}
	if want[MetricPRDC] {
		r, f := real.rows, fake.rows
		if req.PRDCMaxRows > 0 {
			r = subsampleRows(r, req.PRDCMaxRows, req.Seed, 0)
			f = subsampleRows(f, req.PRDCMaxRows, req.Seed, 1)
		}
		p, err := manifold.ComputeProgress(ctx, r, f, req.NearestK, env.Progress)
		if err != nil {
			return err
		}
		out.Precision, out.Recall, out.Density, out.Coverage = num(p.Precision), num(p.Recall), num(p.Density), num(p.Coverage)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if want[MetricVendi] {
		env.ReportProgress(0, 2)
		v, err := diversity.Vendi(fake.rows)
		if err != nil {
			return &fault.InputError{File: req.Fake, Msg: err.Error(), Err: err}
		}
		env.ReportProgress(1, 2)
		// Each score is one eigendecomposition (minutes at the largest
		// dimension), which cannot be interrupted: a cancel is seen
		// between the two.
		if err := ctx.Err(); err != nil {
			return err
		}
		vr, err := diversity.Vendi(real.rows)
		if err != nil {
			return &fault.InputError{File: req.Real, Msg: err.Error(), Err: err}
		}
		env.ReportProgress(2, 2)
		out.Vendi, out.VendiReal = num(v), num(vr)
	}
	if want[MetricCMMD] {
		env.ReportProgress(0, 1)
		v, err := frechet.CMMD(ctx, real.rows, fake.rows)
		if err != nil {
			return err
		}
		env.ReportProgress(1, 1)
		out.CMMD = num(v)
	}
	return nil
}

// prdcStream is the second PCG seed word of prdc's subsampling, so that a
// user's seed alone determines the rows.
const prdcStream = 0x50524443 // "PRDC"

// subsampleRows returns limit rows of x drawn without replacement, in
// their original order, with a PCG seeded by seed (side tells the two
// sides' draws apart); x itself when it has at most limit rows.
func subsampleRows(x *mat.Dense, limit int, seed uint64, side uint64) *mat.Dense {
	n, d := x.Dims()
	if n <= limit {
		return x
	}
	rng := rand.New(rand.NewPCG(seed, prdcStream+side))
	idx := rng.Perm(n)[:limit]
	slices.Sort(idx)
	out := mat.NewDense(limit, d, nil)
	for i, j := range idx {
		out.SetRow(i, x.RawRowView(j))
	}
	return out
}

// compareImages fills the folder sides of a comparison: statistics
// streamed from the images when only FID is wanted, rows otherwise. One
// progress count runs over the images of both folders.
func compareImages(ctx context.Context, env job.Env, x *extractor, req CompareRequest, want map[Metric]bool, real, fake *featureSide) error {
	out, _ := featureDims("compare", req.Dims)
	rows := false
	for m, on := range want {
		rows = rows || on && m.NeedsRows()
	}
	sides := []*featureSide{real, fake}
	lists, total, err := x.folders([]string{req.Real, req.Fake})
	if err != nil {
		return err
	}
	if want[MetricKID] {
		// Hours of images are not spent on a KID the counts refuse.
		count := func(i int) int {
			if lists[i] != nil {
				return len(lists[i])
			}
			return sides[i].rows.RawMatrix().Rows
		}
		req.fitAllKID(count(0), count(1))
		if err := kidSubsetCheck(nil, req, count(0), count(1)); err != nil {
			return err
		}
	}
	c := &counter{env: env, total: total}
	for i, s := range sides {
		if lists[i] == nil {
			continue
		}
		if rows {
			s.rows, err = x.imageRows(ctx, lists[i], out, false, c)
		} else {
			s.stats, err = x.imageStats(ctx, s.path, lists[i], out, c)
		}
		if err != nil {
			return err
		}
		if s.rows != nil && s.rows.RawMatrix().Rows < 2 {
			return &fault.InputError{File: s.path, Msg: "1 image; need at least 2"}
		}
	}
	return nil
}

// compareFault makes a covariance that is not positive semidefinite the
// fault of the statistics file it came from. Covariances computed from
// rows are positive semidefinite, so when only one side is a file, a
// distance that came out negative is that file's fault too.
func compareFault(real, fake *featureSide, err error) error {
	var pe *frechet.PSDError
	if !errors.As(err, &pe) {
		return err
	}
	switch {
	case real.isStats && (pe.Which == "first statistics" || pe.Which == "" && !fake.isStats):
		return sigmaFault(real.path, err)
	case fake.isStats && (pe.Which == "second statistics" || pe.Which == "" && !real.isStats):
		return sigmaFault(fake.path, err)
	case real.isStats && fake.isStats:
		return &fault.InputError{File: real.path, Key: "sigma", Msg: pe.Reason + " (or that of " + fake.path + ")", Err: err}
	}
	return err
}

// otherMetricNames are other tools' names of what compare computes, or of
// what another command does (torch-fidelity's isc and prc).
var otherMetricNames = map[string]string{
	"isc": "; the Inception Score is its own command, genlens is", "is": "; the Inception Score is its own command, genlens is",
	"prc": "; did you mean prdc (its precision and recall, with density and coverage)?",
	"pr":  "; did you mean prdc (its precision and recall, with density and coverage)?",
}

// metricHint is the clause an unknown metric m's error adds: another
// tool's name answered, or the metrics two edits from m.
func metricHint(m string) string {
	if h, ok := otherMetricNames[suggest.Fold(m)]; ok {
		return h
	}
	var names []string
	for _, x := range Metrics {
		if suggest.Distance(m, string(x)) <= 2 && len(m) > 2 {
			names = append(names, string(x))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(names, " or ") + "?"
}
