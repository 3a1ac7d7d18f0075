package imagejob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/fields"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/frechet"
	"github.com/genlens/genlens/network/inception"
)

// This file holds `genlens stats` and `genlens is`, and what the
// feature-based jobs (stats, compare, is, select) share: reading rows of
// features or class probabilities as pytorch-fid and torch-fidelity save
// them, and telling a statistics file from rows.

// ScoreMeanStd is a score with its spread: the mean and standard
// deviation over KID subsets, IS splits or selection trials.
type ScoreMeanStd struct {
	Mean jsonnum.Num `json:"mean"`
	Std  jsonnum.Num `json:"std"`
}

// StatsRequest is a request of `genlens stats`: the Gaussian statistics
// (mu, sigma) of feature rows, as pytorch-fid's --save-stats writes them
// (Heusel et al., "GANs Trained by a Two Time-Scale Update Rule Converge
// to a Local Nash Equilibrium", NeurIPS 2017). Where the file goes is the
// transport's business: the result renders it as an artifact.
//
// In may be a folder of images: their Inception features (Dims, pool3 by
// default) are streamed into the statistics batch by batch, as
// pytorch-fid's --save-stats does, and never held all at once.
type StatsRequest struct {
	In   string `json:"in" help:"feature rows (.npy/.npz/.csv, n x d) or a folder of images (or the argument)"`
	Key  string `json:"key,omitempty" help:"array name inside an .npz input"`                             // array inside an .npz input
	Dims string `json:"dims,omitempty" help:"folders: Inception feature, 64, 192, 768 or 2048 (default)"` // folders: 64, 192, 768 or 2048 (default)
	// Shards > 0 computes the partial statistics of shard Shard (0-based)
	// of Shards instead (see ShardOf, ShardRows): a part file for
	// StatsMerge.
	Shards int `json:"shards,omitempty" help:"split into K shards and write this process's partial statistics (see 'genlens stats merge')"`
	Shard  int `json:"shard,omitempty"`
	ImageOptions

	job.CSVOptions // sep: how the fields of CSV inputs are separated
}

// NewStatsRequest returns a request with the command line's defaults.
func NewStatsRequest() StatsRequest { return StatsRequest{ImageOptions: NewImageOptions()} }

// Validate checks the fields that need no input file.
func (r *StatsRequest) Validate() (verr error) {
	defer func() { verr = job.WithDefault(verr, r, NewStatsRequest()) }()
	if err := job.CheckLimits("stats", append(r.limits("batch"), job.Lim("shards", r.Shards, frechet.MaxShards))...); err != nil {
		return err
	}
	if err := r.CSVOptions.ValidateSep(); err != nil {
		return err
	}
	if r.In == "" {
		return fault.Fieldf("in", "stats: {in} FEATS (feature rows or a folder of images) is required")
	}
	if _, err := featureDims("stats", r.Dims); err != nil {
		return err
	}
	if err := checkShards("stats", r.Shards, r.Shard); err != nil {
		return err
	}
	if _, err := r.check("stats", "batch"); err != nil {
		return err
	}
	return r.checkDims("stats", r.Dims)
}

// featureDims parses the dims of an image folder's features for a
// Gaussian comparison: a pooled feature, 2048 when "".
func featureDims(cmd, dims string) (inception.Output, error) {
	if dims == "" {
		return inception.Out2048, nil
	}
	out := inception.Output(strings.ToLower(strings.TrimSpace(dims)))
	switch out {
	case inception.Out64, inception.Out192, inception.Out768, inception.Out2048:
		return out, nil
	}
	return "", fault.Fieldf("dims", "%s: {dims} %q: want 64, 192, 768 or 2048", cmd, dims)
}

// StatsResult is the result of `genlens stats`. The command has no --json;
// the document is the sample count and the dimension.
type StatsResult struct {
	// Path is the statistics file written, which the command line
	// names (--out); empty in the service, whose artifact is stats.npz.
	Path   string      `json:"path,omitempty"`
	N      int         `json:"n"`
	Dim    int         `json:"dim"`
	Shard  *int        `json:"shard,omitempty"`  // with shards: the part's index
	Shards int         `json:"shards,omitempty"` // with shards: the shard count
	Images *ImagesInfo `json:"images,omitempty"` // when the input was a folder

	Stats frechet.Stats `json:"-"`
	// Part is the partial statistics of a sharded request (then Stats is
	// empty).
	Part *frechet.Part `json:"-"`
	// Provenance says how the features of a folder were made, as the
	// statistics file records it.
	Provenance *frechet.Provenance `json:"provenance,omitempty"`
}

