package job

import (
	"context"
	"fmt"
	"strings"
)

// Request is a job request: a pointer to one of the request types of this
// package (*EntropyRequest, ...), holding the fields of its command.
type Request interface {
	// Validate checks the fields that need no input file.
	Validate() error
}

// Input is one request field naming an input file: Field is the field's
// name as in the request's JSON ("models[1]" for an element of a list),
// Path its value.
type Input struct {
	Field string
	Path  string
	// Images: the input may be a folder of images, whose features the
	// kind's Inception weights compute (see Command.Weights).
	Images bool
	// Folder: the input must be a folder of images.
	Folder bool
}

// Command describes one job kind: one command of the command line and one
// kind of the service, with everything the transports derive from it.
// Commands lists them all; adding one means writing its request, result
// and function (job/X.go) and adding one entry there.
type Command struct {
	// Name is the command path under genlens: "entropy", "mse fit".
	Name string
	// Group is the help section of the command line the command belongs
	// to (cmd/genlens names the sections).
	Group string

	new       func() Request
	run       func(ctx context.Context, env Env, req Request) (any, error)
	inputs    func(req Request) []Input
	weights   func(req Request) *string
	named     func(res any) *string
	artifacts func(req Request, res any) []Artifact
	outbound  func(req Request) []Outbound
}

// Outbound is one outbound service a request would call: its base URL and
// the request field that names it.
type Outbound struct {
	Field string // "base_url"
	URL   string
}

// Slug is the kind's name with hyphens for spaces ("mse-fit"): the URL
// segment of the service's POST /api/v1/jobs/{kind}.
func (k *Command) Slug() string { return strings.ReplaceAll(k.Name, " ", "-") }

// New returns a new request of the kind holding the command line's
// defaults (NewXRequest), as a pointer (*XRequest).
func (k *Command) New() Request { return k.new() }

// Run runs the kind's job function on req, a request from New; the result
// is a pointer to the kind's result type (*XResult), which marshals to the
// command's --json document.
func (k *Command) Run(ctx context.Context, env Env, req Request) (any, error) {
	return k.run(ctx, env, req)
}

// Inputs returns the input files req names, in the order of its fields;
// an optional file not given is absent. The Inception weights are not
// among them (see Weights).
func (k *Command) Inputs(req Request) []Input {
	if k.inputs == nil {
		return nil
	}
	return k.inputs(req)
}

// Weights returns req's field of Inception weights (a .pth file) when the
// kind turns folders of images (its Images inputs) into features, nil
// otherwise.
func (k *Command) Weights(req Request) *string {
	if k.weights == nil {
		return nil
	}
	return k.weights(req)
}

// WeightsName returns the field of res that names the weights the job
// used (nil when the kind reads no images, or res used none), for a
// transport to name them as its client knows them.
func (k *Command) WeightsName(res any) *string {
	if k.named == nil || res == nil {
		return nil
	}
	return k.named(res)
}

// Artifacts returns the files a run of req with result res writes (the
// command line's --out, the service's artifacts); nil for a kind without.
func (k *Command) Artifacts(req Request, res any) []Artifact {
	if k.artifacts == nil {
		return nil
	}
	return k.artifacts(req, res)
}

// Outbound returns the outbound services req would call, none for a kind
// that calls none.
func (k *Command) Outbound(req Request) []Outbound {
	if k.outbound == nil {
		return nil
	}
	return k.outbound(req)
}

// kindSpec is the typed description of a Command, for define.
type kindSpec[Req, Res any] struct {
	name, group string
	new         func() Req
	run         func(context.Context, Env, Req) (*Res, error)
	inputs      func(*Req) []Input
	weights     func(*Req) *string
	named       func(*Res) *string
	artifacts   func(*Req, *Res) []Artifact
	outbound    func(*Req) []Outbound
}

// define erases the types of a kindSpec.
func define[Req any, P interface {
	*Req
	Request
}, Res any](s kindSpec[Req, Res]) Command {
	k := Command{
		Name:  s.name,
		Group: s.group,
		new: func() Request {
			r := s.new()
			return P(&r)
		},
		run: func(ctx context.Context, env Env, req Request) (any, error) {
			res, err := s.run(ctx, env, *req.(P))
			if res == nil {
				return nil, err // no typed nil in the interface
			}
			return res, err
		},
	}
	if s.inputs != nil {
		k.inputs = func(req Request) []Input { return s.inputs(req.(P)) }
	}
	if s.weights != nil {
		k.weights = func(req Request) *string { return s.weights(req.(P)) }
	}
	if s.named != nil {
		k.named = func(res any) *string { return s.named(res.(*Res)) }
	}
	if s.artifacts != nil {
		k.artifacts = func(req Request, res any) []Artifact { return s.artifacts(req.(P), res.(*Res)) }
	}
	if s.outbound != nil {
		k.outbound = func(req Request) []Outbound { return s.outbound(req.(P)) }
	}
	return k
}

