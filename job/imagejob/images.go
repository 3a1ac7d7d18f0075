package imagejob

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/frechet"
	"github.com/genlens/genlens/network/features"
	"github.com/genlens/genlens/network/inception"
	"github.com/genlens/genlens/network/vit"
)

// This file turns folders of images into features wherever the
// feature-based jobs (stats, compare, is, select) accept a feature file:
// it picks the embedder the options name, finds and hashes its weights,
// and runs package features' pipeline (decoding one batch ahead of the
// network, the feature cache) into whatever consumes the features (a
// streaming mean and covariance, or rows).

// ImageOptions says how folders of images become features (Inception-v3 by
// default, or a DINOv2 or CLIP network of package vit). It is embedded by
// every request that reads folders of images (features, stats, compare,
// is, select), as job.CSVOptions is by those that read CSV files: its
// fields, their defaults (NewImageOptions) and their checks (check) are
// the same in every command and flags of each. Except in features, whose
// input is always a folder, they are refused when no input is a folder,
// so that none goes silently unused.
type ImageOptions struct {
	// Embedder is the network: inception (the default; Mode picks its
	// preprocessing) or one of package vit's DINOv2 and CLIP networks
	// (Preset picks theirs; Weights names their file, else the published
	// one is found or fetched, see job.WeightsFile).
	Embedder string `json:"embedder,omitempty" help:"folders: network, inception (default) or clip-vitb32, clip-vitl14-336, dinov2-vitb14, dinov2-vitg14, dinov2-vitl14, dinov2-vits14 (their published weights fetched once into torch hub's or clip.load's cache unless {weights} names them)"`
	// Preset is the ViT embedders' preprocessing.
	Preset string `json:"preset,omitempty" help:"folders, DINOv2/CLIP: preprocessing, dgm-eval (DINOv2 default) or torch-fidelity; clip (clip-vitb32 default, clean-fid's CLIP-FID) or cmmd (clip-vitl14-336 default)"`
	// Mode is Inception's preprocessing; "" is pytorch-fid.
	Mode    string `json:"mode,omitempty" help:"folders: preprocessing, pytorch-fid (default; pytorch-fid's numbers), tf (torch-fidelity's / TensorFlow's) or clean (clean-fid's); clean-fid's legacy_pytorch and legacy_tensorflow are pytorch-fid and tf"`
	Weights string `json:"weights,omitempty" help:"folders: the network's weights file (or a Hugging Face model id, org/name, for CLIP); by default Inception's come from $GENLENS_WEIGHTS, the cache, else a one-time download, DINOv2's and CLIP's from their caches, else a one-time download"`
	// Batch is the images decoded and run through the network together:
	// at least 1, DefaultImageBatch unless set. 0 is refused like any
	// other value below 1 (with the default named), never read as the
	// default, in every command. select's JSON names it image_batch (its
	// batch is the rows drawn per step; see SelectRequest).
	Batch   int `json:"batch" help:"folders: images run through the network together (at least 1; 0 is an error, not the default)"`
	Workers int `json:"workers,omitempty" help:"folders: goroutines (0: one per CPU; capped at one per CPU)"`
	// Recursive descends into subfolders.
	Recursive bool `json:"recursive,omitempty" help:"folders: include images in subfolders"`
	NoCache   bool `json:"no_cache,omitempty" help:"folders: neither read nor write the feature cache ($GENLENS_CACHE, default <user cache dir>/genlens, e.g. ~/.cache/genlens)"`
}

// DefaultImageBatch is the default of ImageOptions.Batch, pytorch-fid's
// default batch size.
const DefaultImageBatch = 50

// NewImageOptions returns the image options' defaults, which every
// request embedding them starts from (NewStatsRequest, ...).
func NewImageOptions() ImageOptions { return ImageOptions{Batch: DefaultImageBatch} }

// EmbedderInception is the default embedder, the FID Inception-v3.
const EmbedderInception = "inception"

