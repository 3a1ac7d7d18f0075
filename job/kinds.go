package job

import (
	"context"
	"fmt"
	"io"
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
// A domain package defines its commands with Define, and package
// job/commands assembles the table.
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
	modelDirs func(req Request) map[string]*string
	named     func(res any) *string
	artifacts func(req Request, res any) []Artifact
	outbound  func(req Request) []Outbound
	text      func(w io.Writer, req Request, res any)
}

// Outbound is one outbound service a request would call: its base URL and
// the request field that names it.
type Outbound struct {
	Field string // "base_url"
	URL   string
	// SecretField and Secret, when Secret is not empty, are the field
	// naming the secret sent to URL and its name, which must be one the
	// server holds ("api_key_env", "OPENAI_API_KEY"): a request naming
	// another is refused when it is submitted, not when it runs.
	SecretField, Secret string
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
// an optional file not given is absent. The image network's weights are
// not among them (see Weights).
func (k *Command) Inputs(req Request) []Input {
	if k.inputs == nil {
		return nil
	}
	return k.inputs(req)
}

// Weights returns req's field of the image network's weights (Inception's
// .pth, or a DINOv2 or CLIP file; imagejob.ImageOptions.EmbedderName, which
// such requests embed, says which network) when the kind turns folders
// of images (its Images inputs) into features, nil otherwise.
func (k *Command) Weights(req Request) *string {
	if k.weights == nil {
		return nil
	}
	return k.weights(req)
}

// ModelDirs returns req's fields naming the directory of a text model
// (config, tokenizer and weights of an embedder or an NLI model the job
// runs in process), by field name, nil when the kind has none: the
// command line passes a directory of its host, the service resolves the
// name of a directory its operator allowed.
func (k *Command) ModelDirs(req Request) map[string]*string {
	if k.modelDirs == nil {
		return nil
	}
	return k.modelDirs(req)
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

// Text writes the summary of res, the result of req, for a reader: the
// tables the command line prints without --json. Fields the summary
// names are in braces ({out}), as in messages. A kind without one writes
// nothing and returns false.
func (k *Command) Text(w io.Writer, req Request, res any) bool {
	if k.text == nil || res == nil {
		return false
	}
	k.text(w, req, res)
	return true
}

// Spec is the typed description of a Command, for Define: the name and
// help section, the request constructor (NewXRequest) and the job
// function, and the optional functions behind Command's methods of the
// same names.
type Spec[Req, Res any] struct {
	Name, Group string
	New         func() Req
	Run         func(context.Context, Env, Req) (*Res, error)
	Inputs      func(*Req) []Input
	Weights     func(*Req) *string
	ModelDirs   func(*Req) map[string]*string
	Named       func(*Res) *string
	Artifacts   func(*Req, *Res) []Artifact
	Outbound    func(*Req) []Outbound
	Text        func(io.Writer, *Req, *Res)
}

// Define erases the types of a Spec.
func Define[Req any, P interface {
	*Req
	Request
}, Res any](s Spec[Req, Res]) Command {
	k := Command{
		Name:  s.Name,
		Group: s.Group,
		new: func() Request {
			r := s.New()
			return P(&r)
		},
		run: func(ctx context.Context, env Env, req Request) (any, error) {
			res, err := s.Run(ctx, env, *req.(P))
			if res == nil {
				return nil, err // no typed nil in the interface
			}
			return res, err
		},
	}
	if s.Inputs != nil {
		k.inputs = func(req Request) []Input { return s.Inputs(req.(P)) }
	}
	if s.Weights != nil {
		k.weights = func(req Request) *string { return s.Weights(req.(P)) }
	}
	if s.ModelDirs != nil {
		k.modelDirs = func(req Request) map[string]*string { return s.ModelDirs(req.(P)) }
	}
	if s.Named != nil {
		k.named = func(res any) *string { return s.Named(res.(*Res)) }
	}
	if s.Artifacts != nil {
		k.artifacts = func(req Request, res any) []Artifact { return s.Artifacts(req.(P), res.(*Res)) }
	}
	if s.Outbound != nil {
		k.outbound = func(req Request) []Outbound { return s.Outbound(req.(P)) }
	}
	if s.Text != nil {
		k.text = func(w io.Writer, req Request, res any) { s.Text(w, req.(P), res.(*Res)) }
	}
	return k
}

// FileInput returns the input of a field naming one file; nothing when path is
// empty (an optional file not given).
func FileInput(field, path string) []Input {
	if path == "" {
		return nil
	}
	return []Input{{Field: field, Path: path}}
}

// ImageInput is FileInput for a field that may name a folder of images.
func ImageInput(field, path string) []Input {
	in := FileInput(field, path)
	for i := range in {
		in[i].Images = true
	}
	return in
}

// FileInputs returns the inputs of a list field, named field[i].
func FileInputs(field string, paths []string) []Input {
	var in []Input
	for i, p := range paths {
		in = append(in, Input{Field: fmt.Sprintf("%s[%d]", field, i), Path: p})
	}
	return in
}

// ArtifactsOf adapts a result's Artifacts method.
func ArtifactsOf[Req, Res any](f func(*Res) []Artifact) func(*Req, *Res) []Artifact {
	return func(_ *Req, r *Res) []Artifact { return f(r) }
}
