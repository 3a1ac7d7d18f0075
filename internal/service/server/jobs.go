package server

// Jobs: every command of the job layer (package job) run by the service
// through package jobrun, on a bounded in-process queue whose state lives
// in the store.
//
//	POST   /api/v1/jobs/{kind}                  202 {"id", "status", "url"}
//	GET    /api/v1/jobs                         {"jobs": [...]}, newest first (?limit=N, default 50)
//	GET    /api/v1/jobs/{id}                    status, progress, request, result, error, artifacts
//	GET    /api/v1/jobs/{id}/artifacts/{name}   the artifact's bytes
//	DELETE /api/v1/jobs/{id}                    cancel: 200 with the job once canceled (or already
//	                                            ended), 202 while a running job is stopping

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/genlens/genlens/internal/entail"
	"github.com/genlens/genlens/internal/hub"
	"github.com/genlens/genlens/internal/service/jobrun"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/job"
)

// JobOptions configure the job runner, the uploads and the online
// selections.
type JobOptions struct {
	// DataDir holds the uploads (DataDir/uploads). Empty: a temporary
	// directory removed at Close, which suits tests only: uploads would
	// not survive a restart. Replicas sharing one database must share
	// this directory too (a network file system), since a job may run on
	// any replica.
	DataDir string
	// Workers is the number of jobs this replica runs at once [1].
	Workers int
	// MaxQueued bounds the jobs waiting, over all replicas; more are
	// refused with 503 and Retry-After [1000].
	MaxQueued int
	// AllowedBaseURLs are the only LLM API roots a job may call
	// (hallucination-run with backend openai, sample); none: no outbound
	// calls.
	AllowedBaseURLs []string
	// Secret returns a named secret (an API key) for a job; requests only
	// name them (api_key_env). nil: no secrets. The command line should
	// pass a lookup restricted to the names an operator listed, never
	// os.LookupEnv itself, or any request could read any variable of the
	// server's environment... and send it to an allowed URL.
	Secret func(name string) (string, bool)
	// SecretBaseURLs binds each secret it lists to the base URLs it may
	// be sent to (see SecretBaseURLs); a secret not listed may go to any
	// of AllowedBaseURLs.
	SecretBaseURLs map[string][]string
	// MaxUploadBytes bounds one upload [1 GiB].
	MaxUploadBytes int64
	// MaxRuntime bounds how long one job may run (0: no bound).
	MaxRuntime time.Duration
	// ModelCacheBytes bounds the weights of the networks (Inception, a
	// ViT) kept loaded between this replica's jobs, counted as their
	// files' sizes [job.DefaultModelCacheBytes].
	ModelCacheBytes int64
	// RetainJobs deletes finished jobs (succeeded, failed, canceled)
	// and their artifacts this long after they finished; RetainUploads
	// deletes uploads this long after they were last uploaded, once no
	// job names them. 0: kept forever. See jobrun.Config.
	RetainJobs, RetainUploads time.Duration
	// Weights is the FID Inception weights file (.pth) that Inception
	// jobs on folders of images use when their request names none (say,
	// $GENLENS_WEIGHTS); "": requests upload theirs. The server never
	// downloads Inception's weights (DINOv2's and CLIP's: see Downloads).
	Weights string
	// ModelDirs are the text models' directories (an embedder's config,
	// tokenizer and weights) that entropy and sample jobs may name in
	// their weights field by base name; none: jobs load no text model.
	// See jobrun.Config.
	ModelDirs []string
	// Downloads lets jobs fetch the published models they name into this
	// server's caches; NoDownloads is what a job is told otherwise. See
	// jobrun.Config.
	Downloads   bool
	NoDownloads string
	// Store, when not nil, replaces the server's store for jobs, uploads
	// and selections (tests use jobrun.NewMemStore()).
	Store records.Store
	// Exclusive says this process alone uses the store, so that jobs
	// left running at start were interrupted and are failed at once. nil:
	// true for SQLite, false for Postgres (where only jobs whose
	// heartbeat lapsed are failed: others belong to live replicas).
	Exclusive *bool
	// Replica names this process in the jobs it claims [random].
	Replica string
	// Heartbeat, Lease and Poll tune the queue (see jobrun.Config); zero
	// values take jobrun's defaults.
	Heartbeat, Lease, Poll time.Duration
}

