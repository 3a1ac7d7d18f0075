package imagejob

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/jsonnum"
	"github.com/genlens/genlens/internal/tensor/linalg"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/metric/frechet"
	"github.com/genlens/genlens/network/inception"
)

// FeaturesRequest is a request of `genlens features`: Inception-v3
// features of a folder of images, as pytorch-fid (or, with mode tf,
// torch-fidelity) computes them (see package inception), or a DINOv2 or
// CLIP network's (ImageOptions.Embedder, whose single output ignores
// Dims). Start from NewFeaturesRequest, which holds the command line's
// defaults.
type FeaturesRequest struct {
	Input string `json:"input"`                                                                                                                                  // folder of images
	Dims  string `json:"dims" help:"Inception output: 64, 192, 768, 2048, logits or logits_unbiased (the DINOv2 and CLIP embedders have one: leave it at 2048)"` // 64, 192, 768, 2048, logits or logits_unbiased
	// Shards > 0 computes the features of the images of shard Shard
	// (0-based) only, split as `genlens stats --shards` splits a folder
	// (ShardOf); the feature files of all shards, read together
	// (parts/*.npy), hold every image once.
	Shards int `json:"shards,omitempty" help:"split DIR into K shards and compute this process's shard only"`
	Shard  int `json:"shard,omitempty"`
	ImageOptions
}

// NewFeaturesRequest returns a request with the defaults of the command
// line and no input.
func NewFeaturesRequest() FeaturesRequest {
	return FeaturesRequest{Dims: string(inception.Out2048), ImageOptions: NewImageOptions()}
}

// Validate checks the fields that need no input file.
func (r *FeaturesRequest) Validate() (verr error) {
	defer func() { verr = job.WithDefault(verr, r, NewFeaturesRequest()) }()
	if err := job.CheckLimits("features", append(r.limits("batch"), job.Lim("shards", r.Shards, frechet.MaxShards))...); err != nil {
		return err
	}
	_, err := r.output()
	return err
}

// output checks the fields and returns the Inception output the
// features are of ("" for a network with one output).
func (r *FeaturesRequest) output() (inception.Output, error) {
	if r.Input == "" {
		return "", fault.Fieldf("input", "features: {input} (a folder of images) is required")
	}
	net, err := r.check("features", "batch")
	if err != nil {
		return "", err
	}
	out := inception.Output(strings.ToLower(strings.TrimSpace(r.Dims)))
	switch {
	case !net.outputs && out != "" && out != inception.Out2048:
		// Dims keeps its default (or is empty) with a ViT.
		return "", fault.Fieldf("dims", "features: {dims} selects an Inception output; {embedder} %s has one", net.embedder)
	case !net.outputs:
		out = ""
	case out.Dim() == 0:
		return "", fault.Fieldf("dims", "features: {dims} %q: want 64, 192, 768, 2048, logits or logits_unbiased", r.Dims)
	}
	return out, checkShards("features", r.Shards, r.Shard)
}

// FeaturesResult is the result of `genlens features`; it marshals to the
// command's --json summary. The features themselves are the artifact
// features.npy (float32, images × dims), not part of the JSON.
type FeaturesResult struct {
	Images          int         `json:"images"`
	Dims            int         `json:"dims"`
	Output          string      `json:"output"`
	Embedder        string      `json:"embedder"`
	Mode            string      `json:"mode,omitempty"`   // Inception's preprocessing
	Preset          string      `json:"preset,omitempty"` // a ViT's preprocessing
	Weights         WeightsInfo `json:"weights"`
	WeightsSHA256   string      `json:"weights_sha256"` // = weights.sha256
	Backend         string      `json:"backend"`
	Cached          int         `json:"cached"`   // features read from the feature cache
	Computed        int         `json:"computed"` // images run through the network
	Seconds         jsonnum.Num `json:"seconds"`
	ImagesPerSecond jsonnum.Num `json:"images_per_second"`
	Shard           *int        `json:"shard,omitempty"`  // with shards: this shard's index
	Shards          int         `json:"shards,omitempty"` // with shards: the shard count

	// Files are the images in the order of the rows of Features.
	Files []string `json:"-"`
	// Features holds one row per image.
	Features [][]float32 `json:"-"`
	// Path is the file the transport wrote the result to, for the text.
	Path string `json:"-"`
}