// file returns the input of a field naming one file; nothing when path is
// empty (an optional file not given).
func file(field, path string) []Input {
	if path == "" {
		return nil
	}
	return []Input{{Field: field, Path: path}}
}

// images is file for a field that may name a folder of images.
func images(field, path string) []Input {
	in := file(field, path)
	for i := range in {
		in[i].Images = true
	}
	return in
}

// files returns the inputs of a list field, named field[i].
func files(field string, paths []string) []Input {
	var in []Input
	for i, p := range paths {
		in = append(in, Input{Field: fmt.Sprintf("%s[%d]", field, i), Path: p})
	}
	return in
}

// imagesNamed returns the weights field of the images info of a result.
func imagesNamed(im *ImagesInfo) *string {
	if im == nil {
		return nil
	}
	return &im.Weights.Path
}

// artifactsOf adapts a result's Artifacts method.
func artifactsOf[Req, Res any](f func(*Res) []Artifact) func(*Req, *Res) []Artifact {
	return func(_ *Req, r *Res) []Artifact { return f(r) }
}

// Commands lists the job kinds, in the order the service lists them. Each is
// a command of the command line (cmd/genlens builds its flags and output)
// and a kind of the service (jobrun decodes its JSON body over New's
// defaults and handles the inputs and weights it declares).
var Commands = []Command{
	define(kindSpec[SampleRequest, SampleResult]{
		name: "sample", group: "kernel", new: NewSampleRequest, run: Sample,
		inputs:    func(r *SampleRequest) []Input { return file("prompts", r.Prompts) },
		artifacts: artifactsOf[SampleRequest]((*SampleResult).Artifacts),
		outbound:  func(r *SampleRequest) []Outbound { return r.outbound() },
	}),
	define(kindSpec[EntropyRequest, EntropyResult]{
		name: "entropy", group: "kernel", new: NewEntropyRequest, run: Entropy,
		inputs: func(r *EntropyRequest) []Input {
			return append(file("in", r.In), file("embeddings", r.Embeddings)...)
		},
		artifacts: artifactsOf[EntropyRequest]((*EntropyResult).Artifacts),
	}),
	define(kindSpec[DecomposeRequest, DecomposeResult]{
		name: "decompose", group: "kernel", new: NewDecomposeRequest, run: Decompose,
		inputs: func(r *DecomposeRequest) []Input {
			return append(files("models", r.Models), file("targets", r.Targets)...)
		},
	}),
	define(kindSpec[CorrelateRequest, CorrelateResult]{
		name: "correlate", group: "kernel", new: NewCorrelateRequest, run: Correlate,
		inputs:    func(r *CorrelateRequest) []Input { return files("files", r.Files) },
		artifacts: artifactsOf[CorrelateRequest]((*CorrelateResult).Artifacts),
	}),
	define(kindSpec[FeaturesRequest, FeaturesResult]{
		name: "features", group: "fidelity", new: NewFeaturesRequest, run: Features,
		inputs: func(r *FeaturesRequest) []Input {
			return []Input{{Field: "input", Path: r.Input, Images: true, Folder: true}}
		},
		weights:   func(r *FeaturesRequest) *string { return &r.Weights },
		named:     func(r *FeaturesResult) *string { return &r.Weights.Path },
		artifacts: artifactsOf[FeaturesRequest]((*FeaturesResult).Artifacts),
	}),
	define(kindSpec[StatsRequest, StatsResult]{
		name: "stats", group: "fidelity", new: NewStatsRequest, run: Stats,
		inputs:  func(r *StatsRequest) []Input { return images("in", r.In) },
		weights: func(r *StatsRequest) *string { return &r.Weights },
		named:   func(r *StatsResult) *string { return imagesNamed(r.Images) },
		artifacts: func(_ *StatsRequest, r *StatsResult) []Artifact {
			return []Artifact{r.Artifact("stats.npz")}
		},
	}),
	define(kindSpec[StatsMergeRequest, StatsMergeResult]{
		name: "stats merge", group: "fidelity", new: NewStatsMergeRequest, run: StatsMerge,
		inputs: func(r *StatsMergeRequest) []Input { return files("parts", r.Parts) },
		artifacts: func(_ *StatsMergeRequest, r *StatsMergeResult) []Artifact {
			return []Artifact{r.Artifact("stats.npz")}
		},
	}),
	define(kindSpec[CompareRequest, CompareResult]{
		name: "compare", group: "fidelity", new: NewCompareRequest, run: Compare,
		inputs: func(r *CompareRequest) []Input {
			return append(images("real", r.Real), images("fake", r.Fake)...)
		},
		weights: func(r *CompareRequest) *string { return &r.Weights },
		named:   func(r *CompareResult) *string { return imagesNamed(r.Images) },
	}),
	define(kindSpec[ISRequest, ISResult]{
		name: "is", group: "fidelity", new: NewISRequest, run: IS,
		inputs: func(r *ISRequest) []Input {
			return append(file("probs", r.Probs), images("images", r.Images)...)
		},
		weights: func(r *ISRequest) *string { return &r.Weights },
		named:   func(r *ISResult) *string { return imagesNamed(r.Images) },
	}),
	define(kindSpec[CKARequest, CKAResult]{
		name: "cka", group: "image", new: NewCKARequest, run: CKA,
		inputs: func(r *CKARequest) []Input { return append(file("x", r.X), file("y", r.Y)...) },
	}),
	define(kindSpec[SelectRequest, SelectResult]{
		name: "select", group: "fidelity", new: NewSelectRequest, run: Select,
		inputs: func(r *SelectRequest) []Input {
			in := files("pools", r.Pools)
			for i := range in {
				in[i].Images = true
			}
			return append(in, images("ref", r.Ref)...)
		},
		weights:   func(r *SelectRequest) *string { return &r.Weights },
		named:     func(r *SelectResult) *string { return imagesNamed(r.Images) },
		artifacts: artifactsOf[SelectRequest]((*SelectResult).Artifacts),
	}),
	define(kindSpec[DisentangleRequest, DisentangleResult]{
		name: "disentangle", group: "image", new: NewDisentangleRequest, run: Disentangle,
		inputs: func(r *DisentangleRequest) []Input {
			return append(append(file("train", r.Train), file("test", r.Test)...), files("generated", r.Generated)...)
		},
		artifacts: artifactsOf[DisentangleRequest]((*DisentangleResult).Artifacts),
	}),
	define(kindSpec[HallucinationRunRequest, HallucinationRunResult]{
		name: "hallucination run", group: "icl", new: NewHallucinationRunRequest, run: HallucinationRun,
		inputs: func(r *HallucinationRunRequest) []Input {
			return append(file("context", r.Context), file("queries", r.Queries)...)
		},
		artifacts: artifactsOf[HallucinationRunRequest]((*HallucinationRunResult).Artifacts),
		outbound: func(r *HallucinationRunRequest) []Outbound {
			if r.Backend == "openai" {
				return []Outbound{{"base_url", r.BaseURL}}
			}
			return nil
		},
	}),
	define(kindSpec[HallucinationSimulateRequest, HallucinationSimulateResult]{
		name: "hallucination simulate", group: "icl", new: NewHallucinationSimulateRequest, run: HallucinationSimulate,
		artifacts: artifactsOf[HallucinationSimulateRequest]((*HallucinationSimulateResult).Artifacts),
	}),
	define(kindSpec[MSEFitRequest, MSEFitResult]{
		name: "mse fit", group: "production", new: NewMSEFitRequest, run: MSEFit,
		inputs: func(r *MSEFitRequest) []Input { return file("train", r.Train) },
		// The model is the one artifact, named by the request's model
		// field (the command line writes it to that path).
		artifacts: func(q *MSEFitRequest, r *MSEFitResult) []Artifact {
			return []Artifact{{Name: q.Model, Write: r.WriteModel}}
		},
	}),
	define(kindSpec[MSEEstimateRequest, MSEEstimateResult]{
		name: "mse estimate", group: "production", new: NewMSEEstimateRequest, run: MSEEstimate,
		inputs: func(r *MSEEstimateRequest) []Input {
			return append(file("model", r.Model), file("data", r.Data)...)
		},
		artifacts: artifactsOf[MSEEstimateRequest]((*MSEEstimateResult).Artifacts),
	}),
	define(kindSpec[MSEBenchRequest, MSEBenchResult]{
		name: "mse bench", group: "production", new: NewMSEBenchRequest, run: MSEBench,
		inputs: func(r *MSEBenchRequest) []Input {
			if strings.HasPrefix(r.Dataset, "synthetic-") {
				return nil // generated, no file
			}
			return file("dataset", r.Dataset)
		},
		artifacts: artifactsOf[MSEBenchRequest]((*MSEBenchResult).Artifacts),
	}),
}

// CommandNamed returns the command of a name ("mse fit") or slug
// ("mse-fit"), nil for none.
func CommandNamed(name string) *Command {
	for i := range Commands {
		if Commands[i].Name == name || Commands[i].Slug() == name {
			return &Commands[i]
		}
	}
	return nil
}