// EmbedderName is the network the options name, as results name it:
// EmbedderInception when Embedder is empty. A transport reads it (every
// request embedding the options has it) to apply its weights rule, which
// differs between Inception and the ViT networks, before the job runs.
func (o ImageOptions) EmbedderName() string {
	name := strings.ToLower(strings.TrimSpace(o.Embedder))
	if name == "" {
		return EmbedderInception
	}
	return name
}

// network is the embedder the options resolve to, before its weights
// are known: how it is named in results, how its weights are found, and
// how it is built for one output.
type network struct {
	embedder string         // as {embedder} names it: inception, dinov2-vitl14, ...
	mode     inception.Mode // Inception's preprocessing, for results ("" otherwise)
	preset   vit.Preset     // a ViT's preprocessing, for results ("" otherwise)
	outputs  bool           // {dims} selects one of several outputs
	// weights returns the path of the weights file: explicit, or found
	// in a cache, or downloaded once (as env allows).
	weights func(ctx context.Context, env job.Env, cmd, explicit string) (string, error)
	// official says whether weights of that SHA-256 are a published
	// file, nil when the network has no published hash here.
	official func(sha string) *bool
	// embed builds the embedder of output out (ignored by networks with
	// one output) once x knows the weights.
	embed func(x *extractor, out inception.Output) features.ImageEmbedder
}

// inceptionNetwork is the FID Inception-v3 with preprocessing mode.
func inceptionNetwork(mode inception.Mode) network {
	return network{embedder: EmbedderInception, mode: mode, outputs: true,
		weights: func(ctx context.Context, env job.Env, _, explicit string) (string, error) {
			return inception.ResolveWeights(ctx, explicit, inception.FetchOptions{Progress: env.Download})
		},
		official: func(sha string) *bool { off := inception.IsOfficialWeights(sha); return &off },
		embed: func(x *extractor, out inception.Output) features.ImageEmbedder {
			return inception.NewEmbedder(mode, out, x.whash, x.opt.Workers, func() (*inception.Model, error) {
				return job.CachedLoad(x.env.Models, "inception", x.weights, inception.Load)
			})
		}}
}

// vitNetwork is the DINOv2 or CLIP network cfg with preset p.
func vitNetwork(cfg vit.Config, p vit.Preset) network {
	return network{embedder: cfg.Name, preset: p,
		weights: func(ctx context.Context, env job.Env, cmd, explicit string) (string, error) {
			// A model id names Hugging Face's CLIP (openai/clip-vit-base-patch32),
			// whose model.safetensors LoadWeights renames.
			w, err := job.WeightsFile(ctx, env, "weights", cfg.Name, explicit, "model.safetensors")
			if err == nil && w == "" {
				err = fault.Fieldf("weights", "%s: {weights} is required with {embedder} %s: %s", cmd, cfg.Name, vitWeightsHint(&cfg))
			}
			return w, err
		},
		official: func(string) *bool { return nil },
		embed: func(x *extractor, _ inception.Output) features.ImageEmbedder {
			// ViT-L/14 is 1.2 GB of weights: kept in the job's model cache.
			return vit.NewEmbedder(cfg, p, x.whash, x.opt.Workers, func() (*vit.Model, error) {
				return job.CachedLoad(x.env.Models, cfg.Name, x.weights, func(path string) (*vit.Model, error) { return vit.Load(path, cfg) })
			})
		}}
}