// Stats runs `genlens stats`: mean and (n-1)-normalised covariance of the
// rows of req.In, or of the Inception features of the images in the
// folder req.In, read through env.FS. Images done are reported through
// env.Progress.
func Stats(ctx context.Context, env job.Env, req StatsRequest) (*StatsResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	fsys := env.InputFS()
	if isFolder(fsys, req.In) {
		if req.Key != "" {
			return nil, fault.Fieldf("key", "stats: {key} names an array in an .npz; %s is a folder of images", req.In)
		}
		out, _ := featureDims("stats", req.Dims)
		x, err := newExtractor(env, "stats", "batch", req.ImageOptions)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		files, err := x.list(req.In)
		if err != nil {
			return nil, err
		}
		if req.Shards > 0 {
			return x.imagePart(ctx, req, out, files, start)
		}
		s, err := x.imageStats(ctx, req.In, files, out, &counter{env: env, total: len(files)})
		if err != nil {
			return nil, err
		}
		if w := singularWarning("stats", req.In, s.N, s.Dim(), "a Fréchet distance (FID) from these statistics"); w != "" {
			env.Warning(w)
		}
		prov := x.provenance(out)
		if l, _, err := folderShard(req.In, files, 0, 1); err == nil {
			prov.Input = l.SHA256
		}
		return &StatsResult{N: s.N, Dim: s.Dim(), Images: x.info(start), Stats: s, Provenance: prov}, nil
	}
	if req.Dims != "" {
		return nil, fault.Fieldf("dims", "stats: {dims} applies only to a folder of images, and %s is not one", req.In)
	}
	if err := req.unused("stats", "batch"); err != nil {
		return nil, err
	}
	x, err := rowsSpec{key: req.Key, keyFlag: "{key}", sep: req.Separator()}.features(fsys, req.In)
	if err != nil {
		return nil, err
	}
	var part *frechet.Part
	if req.Shards > 0 {
		files, err := expandRows(fsys, req.In)
		if err != nil {
			return nil, err
		}
		n, d := x.Dims()
		l, err := fileListing(fsys, files, req.Key, n, d)
		if err != nil {
			return nil, err
		}
		part = &frechet.Part{Shard: req.Shard, Shards: req.Shards, Listing: l, Prov: frechet.Provenance{Embedder: frechet.EmbedderRows, Dims: strconv.Itoa(d)}}
		lo, hi := ShardRows(n, req.Shard, req.Shards)
		if lo == hi {
			x = &mat.Dense{} // an empty shard: more shards than rows
		} else {
			x = x.Slice(lo, hi, 0, d).(*mat.Dense)
		}
	}
	// StatsOf's own chunks, one at a time, to report progress: 10,000
	// rows of 2048 take seconds in pure Go.
	n, d := x.Dims()
	if part != nil && n == 0 {
		d = part.Listing.Cols
	}
	if err := frechet.CheckDim(d); err != nil {
		return nil, fields.Errorf("%s: %w", req.In, err)
	}
	acc := frechet.NewAccumulator(d)
	env.ReportProgress(0, n)
	for lo, c := 0, frechet.ChunkRows(d); lo < n; lo += c {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+c, n)
		acc.AddRows(x.Slice(lo, hi, 0, d).(*mat.Dense))
		env.ReportProgress(hi, n)
	}
	if part != nil {
		p := frechet.PartOf(acc, part.Shard, part.Shards, part.Listing, part.Prov)
		return &StatsResult{N: p.N, Dim: d, Shard: &p.Shard, Shards: p.Shards, Part: p}, nil
	}
	s := acc.Stats(1)
	if w := singularWarning("stats", req.In, s.N, s.Dim(), "a Fréchet distance (FID) from these statistics"); w != "" {
		env.Warning(w)
	}
	return &StatsResult{N: s.N, Dim: s.Dim(), Stats: s}, nil
}

// Artifact returns the statistics file, an .npz with mu, sigma and n that
// pytorch-fid, clean-fid and numpy.load read, under name.
func (r *StatsResult) Artifact(name string) job.Artifact {
	if r.Part != nil {
		return job.Artifact{Name: name, Write: func(w io.Writer) error { return frechet.EncodePart(w, r.Part) }}
	}
	return job.Artifact{Name: name, Write: func(w io.Writer) error {
		if r.Provenance == nil {
			return frechet.EncodeStats(w, r.Stats)
		}
		return frechet.EncodeStatsMeta(w, r.Stats, r.Provenance.StatsMeta())
	}}
}

