package jobrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"genlens/job"
)

// Kinds lists the job kinds the service runs: the URL segment of POST
// /api/v1/jobs/{kind}, the command's name with spaces as hyphens.
//
// features reads its folder of images as a .zip upload ("input": the
// archive's id), and its weights from an uploaded .pth ("weights": its
// id) or the server's configured file; the service never downloads them.
// stats, compare, is and select take .zip uploads as folders of images
// too, under the same weights rule.
var Kinds = []string{
	"entropy", "decompose", "correlate",
	"features", "stats", "compare", "is", "cka",
	"select", "disentangle",
	"hallucination-run", "hallucination-simulate",
	"mse-fit", "mse-estimate", "mse-bench",
	"sample",
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
	baseURLs []string
	run      func(ctx context.Context, env job.Env) (result any, arts []job.Artifact, err error)
}

// input is one request field naming an upload.
type input struct {
	field string
	id    string
}

// decodeStrict decodes one JSON object into dst (which holds the
// request's defaults), refusing unknown fields, trailing data and a body
// that is not an object. Errors are field errors naming the field.
func decodeStrict(raw []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonFieldError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return job.Fieldf("body", "request body: want one JSON object, found more after it")
	}
	return nil
}

// jsonFieldError turns an encoding/json error into a *job.FieldError that
// names the field at fault when the decoder says which.
func jsonFieldError(err error) error {
	var ute *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &ute):
		f := ute.Field
		if f == "" {
			f = "body"
		}
		return job.Fieldf(f, "{%s}: want a JSON %s, got %s", f, jsonType(ute.Type.Kind().String()), ute.Value)
	case errors.As(err, &se):
		return job.Fieldf("body", "request body: invalid JSON at byte %d: %v", se.Offset, err)
	case errors.Is(err, io.EOF):
		return job.Fieldf("body", "request body: empty; want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return job.Fieldf("body", "request body: truncated JSON")
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		return job.Fieldf(name, "{%s}: unknown field", name)
	}
	return job.Fieldf("body", "request body: %s", strings.TrimPrefix(msg, "json: "))
}

func jsonType(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"), strings.HasPrefix(kind, "float"):
		return "number"
	case kind == "slice":
		return "array"
	case kind == "struct", kind == "map":
		return "object"
	}
	return kind
}

// spec builds a task from a request type: decode over the defaults,
// validate, and run fn, collecting artifacts with arts (nil: none).
func spec[Req any, Res any](raw []byte, req Req, validate func(*Req) error,
	fn func(context.Context, job.Env, Req) (*Res, error), arts func(*Res) []job.Artifact,
	inputs func(*Req) []input) (*task, error) {
	if err := decodeStrict(raw, &req); err != nil {
		return nil, err
	}
	if err := validate(&req); err != nil {
		return nil, err
	}
	t := &task{run: func(ctx context.Context, env job.Env) (any, []job.Artifact, error) {
		res, err := fn(ctx, env, req)
		if err != nil {
			return nil, nil, err
		}
		var a []job.Artifact
		if arts != nil {
			a = arts(res)
		}
		return res, a, nil
	}}
	if inputs != nil {
		t.inputs = inputs(&req)
	}
	return t, nil
}

// one returns the input for a field, nothing when the value is empty
// (an optional file not given).
func one(field, id string) []input {
	if id == "" {
		return nil
	}
	return []input{{field, id}}
}

// many returns the inputs of a list field, named field[i].
func many(field string, ids []string) []input {
	var in []input
	for i, id := range ids {
		in = append(in, input{fmt.Sprintf("%s[%d]", field, i), id})
	}
	return in
}

// prepEnv is what preparing a request needs from the service.
type prepEnv struct {
	uploadsDir string // the host folder of the uploads
	weights    string // the server's Inception weights file; "" for none
}

// imageWeights applies the service's weights rule to a job whose inputs
// may be .zip uploads of images (folders; see jobFS): the weights are an
// uploaded .pth (its id; *weights becomes its host path, and the id is
// returned to be listed as an input) or the server's configured file,
// never a path on the server nor a download. Without a .zip input the
// field stays as given, for the job to refuse if set.
func (pe prepEnv) imageWeights(weights *string, inputs ...string) (string, error) {
	folder := false
	for _, in := range inputs {
		folder = folder || strings.HasSuffix(in, ".zip")
	}
	switch {
	case *weights == "" && !folder:
		return "", nil
	case *weights == "" && pe.weights == "":
		return "", job.Fieldf("weights", "{weights}: this server has no Inception weights configured; upload the .pth file and pass its id")
	case *weights == "":
		*weights = pe.weights
		return "", nil
	case !uploadID.MatchString(*weights) || !strings.HasSuffix(*weights, ".pth"):
		return "", job.Fieldf("weights", "{weights} %q: want the id of an uploaded .pth file", *weights)
	}
	id := *weights
	*weights = filepath.Join(pe.uploadsDir, id)
	return id, nil
}