// check validates the options for command cmd; batch names the request
// field that holds Batch ("batch", or "image_batch" in select).
func (o ImageOptions) check(cmd, batch string) (network, error) {
	switch {
	case o.Batch < 1:
		return network{}, fault.Fieldf(batch, "%s: {%s} %d: want at least 1", cmd, batch, o.Batch)
	case o.Workers < 0:
		return network{}, fault.Fieldf("workers", "%s: {workers} %d: want 0 (one per CPU) or more", cmd, o.Workers)
	}
	name := strings.ToLower(strings.TrimSpace(o.Embedder))
	if name == "" || name == EmbedderInception {
		if o.Preset != "" {
			return network{}, fault.Fieldf("preset", "%s: {preset} applies to the DINOv2 and CLIP embedders; Inception's preprocessing is {mode}", cmd)
		}
		if o.Mode == "" {
			return inceptionNetwork(inception.ModePyTorchFID), nil
		}
		mode, err := inception.ParseMode(strings.ToLower(strings.TrimSpace(o.Mode)))
		if err != nil {
			return network{}, fault.Fieldf("mode", "%s: {mode} %q: %s", cmd, o.Mode, inception.ModeWant(o.Mode))
		}
		return inceptionNetwork(mode), nil
	}
	cfg, err := vit.Lookup(name)
	if err != nil {
		return network{}, fault.Fieldf("embedder", "%s: {embedder} %q: want inception, %s", cmd, o.Embedder, strings.Join(vit.Names(), ", "))
	}
	if o.Mode != "" {
		return network{}, fault.Fieldf("mode", "%s: {mode} is Inception's preprocessing; {embedder} %s takes {preset} (%s by default)", cmd, name, vit.DefaultPreset(cfg))
	}
	p, err := vit.ParsePreset(cfg, o.Preset)
	if err != nil {
		return network{}, fault.Fieldf("preset", "%s: {preset}: %v", cmd, err)
	}
	return vitNetwork(cfg, p), nil
}

// checkDims refuses {dims}, which selects one of Inception's outputs,
// with a ViT embedder, which has one.
func (o ImageOptions) checkDims(cmd, dims string) error {
	e := strings.ToLower(strings.TrimSpace(o.Embedder))
	if dims != "" && e != "" && e != EmbedderInception {
		return fault.Fieldf("dims", "%s: {dims} selects an Inception output; {embedder} %s has one", cmd, e)
	}
	return nil
}

// unused refuses image options given to a job none of whose inputs is a
// folder: any field away from its default (NewImageOptions). A batch of
// DefaultImageBatch cannot be told from the default, and passes.
func (o ImageOptions) unused(cmd, batch string) error {
	var set []string
	for _, f := range []struct {
		name string
		on   bool
	}{{"embedder", o.Embedder != ""}, {"preset", o.Preset != ""}, {"mode", o.Mode != ""}, {"weights", o.Weights != ""}, {batch, o.Batch != DefaultImageBatch}, {"workers", o.Workers != 0},
		{"recursive", o.Recursive}, {"no_cache", o.NoCache}} {
		if f.on {
			set = append(set, "{"+f.name+"}")
		}
	}
	if len(set) == 0 {
		return nil
	}
	return fault.Fieldf(strings.Trim(set[0], "{}"), "%s: %s appl%s only to folders of images, and no input is a folder", cmd, strings.Join(set, ", "), map[bool]string{true: "ies", false: "y"}[len(set) == 1])
}

// isFolder reports whether path names a directory of fsys.
func isFolder(fsys fs.FS, path string) bool {
	st, err := fs.Stat(fsys, path)
	return err == nil && st.IsDir()
}

// extractor computes the features of image files for one job. The
// weights are resolved and hashed before the first folder's features,
// and the network is loaded only when an image misses the cache.
type extractor struct {
	env job.Env
	cmd string
	opt ImageOptions
	net network

	weights   string // resolved weights path
	whash     string // its SHA-256 (the cache's key, and recorded in results)
	hashing   time.Duration
	embedders map[inception.Output]features.ImageEmbedder
	caches    map[inception.Output]*features.Cache
	pipe      *features.Pipeline
	warned    sync.Once
}

// newExtractor validates opt for cmd; batch names the field of Batch.
func newExtractor(env job.Env, cmd, batch string, opt ImageOptions) (*extractor, error) {
	net, err := opt.check(cmd, batch)
	if err != nil {
		return nil, err
	}
	// Workers past the CPUs decode no faster; they only hold more
	// decoded images at once.
	opt.Workers = min(opt.Workers, features.Workers(opt.Workers))
	x := &extractor{env: env, cmd: cmd, opt: opt, net: net,
		embedders: map[inception.Output]features.ImageEmbedder{}, caches: map[inception.Output]*features.Cache{}}
	x.pipe = &features.Pipeline{FS: env.InputFS(), Batch: opt.Batch, Workers: opt.Workers, CacheError: x.warnCache}
	return x, nil
}

