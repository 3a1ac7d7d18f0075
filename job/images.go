package job

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gonum.org/v1/gonum/mat"

	"genlens/dataio"
	"genlens/frechet"
	"genlens/inception"
	"genlens/internal/par"
	"genlens/vit"
)

// This file turns folders of images into features wherever the
// feature-based jobs (stats, compare, is, select) accept a feature file:
// the images are decoded and preprocessed on worker goroutines one batch
// ahead of the Inception network (package inception), features go batch
// by batch into whatever consumes them (a streaming mean and covariance,
// or rows), and a feature cache on disk skips the network for images seen
// before with the same settings.

// ImageOptions says how folders of images become Inception features. Its
// fields are flags of every command that takes folders; they are refused
// when no input is a folder, so that none goes silently unused.
type ImageOptions struct {
	// Embedder is the network: inception (the default; Mode picks its
	// preprocessing) or one of package vit's DINOv2 and CLIP networks
	// (Preset picks theirs, and Weights must name their file).
	Embedder  string `json:"embedder,omitempty"`
	Preset    string `json:"preset,omitempty"`    // ViT embedders: dgm-eval, torch-fidelity, clip or cmmd
	Mode      string `json:"mode,omitempty"`      // pytorch-fid (default), tf or clean
	Weights   string `json:"weights,omitempty"`   // .pth file; default: $GENLENS_WEIGHTS, cache, download
	Batch     int    `json:"batch,omitempty"`     // images run together; 0: 50, as pytorch-fid
	Workers   int    `json:"workers,omitempty"`   // goroutines; 0: one per CPU
	Recursive bool   `json:"recursive,omitempty"` // descend into subfolders
	NoCache   bool   `json:"no_cache,omitempty"`  // neither read nor write the feature cache
}

// EmbedderInception is the default embedder, the FID Inception-v3.
const EmbedderInception = "inception"

// network is the embedder the options resolve to: Inception with a
// preprocessing mode, or a ViT of package vit with a preset.
type network struct {
	embedder string
	mode     inception.Mode // Inception
	vit      *vit.Config    // nil for Inception
	preset   vit.Preset
}

// isInception reports whether the network is the FID Inception-v3.
func (n network) isInception() bool { return n.vit == nil }

// check validates the options for command cmd; batch names the request
// field that holds Batch ("batch", or "image_batch" in select).
func (o ImageOptions) check(cmd, batch string) (network, error) {
	switch {
	case o.Batch < 0:
		return network{}, Fieldf(batch, "%s: {%s} %d: want at least 1 (0: %d)", cmd, batch, o.Batch, DefaultFeaturesBatch)
	case o.Workers < 0:
		return network{}, Fieldf("workers", "%s: {workers} %d: want 0 (one per CPU) or more", cmd, o.Workers)
	}
	name := strings.ToLower(strings.TrimSpace(o.Embedder))
	if name == "" || name == EmbedderInception {
		if o.Preset != "" {
			return network{}, Fieldf("preset", "%s: {preset} applies to the DINOv2 and CLIP embedders; Inception's preprocessing is {mode}", cmd)
		}
		if o.Mode == "" {
			return network{embedder: EmbedderInception, mode: inception.ModePyTorchFID}, nil
		}
		mode, err := inception.ParseMode(strings.ToLower(strings.TrimSpace(o.Mode)))
		if err != nil {
			return network{}, Fieldf("mode", "%s: {mode} %q: want pytorch-fid, tf or clean", cmd, o.Mode)
		}
		return network{embedder: EmbedderInception, mode: mode}, nil
	}
	cfg, err := vit.Lookup(name)
	if err != nil {
		return network{}, Fieldf("embedder", "%s: {embedder} %q: want inception, %s", cmd, o.Embedder, strings.Join(vit.Names(), ", "))
	}
	if o.Mode != "" {
		return network{}, Fieldf("mode", "%s: {mode} is Inception's preprocessing; {embedder} %s takes {preset} (%s by default)", cmd, name, vit.DefaultPreset(cfg))
	}
	p, err := vit.ParsePreset(cfg, o.Preset)
	if err != nil {
		return network{}, Fieldf("preset", "%s: {preset}: %v", cmd, err)
	}
	return network{embedder: name, vit: &cfg, preset: p}, nil
}