// ISRequest is a request of `genlens is`: the Inception Score of
// class-probability rows (Salimans et al., "Improved Techniques for
// Training GANs", NeurIPS 2016), over consecutive splits as the original
// code and torch-fidelity.
//
// Instead of Probs, Images may name a folder of images: their class
// probabilities are the softmax of Inception's logits without the fc
// bias (logits_unbiased), as torch-fidelity computes its IS.
type ISRequest struct {
	Probs     string  `json:"probs,omitempty" help:"class-probability rows (.npy/.npz/.csv), n x classes"`
	Images    string  `json:"images,omitempty" help:"a folder of images instead of {probs}"`
	Key       string  `json:"key,omitempty" help:"array name inside an .npz input"`
	Splits    int     `json:"splits" help:"number of splits"`
	Tolerance float64 `json:"tolerance" help:"how far a row may sum from 1; above the default, rows are rescaled to sum to 1"` // how far a row may sum from 1; above the default, rows are rescaled
	// Shuffle permutes the rows before splitting as torch-fidelity does
	// (NumPy's RandomState(2020).permutation); without it the splits are
	// consecutive, as in the original code of Salimans et al.
	Shuffle bool `json:"shuffle,omitempty" help:"permute the rows before splitting as torch-fidelity does (NumPy RandomState(2020))"`
	ImageOptions

	job.CSVOptions // sep: how the fields of CSV inputs are separated
}

// NewISRequest returns a request with the command line's defaults.
func NewISRequest() ISRequest {
	return ISRequest{Splits: 10, Tolerance: frechet.ProbTolerance, ImageOptions: NewImageOptions()}
}

// Validate checks the fields that need no input file.
func (r *ISRequest) Validate() (verr error) {
	defer func() { verr = job.WithDefault(verr, r, NewISRequest()) }()
	if err := job.CheckLimits("is", append(r.limits("batch"), job.Lim("splits", r.Splits, maxISSplits))...); err != nil {
		return err
	}
	if err := r.CSVOptions.ValidateSep(); err != nil {
		return err
	}
	switch {
	case r.Probs == "" && r.Images == "":
		return fault.Fieldf("probs", "is: {probs} P.npy or {images} DIR is required")
	case r.Probs != "" && r.Images != "":
		return fault.Fieldf("probs", "is: give {probs} or {images}, not both")
	case r.Images != "" && r.Key != "":
		return fault.Fieldf("key", "is: {key} names an array in an .npz {probs}; {images} is a folder")
	case r.Splits < 1:
		return fault.Fieldf("splits", "is: {splits} %d: want >= 1", r.Splits)
	}
	if n, err := r.check("is", "batch"); err == nil && n.embedder != EmbedderInception {
		return fault.Fieldf("embedder", "is: {embedder} %s: the Inception Score is defined on Inception's class probabilities; use inception", n.embedder)
	}
	if _, err := r.check("is", "batch"); err != nil {
		return err
	}
	if r.Probs != "" {
		if err := r.unused("is", "batch"); err != nil {
			return err
		}
	}
	return checkTolerance(r.Tolerance)
}

// checkTolerance refuses a probability tolerance outside [0, 1).
func checkTolerance(tol float64) error {
	if !(tol >= 0 && tol < 1) {
		return fault.Fieldf("tolerance", "{tolerance} %v: want a value in [0, 1)", tol)
	}
	return nil
}

// ISResult is the result of `genlens is`; it marshals to the command's
// --json document.
type ISResult struct {
	IS     ScoreMeanStd `json:"is"`
	Images *ImagesInfo  `json:"images,omitempty"` // when the input was a folder
}