// list returns the images of folder dir, sorted.
func (x *extractor) list(dir string) ([]string, error) {
	return features.ListImagesFS(x.env.InputFS(), dir, x.opt.Recursive)
}

// prepare resolves the weights (which may download them once) and hashes
// them.
func (x *extractor) prepare(ctx context.Context) error {
	if x.weights != "" {
		return nil
	}
	w, err := x.net.weights(ctx, x.env, x.cmd, x.opt.Weights)
	if err != nil {
		return err
	}
	t0 := time.Now()
	defer func() { x.hashing += time.Since(t0) }()
	// Every result records the weights' hash. 95 MB (Inception) at a few
	// hundred MB/s is a fraction of a second; DINOv2 ViT-L/14's 1.2 GB a
	// few seconds, once per job.
	h, err := features.HashWeights(w)
	if err != nil {
		return &fault.InputError{File: w, Msg: "cannot read weights: " + err.Error(), Err: err}
	}
	x.weights, x.whash = w, h
	return nil
}

// embedder returns the embedder of output out (after x.prepare).
func (x *extractor) embedder(out inception.Output) features.ImageEmbedder {
	if !x.net.outputs {
		out = ""
	}
	e, ok := x.embedders[out]
	if !ok {
		e = x.net.embed(x, out)
		x.embedders[out] = e
	}
	return e
}

// cache returns the feature cache for out, nil when caching is off or no
// cache directory exists (then with a warning).
func (x *extractor) cache(out inception.Output) *features.Cache {
	if x.opt.NoCache {
		return nil
	}
	if c, ok := x.caches[out]; ok {
		return c
	}
	var c *features.Cache
	if dir, err := features.CacheDir(); err != nil {
		x.warnCache(err)
	} else {
		c = features.OpenCache(dir, x.embedder(out).Settings())
	}
	x.caches[out] = c
	return c
}

// warnCache reports, once, that the cache cannot be used: the features
// are still computed, only not kept.
func (x *extractor) warnCache(err error) {
	x.warned.Do(func() {
		x.env.Warning(fmt.Sprintf("%s: feature cache unusable, features are computed but not kept: %v", x.cmd, err))
	})
}

// vitWeightsHint says where a ViT's weights come from.
func vitWeightsHint(c *vit.Config) string {
	if c.Family == vit.DINOv2 {
		name := strings.ReplaceAll(strings.TrimPrefix(c.Name, "dinov2-"), "-", "")
		return "the state dict torch hub downloads, dinov2_" + name + "_pretrain.pth (https://dl.fbaipublicfiles.com/dinov2/dinov2_" + name + "/dinov2_" + name + "_pretrain.pth)"
	}
	return "a CLIP state dict with OpenAI's key names (.pth) or Hugging Face's model.safetensors of the matching openai/clip-vit-* model"
}

