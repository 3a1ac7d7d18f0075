package reprjob

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/imageio"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/cluster"
	"github.com/genlens/genlens/metric/disentangle"
)

// DisentangleRequest is a request of `genlens disentangle`: which image
// region does a generator get wrong (the disentangled mean embeddings of Gruber et al., "Disentangling mean embeddings for better diagnostics of image generators";
// see package disentangle). Start from NewDisentangleRequest, which holds
// the command line's defaults.
type DisentangleRequest struct {
	Train        string   `json:"train" help:"training images (file or PNG folder)"`
	Test         string   `json:"test" help:"held-out real images"`
	Generated    []string `json:"generated" help:"generated image sets, e.g. one per epoch; more may follow as arguments"`
	Names        []string `json:"names,omitempty" help:"names of the generated sets (default: file names)"` // default: file names
	TrainKey     string   `json:"train_key,omitempty" help:"array in a {train} .npz"`
	TestKey      string   `json:"test_key,omitempty" help:"array in a {test} .npz"`
	GeneratedKey string   `json:"generated_key,omitempty" help:"array in the {generated} .npz files"`
	Shape        string   `json:"shape,omitempty" help:"image shape HxW or HxWxC, for flattened (N, D) inputs"` // HxW or HxWxC, for flattened inputs
	PixelRange   string   `json:"pixel_range" help:"source pixel range mapped to [-1, 1]: auto or LO,HI"`       // auto or LO,HI
	Clusters     int      `json:"clusters" help:"number of pixel clusters"`
	Threshold    float64  `json:"threshold"` // > 0: cut the tree at this distance instead
	Linkage      string   `json:"linkage" help:"average, complete, single or ward"`
	Distance     string   `json:"distance" help:"rows (Euclidean between CKA rows, as the authors) or one-minus-cka"`
	CKABatch     int      `json:"cka_batch" help:"images per CKA mini-batch"`
	CKAImages    int      `json:"cka_images" help:"training images used for CKA"`
	Shuffle      bool     `json:"shuffle" help:"draw the CKA images at random (seeded) instead of the first ones"`
	CMSBatch     int      `json:"cms_batch" help:"images per CMS/MMD mini-batch"`
	Gamma        string   `json:"gamma" help:"RBF gamma: median or a positive number"` // median or a positive number
	Seed         uint64   `json:"seed" help:"random seed ({shuffle})"`

	job.CSVOptions // sep: how the fields of CSV inputs are separated
}

// NewDisentangleRequest returns a request with the defaults of the
// command line and no inputs.
func NewDisentangleRequest() DisentangleRequest {
	return DisentangleRequest{PixelRange: "auto", Clusters: disentangle.DefaultClusters, Linkage: "average",
		Distance: "rows", CKABatch: disentangle.DefaultCKABatch, CKAImages: disentangle.DefaultCKAImages,
		CMSBatch: disentangle.DefaultCMSBatch, Gamma: "median", Seed: 1}
}

// Validate checks the fields that need no input file.
func (r *DisentangleRequest) Validate() (verr error) {
	defer func() { verr = job.WithDefault(verr, r, NewDisentangleRequest()) }()
	if err := job.CheckLimits("disentangle", job.Lim("generated", len(r.Generated), job.MaxListLen), job.Lim("names", len(r.Names), job.MaxListLen),
		job.Lim("clusters", r.Clusters, maxClusters), job.Lim("cka_batch", r.CKABatch, maxGramBatch), job.Lim("cka_images", r.CKAImages, maxCKAImages),
		job.Lim("cms_batch", r.CMSBatch, maxGramBatch)); err != nil {
		return err
	}
	if err := r.CSVOptions.ValidateSep(); err != nil {
		return err
	}
	_, _, err := r.options()
	return err
}