// nameWeights names the weights in a result as the client knows them (the
// upload id, or "server:" and the configured file's name), never by a
// path on the server.
func (pe prepEnv) nameWeights(im *job.ImagesInfo, id string) {
	if im == nil {
		return
	}
	im.Weights = id
	if id == "" {
		im.Weights = "server:" + filepath.Base(pe.weights)
	}
}

// prepare decodes and validates a request of a kind: the one switch from
// kind to job function (no registry, no reflection).
func prepare(kind string, raw []byte, pe prepEnv) (*task, error) {
	switch kind {
	case "entropy":
		return spec(raw, job.NewEntropyRequest(), (*job.EntropyRequest).Validate, job.Entropy, (*job.EntropyResult).Artifacts,
			func(r *job.EntropyRequest) []input {
				return append(one("in", r.In), one("embeddings", r.Embeddings)...)
			})
	case "decompose":
		return spec(raw, job.NewDecomposeRequest(), (*job.DecomposeRequest).Validate, job.Decompose, nil,
			func(r *job.DecomposeRequest) []input {
				return append(many("models", r.Models), one("targets", r.Targets)...)
			})
	case "correlate":
		return spec(raw, job.NewCorrelateRequest(), (*job.CorrelateRequest).Validate, job.Correlate, (*job.CorrelateResult).Artifacts,
			func(r *job.CorrelateRequest) []input { return many("files", r.Files) })
	case "features":
		var weights string // the upload id, before it becomes a host path
		return spec(raw, job.NewFeaturesRequest(), func(r *job.FeaturesRequest) error {
			if err := r.Validate(); err != nil {
				return err
			}
			if !strings.HasSuffix(r.Input, ".zip") {
				return job.Fieldf("input", "{input} %q: upload the folder of images as a .zip archive and pass its id", r.Input)
			}
			// inception.ResolveWeights downloads the weights when it is
			// given no path; the service never lets it.
			switch {
			case r.Weights == "" && pe.weights == "":
				return job.Fieldf("weights", "{weights}: this server has no Inception weights configured; upload the .pth file and pass its id")
			case r.Weights == "":
				r.Weights = pe.weights
			case !uploadID.MatchString(r.Weights) || !strings.HasSuffix(r.Weights, ".pth"):
				return job.Fieldf("weights", "{weights} %q: want the id of an uploaded .pth file", r.Weights)
			default:
				weights = r.Weights
				r.Weights = filepath.Join(pe.uploadsDir, r.Weights)
			}
			return nil
		}, func(ctx context.Context, env job.Env, r job.FeaturesRequest) (*job.FeaturesResult, error) {
			res, err := job.Features(ctx, env, r)
			if res != nil {
				// The result names the weights as the client knows them,
				// not by a path on the server.
				res.Weights = weights
				if weights == "" {
					res.Weights = "server:" + filepath.Base(pe.weights)
				}
			}
			return res, err
		}, (*job.FeaturesResult).Artifacts,
			func(r *job.FeaturesRequest) []input { return append(one("input", r.Input), one("weights", weights)...) })
	case "stats":
		var weights string
		return spec(raw, job.NewStatsRequest(), func(r *job.StatsRequest) error {
			if err := r.Validate(); err != nil {
				return err
			}
			var err error
			weights, err = pe.imageWeights(&r.Weights, r.In)
			return err
		}, func(ctx context.Context, env job.Env, r job.StatsRequest) (*job.StatsResult, error) {
			res, err := job.Stats(ctx, env, r)
			if res != nil {
				pe.nameWeights(res.Images, weights)
			}
			return res, err
		}, func(r *job.StatsResult) []job.Artifact { return []job.Artifact{r.Artifact("stats.npz")} },
			func(r *job.StatsRequest) []input { return append(one("in", r.In), one("weights", weights)...) })
	case "compare":
		var weights string
		return spec(raw, job.NewCompareRequest(), func(r *job.CompareRequest) error {
			if err := r.Validate(); err != nil {
				return err
			}
			var err error
			weights, err = pe.imageWeights(&r.Weights, r.Real, r.Fake)
			return err
		}, func(ctx context.Context, env job.Env, r job.CompareRequest) (*job.CompareResult, error) {
			res, err := job.Compare(ctx, env, r)
			if res != nil {
				pe.nameWeights(res.Images, weights)
			}
			return res, err
		}, nil,
			func(r *job.CompareRequest) []input {
				return append(append(one("real", r.Real), one("fake", r.Fake)...), one("weights", weights)...)
			})
	case "is":
		var weights string
		return spec(raw, job.NewISRequest(), func(r *job.ISRequest) error {
			if err := r.Validate(); err != nil {
				return err
			}
			var err error
			weights, err = pe.imageWeights(&r.Weights, r.Images)
			return err
		}, func(ctx context.Context, env job.Env, r job.ISRequest) (*job.ISResult, error) {
			res, err := job.IS(ctx, env, r)
			if res != nil {
				pe.nameWeights(res.Images, weights)
			}
			return res, err
		}, nil,
			func(r *job.ISRequest) []input {
				return append(append(one("probs", r.Probs), one("images", r.Images)...), one("weights", weights)...)
			})
	case "cka":
		return spec(raw, job.NewCKARequest(), (*job.CKARequest).Validate, job.CKA, nil,
			func(r *job.CKARequest) []input { return append(one("x", r.X), one("y", r.Y)...) })
	case "select":
		var weights string
		return spec(raw, job.NewSelectRequest(), func(r *job.SelectRequest) error {
			if err := r.Validate(); err != nil {
				return err
			}
			var err error
			weights, err = pe.imageWeights(&r.Weights, append([]string{r.Ref}, r.Pools...)...)
			return err
		}, job.Select, (*job.SelectResult).Artifacts,
			func(r *job.SelectRequest) []input {
				return append(append(many("pools", r.Pools), one("ref", r.Ref)...), one("weights", weights)...)
			})
	case "disentangle":
		return spec(raw, job.NewDisentangleRequest(), (*job.DisentangleRequest).Validate, job.Disentangle, (*job.DisentangleResult).Artifacts,
			func(r *job.DisentangleRequest) []input {
				return append(append(one("train", r.Train), one("test", r.Test)...), many("generated", r.Generated)...)
			})
	case "hallucination-simulate":
		return spec(raw, job.NewHallucinationSimulateRequest(), func(r *job.HallucinationSimulateRequest) error {
			// Validate builds the categorical model, whose size grows with
			// groups: 10^8 groups allocate 0.8 GB before any job runs. A
			// server bounds it first, so that one request cannot exhaust
			// its memory.
			if r.Model == "categorical" && (r.Groups > maxCategorical || r.Labels > maxCategorical) {
				return job.Fieldf("groups", "{groups} %d, {labels} %d: this server accepts at most %d of each", r.Groups, r.Labels, maxCategorical)
			}
			return r.Validate()
		}, job.HallucinationSimulate, (*job.HallucinationSimulateResult).Artifacts, nil)
	case "hallucination-run":
		var base string
		t, err := spec(raw, job.NewHallucinationRunRequest(), func(r *job.HallucinationRunRequest) error {
			if r.Backend == "openai" {
				base = r.BaseURL
			}
			return r.Validate()
		}, job.HallucinationRun, (*job.HallucinationRunResult).Artifacts,
			func(r *job.HallucinationRunRequest) []input {
				return append(one("context", r.Context), one("queries", r.Queries)...)
			})
		if t != nil && base != "" {
			t.baseURLs = []string{base}
		}
		return t, err
	case "sample":
		var bases []string
		t, err := spec(raw, job.NewSampleRequest(), func(r *job.SampleRequest) error {
			if r.Out != "" {
				return job.Fieldf("out", "{out}: the service keeps the rows as the job's answers.jsonl artifact; leave {out} out")
			}
			bases = r.BaseURLs()
			return r.Validate()
		}, job.Sample, (*job.SampleResult).Artifacts,
			func(r *job.SampleRequest) []input { return one("prompts", r.Prompts) })
		if t != nil {
			t.baseURLs = bases
		}
		return t, err
	case "mse-fit":
		var model string
		return spec(raw, job.NewMSEFitRequest(), func(r *job.MSEFitRequest) error {
			if r.Model == "" {
				r.Model = "model.json" // the artifact's name: no file is written on the server
			}
			if err := r.Validate(); err != nil {
				return err
			}
			if !validArtifactName(r.Model) || !strings.HasSuffix(r.Model, ".json") {
				return job.Fieldf("model", "{model} %q: name the model's artifact, a file name ending in .json (no folders)", r.Model)
			}
			model = r.Model
			return nil
		}, job.MSEFit, func(r *job.MSEFitResult) []job.Artifact {
			return []job.Artifact{{Name: model, Write: r.WriteModel}}
		}, func(r *job.MSEFitRequest) []input { return one("train", r.Train) })
	case "mse-estimate":
		return spec(raw, job.NewMSEEstimateRequest(), (*job.MSEEstimateRequest).Validate, job.MSEEstimate, (*job.MSEEstimateResult).Artifacts,
			func(r *job.MSEEstimateRequest) []input { return append(one("model", r.Model), one("data", r.Data)...) })
	case "mse-bench":
		return spec(raw, job.NewMSEBenchRequest(), (*job.MSEBenchRequest).Validate, job.MSEBench, (*job.MSEBenchResult).Artifacts,
			func(r *job.MSEBenchRequest) []input {
				if strings.HasPrefix(r.Dataset, "synthetic-") {
					return nil
				}
				return one("dataset", r.Dataset)
			})
	}
	return nil, fmt.Errorf("%w %q (want one of %s)", ErrUnknownKind, kind, strings.Join(Kinds, ", "))
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