// ImagesInfo describes how the images of a job's folders became
// features; it is part of the --json document of every job that took a
// folder.
type ImagesInfo struct {
	// Embedder is the network (inception, dinov2-vitl14, ...); Mode is
	// Inception's preprocessing and Preset a ViT's, so that features
	// made differently are never compared.
	Embedder string      `json:"embedder"`
	Mode     string      `json:"mode,omitempty"`
	Preset   string      `json:"preset,omitempty"`
	Weights  WeightsInfo `json:"weights"`
	// WeightsSHA256 repeats Weights.SHA256, the key earlier releases had.
	WeightsSHA256 string      `json:"weights_sha256"`
	Images        int         `json:"images"`
	Cached        int         `json:"cached"`   // features read from the feature cache
	Computed      int         `json:"computed"` // images run through the network
	Seconds       jsonnum.Num `json:"seconds"`  // from listing the folders to the last feature
	// Where the seconds went. Decoding runs on worker goroutines while
	// the network runs, so DecodeSeconds (summed over workers) overlaps
	// NetworkSeconds; WaitSeconds is the network waiting for decoded
	// images. FeatureSeconds is the consumer of the features (the
	// streaming mean and covariance), WeightsSeconds hashing and loading
	// the weights.
	DecodeSeconds  jsonnum.Num `json:"decode_seconds"`
	NetworkSeconds jsonnum.Num `json:"network_seconds"`
	WaitSeconds    jsonnum.Num `json:"wait_seconds"`
	FeatureSeconds jsonnum.Num `json:"feature_seconds"`
	WeightsSeconds jsonnum.Num `json:"weights_seconds"`
}

// WeightsInfo names the weights a result's features were computed with.
// Official says, for Inception, whether they are the published FID
// Inception file (inception.OfficialWeightsSHA256): other weights give
// FIDs that are not comparable with published ones. It is absent for the
// DINOv2 and CLIP embedders, whose files have no published hash here.
type WeightsInfo struct {
	Path     string `json:"path"`
	SHA256   string `json:"sha256"`
	Official *bool  `json:"official,omitempty"`
}

// weightsInfo returns the WeightsInfo of x's resolved weights.
func (x *extractor) weightsInfo() WeightsInfo {
	return WeightsInfo{Path: x.weights, SHA256: x.whash, Official: x.net.official(x.whash)}
}

// Unofficial reports whether the weights are Inception weights other than
// the published FID file.
func (w WeightsInfo) Unofficial() bool { return w.Official != nil && !*w.Official }

// info returns the ImagesInfo of what x did so far, nil when it saw no
// images.
func (x *extractor) info(start time.Time) *ImagesInfo {
	if x == nil || x.pipe.Cached+x.pipe.Computed == 0 {
		return nil
	}
	p := x.pipe
	return &ImagesInfo{Embedder: x.net.embedder, Mode: string(x.net.mode), Preset: string(x.net.preset), Weights: x.weightsInfo(), WeightsSHA256: x.whash,
		Images: p.Cached + p.Computed, Cached: p.Cached, Computed: p.Computed, Seconds: jsonnum.Num(time.Since(start).Seconds()),
		DecodeSeconds: jsonnum.Num(p.Decode().Seconds()), NetworkSeconds: jsonnum.Num(p.Network.Seconds()),
		WaitSeconds: jsonnum.Num(p.Wait.Seconds()), FeatureSeconds: jsonnum.Num(p.Sink.Seconds()), WeightsSeconds: jsonnum.Num((x.hashing + p.Loads).Seconds())}
}

// folders lists the folders among paths (nil entries for the others) and
// the image count over all, for one progress bar over every image of a job.
func (x *extractor) folders(paths []string) ([][]string, int, error) {
	lists := make([][]string, len(paths))
	total := 0
	for i, p := range paths {
		if !isFolder(x.env.InputFS(), p) {
			continue
		}
		files, err := x.list(p)
		if err != nil {
			return nil, 0, err
		}
		lists[i] = files
		total += len(files)
	}
	return lists, total, nil
}

// counter reports images done out of total through env.Progress.
type counter struct {
	env         job.Env
	done, total int
}

func (c *counter) tick(n int) {
	c.done += n
	c.env.ReportProgress(c.done, c.total)
}

// imageStats streams the out features of files into their mean and
// (n-1)-normalised covariance, as pytorch-fid computes them. Rows are
// buffered into the same chunks frechet.StatsOf uses, so a folder and
// the feature file extracted from it give the same numbers.
func (x *extractor) imageStats(ctx context.Context, dir string, files []string, out inception.Output, c *counter) (frechet.Stats, error) {
	if len(files) < 2 {
		return frechet.Stats{}, &fault.InputError{File: dir, Msg: fmt.Sprintf("%d image; need at least 2 for a covariance", len(files))}
	}
	acc, err := x.imageAcc(ctx, files, out, c)
	if err != nil {
		return frechet.Stats{}, err
	}
	return acc.Stats(1), nil
}