// checkDims refuses {dims}, which selects one of Inception's outputs,
// with a ViT embedder, which has one.
func (o ImageOptions) checkDims(cmd, dims string) error {
	e := strings.ToLower(strings.TrimSpace(o.Embedder))
	if dims != "" && e != "" && e != EmbedderInception {
		return Fieldf("dims", "%s: {dims} selects an Inception output; {embedder} %s has one", cmd, e)
	}
	return nil
}

// unused refuses image options given to a job none of whose inputs is a
// folder.
func (o ImageOptions) unused(cmd, batch string) error {
	var set []string
	for _, f := range []struct {
		name string
		on   bool
	}{{"embedder", o.Embedder != ""}, {"preset", o.Preset != ""}, {"mode", o.Mode != ""}, {"weights", o.Weights != ""}, {batch, o.Batch != 0}, {"workers", o.Workers != 0},
		{"recursive", o.Recursive}, {"no_cache", o.NoCache}} {
		if f.on {
			set = append(set, "{"+f.name+"}")
		}
	}
	if len(set) == 0 {
		return nil
	}
	return Fieldf(strings.Trim(set[0], "{}"), "%s: %s appl%s only to folders of images, and no input is a folder", cmd, strings.Join(set, ", "), map[bool]string{true: "ies", false: "y"}[len(set) == 1])
}

// isFolder reports whether path names a directory of fsys.
func isFolder(fsys fs.FS, path string) bool {
	st, err := fs.Stat(fsys, path)
	return err == nil && st.IsDir()
}

// extractor computes Inception features of image files for one job. The
// weights are resolved when the first folder is listed, and the network
// is loaded only when an image misses the cache.
type extractor struct {
	env   Env
	cmd   string
	opt   ImageOptions
	net   network
	mode  inception.Mode
	batch int

	weights string // resolved weights path
	whash   string // its SHA-256 (the cache's key, and recorded in results)
	model   *inception.Model
	vmodel  *vit.Model
	caches  map[inception.Output]*inception.FeatureCache
	warned  sync.Once

	cached, computed int  // images read from the cache, run through the network
	jpegSaid         bool // the JPEG decoding note was given

	// Where the time goes: decoding and preprocessing summed over the
	// workers (it overlaps the network), the network, waiting for
	// decoded images (the part of decoding the network did not hide),
	// the consumer of the features, and loading and hashing the weights.
	decodeNS            atomic.Int64
	network, wait, sink time.Duration
	load                time.Duration
}

// newExtractor validates opt for cmd; batch names the field of Batch.
func newExtractor(env Env, cmd, batch string, opt ImageOptions) (*extractor, error) {
	net, err := opt.check(cmd, batch)
	if err != nil {
		return nil, err
	}
	b := opt.Batch
	if b == 0 {
		b = DefaultFeaturesBatch
	}
	return &extractor{env: env, cmd: cmd, opt: opt, net: net, mode: net.mode, batch: b, caches: map[inception.Output]*inception.FeatureCache{}}, nil
}

// list returns the images of folder dir, sorted.
func (x *extractor) list(dir string) ([]string, error) {
	files, err := inception.ListImagesFS(x.env.fsys(), dir, x.opt.Recursive)
	if err == nil {
		x.noteJPEG(dir, files)
	}
	return files, err
}

// noteJPEG warns, once per job, when a folder holds JPEG files: Go's JPEG
// decoder upsamples chroma differently from libjpeg-turbo, which PIL (and
// so pytorch-fid, torch-fidelity and clean-fid) uses, by about a grey
// level per pixel; measured on 500 images saved as JPEG, FID against 2,000
// others moved by 2.5%, as much as the JPEG compression itself. Features
// from the cache were computed from the same decoding, so they count too.
func (x *extractor) noteJPEG(dir string, files []string) {
	if x.jpegSaid {
		return
	}
	n := 0
	for _, f := range files {
		switch strings.ToLower(path.Ext(f)) {
		case ".jpg", ".jpeg":
			n++
		}
	}
	if n == 0 {
		return
	}
	x.jpegSaid = true
	x.env.warn(fmt.Sprintf("%s: %d of the %d images in %s are JPEG files: Go's JPEG decoder upsamples chroma differently from libjpeg-turbo's, which PIL (so pytorch-fid, torch-fidelity, clean-fid) uses, by about a grey level per pixel, which moved a measured FID by 2.5%%; for numbers to compare with a paper's, convert JPEG folders to PNG with PIL first",
		x.cmd, n, len(files), dir))
}