// ensureDefaults sets each zero field of o that has a default to it (see
// Options.EnsureDefaults).
func (o *JobOptions) ensureDefaults() {
	if o.Workers == 0 {
		o.Workers = 1
	}
	if o.MaxQueued == 0 {
		o.MaxQueued = DefaultMaxQueued
	}
	if o.ModelCacheBytes == 0 {
		o.ModelCacheBytes = job.DefaultModelCacheBytes
	}
}

type jobsState struct {
	svc     *jobrun.Service
	tmpDir  string // the temporary data directory to remove, if any
	stop    context.CancelFunc
	done    chan struct{}
	refresh sync.Mutex
	warned  time.Time // the last warning of the refresher
}

// initJobs starts the job runner over the store.
func (s *Server) initJobs(ctx context.Context) error {
	o := s.opts.Jobs
	var st records.Store = s.store
	if o.Store != nil {
		st = o.Store
	}
	exclusive := false
	if o.Exclusive != nil {
		exclusive = *o.Exclusive
	} else if o.Store == nil {
		exclusive = s.store.Backend() == "sqlite"
	}
	dir := o.DataDir
	if dir == "" {
		d, err := os.MkdirTemp("", "genlens-data-")
		if err != nil {
			return fmt.Errorf("server: data directory: %w", err)
		}
		dir, s.jobs.tmpDir = d, d
		s.log.Warn("no data directory set: uploads go to a temporary directory removed at shutdown", "dir", d)
	}
	s.dataDir = dir
	svc, err := jobrun.New(jobrun.Config{
		Store: st, DataDir: dir, Workers: o.Workers, MaxQueued: o.MaxQueued, Replica: o.Replica, Exclusive: exclusive,
		Lease: o.Lease, Heartbeat: o.Heartbeat, Poll: o.Poll,
		AllowedBaseURLs: o.AllowedBaseURLs, Secret: o.Secret, SecretBaseURLs: o.SecretBaseURLs, Redact: s.opts.Secrets, MaxUploadBytes: o.MaxUploadBytes, MaxRuntime: o.MaxRuntime, Weights: o.Weights,
		ModelDirs: o.ModelDirs,
		Downloads: o.Downloads, NoDownloads: o.NoDownloads,
		Models:     job.NewModelCache(o.ModelCacheBytes), // 0: the default bound
		RetainJobs: o.RetainJobs, RetainUploads: o.RetainUploads,
		OnDelete: func(kind string, n int) { s.metrics.retentionDeleted.WithLabelValues(kind).Add(float64(n)) },
		Logf:     func(format string, a ...any) { s.log.Info(fmt.Sprintf(format, a...)) },
	})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if err := svc.Start(ctx); err != nil {
		svc.Close()
		return fmt.Errorf("server: %w", err)
	}
	s.jobs.svc = svc
	rctx, cancel := context.WithCancel(context.Background())
	s.jobs.stop, s.jobs.done = cancel, make(chan struct{})
	go s.refreshGauges(rctx)
	return nil
}

// closeJobs stops the workers (running jobs are recorded as failed: the
// server stopped) and the gauge refresher.
func (s *Server) closeJobs(ctx context.Context) error {
	if s.jobs.svc == nil {
		return nil
	}
	s.jobs.stop()
	<-s.jobs.done
	err := s.jobs.svc.Close()
	if s.jobs.tmpDir != "" {
		os.RemoveAll(s.jobs.tmpDir)
	}
	return err
}