// IS runs `genlens is`, reading the rows (or the images) through env.FS
// and reporting images done through env.Progress.
func IS(ctx context.Context, env job.Env, req ISRequest) (*ISResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	res := &ISResult{}
	var p *mat.Dense
	if req.Images != "" {
		x, err := newExtractor(env, "is", "batch", req.ImageOptions)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		files, err := x.list(req.Images)
		if err != nil {
			return nil, err
		}
		if len(files) < req.Splits {
			return nil, &fault.InputError{File: req.Images, Msg: fmt.Sprintf("%d image(s) for {splits} %d; need at least %d (or a smaller {splits})", len(files), req.Splits, req.Splits)}
		}
		if p, err = x.imageRows(ctx, files, inception.OutLogitsUnbiased, true, &counter{env: env, total: len(files)}); err != nil {
			return nil, err
		}
		res.Images = x.info(start)
	} else {
		var err error
		p, err = rowsSpec{key: req.Key, keyFlag: "{key}", probs: true, sep: req.Separator()}.read(env.InputFS(), req.Probs)
		if err != nil {
			return nil, err
		}
		// frechet.InceptionScore needs a row per split, nothing more: one
		// row with one split has IS 1.
		if n := p.RawMatrix().Rows; n < req.Splits {
			return nil, &fault.InputError{File: req.Probs, Key: req.Key, Msg: fmt.Sprintf("%d class-probability row(s) for {splits} %d; need at least %d (or a smaller {splits})", n, req.Splits, req.Splits)}
		}
		if err := checkProbs(req.Probs, p, req.Tolerance); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req.Shuffle {
		perm := frechet.NumPyPermutation(p.RawMatrix().Rows, frechet.TorchFidelityISSeed)
		q := mat.NewDense(len(perm), p.RawMatrix().Cols, nil)
		for i, r := range perm {
			q.SetRow(i, p.RawRowView(r))
		}
		p = q
	}
	m, s, err := frechet.InceptionScore(p, req.Splits)
	if err != nil {
		return nil, err
	}
	res.IS = ScoreMeanStd{jsonnum.Num(m), jsonnum.Num(s)}
	return res, nil
}

// checkProbs checks that the rows of p, read from file, are class
// distributions within tol, and rescales them to sum to 1 when tol is
// looser than the default (float32 softmax files).
func checkProbs(file string, p *mat.Dense, tol float64) error {
	var err error
	if tol > frechet.ProbTolerance {
		err = frechet.NormalizeProbs(p, tol)
	} else {
		err = frechet.CheckProbs(p, tol)
	}
	var re *frechet.RowError
	if !errors.As(err, &re) {
		return err
	}
	msg := re.Msg
	if re.Col == 0 && tol <= frechet.ProbTolerance {
		// Only a sum close to 1 can be float32 rounding; one further off
		// is simply not a distribution.
		var sum float64
		for _, v := range p.RawRowView(re.Row - 1) {
			sum += v
		}
		if off := math.Abs(sum - 1); off <= 1e-4 {
			msg += "; rows saved as float32 may need {tolerance} 1e-4"
		} else if off <= 1e-3 {
			msg += "; rows saved with few digits may need {tolerance} 1e-3"
		}
	}
	field := ""
	if re.Col > 0 {
		field = "column " + strconv.Itoa(re.Col)
	}
	return &fault.InputError{File: file, Line: re.Row, Field: field, Msg: msg}
}

// rowsSpec says how to read a matrix of rows and how to speak of it.
type rowsSpec struct {
	key     string // .npz member ("" for the only one)
	keyFlag string // the request field that sets key, in braces ("{key}"), named when an .npz needs one
	probs   bool   // class-probability rows (n, classes), not feature rows (n, d)
	stats   bool   // the file may also be a statistics .npz (mu, sigma)
	sep     rune   // separator of a CSV file (0: the comma)
}

// what names the rows, e.g. "feature rows".
func (o rowsSpec) what() string {
	if o.probs {
		return "class-probability rows"
	}
	return "feature rows"
}

// read reads an n x d matrix of rows (n >= 1). An .npz with several
// arrays and no key is an error naming its members and o.keyFlag.
// pytorch-fid's pool3 output, (n, d, 1, 1) or (n, 1, 1, d), is squeezed.
//
// path may be a pattern (parts/*.npy): the rows of the matching files,
// in sorted order, are concatenated, as the shards of 'genlens features
// --shards' add up to the features of the whole folder.
func (o rowsSpec) read(fsys fs.FS, path string) (*mat.Dense, error) {
	files, err := expandRows(fsys, path)
	if err != nil {
		return nil, err
	}
	ms := make([]*mat.Dense, len(files))
	for i, f := range files {
		if ms[i], err = o.readOne(fsys, f); err != nil {
			return nil, err
		}
	}
	return rowsOfFiles(files, ms)
}

// readOne is read of one file.
func (o rowsSpec) readOne(fsys fs.FS, path string) (*mat.Dense, error) {
	// A missing path is named as such, whatever its extension says: a
	// folder of images mistyped once answered `unknown file type ""`.
	if _, err := fs.Stat(fsys, path); errors.Is(err, fs.ErrNotExist) {
		return nil, &fault.InputError{File: path, Msg: "no such file or folder", Err: err}
	}
	if o.key == "" && strings.HasSuffix(strings.ToLower(path), ".npz") {
		keys, err := dataio.NPZKeysFS(fsys, path)
		if err != nil {
			return nil, err
		}
		if len(keys) > 1 {
			what := ""
			if o.stats {
				what = " and no statistics (mu, sigma)"
			}
			return nil, &fault.InputError{File: path, Msg: fmt.Sprintf("archive holds %d arrays (%s)%s; choose one with %s", len(keys), strings.Join(keys, ", "), what, o.keyFlag)}
		}
	}
	a, err := dataio.ReadArrayFS(fsys, path, dataio.ReadOptions{Key: o.key, Sep: o.sep})
	if err != nil {
		return nil, err
	}
	if a.Rank() == 4 && a.Shape[1] == 1 && a.Shape[2] == 1 {
		a = &dataio.Array{Shape: []int{a.Shape[0], a.Shape[3]}, Data: a.Data}
	} else if a.Rank() == 4 && a.Shape[2] == 1 && a.Shape[3] == 1 {
		a = &dataio.Array{Shape: []int{a.Shape[0], a.Shape[1]}, Data: a.Data}
	}
	if a.Rank() != 2 {
		shape := "(n, d)"
		if o.probs {
			shape = "(n, classes)"
		}
		return nil, &fault.InputError{File: path, Key: o.key, Msg: fmt.Sprintf("want %s %s, got shape %v", o.what(), shape, a.Shape)}
	}
	return a.Matrix()
}

// features reads an n x d matrix of rows with at least 2 rows (a
// covariance needs 2).
func (o rowsSpec) features(fsys fs.FS, path string) (*mat.Dense, error) {
	x, err := o.read(fsys, path)
	if err != nil {
		return nil, err
	}
	if n := x.RawMatrix().Rows; n < 2 {
		return nil, &fault.InputError{File: path, Key: o.key, Msg: fmt.Sprintf("%d row(s); need at least 2 %s", n, o.what())}
	}
	return x, nil
}

// featureSide is one side of a comparison: feature rows, Gaussian
// statistics read from a file (then rows is nil and isStats is set), or
// statistics streamed from a folder of images (rows nil, isStats unset).
type featureSide struct {
	path    string
	prov    *frechet.Provenance // how a statistics file's features were made, when it says
	rows    *mat.Dense
	stats   frechet.Stats // of the file, or of the rows once needed
	isStats bool
}

// readSide reads path as a statistics .npz when it is one and no key
// chose an array of rows in it, and as feature rows otherwise.
func readSide(fsys fs.FS, path, key, keyFlag string, sep rune) (*featureSide, error) {
	if key == "" && frechet.IsStatsFile(fsys, path) {
		s, err := frechet.ReadStatsFS(fsys, path)
		if err != nil {
			return nil, err
		}
		prov, err := frechet.ReadProvenance(fsys, path)
		if err != nil {
			return nil, err
		}
		return &featureSide{path: path, stats: s, isStats: true, prov: prov}, nil
	}
	x, err := rowsSpec{key: key, keyFlag: keyFlag, stats: true, sep: sep}.features(fsys, path)
	if err != nil {
		return nil, err
	}
	return &featureSide{path: path, rows: x}, nil
}

// dim returns the feature dimension.
func (s *featureSide) dim() int {
	if s.rows == nil {
		return s.stats.Dim()
	}
	return s.rows.RawMatrix().Cols
}

// n returns the sample count, nil when a statistics file does not record
// it (pytorch-fid's do not).
func (s *featureSide) n() *int {
	n := s.stats.N
	if s.rows != nil {
		n = s.rows.RawMatrix().Rows
	}
	if n == 0 {
		return nil
	}
	return &n
}

// gaussian returns the statistics of the side, computing those of rows
// (n-1 covariance, as pytorch-fid) on first use.
func (s *featureSide) gaussian() frechet.Stats {
	if s.rows != nil && s.stats.Sigma == nil {
		s.stats = frechet.StatsOf(s.rows, 1)
	}
	return s.stats
}

// sigmaFault turns a covariance found not positive semidefinite into an
// input error about the statistics file it came from; other errors pass.
func sigmaFault(file string, err error) error {
	var pe *frechet.PSDError
	if !errors.As(err, &pe) {
		return err
	}
	return &fault.InputError{File: file, Key: "sigma", Msg: pe.Reason, Err: err}
}

// String formats a score as "mean ± std".
func (s ScoreMeanStd) String() string { return s.Mean.String() + " ± " + s.Std.String() }