// prepare resolves the weights (which may download them once) and, when
// caching, hashes them.
func (x *extractor) prepare(ctx context.Context) error {
	if x.weights != "" {
		return nil
	}
	var w string
	if x.net.isInception() {
		var err error
		if w, err = inception.ResolveWeights(ctx, x.opt.Weights, inception.FetchOptions{Progress: x.env.Download}); err != nil {
			return err
		}
	} else {
		// genlens downloads only Inception's weights: the DINOv2 and CLIP
		// files are large and their licences the user's to accept.
		if x.opt.Weights == "" {
			return Fieldf("weights", "%s: {weights} is required with {embedder} %s: %s", x.cmd, x.net.embedder, vitWeightsHint(x.net.vit))
		}
		w = x.opt.Weights
	}
	x.weights = w
	t0 := time.Now()
	defer func() { x.load += time.Since(t0) }()
	// Every result records the weights' hash. 95 MB (Inception) at a few
	// hundred MB/s is a fraction of a second; DINOv2 ViT-L/14's 1.2 GB a
	// few seconds, once per job.
	var err error
	if x.whash, err = inception.HashWeights(w); err != nil {
		return &dataio.InputError{File: w, Msg: "cannot read weights: " + err.Error(), Err: err}
	}
	return nil
}

// cache returns the feature cache for out, nil when caching is off or no
// cache directory exists (then with a warning).
func (x *extractor) cache(out inception.Output) *inception.FeatureCache {
	if x.opt.NoCache {
		return nil
	}
	if c, ok := x.caches[out]; ok {
		return c
	}
	var c *inception.FeatureCache
	if dir, err := inception.CacheDir(); err != nil {
		x.warnCache(err)
	} else {
		if x.net.isInception() {
			c = inception.OpenFeatureCache(dir, x.mode, out, x.whash)
		} else {
			c = inception.OpenNetworkCache(dir, x.net.embedder, string(x.net.preset), x.net.vit.Dim(), x.whash)
		}
	}
	x.caches[out] = c
	return c
}

// warnCache reports, once, that the cache cannot be used: the features
// are still computed, only not kept.
func (x *extractor) warnCache(err error) {
	x.warned.Do(func() {
		x.env.warn(fmt.Sprintf("%s: feature cache unusable, features are computed but not kept: %v", x.cmd, err))
	})
}

// prepared is one batch of images on its way to the network: cached
// features where the cache had them, preprocessed images elsewhere.
type prepared struct {
	feats [][]float32
	imgs  [][]float32
	keys  []string
	err   error
}

