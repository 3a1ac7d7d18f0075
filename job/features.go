package job

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"genlens/inception"
	"genlens/internal/par"
	"genlens/linalg"
)

// FeaturesRequest is a request of `genlens features`: Inception-v3
// features of a folder of images, as pytorch-fid (or, with mode tf,
// torch-fidelity) computes them (see package inception). Start from
// NewFeaturesRequest, which holds the command line's defaults.
type FeaturesRequest struct {
	Input     string `json:"input"`             // folder of images
	Dims      string `json:"dims"`              // 64, 192, 768, 2048, logits or logits_unbiased
	Mode      string `json:"mode"`              // pytorch-fid or tf
	Weights   string `json:"weights,omitempty"` // .pth file; default: $GENLENS_WEIGHTS, cache, download
	Batch     int    `json:"batch"`             // images decoded and run together
	Workers   int    `json:"workers"`           // goroutines; 0: one per CPU
	Recursive bool   `json:"recursive"`         // descend into subfolders
}

// DefaultFeaturesBatch is pytorch-fid's default batch size.
const DefaultFeaturesBatch = 50

// NewFeaturesRequest returns a request with the defaults of the command
// line and no input.
func NewFeaturesRequest() FeaturesRequest {
	return FeaturesRequest{Dims: string(inception.Out2048), Mode: string(inception.ModePyTorchFID), Batch: DefaultFeaturesBatch}
}

// Validate checks the fields that need no input file.
func (r *FeaturesRequest) Validate() error {
	_, _, err := r.options()
	return err
}

func (r *FeaturesRequest) options() (inception.Output, inception.Mode, error) {
	out := inception.Output(strings.ToLower(strings.TrimSpace(r.Dims)))
	switch {
	case r.Input == "":
		return "", "", Fieldf("input", "features: {input} (a folder of images) is required")
	case out.Dim() == 0:
		return "", "", Fieldf("dims", "features: {dims} %q: want 64, 192, 768, 2048, logits or logits_unbiased", r.Dims)
	case r.Batch < 1:
		return "", "", Fieldf("batch", "features: {batch} %d: want at least 1", r.Batch)
	case r.Workers < 0:
		return "", "", Fieldf("workers", "features: {workers} %d: want 0 (one per CPU) or more", r.Workers)
	}
	mode, err := inception.ParseMode(strings.ToLower(strings.TrimSpace(r.Mode)))
	if err != nil {
		return "", "", Fieldf("mode", "features: {mode} %q: want pytorch-fid or tf", r.Mode)
	}
	return out, mode, nil
}

// FeaturesResult is the result of `genlens features`; it marshals to the
// command's --json summary. The features themselves are the artifact
// features.npy (float32, images × dims), not part of the JSON.
type FeaturesResult struct {
	Images          int    `json:"images"`
	Dims            int    `json:"dims"`
	Output          string `json:"output"`
	Mode            string `json:"mode"`
	Weights         string `json:"weights"`
	Backend         string `json:"backend"`
	Seconds         Num    `json:"seconds"`
	ImagesPerSecond Num    `json:"images_per_second"`

	// Files are the images in the order of the rows of Features.
	Files []string `json:"-"`
	// Features holds one row per image.
	Features [][]float32 `json:"-"`
}

// Features runs `genlens features`: it lists the images of req.Input
// through env.FS, resolves and loads the weights (inception.ResolveWeights:
// the weights path may trigger a one-time download into the user cache),
// and runs the network batch by batch, reporting images done through
// env.Progress.
func Features(ctx context.Context, env Env, req FeaturesRequest) (*FeaturesResult, error) {
	out, mode, err := req.options()
	if err != nil {
		return nil, err
	}
	fsys := env.fsys()
	files, err := inception.ListImagesFS(fsys, req.Input, req.Recursive)
	if err != nil {
		return nil, err
	}
	weights, err := inception.ResolveWeights(ctx, req.Weights, inception.FetchOptions{})
	if err != nil {
		return nil, err
	}
	model, err := inception.Load(weights)
	if err != nil {
		return nil, err
	}
	res := &FeaturesResult{Images: len(files), Dims: out.Dim(), Output: string(out), Mode: string(mode),
		Weights: weights, Backend: linalg.Backend(), Files: files, Features: make([][]float32, len(files))}
	start := time.Now()
	env.progress(0, len(files))
	for lo := 0; lo < len(files); lo += req.Batch {
		hi := min(lo+req.Batch, len(files))
		batch := make([][]float32, hi-lo)
		// Decoding and resizing are independent per image too.
		err := par.For(ctx, len(batch), req.Workers, func(_ context.Context, i int) error {
			x, err := inception.LoadImageFS(fsys, files[lo+i], mode)
			batch[i] = x
			return err
		})
		if err != nil {
			return nil, err
		}
		feats, err := model.Forward(ctx, batch, req.Workers)
		if err != nil {
			return nil, err
		}
		for i := range feats {
			res.Features[lo+i] = feats[i].Get(out)
		}
		env.progress(hi, len(files))
	}
	sec := time.Since(start).Seconds()
	res.Seconds = Num(sec)
	res.ImagesPerSecond = Num(float64(len(files)) / math.Max(sec, 1e-9))
	return res, nil
}

// Artifacts returns features.npy: float32, images × dims, rows in the
// sorted file order of Files.
func (r *FeaturesResult) Artifacts() []Artifact {
	return []Artifact{{Name: "features.npy", Write: r.WriteNPY}}
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