func (r *DisentangleRequest) options() (disentangle.Options, imageio.Options, error) {
	var o disentangle.Options
	var iopt imageio.Options
	switch {
	case r.Train == "" || r.Test == "":
		return o, iopt, fault.Fieldf("train", "disentangle: {train} and {test} are required")
	case len(r.Generated) == 0:
		return o, iopt, fault.Fieldf("generated", "disentangle: give at least one {generated} set")
	case r.Names != nil && len(r.Names) != len(r.Generated):
		return o, iopt, fault.Fieldf("names", "disentangle: %d {names} for %d generated sets", len(r.Names), len(r.Generated))
	case r.Clusters < 1:
		return o, iopt, fault.Fieldf("clusters", "disentangle: {clusters} %d: want at least 1", r.Clusters)
	case r.Threshold < 0 || math.IsNaN(r.Threshold) || math.IsInf(r.Threshold, 0):
		return o, iopt, fault.Fieldf("threshold", "disentangle: {threshold} %g: want a positive distance", r.Threshold)
	case r.CKABatch < 2:
		return o, iopt, fault.Fieldf("cka_batch", "disentangle: {cka_batch} %d: want at least 2", r.CKABatch)
	case r.CKAImages < 2:
		return o, iopt, fault.Fieldf("cka_images", "disentangle: {cka_images} %d: want at least 2", r.CKAImages)
	case r.CMSBatch < 1:
		return o, iopt, fault.Fieldf("cms_batch", "disentangle: {cms_batch} %d: want at least 1", r.CMSBatch)
	}
	l, err := cluster.ParseLinkage(r.Linkage)
	if err != nil {
		return o, iopt, fault.Fieldf("linkage", "%s", err)
	}
	d, err := disentangle.ParseDistance(r.Distance)
	if err != nil {
		return o, iopt, fault.Fieldf("distance", "%s", err)
	}
	o = disentangle.Options{Clusters: r.Clusters, Threshold: r.Threshold, Linkage: l, Distance: d,
		CKAImages: r.CKAImages, CKABatch: r.CKABatch, Shuffle: r.Shuffle, Seed: r.Seed, CMSBatch: r.CMSBatch}
	if !strings.EqualFold(strings.TrimSpace(r.Gamma), "median") {
		g, err := strconv.ParseFloat(r.Gamma, 64)
		if err != nil || !(g > 0) || math.IsInf(g, 0) {
			return o, iopt, fault.Fieldf("gamma", "disentangle: {gamma} %q: want median or a positive number", r.Gamma)
		}
		o.Gamma = g
	}
	if r.Shape != "" {
		if iopt.Shape, err = imageio.ParseShape(r.Shape); err != nil {
			return o, iopt, fault.Fieldf("shape", "%s", err)
		}
	}
	if iopt.Range, err = imageio.ParseRange(r.PixelRange); err != nil {
		return o, iopt, fault.Fieldf("pixel_range", "%s", err)
	}
	return o, iopt, nil
}

// DisentangleResult is the result of `genlens disentangle`; it marshals
// to the command's --json document.
type DisentangleResult struct {
	Gamma      jsonnum.Num      `json:"gamma"`
	Height     int              `json:"height"`
	Width      int              `json:"width"`
	Clusters   int              `json:"clusters"`
	Labels     [][]int          `json:"labels"`
	CKAWithin  []jsonnum.Num    `json:"cka_within"`
	CKABetween [][]jsonnum.Num  `json:"cka_between"`
	Sets       []DisentangleSet `json:"sets"`

	// Analysis is the full analysis: the pixel CKA matrix, the cluster
	// tree, the comparisons.
	Analysis *disentangle.Result `json:"-"`
	// Inputs describes the image sets read: training, test, then the
	// generated sets.
	Inputs []ImageSetInfo `json:"-"`
}

// DisentangleSet is the comparison of one generated set with the test set.
type DisentangleSet struct {
	Name        string        `json:"name"`
	CMSImage    jsonnum.Num   `json:"cms_image"`
	CMSClusters []jsonnum.Num `json:"cms_clusters"`
	CMSProduct  jsonnum.Num   `json:"cms_product"`
	MMD2        jsonnum.Num   `json:"mmd2"`
}

// ImageSetInfo describes an image set that was read.
type ImageSetInfo struct {
	Path  string
	Key   string
	Len   int
	Range imageio.Range
}