// refreshGauges keeps the queue-depth and selection gauges current every
// few seconds, so that every replica reports the state of the shared
// store, not only what it handled itself.
func (s *Server) refreshGauges(ctx context.Context) {
	defer close(s.jobs.done)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		s.updateGauges(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (s *Server) updateGauges(ctx context.Context) {
	s.jobs.refresh.Lock()
	defer s.jobs.refresh.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if n, err := s.jobs.svc.QueueDepth(ctx); err == nil {
		s.metrics.queueDepth.Set(float64(n))
	} else if ctx.Err() == nil {
		s.log.Warn("queue depth", "err", err)
	}
	sels, err := s.jobs.svc.Selections(ctx)
	if err != nil && ctx.Err() == nil && time.Since(s.jobs.warned) > time.Minute {
		s.jobs.warned = time.Now() // once a minute, not every refresh
		s.log.Warn("selection gauges", "err", err)
	}
	for _, st := range sels {
		s.setSelectionGauges(st)
	}
}

// setSelectionGauges sets one selection's picks and scores.
func (s *Server) setSelectionGauges(st *jobrun.SelectionStatus) {
	for _, g := range st.Generators {
		s.metrics.selectionPicks.WithLabelValues(st.ID, g.Name).Set(float64(g.Batches))
		if g.Index != nil {
			s.metrics.selectionScore.WithLabelValues(st.ID, g.Name).Set(*g.Index)
		}
	}
}

func (s *Server) routeJobs(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/v1/jobs/{kind}", s.submitJob)
	mux.HandleFunc("GET /api/v1/jobs", s.listJobs)
	mux.HandleFunc("GET /api/v1/jobs/{id}", s.getJob)
	mux.HandleFunc("GET /api/v1/jobs/{id}/artifacts/{name}", s.getArtifact)
	mux.HandleFunc("DELETE /api/v1/jobs/{id}", s.cancelJob)
}

// jobError maps jobrun's errors to their statuses, then defers to
// writeError (field 400, input 422, internal 500).
func (s *Server) jobError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, records.ErrNotFound):
		err = errStatus(http.StatusNotFound, "not found")
	case errors.Is(err, jobrun.ErrUnknownKind):
		err = errStatus(http.StatusNotFound, "%v", err)
	case errors.Is(err, jobrun.ErrTooLarge):
		err = errStatus(http.StatusRequestEntityTooLarge, "%v", err)
	case errors.Is(err, records.ErrConflict):
		err = errStatus(http.StatusConflict, "%v", err)
	case errors.Is(err, jobrun.ErrQueueFull):
		w.Header().Set("Retry-After", "30")
		err = errStatus(http.StatusServiceUnavailable, "%v", err)
	}
	s.writeError(w, r, err)
}

// readBody reads a request body of at most s.maxBody bytes.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
	return io.ReadAll(r.Body)
}

func (s *Server) submitJob(w http.ResponseWriter, r *http.Request) {
	kind := r.PathValue("kind")
	if !jobrun.KnownKind(kind) {
		s.jobError(w, r, fmt.Errorf("%w %q (want one of %s)", jobrun.ErrUnknownKind, kind, strings.Join(jobrun.Kinds, ", ")))
		return
	}
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	j, err := s.jobs.svc.Submit(r.Context(), kind, body)
	if err != nil {
		s.jobError(w, r, err)
		return
	}
	url := "/api/v1/jobs/" + j.ID
	w.Header().Set("Location", url)
	s.writeJSON(w, http.StatusAccepted, map[string]string{"id": j.ID, "status": string(j.Status), "url": url})
}

// jobJSON is a job as the API shows it.
type jobJSON struct {
	ID              string          `json:"id"`
	Kind            string          `json:"kind"`
	Status          string          `json:"status"`
	Progress        progressJSON    `json:"progress"`
	Request         json.RawMessage `json:"request"`
	Result          json.RawMessage `json:"result"`
	Error           *jobErrorJSON   `json:"error"`
	CancelRequested bool            `json:"cancel_requested,omitempty"`
	Created         time.Time       `json:"created"`
	Started         *time.Time      `json:"started"`
	Finished        *time.Time      `json:"finished"`
	Artifacts       []artifactJSON  `json:"artifacts,omitempty"`
}