// Features runs `genlens features`: it lists the images of req.Input
// through env.FS, resolves and loads the weights (inception.ResolveWeights,
// job.WeightsFile: they may be downloaded once into a cache),
// and runs the network batch by batch (the next batch is decoded
// meanwhile), reporting images done through env.Progress. Features of
// images seen before with the same settings come from the feature cache
// (see features.Cache) unless req.NoCache.
func Features(ctx context.Context, env job.Env, req FeaturesRequest) (*FeaturesResult, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	out, err := req.output()
	if err != nil {
		return nil, err
	}
	x, err := newExtractor(env, "features", "batch", req.ImageOptions)
	if err != nil {
		return nil, err
	}
	files, err := x.list(req.Input)
	if err != nil {
		return nil, err
	}
	var shard *int
	if req.Shards > 0 {
		if _, files, err = folderShard(req.Input, files, req.Shard, req.Shards); err != nil {
			return nil, err
		}
		shard = &req.Shard
	}
	if err := x.prepare(ctx); err != nil {
		return nil, err
	}
	set := x.embedder(out).Settings()
	res := &FeaturesResult{Shard: shard, Shards: req.Shards, Images: len(files), Dims: set.Dim, Output: set.Output, Embedder: x.net.embedder, Mode: string(x.net.mode), Preset: string(x.net.preset),
		Backend: linalg.Backend(), Files: files, Features: make([][]float32, 0, len(files))}
	start := time.Now()
	env.ReportProgress(0, len(files))
	err = x.pipe.Run(ctx, x.embedder(out), x.cache(out), files, func(rows [][]float32) error {
		res.Features = append(res.Features, rows...)
		return nil
	}, (&counter{env: env, total: len(files)}).tick)
	if err != nil {
		return nil, err
	}
	sec := time.Since(start).Seconds()
	res.Weights, res.WeightsSHA256, res.Cached, res.Computed = x.weightsInfo(), x.whash, x.pipe.Cached, x.pipe.Computed
	res.Seconds = jsonnum.Num(sec)
	res.ImagesPerSecond = jsonnum.Num(float64(len(files)) / math.Max(sec, 1e-9))
	return res, nil
}

// Artifacts returns features.npy: float32, images × dims, rows in the
// sorted file order of Files.
func (r *FeaturesResult) Artifacts() []job.Artifact {
	return []job.Artifact{{Name: "features.npy", Write: r.WriteNPY}}
}

// WriteNPY writes the features as a float32 .npy array (images × dims),
// NumPy's format version 1.0 with the header padded to 64 bytes.
func (r *FeaturesResult) WriteNPY(w io.Writer) error {
	dict := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", len(r.Features), r.Dims)
	pad := (64 - (10+len(dict)+1)%64) % 64
	hdr := make([]byte, 0, 10+len(dict)+pad+1)
	hdr = append(hdr, "\x93NUMPY\x01\x00"...)
	hdr = binary.LittleEndian.AppendUint16(hdr, uint16(len(dict)+pad+1))
	hdr = append(hdr, dict...)
	hdr = append(hdr, strings.Repeat(" ", pad)+"\n"...)
	bw := bufio.NewWriter(w)
	if _, err := bw.Write(hdr); err != nil {
		return err
	}
	var b [4]byte
	for i, row := range r.Features {
		if len(row) != r.Dims {
			return fmt.Errorf("features: row %d has %d values, want %d", i, len(row), r.Dims)
		}
		for _, v := range row {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
			if _, err := bw.Write(b[:]); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}