// run computes the out features of files in order and hands them to sink
// batch by batch (sink may keep the rows), calling tick with the number of
// images each batch finished. The next batch is decoded while the network
// runs on this one; at most three batches of images are in memory.
func (x *extractor) run(ctx context.Context, files []string, out inception.Output, sink func([][]float32) error, tick func(int)) error {
	if err := x.prepare(ctx); err != nil {
		return err
	}
	fsys := x.env.fsys()
	cache := x.cache(out)
	if !x.loaded() && (cache == nil || !cache.Exists()) {
		// Nothing cached with these weights yet: load them before any
		// image, so that a bad weights file is reported first. With
		// entries under their hash, they loaded before, and a run that
		// only hits the cache need not spend seconds loading them.
		if err := x.load1(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan *prepared, 1)
	defer func() {
		cancel()
		for range ch { // let the producer finish before returning
		}
	}()
	go func() {
		defer close(ch)
		for lo := 0; lo < len(files); lo += x.batch {
			n := min(x.batch, len(files)-lo)
			p := &prepared{feats: make([][]float32, n), imgs: make([][]float32, n), keys: make([]string, n)}
			p.err = par.For(ctx, n, x.opt.Workers, func(_ context.Context, i int) error {
				name := files[lo+i]
				if cache != nil {
					// A file that cannot be hashed is reported by the
					// decoder below, in the words of every other image error.
					if k, err := inception.HashFile(fsys, name); err == nil {
						p.keys[i] = k
						if v, ok := cache.Get(k); ok {
							p.feats[i] = v
							return nil
						}
					}
				}
				t0 := time.Now()
				var img []float32
				var err error
				if x.net.isInception() {
					img, err = inception.LoadImageFS(fsys, name, x.mode)
				} else {
					img, err = vit.LoadImageFS(fsys, name, x.net.preset, x.net.vit.Input)
				}
				x.decodeNS.Add(int64(time.Since(t0)))
				p.imgs[i] = img
				return err
			})
			select {
			case ch <- p:
			case <-ctx.Done():
				return
			}
			if p.err != nil {
				return
			}
		}
	}()
	for {
		t0 := time.Now()
		p, ok := <-ch
		x.wait += time.Since(t0)
		if !ok {
			break
		}
		if p.err != nil {
			return p.err
		}
		var idx []int
		var batch [][]float32
		for i, img := range p.imgs {
			if img != nil {
				idx = append(idx, i)
				batch = append(batch, img)
			}
		}
		if len(batch) > 0 {
			if !x.loaded() {
				if err := x.load1(); err != nil {
					return err
				}
			}
			t0 := time.Now()
			fs, err := x.forward(ctx, batch, out)
			x.network += time.Since(t0)
			if err != nil {
				return err
			}
			x.computed += len(batch)
			for j, i := range idx {
				p.feats[i] = fs[j]
				p.imgs[i] = nil
				if cache != nil && p.keys[i] != "" {
					if err := cache.Put(p.keys[i], p.feats[i]); err != nil {
						x.warnCache(err)
					}
				}
			}
		}
		x.cached += len(p.feats) - len(batch)
		t0 = time.Now()
		err := sink(p.feats)
		x.sink += time.Since(t0)
		if err != nil {
			return err
		}
		tick(len(p.feats))
	}
	return ctx.Err()
}

// loaded reports whether the network is in memory.
func (x *extractor) loaded() bool { return x.model != nil || x.vmodel != nil }

// load1 loads the network, counting the time as the weights'.
func (x *extractor) load1() error {
	t0 := time.Now()
	defer func() { x.load += time.Since(t0) }()
	if x.net.isInception() {
		m, err := x.loadModel(x.weights)
		x.model = m
		return err
	}
	m, err := x.loadViT(x.weights, *x.net.vit)
	x.vmodel = m
	return err
}

// forward runs the network on a batch and returns the out features of
// every image (a ViT has one output, whatever out says).
func (x *extractor) forward(ctx context.Context, batch [][]float32, out inception.Output) ([][]float32, error) {
	if !x.net.isInception() {
		return x.vmodel.Forward(ctx, batch, x.opt.Workers)
	}
	fs, err := x.model.Forward(ctx, batch, x.opt.Workers)
	if err != nil {
		return nil, err
	}
	rows := make([][]float32, len(fs))
	for i := range fs {
		rows[i] = fs[i].Get(out)
	}
	return rows, nil
}

// dim is the length of the features x computes for out.
func (x *extractor) dim(out inception.Output) int {
	if !x.net.isInception() {
		return x.net.vit.Dim()
	}
	return out.Dim()
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
	WeightsSHA256 string `json:"weights_sha256"`
	Images        int    `json:"images"`
	Cached        int    `json:"cached"`   // features read from the feature cache
	Computed      int    `json:"computed"` // images run through the network
	Seconds       Num    `json:"seconds"`  // from listing the folders to the last feature
	// Where the seconds went. Decoding runs on worker goroutines while
	// the network runs, so DecodeSeconds (summed over workers) overlaps
	// NetworkSeconds; WaitSeconds is the network waiting for decoded
	// images. FeatureSeconds is the consumer of the features (the
	// streaming mean and covariance), WeightsSeconds hashing and loading
	// the weights.
	DecodeSeconds  Num `json:"decode_seconds"`
	NetworkSeconds Num `json:"network_seconds"`
	WaitSeconds    Num `json:"wait_seconds"`
	FeatureSeconds Num `json:"feature_seconds"`
	WeightsSeconds Num `json:"weights_seconds"`
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
	w := WeightsInfo{Path: x.weights, SHA256: x.whash}
	if x.net.isInception() {
		off := inception.IsOfficialWeights(x.whash)
		w.Official = &off
	}
	return w
}

// Unofficial reports whether the weights are Inception weights other than
// the published FID file.
func (w WeightsInfo) Unofficial() bool { return w.Official != nil && !*w.Official }

// info returns the ImagesInfo of what x did so far, nil when it saw no
// images.
func (x *extractor) info(start time.Time) *ImagesInfo {
	if x == nil || x.cached+x.computed == 0 {
		return nil
	}
	return &ImagesInfo{Embedder: x.net.embedder, Mode: string(x.mode), Preset: string(x.net.preset), Weights: x.weightsInfo(), WeightsSHA256: x.whash, Images: x.cached + x.computed, Cached: x.cached,
		Computed: x.computed, Seconds: Num(time.Since(start).Seconds()),
		DecodeSeconds: Num(time.Duration(x.decodeNS.Load()).Seconds()), NetworkSeconds: Num(x.network.Seconds()),
		WaitSeconds: Num(x.wait.Seconds()), FeatureSeconds: Num(x.sink.Seconds()), WeightsSeconds: Num(x.load.Seconds())}
}

// loadModel loads the Inception weights at path through the job's model
// cache.
func (x *extractor) loadModel(path string) (*inception.Model, error) {
	return cachedLoad(x.env.Models, "inception", path, inception.Load)
}

// loadViT loads the weights of the ViT cfg at path through the job's
// model cache (ViT-L/14 is 1.2 GB of weights).
func (x *extractor) loadViT(path string, cfg vit.Config) (*vit.Model, error) {
	return cachedLoad(x.env.Models, cfg.Name, path, func(p string) (*vit.Model, error) { return vit.Load(p, cfg) })
}

// folders lists the folders among paths (nil entries for the others) and
// the image count over all, for one progress bar over every image of a job.
func (x *extractor) folders(paths []string) ([][]string, int, error) {
	lists := make([][]string, len(paths))
	total := 0
	for i, p := range paths {
		if !isFolder(x.env.fsys(), p) {
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
	env         Env
	done, total int
}

func (c *counter) tick(n int) {
	c.done += n
	c.env.progress(c.done, c.total)
}

// imageStats streams the out features of files into their mean and
// (n-1)-normalised covariance, as pytorch-fid computes them. Rows are
// buffered into the same chunks frechet.StatsOf uses, so a folder and
// the feature file extracted from it give the same numbers.
func (x *extractor) imageStats(ctx context.Context, dir string, files []string, out inception.Output, c *counter) (frechet.Stats, error) {
	if len(files) < 2 {
		return frechet.Stats{}, &dataio.InputError{File: dir, Msg: fmt.Sprintf("%d image; need at least 2 for a covariance", len(files))}
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
	d := x.dim(out)
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
	err := x.run(ctx, files, out, func(rows [][]float32) error {
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
	if x.whash == "" {
		if x.whash, err = inception.HashWeights(x.weights); err != nil {
			return nil, &dataio.InputError{File: x.weights, Msg: "cannot read weights: " + err.Error(), Err: err}
		}
	}
	acc, err := x.imageAcc(ctx, mine, out, &counter{env: x.env, total: len(mine)})
	if err != nil {
		return nil, err
	}
	prov := frechet.Provenance{Embedder: "inception-v3", Mode: string(x.mode), Dims: string(out), Weights: x.whash}
	if !x.net.isInception() {
		// A DINOv2 or CLIP network: one output, preprocessing by preset.
		prov.Embedder, prov.Mode, prov.Dims = x.net.embedder, "preset "+string(x.net.preset), strconv.Itoa(x.net.vit.Dim())
	}
	p := frechet.PartOf(acc, req.Shard, req.Shards, l, prov)
	return &StatsResult{N: p.N, Dim: out.Dim(), Shard: &p.Shard, Shards: p.Shards, Images: x.info(start), Part: p}, nil
}

// imageRows returns the out features of files as rows (n x dim), in the
// sorted order of files; with softmax each row is turned into class
// probabilities (logits_unbiased → p(y|x), as torch-fidelity's IS).
func (x *extractor) imageRows(ctx context.Context, files []string, out inception.Output, softmax bool, c *counter) (*mat.Dense, error) {
	d := x.dim(out)
	m := mat.NewDense(len(files), d, nil)
	i := 0
	err := x.run(ctx, files, out, func(rows [][]float32) error {
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