type progressJSON struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

type jobErrorJSON struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

type artifactJSON struct {
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	URL         string `json:"url"`
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

func toJobJSON(j records.Job, arts []records.ArtifactInfo) jobJSON {
	out := jobJSON{ID: j.ID, Kind: j.Kind, Status: string(j.Status), Progress: progressJSON{j.Done, j.Total},
		Request: j.Request, Result: j.Result, CancelRequested: j.CancelRequested && !j.Status.Terminal(),
		Created: j.Created.UTC(), Started: optTime(j.Started), Finished: optTime(j.Finished)}
	if len(out.Result) == 0 {
		out.Result = nil
	}
	if j.Error != "" {
		out.Error = &jobErrorJSON{Kind: j.ErrorKind, Message: j.Error}
	}
	for _, a := range arts {
		out.Artifacts = append(out.Artifacts, artifactJSON{Name: a.Name, ContentType: a.ContentType, Size: a.Size,
			URL: "/api/v1/jobs/" + j.ID + "/artifacts/" + a.Name})
	}
	return out
}

func (s *Server) jobWithArtifacts(ctx context.Context, j records.Job) (jobJSON, error) {
	var arts []records.ArtifactInfo
	if j.Status == records.StatusSucceeded {
		var err error
		if arts, err = s.jobs.svc.Artifacts(ctx, j.ID); err != nil {
			return jobJSON{}, err
		}
	}
	return toJobJSON(j, arts), nil
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request) {
	j, err := s.jobs.svc.Job(r.Context(), r.PathValue("id"))
	if err != nil {
		s.jobError(w, r, err)
		return
	}
	out, err := s.jobWithArtifacts(r.Context(), j)
	if err != nil {
		s.jobError(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, out)
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) {
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			s.writeError(w, r, errStatus(http.StatusBadRequest, "limit %q: want 1 to 1000", v))
			return
		}
		limit = n
	}
	jobs, err := s.jobs.svc.Jobs(r.Context(), limit)
	if err != nil {
		s.jobError(w, r, err)
		return
	}
	out := make([]jobJSON, 0, len(jobs))
	for _, j := range jobs {
		j.Request = nil // the list stays light; GET /api/v1/jobs/{id} has it
		out = append(out, toJobJSON(j, nil))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"jobs": out})
}

func (s *Server) getArtifact(w http.ResponseWriter, r *http.Request) {
	a, err := s.jobs.svc.Artifact(r.Context(), r.PathValue("id"), r.PathValue("name"))
	if err != nil {
		s.jobError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.ContentType)
	h.Set("Content-Length", strconv.Itoa(len(a.Data)))
	h.Set("X-Content-Type-Options", "nosniff")
	// Inline, so that the dashboard's links show charts and tables in
	// the browser; the types are never HTML (see jobrun's contentType)
	// and nosniff keeps browsers from guessing otherwise.
	h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": a.Name}))
	w.WriteHeader(http.StatusOK)
	w.Write(a.Data)
}

func (s *Server) cancelJob(w http.ResponseWriter, r *http.Request) {
	j, err := s.jobs.svc.Cancel(r.Context(), r.PathValue("id"))
	if err != nil {
		s.jobError(w, r, err)
		return
	}
	status := http.StatusOK
	if j.Status == records.StatusRunning {
		status = http.StatusAccepted // stopping: poll GET until it says canceled
	}
	s.writeJSON(w, status, toJobJSON(j, nil))
}