// imageAcc streams the out features of files into an accumulator, in
// the chunks of frechet.StatsOf.
func (x *extractor) imageAcc(ctx context.Context, files []string, out inception.Output, c *counter) (*frechet.Accumulator, error) {
	if err := x.prepare(ctx); err != nil {
		return nil, err
	}
	d := x.embedder(out).Settings().Dim
	acc := frechet.NewAccumulator(d)
	if len(files) == 0 {
		return acc, nil
	}
	chunk := max(1, min(len(files), frechet.ChunkRows(d)))
	buf := mat.NewDense(chunk, d, nil)
	k := 0
	flush := func() {
		if k > 0 {
			acc.AddRows(buf.Slice(0, k, 0, d).(*mat.Dense))
			k = 0
		}
	}
	err := x.pipe.Run(ctx, x.embedder(out), x.cache(out), files, func(rows [][]float32) error {
		for _, r := range rows {
			dst := buf.RawRowView(k)
			for j, v := range r {
				dst[j] = float64(v)
			}
			if k++; k == chunk {
				flush()
			}
		}
		return nil
	}, c.tick)
	if err != nil {
		return nil, err
	}
	flush()
	return acc, nil
}

// imagePart computes the partial statistics of shard req.Shard of the
// images files of folder req.In (see ShardOf), with the listing of the
// whole folder and the provenance of the features.
func (x *extractor) imagePart(ctx context.Context, req StatsRequest, out inception.Output, files []string, start time.Time) (*StatsResult, error) {
	l, mine, err := folderShard(req.In, files, req.Shard, req.Shards)
	if err != nil {
		return nil, err
	}
	if err := x.prepare(ctx); err != nil {
		return nil, err
	}
	acc, err := x.imageAcc(ctx, mine, out, &counter{env: x.env, total: len(mine)})
	if err != nil {
		return nil, err
	}
	p := frechet.PartOf(acc, req.Shard, req.Shards, l, *x.provenance(out))
	return &StatsResult{N: p.N, Dim: p.Dim(), Shard: &p.Shard, Shards: p.Shards, Images: x.info(start), Part: p}, nil
}

// imageRows returns the out features of files as rows (n x dim), in the
// sorted order of files; with softmax each row is turned into class
// probabilities (logits_unbiased → p(y|x), as torch-fidelity's IS).
func (x *extractor) imageRows(ctx context.Context, files []string, out inception.Output, softmax bool, c *counter) (*mat.Dense, error) {
	if err := x.prepare(ctx); err != nil {
		return nil, err
	}
	d := x.embedder(out).Settings().Dim
	m := mat.NewDense(len(files), d, nil)
	i := 0
	err := x.pipe.Run(ctx, x.embedder(out), x.cache(out), files, func(rows [][]float32) error {
		for _, r := range rows {
			dst := m.RawRowView(i)
			for j, v := range r {
				dst[j] = float64(v)
			}
			if softmax {
				softmaxInPlace(dst)
			}
			i++
		}
		return nil
	}, c.tick)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// softmaxInPlace replaces logits by their softmax, shifted by the maximum
// so that no exponential overflows.
func softmaxInPlace(v []float64) {
	mx := math.Inf(-1)
	for _, x := range v {
		mx = math.Max(mx, x)
	}
	var s float64
	for i, x := range v {
		v[i] = math.Exp(x - mx)
		s += v[i]
	}
	for i := range v {
		v[i] /= s
	}
}

// limits returns the bounds of the image options, whose batch size is
// the field batch ("batch", or "image_batch" in select).
func (o ImageOptions) limits(batch string) []job.Limit {
	return []job.Limit{job.Lim(batch, o.Batch, job.MaxImageBatch), job.Lim("workers", o.Workers, job.MaxWorkers)}
}