// Disentangle runs `genlens disentangle`: it reads the image sets through
// env.FS, runs disentangle.Analyze and reports the CKA batches done
// through env.Progress. It warns through env.Warn about clusters that are
// no more coherent inside than with another cluster.
func Disentangle(ctx context.Context, env job.Env, req DisentangleRequest) (*DisentangleResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	opt, iopt, err := req.options()
	if err != nil {
		return nil, err
	}
	fsys := env.InputFS()
	read := func(path, key string) (*imageio.Set, error) {
		o := iopt
		o.Key, o.Sep = key, req.Separator()
		return imageio.ReadFS(fsys, path, o)
	}
	train, err := read(req.Train, req.TrainKey)
	if err != nil {
		return nil, err
	}
	test, err := read(req.Test, req.TestKey)
	if err != nil {
		return nil, err
	}
	sets := []*imageio.Set{train, test}
	gens := make([]*mat.Dense, len(req.Generated))
	for i, p := range req.Generated {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s, err := read(p, req.GeneratedKey)
		if err != nil {
			return nil, err
		}
		sets = append(sets, s)
		gens[i] = s.Images
	}
	if err := imageio.CheckSameShape(sets...); err != nil {
		return nil, err
	}
	names := req.Names
	if names == nil {
		for _, p := range req.Generated {
			names = append(names, SetName(p))
		}
	}
	sh := train.Shape
	g := disentangle.Grid{H: sh.H, W: sh.W, C: sh.C}
	if train.Len() < 2 {
		return nil, &fault.InputError{File: train.Path, Msg: fmt.Sprintf("%d image: the pixel CKA needs at least 2 training images", train.Len())}
	}
	if opt.Threshold == 0 && opt.Clusters > g.Pixels() {
		return nil, fault.Fieldf("clusters", "disentangle: {clusters} %d for images of %d pixels", opt.Clusters, g.Pixels())
	}
	opt.Progress = env.Progress
	res, err := disentangle.Analyze(ctx, train.Images, test.Images, gens, g, opt)
	var se *disentangle.SizeError
	switch {
	case errors.Is(err, disentangle.ErrIdenticalImages):
		return nil, &fault.InputError{File: train.Path, Msg: "most training images are identical: the median rule cannot set gamma; give {gamma} as a number"}
	case errors.As(err, &se):
		braced := func(f string) string { return "{" + f + "}" } // rendered by the transport
		return nil, &fault.InputError{File: train.Path, Msg: strings.TrimPrefix(se.Render(braced), "disentangle: "), Err: err}
	case err != nil:
		return nil, err
	}
	out := NewDisentangleResult(res, names)
	for _, s := range sets {
		out.Inputs = append(out.Inputs, ImageSetInfo{Path: s.Path, Key: s.Key, Len: s.Len(), Range: s.Range})
	}
	for _, c := range res.IncoherentClusters() {
		env.Warning(fmt.Sprintf("cluster %d is no more alike inside (mean CKA %.3g) than with another cluster (up to %.3g): the pixels do not split into independent regions here, so the per-cluster CMS values are not separate causes",
			c, res.Within[c], res.MaxBetween(c)))
	}
	return out, nil
}

// SetName names a generated set after its file: "runs/epoch_07.npy" is
// "epoch_07".
func SetName(path string) string {
	base := filepath.Base(filepath.Clean(path))
	for _, ext := range []string{".gz", ".npy", ".npz", ".csv"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// NewDisentangleResult builds the result document of an analysis, the
// generated sets named by names.
func NewDisentangleResult(res *disentangle.Result, names []string) *DisentangleResult {
	g := res.Grid
	out := &DisentangleResult{Gamma: jsonnum.Num(res.Gamma), Height: g.H, Width: g.W, Clusters: len(res.Sizes),
		CKAWithin: jsonnum.Nums(res.Within), Analysis: res}
	for y := 0; y < g.H; y++ {
		out.Labels = append(out.Labels, slices.Clone(res.Labels[y*g.W:(y+1)*g.W]))
	}
	for _, row := range res.Between {
		out.CKABetween = append(out.CKABetween, jsonnum.Nums(row))
	}
	for i, c := range res.Sets {
		out.Sets = append(out.Sets, DisentangleSet{Name: names[i], CMSImage: jsonnum.Num(c.CMSImage),
			CMSClusters: jsonnum.Nums(c.CMSClusters), CMSProduct: jsonnum.Num(c.CMSProduct), MMD2: jsonnum.Num(c.MMD2)})
	}
	return out
}