// dashboardJobs lists the newest jobs for the dashboard.
func (s *Server) dashboardJobs(ctx context.Context) ([]JobView, error) {
	jobs, err := s.jobs.svc.Jobs(ctx, 50)
	if err != nil {
		return nil, err
	}
	out := make([]JobView, 0, len(jobs))
	for _, j := range jobs {
		v := JobView{ID: j.ID, Kind: j.Kind, Status: string(j.Status), Done: j.Done, Total: j.Total,
			Error: j.Error, Created: j.Created, Finished: j.Finished, Result: summary(j.Result, 160)}
		v.Links = append(v.Links, ViewLink{Name: "job", URL: "/api/v1/jobs/" + j.ID})
		if j.Status == records.StatusSucceeded {
			arts, err := s.jobs.svc.Artifacts(ctx, j.ID)
			if err != nil {
				return nil, err
			}
			for _, a := range arts {
				v.Links = append(v.Links, ViewLink{Name: a.Name, URL: "/api/v1/jobs/" + j.ID + "/artifacts/" + a.Name})
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// summary shortens a result document to n bytes for a table cell.
func summary(b []byte, n int) string {
	s := string(b)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}

// The specs of --secret-env: NAME, a variable jobs may read as an API
// key and send to any allowed base URL, or NAME=URL, one they may send
// only to base URLs under URL (a name given several times with URLs may
// go to each).

// secretName is the variable's name of spec.
func secretName(spec string) string {
	name, _, _ := strings.Cut(spec, "=")
	return strings.TrimSpace(name)
}

// SecretValues returns the values of the environment variables specs
// name that are set and not empty: Options.Secrets.
func SecretValues(specs []string) []string {
	var out []string
	for _, sp := range specs {
		if v, ok := os.LookupEnv(secretName(sp)); ok && v != "" {
			out = append(out, v)
		}
	}
	return out
}

// SecretBaseURLs returns the bindings of specs (NAME=URL) as
// JobOptions.SecretBaseURLs; nil when none binds a URL.
func SecretBaseURLs(specs []string) map[string][]string {
	var out map[string][]string
	for _, sp := range specs {
		name, u, ok := strings.Cut(sp, "=")
		if !ok {
			continue
		}
		if out == nil {
			out = map[string][]string{}
		}
		out[strings.TrimSpace(name)] = append(out[strings.TrimSpace(name)], strings.TrimSpace(u))
	}
	return out
}

// EnvSecrets is a JobOptions.Secret that reads only the environment
// variables specs name, so that a job request naming another
// (api_key_env) gets nothing; nil for none.
func EnvSecrets(specs []string) func(string) (string, bool) {
	if len(specs) == 0 {
		return nil
	}
	names := make([]string, len(specs))
	for i, sp := range specs {
		names[i] = secretName(sp)
	}
	return func(name string) (string, bool) {
		if !slices.Contains(names, name) {
			return "", false
		}
		return os.LookupEnv(name)
	}
}

// FetchModels finds the proxy's text models by name, as the job
// commands do (here since it is the job layer's rule) (job.ModelFolder, with env's fetching): an embedder or NLI
// model published under its name without its weights, or a Hugging Face
// model id as them, is found in the hub's cache or fetched once into it,
// and its folder becomes the weights. Other values are left for
// Validate. Without an upstream there is no proxy and nothing to fetch.
func (o *LLMOptions) FetchModels(ctx context.Context, env job.Env) error {
	if o.Upstream == "" {
		return nil
	}
	for _, m := range []struct {
		field, name string
		dir         *string
		want        []hub.Want
	}{{"llm_weights", o.Embedder, &o.Weights, hub.BERTFiles}, {"llm_nli_weights", o.NLI, &o.NLIWeights, entail.Files(o.NLI)}} {
		if m.name == "" || (*m.dir != "" && !hub.IsRepoID(strings.TrimPrefix(*m.dir, job.HubPrefix))) {
			continue
		}
		d, err := job.ModelFolder(ctx, env, m.field, m.name, *m.dir, m.want)
		if err != nil {
			return err
		}
		if d != "" {
			*m.dir = d
		}
	}
	return nil
}
