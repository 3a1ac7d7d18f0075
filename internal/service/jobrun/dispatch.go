package jobrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/strictjson"
	"github.com/genlens/genlens/internal/hub"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/commands"
	"github.com/genlens/genlens/job/icljob"
	"github.com/genlens/genlens/job/imagejob"
	"github.com/genlens/genlens/job/llmjob"
	"github.com/genlens/genlens/job/msejob"
)

// Kinds lists the job kinds the service runs: the URL segment of POST
// /api/v1/jobs/{kind}, the command's name with spaces as hyphens
// (job.Command.Slug), in the order of commands.All.
//
// A kind's input fields name uploads (see job.Command.Inputs). A kind
// that reads folders of images (features, stats, compare, is, select)
// takes each as a .zip upload, and its network's weights (the weights
// field) as prepEnv.imageWeights says: Inception's from an uploaded .pth
// or the server's configured file, never downloaded; DINOv2's and
// CLIP's from an upload, or fetched by name when the server allows
// downloads.
var Kinds = kindSlugs()

func kindSlugs() []string {
	var s []string
	for i := range commands.All {
		s = append(s, commands.All[i].Slug())
	}
	return s
}

// KnownKind reports whether kind is one of Kinds.
func KnownKind(kind string) bool {
	for _, k := range Kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// ErrUnknownKind is returned (wrapped) for a kind not in Kinds; the
// service answers 404.
var ErrUnknownKind = errors.New("unknown job kind")

// task is a decoded, validated request: the upload ids it reads, the
// outbound base URLs it would call (hallucination run's openai backend,
// sample) and the closure that runs it.
type task struct {
	inputs   []input
	outbound []job.Outbound
	run      func(ctx context.Context, env job.Env) (result any, arts []job.Artifact, err error)
}

// input is one request field naming an upload.
type input struct {
	field string
	id    string
}

// prepEnv is what preparing a request needs from the service.
type prepEnv struct {
	uploadsDir string   // the host folder of the uploads
	weights    string   // the server's Inception weights file; "" for none
	modelDirs  []string // the text models' directories jobs may name
	// downloads: jobs may fetch published models by name (Config.Downloads);
	// noDownloads says why not.
	downloads   bool
	noDownloads string
}

// modelDir applies the service's rule of text models to a request's
// model directory field (the weights of an embedder or an NLI model run
// in process): a
// directory the server allows, named by its base name (or "server:" and
// it; *dir becomes its host path), or, when the server fetches models,
// a Hugging Face model id (*dir becomes job.HubPrefix and it, never read
// as a path); never another path on the server or an upload.
func (pe prepEnv) modelDir(field string, dir *string) error {
	name := strings.TrimPrefix(*dir, "server:")
	var names []string
	for _, d := range pe.modelDirs {
		if filepath.Base(d) == name {
			*dir = d
			return nil
		}
		names = append(names, filepath.Base(d))
	}
	if id := strings.TrimPrefix(*dir, job.HubPrefix); hub.IsRepoID(id) {
		if pe.downloads {
			*dir = job.HubPrefix + id
			return nil
		}
		return fault.Fieldf(field, "{%s} %q: %s; %s", field, fault.Printable(*dir, 80), pe.noFetch(), textModelsInstead)
	}
	if len(names) == 0 {
		return fault.Fieldf(field, "{%s} %q: this server allows no text model directories", field, fault.Printable(*dir, 80))
	}
	return fault.Fieldf(field, "{%s} %q: want the name of a text model directory this server allows: %s", field, fault.Printable(*dir, 80), strings.Join(names, ", "))
}

// imageWeights applies the service's weights rule to a job whose inputs
// may be .zip uploads of images (folders; see jobFS) and whose network is
// embedder (imagejob.ImageOptions.EmbedderName). Inception's weights are
// an uploaded .pth or the server's configured file. A DINOv2 or CLIP
// network's are an uploaded weights file (.pth, .pt or .safetensors, the
// files vit.LoadWeights reads), or, when the server fetches models, a
// Hugging Face model id (CLIP's model.safetensors) or nothing: the
// published file, found in the server's cache or fetched once into it
// (job.WeightsFile). Never a path on the server. An upload's *weights
// becomes its host path and its id is returned, to be listed as an
// input; named is how results name the weights (see nameWeights).
// Without a .zip input the field stays as given, for the job to refuse
// if set.
func (pe prepEnv) imageWeights(embedder string, weights *string, inputs ...string) (id, named string, err error) {
	folder := false
	for _, in := range inputs {
		folder = folder || strings.HasSuffix(in, ".zip")
	}
	if !folder {
		return "", "", nil
	}
	if embedder != imagejob.EmbedderInception {
		return pe.vitWeights(embedder, weights)
	}
	switch {
	case *weights == "" && pe.weights == "":
		return "", "", fault.Fieldf("weights", "{weights}: this server has no Inception weights configured; upload the .pth file and pass its id")
	case *weights == "":
		*weights = pe.weights
		return "", "server:" + filepath.Base(pe.weights), nil
	case !uploadID.MatchString(*weights) || !strings.HasSuffix(*weights, ".pth"):
		return "", "", fault.Fieldf("weights", "{weights} %q: want the id of an uploaded .pth file", fault.Printable(*weights, 80))
	}
	id = *weights
	*weights = filepath.Join(pe.uploadsDir, id)
	return id, id, nil
}

// vitWeights is imageWeights for a DINOv2 or CLIP network.
func (pe prepEnv) vitWeights(embedder string, weights *string) (id, named string, err error) {
	given := *weights
	if uploadID.MatchString(given) {
		if !slices.ContainsFunc(vitWeightsExt, func(ext string) bool { return strings.HasSuffix(given, ext) }) {
			return "", "", fault.Fieldf("weights", "{weights} %q: want the id of an uploaded weights file (%s) of {embedder} %s", given, strings.Join(vitWeightsExt, ", "), embedder)
		}
		*weights = filepath.Join(pe.uploadsDir, given)
		return given, given, nil
	}
	repo, _ := strings.CutPrefix(given, job.HubPrefix)
	isID := hub.IsRepoID(repo)
	if given != "" && !isID {
		return "", "", fault.Fieldf("weights", "{weights} %q: want the id of an uploaded weights file (%s) of {embedder} %s", fault.Printable(given, 80), strings.Join(vitWeightsExt, ", "), embedder)
	}
	if !pe.downloads {
		what := "(empty)"
		if given != "" {
			what = fmt.Sprintf("%q", fault.Printable(given, 80))
		}
		return "", "", fault.Fieldf("weights", "{weights} %s: {embedder} %s needs its weights: %s; upload the weights file (%s) and pass its id", what, embedder, pe.noFetch(), strings.Join(vitWeightsExt, ", "))
	}
	if isID {
		*weights = job.HubPrefix + repo // never read as a path
		return "", given, nil
	}
	// The published file, as the client knows it: its address.
	m, _ := hub.Lookup(embedder)
	return "", m.URL, nil
}

// noFetch is why the server fetches no model by name: its operator's
// reason, which says only that (each rule names its own alternative).
func (pe prepEnv) noFetch() string {
	if pe.noDownloads == "" {
		return job.NoDownloads
	}
	return pe.noDownloads
}

// textModelsInstead is what a text model's field may name instead of a
// model to fetch: its folders are the operator's, never an upload.
const textModelsInstead = "name one of the text model folders its operator allows"

// vitWeightsExt are the endings of the uploads a ViT network's weights
// may be: a torch.save state dict, OpenAI's TorchScript CLIP archive, a
// safetensors file (vit.LoadWeights tells them apart by their bytes).
var vitWeightsExt = []string{".pth", ".pt", ".safetensors"}

// nameWeights sets named, a result's field naming the weights (nil:
// none), to name, the weights as the client knows them (imageWeights'
// named), never a path on the server.
func nameWeights(named *string, name string) {
	if named != nil {
		*named = name
	}
}

// prepare decodes and validates a request of a kind: its JSON over the
// defaults of its entry in commands.All, the server's policy for the kind, the
// request's Validate, then the uploads and weights the kind declares.
func prepare(kind string, raw []byte, pe prepEnv) (*task, error) {
	c := commands.Named(kind)
	if c == nil || c.Slug() != kind {
		return nil, fmt.Errorf("%w %q (want one of %s)", ErrUnknownKind, kind, strings.Join(Kinds, ", "))
	}
	req := c.New()
	if err := strictjson.Unmarshal(raw, req); err != nil {
		return nil, err
	}
	pol := policies[kind]
	if pol.before != nil {
		if err := pol.before(req); err != nil {
			return nil, err
		}
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if pol.after != nil {
		if err := pol.after(req); err != nil {
			return nil, err
		}
	}
	declared := c.Inputs(req)
	var inputs []input
	var folders []string
	for _, in := range declared {
		if in.Folder && !strings.HasSuffix(in.Path, ".zip") {
			return nil, fault.Fieldf(in.Field, "{%s} %q: upload the folder of images as a .zip archive and pass its id", in.Field, in.Path)
		}
		if in.Images {
			folders = append(folders, in.Path)
		}
		inputs = append(inputs, input{in.Field, in.Path})
	}
	var weights, named string // the upload id of the weights, before it becomes a host path; the results' name of them
	w := c.Weights(req)
	if w != nil {
		embedder := imagejob.EmbedderInception
		if e, ok := req.(embedderNamer); ok {
			embedder = e.EmbedderName()
		}
		var err error
		if weights, named, err = pe.imageWeights(embedder, w, folders...); err != nil {
			return nil, err
		}
		if weights != "" {
			inputs = append(inputs, input{"weights", weights})
		}
	}
	dirs := c.ModelDirs(req)
	for _, field := range slices.Sorted(maps.Keys(dirs)) {
		if d := dirs[field]; *d != "" {
			if err := pe.modelDir(field, d); err != nil {
				return nil, err
			}
		}
	}
	return &task{
		inputs:   inputs,
		outbound: c.Outbound(req),
		run: func(ctx context.Context, env job.Env) (any, []job.Artifact, error) {
			res, err := c.Run(ctx, env, req)
			if err != nil {
				return nil, nil, err
			}
			if w != nil {
				// The result names the weights as the client knows them,
				// not by a path on the server.
				nameWeights(c.WeightsName(res), named)
			}
			return res, c.Artifacts(req, res), nil
		},
	}, nil
}

// embedderNamer is a request that turns folders of images into features
// (imagejob.ImageOptions, which every such request embeds): its network.
type embedderNamer interface{ EmbedderName() string }

// policy is what the service adds to a kind's Validate: before runs on
// the decoded request first, after once it is valid.
type policy struct{ before, after func(job.Request) error }

// policies are the service's rules of the kinds that need one.
var policies = map[string]policy{
	"hallucination-simulate": {before: func(q job.Request) error {
		// Validate builds the categorical model, whose size grows with
		// groups: 10^8 groups allocate 0.8 GB before any job runs. A
		// server bounds it first, so that one request cannot exhaust its
		// memory.
		r := q.(*icljob.HallucinationSimulateRequest)
		if r.Model == "categorical" && (r.Groups > maxCategorical || r.Labels > maxCategorical) {
			return fault.Fieldf("groups", "{groups} %d, {labels} %d: this server accepts at most %d of each", r.Groups, r.Labels, maxCategorical)
		}
		return nil
	}},
	"sample": {before: func(q job.Request) error {
		if q.(*llmjob.SampleRequest).Out != "" {
			return fault.Fieldf("out", "{out}: the service keeps the rows as the job's answers.jsonl artifact; leave {out} out")
		}
		return nil
	}},
	"mse-fit": {
		before: func(q job.Request) error {
			r := q.(*msejob.FitRequest)
			if r.Model == "" {
				r.Model = "model.json" // the artifact's name: no file is written on the server
			}
			return nil
		},
		after: func(q job.Request) error {
			r := q.(*msejob.FitRequest)
			if !validArtifactName(r.Model) || !strings.HasSuffix(r.Model, ".json") {
				return fault.Fieldf("model", "{model} %q: name the model's artifact, a file name ending in .json (no folders)", r.Model)
			}
			return nil
		},
	},
}

// maxCategorical bounds the groups and labels of a categorical
// simulation the service accepts.
const maxCategorical = 1 << 16

// validArtifactName reports whether name is a plain file name.
func validArtifactName(name string) bool {
	return name != "" && name != "." && name != ".." && len(name) <= 128 &&
		!strings.ContainsAny(name, `/\`+"\x00") && path.Base(name) == name
}

// allowedURL reports whether raw, an outbound base URL, lies under one of
// the allowed base URLs: same scheme, host and port, and a path at or
// below the allowed one. Anything unparsable or with user info is refused.
func allowedURL(raw string, allow []string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	for _, a := range allow {
		v, err := url.Parse(a)
		if err != nil {
			continue
		}
		if !strings.EqualFold(u.Scheme, v.Scheme) || !strings.EqualFold(hostPort(u), hostPort(v)) {
			continue
		}
		p, ap := path.Clean("/"+u.Path), path.Clean("/"+v.Path)
		if ap == "/" || p == ap || strings.HasPrefix(p, ap+"/") {
			return true
		}
	}
	return false
}

// outboundClient returns the HTTP client of jobs' outbound calls. The
// request's base URL is checked at submission; a server behind it could
// still redirect elsewhere, so every redirect is checked too.
func outboundClient(allow []string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 16
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("stopped after 5 redirects")
			}
			if !allowedURL(req.URL.String(), allow) {
				return fmt.Errorf("redirect to %s refused: not under the server's allowed base URLs", req.URL.Redacted())
			}
			return nil
		},
	}
}

// hostPort returns host:port with the scheme's default port made
// explicit, so that http://h and http://h:80 compare equal.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Hostname()) + ":" + port
}

// contentType returns the media type of an artifact by its extension.
func contentType(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".csv":
		return "text/csv; charset=utf-8"
	case ".png":
		return "image/png"
	case ".json":
		return "application/json"
	case ".md":
		return "text/markdown; charset=utf-8"
	case ".txt":
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}
