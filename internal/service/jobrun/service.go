package jobrun

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/fields"
	"github.com/genlens/genlens/internal/hub"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/internal/tensor/par"
	"github.com/genlens/genlens/job"
)

// Config configures a Service.
type Config struct {
	// Store keeps jobs, artifacts, upload records and selections.
	Store records.Store
	// DataDir is the service's data directory; uploads live in its
	// "uploads" folder, which is created. Jobs read nothing else.
	DataDir string
	// Workers is the number of jobs run at once by this process [1].
	Workers int
	// MaxQueued bounds the jobs waiting in the store (of every replica):
	// Submit refuses more with ErrQueueFull [1000]. The bound is checked
	// before the insert, so replicas submitting at once may pass it by a
	// few.
	MaxQueued int
	// Replica names this process in ClaimedBy [a random id]. Two live
	// processes must never share one.
	Replica string
	// Exclusive says this process is the only one using Store (SQLite):
	// at Start every job still running was interrupted and is failed at
	// once. Otherwise (a shared Postgres) only jobs whose heartbeat is
	// older than Lease are.
	Exclusive bool
	// Lease is how long a running job may go without a heartbeat before
	// another replica declares it interrupted [30s]. Heartbeats are sent
	// every Heartbeat [1s], well inside it.
	Lease     time.Duration
	Heartbeat time.Duration
	// Poll is how often an idle worker looks for jobs queued through
	// another replica [1s]; jobs submitted here wake a worker at once.
	Poll time.Duration
	// AllowedBaseURLs are the outbound LLM API roots a job may call
	// (hallucination run --backend openai); a request naming any other
	// base URL is a field error. None: no outbound calls.
	AllowedBaseURLs []string
	// Secret returns a named secret (an API key) from the server's own
	// configuration; requests only name secrets. nil: none.
	Secret func(name string) (string, bool)
	// SecretBaseURLs binds secrets to the base URLs they may be sent
	// to: a request naming a secret listed here with a base URL outside
	// its list is refused at submission. A secret not listed may go to
	// any allowed base URL.
	SecretBaseURLs map[string][]string
	// Redact are texts never stored in a job's error (the values of the
	// secrets): an upstream that echoes its request's key puts it into
	// the error the job fails with, which any token holder reads.
	Redact []string
	// Weights is the FID Inception weights file (.pth) an Inception job
	// (features, stats, compare, is, select on folders of images) uses
	// when its request names none; "" means requests must upload theirs.
	// The service never downloads Inception's weights; a DINOv2 or CLIP
	// job's are uploaded, or fetched by name with Downloads.
	Weights string
	// ModelDirs are the directories of text models (an embedder's
	// config, tokenizer and weights) that entropy and sample jobs may
	// name in their weights field, by base name (or "server:" and it);
	// any other value is refused. None: jobs load no text model.
	ModelDirs []string
	// Downloads lets jobs fetch the published models they name ({embedder}
	// dinov2-vits14 or e5-small-v2 without weights, a Hugging Face model
	// id, org/name, in a text model's field) into this server's caches
	// (package hub), or use them from there. false: no job does, and
	// one that would is refused with NoDownloads (the transport names its
	// switch; "" for job.NoDownloads).
	Downloads   bool
	NoDownloads string
	// Models keeps the networks jobs load (Inception's weights) across
	// this service's jobs [a cache of its own, bounded by
	// job.DefaultModelCacheBytes]. Two services share one only when
	// given the same.
	Models *job.ModelCache
	// MaxRuntime bounds how long one job may run; a job that runs
	// longer fails. 0: no bound.
	MaxRuntime time.Duration
	// MaxUploadBytes bounds one upload [1 GiB].
	MaxUploadBytes int64
	// MaxArtifactBytes bounds one rendered artifact [512 MiB: the
	// features of 65,536 images at 2048 dimensions]. Artifacts are
	// rendered in memory and stored as one value, and Postgres holds at
	// most 1 GB in one; a larger artifact fails the job.
	MaxArtifactBytes int64
	// RetainJobs is how long a finished job (succeeded, failed or
	// canceled) and its artifacts are kept after it finished; queued
	// and running jobs are never deleted. 0: forever.
	RetainJobs time.Duration
	// RetainUploads is how long an upload is kept after its bytes were
	// last uploaded, once no job names it any more (see Store.DeleteUploads). 0:
	// forever. A sweep (see Sweep) runs at Start and then every tenth of
	// the shorter period, at most hourly.
	RetainUploads time.Duration
	// OnDelete is told how many records of a kind ("job" or "upload") a
	// sweep deleted, for a metric [nothing].
	OnDelete func(kind string, n int)
	// Logf logs events worth an operator's attention [log.Printf].
	Logf func(format string, args ...any)
	// Now is the clock [time.Now].
	Now func() time.Time
}

// Service runs jobs from a Store on a bounded pool of workers, stores
// uploads, and serves online selections. Create it with New, call Start,
// and Close when done.
type Service struct {
	cfg     Config
	store   records.Store
	uploads *os.Root
	fsys    fs.FS

	wake chan struct{}

	mu      sync.Mutex
	running map[string]context.CancelCauseFunc // jobs running in this process
	started bool
	stop    context.CancelFunc
	wg      sync.WaitGroup
	busy    atomic.Int64

	// outbound makes jobs' outbound calls: it follows a redirect only to
	// an allowed base URL.
	outbound *http.Client

	// run runs a prepared task; tests replace it to make a job panic.
	run func(ctx context.Context, t *task, env job.Env) (any, []job.Artifact, error)

	sel selections
}

// Errors of the cancel cause of a job's context.
var (
	errCanceledByRequest = errors.New("canceled by request")
	errShutdown          = errors.New("the server stopped while the job ran; submit it again")
	errLost              = errors.New("the job was taken from this worker (its heartbeat lapsed)")
	errTooLong           = errors.New("ran longer than the server allows")
)

// ErrQueueFull is returned by Submit when MaxQueued jobs wait already
// (HTTP 503: try again later).
var ErrQueueFull = errors.New("the job queue is full")

// New returns a Service; it creates DataDir/uploads if needed.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("jobrun: no Store")
	}
	if cfg.DataDir == "" {
		return nil, errors.New("jobrun: no data directory")
	}
	seen := map[string]string{}
	for _, d := range cfg.ModelDirs {
		st, err := os.Stat(d)
		if err != nil || !st.IsDir() {
			return nil, fmt.Errorf("jobrun: model directory %s: not a directory", d)
		}
		b := filepath.Base(d)
		if other, ok := seen[b]; ok {
			return nil, fmt.Errorf("jobrun: model directories %s and %s have the same name %q, by which jobs name them", other, d, b)
		}
		seen[b] = d
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.MaxQueued <= 0 {
		cfg.MaxQueued = 1000
	}
	if cfg.Models == nil {
		cfg.Models = job.NewModelCache(job.DefaultModelCacheBytes)
	}
	if cfg.Replica == "" {
		cfg.Replica = newID()[:12]
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = 1 << 30
	}
	if cfg.MaxArtifactBytes <= 0 {
		cfg.MaxArtifactBytes = 512 << 20
	}
	if cfg.Logf == nil {
		cfg.Logf = log.Printf
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RetainJobs < 0 || cfg.RetainUploads < 0 {
		return nil, errors.New("jobrun: negative retention period")
	}
	if cfg.OnDelete == nil {
		cfg.OnDelete = func(string, int) {}
	}
	dir := filepath.Join(cfg.DataDir, "uploads")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("jobrun: data directory: %w", err)
	}
	removeStaleTemps(dir, cfg.Logf)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("jobrun: data directory: %w", err)
	}
	s := &Service{
		cfg: cfg, store: cfg.Store, uploads: root, fsys: root.FS(),
		wake:    make(chan struct{}, cfg.Workers),
		running: map[string]context.CancelCauseFunc{},
	}
	s.run = func(ctx context.Context, t *task, env job.Env) (any, []job.Artifact, error) { return t.run(ctx, env) }
	s.outbound = outboundClient(cfg.AllowedBaseURLs)
	s.sel.init(s)
	return s, nil
}

// newID returns 32 random hex digits.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Service) now() time.Time { return s.cfg.Now().UTC() }

// Start fails the jobs a previous process left running (all of them when
// Config.Exclusive, else those whose heartbeat lapsed), then starts the
// workers and, for a shared store, the reaper of lapsed jobs. They run
// until Close.
func (s *Service) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("jobrun: started twice")
	}
	now := s.now()
	before := now.Add(-s.cfg.Lease)
	if s.cfg.Exclusive {
		before = now.Add(time.Nanosecond)
	}
	ids, err := s.store.FailStale(ctx, before, interruptedMsg, now)
	if err != nil {
		return fmt.Errorf("jobrun: failing interrupted jobs: %w", err)
	}
	for _, id := range ids {
		s.cfg.Logf("jobrun: job %s was interrupted by a restart; marked failed", id)
	}
	if s.cfg.RetainJobs > 0 || s.cfg.RetainUploads > 0 {
		if _, _, err := s.Sweep(ctx); err != nil {
			// Not fatal: the next sweep tries again.
			s.cfg.Logf("jobrun: retention sweep: %v", err)
		}
	}
	wctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	s.started = true
	if s.cfg.RetainJobs > 0 || s.cfg.RetainUploads > 0 {
		// The sweeper stops with Close or with ctx (the server's),
		// whichever comes first.
		sctx, stop := context.WithCancel(wctx)
		context.AfterFunc(ctx, stop)
		s.wg.Add(1)
		go s.sweeper(sctx)
	}
	for w := range s.cfg.Workers {
		s.wg.Add(1)
		go s.worker(wctx, fmt.Sprintf("%s/%d", s.cfg.Replica, w))
	}
	if !s.cfg.Exclusive {
		s.wg.Add(1)
		go s.reaper(wctx)
	}
	return nil
}

const interruptedMsg = "interrupted: the server running this job stopped (restart or crash) before it finished; submit it again"

// Close stops the workers: running jobs are cancelled and recorded as
// failed (the server stopped), queued ones stay queued for the next
// start. It waits for the workers to return.
func (s *Service) Close() error {
	s.mu.Lock()
	if s.stop != nil {
		s.stop()
	}
	for _, c := range s.running {
		c(errShutdown)
	}
	s.mu.Unlock()
	s.wg.Wait()
	return s.uploads.Close()
}

// Busy returns the number of jobs this process is running now.
func (s *Service) Busy() int { return int(s.busy.Load()) }

// QueueDepth returns the number of queued jobs in the Store (of every
// replica), for the queue-depth gauge.
func (s *Service) QueueDepth(ctx context.Context) (int, error) {
	return s.store.CountJobs(ctx, records.StatusQueued)
}

// Submit checks a request of a kind and stores it as a queued job: the
// request must decode strictly (no unknown fields) and validate, every
// upload it names must exist, and an outbound base URL must be allowed.
// Errors are *fault.FieldError (400), or wrap ErrUnknownKind (404).
func (s *Service) Submit(ctx context.Context, kind string, body []byte) (records.Job, error) {
	t, err := prepare(kind, body, s.prepEnv())
	if err != nil {
		return records.Job{}, err
	}
	if err := s.checkTask(ctx, t); err != nil {
		return records.Job{}, err
	}
	if n, err := s.store.CountJobs(ctx, records.StatusQueued); err != nil {
		return records.Job{}, fmt.Errorf("counting queued jobs: %w", err)
	} else if n >= s.cfg.MaxQueued {
		return records.Job{}, fmt.Errorf("%w: %d jobs wait; try again later", ErrQueueFull, n)
	}
	req, err := compactJSON(body)
	if err != nil {
		return records.Job{}, fault.Fieldf("body", "request body: %v", err)
	}
	j := records.Job{ID: newID(), Kind: kind, Request: req, Status: records.StatusQueued, Created: s.now()}
	if err := s.store.CreateJob(ctx, j); err != nil {
		return records.Job{}, fmt.Errorf("storing the job: %w", err)
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return j, nil
}

// prepEnv is what preparing a request needs from the service.
func (s *Service) prepEnv() prepEnv {
	return prepEnv{uploadsDir: filepath.Join(s.cfg.DataDir, "uploads"), weights: s.cfg.Weights, modelDirs: s.cfg.ModelDirs,
		downloads: s.cfg.Downloads, noDownloads: s.cfg.NoDownloads}
}

func compactJSON(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// checkTask checks what a request reaches outside itself: its uploads
// and its outbound URL.
func (s *Service) checkTask(ctx context.Context, t *task) error {
	for _, in := range t.inputs {
		if err := s.checkUpload(ctx, in.field, in.id); err != nil {
			return err
		}
	}
	for _, o := range t.outbound {
		if o.Secret != "" {
			if s.cfg.Secret == nil {
				return fault.Fieldf(o.SecretField, "{%s} %s: this server holds no secrets (its configuration lists none)", o.SecretField, o.Secret)
			}
			if _, ok := s.cfg.Secret(o.Secret); !ok {
				return fault.Fieldf(o.SecretField, "{%s} %s: not a secret this server holds", o.SecretField, o.Secret)
			}
			if bound := s.cfg.SecretBaseURLs[o.Secret]; len(bound) > 0 && !allowedURL(o.URL, bound) {
				return fault.Fieldf(o.Field, "{%s} %q: the secret {%s} %s may be sent only to %s", o.Field, o.URL, o.SecretField, o.Secret, strings.Join(bound, ", "))
			}
		}
		if allowedURL(o.URL, s.cfg.AllowedBaseURLs) {
			continue
		}
		if len(s.cfg.AllowedBaseURLs) == 0 {
			return fault.Fieldf(o.Field, "{%s} %q: this server allows no outbound LLM calls (its configuration lists no allowed base URL)", o.Field, o.URL)
		}
		return fault.Fieldf(o.Field, "{%s} %q is not among the server's allowed base URLs (%s)", o.Field, o.URL, strings.Join(s.cfg.AllowedBaseURLs, ", "))
	}
	return nil
}

// Job returns a stored job.
func (s *Service) Job(ctx context.Context, id string) (records.Job, error) {
	return s.store.GetJob(ctx, id)
}

// Jobs returns the newest jobs, up to limit.
func (s *Service) Jobs(ctx context.Context, limit int) ([]records.Job, error) {
	return s.store.ListJobs(ctx, limit)
}

// Artifacts lists a job's artifacts.
func (s *Service) Artifacts(ctx context.Context, id string) ([]records.ArtifactInfo, error) {
	return s.store.ListArtifacts(ctx, id)
}

// Artifact returns one artifact of a job.
func (s *Service) Artifact(ctx context.Context, id, name string) (records.Artifact, error) {
	return s.store.GetArtifact(ctx, id, name)
}

// Cancel cancels a job: a queued one at once, a running one by
// cancelling its context (here, or through the Store on the replica that
// runs it, within a heartbeat). It returns the job as it is afterwards.
func (s *Service) Cancel(ctx context.Context, id string) (records.Job, error) {
	j, err := s.store.CancelJob(ctx, id, "canceled by request before it started", s.now())
	if err != nil {
		return j, err
	}
	if j.Status == records.StatusRunning {
		s.mu.Lock()
		c := s.running[id]
		s.mu.Unlock()
		if c != nil {
			c(errCanceledByRequest)
		}
	}
	return j, nil
}

// worker claims and runs jobs until ctx is done.
func (s *Service) worker(ctx context.Context, name string) {
	defer s.wg.Done()
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	for {
		for ctx.Err() == nil {
			j, ok, err := s.store.ClaimJob(ctx, name, s.now())
			if err != nil {
				if ctx.Err() == nil {
					s.cfg.Logf("jobrun: %s: claiming a job: %v", name, err)
				}
				break
			}
			if !ok {
				break
			}
			s.execute(ctx, name, j)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-tick.C:
		}
	}
}

// reaper fails jobs whose worker stopped sending heartbeats, on every
// replica's behalf.
func (s *Service) reaper(ctx context.Context) {
	defer s.wg.Done()
	tick := time.NewTicker(s.cfg.Lease / 2)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := s.now()
		ids, err := s.store.FailStale(ctx, now.Add(-s.cfg.Lease), interruptedMsg, now)
		if err != nil && ctx.Err() == nil {
			s.cfg.Logf("jobrun: failing lapsed jobs: %v", err)
		}
		for _, id := range ids {
			s.cfg.Logf("jobrun: job %s lost its worker (no heartbeat for %v); marked failed", id, s.cfg.Lease)
		}
	}
}

// execute runs one claimed job to its end and records the outcome.
func (s *Service) execute(wctx context.Context, worker string, j records.Job) {
	s.busy.Add(1)
	defer s.busy.Add(-1)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	if s.cfg.MaxRuntime > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, s.cfg.MaxRuntime, errTooLong)
		defer stop()
	}
	s.mu.Lock()
	s.running[j.ID] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.running, j.ID)
		s.mu.Unlock()
	}()
	if wctx.Err() != nil {
		cancel(errShutdown)
	}

	// Progress is kept here and sent with the heartbeat, at most once a
	// Heartbeat: a job may report thousands of steps a second.
	var prog atomic.Uint64
	var warnMu sync.Mutex
	var warnings []string
	fsys := newJobFS(s.fsys)
	defer fsys.Close()
	env := job.Env{
		FS:       fsys,
		Progress: func(done, total int) { prog.Store(uint64(uint32(done))<<32 | uint64(uint32(total))) },
		Warn: func(msg string) {
			warnMu.Lock()
			warnings = append(warnings, s.hidePaths(fields.Plain(msg))) // fields by their names
			warnMu.Unlock()
		},
		Secret:     s.cfg.Secret,
		HTTPClient: s.outbound,
		Models:     s.cfg.Models,
	}
	if s.cfg.NoDownloads != "" {
		// The job's own refusals are of text models: imageWeights
		// refuses an image network's before.
		env.NoFetch = s.cfg.NoDownloads + "; " + textModelsInstead
	}
	if s.cfg.Downloads {
		env.Fetch = &hub.Options{}
	}
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		s.heartbeat(ctx, worker, j.ID, &prog, cancel)
	}()

	res, arts, err := s.runTask(ctx, j, env)
	cancel(nil) // stops the heartbeat (a cause set earlier is kept)
	<-hbDone

	if errors.Is(context.Cause(ctx), errLost) {
		return // FailStale failed it meanwhile: it is no longer ours to record
	}
	fctx, fcancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer fcancel()
	if p := prog.Load(); p != 0 {
		// The last progress, which the heartbeat may not have sent.
		s.store.Touch(fctx, j.ID, worker, int(int32(p>>32)), int(int32(p)), s.now())
	}
	o := s.outcome(ctx, j, res, err)
	o.Error = s.hidePaths(redact(o.Error, s.cfg.Redact))
	if o.Status == records.StatusSucceeded {
		if aerr := s.storeArtifacts(fctx, j.ID, arts, warnings); aerr != nil {
			o = records.Outcome{Status: records.StatusFailed, ErrorKind: fault.KindInternal.String(), Error: "storing the artifacts: " + aerr.Error()}
		}
	}
	// A store that fails for a moment (a Postgres failover) must not
	// leave the job running forever: try a few times.
	for attempt := 0; ; attempt++ {
		err := s.store.FinishJob(fctx, j.ID, worker, o, s.now())
		if err == nil || errors.Is(err, records.ErrNotClaimed) || errors.Is(err, records.ErrNotFound) || attempt == 4 || fctx.Err() != nil {
			if err != nil {
				s.cfg.Logf("jobrun: job %s: recording its end (%s): %v", j.ID, o.Status, err)
			}
			break
		}
		time.Sleep(time.Duration(200<<attempt) * time.Millisecond)
	}
}

// runTask decodes the stored request again and runs it, turning a panic
// into an error.
func (s *Service) runTask(ctx context.Context, j records.Job, env job.Env) (res any, arts []job.Artifact, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &par.PanicError{Index: -1, Value: r, Stack: debug.Stack()}
		}
	}()
	t, err := prepare(j.Kind, j.Request, s.prepEnv())
	if err != nil {
		return nil, nil, err
	}
	// Checked again: the job may run after a restart under another
	// configuration (a narrower allow-list), or on another replica.
	if err := s.checkTask(ctx, t); err != nil {
		return nil, nil, err
	}
	return s.run(ctx, t, env)
}

// heartbeat sends progress and heartbeats until ctx ends, and cancels the
// job when the Store says a cancel was requested (a DELETE on another
// replica) or that the job is no longer this worker's.
func (s *Service) heartbeat(ctx context.Context, worker, id string, prog *atomic.Uint64, cancel context.CancelCauseFunc) {
	tick := time.NewTicker(s.cfg.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p := prog.Load()
		tctx, tcancel := context.WithTimeout(ctx, s.cfg.Lease/2)
		stop, err := s.store.Touch(tctx, id, worker, int(int32(p>>32)), int(int32(p)), s.now())
		tcancel()
		switch {
		case errors.Is(err, records.ErrNotClaimed), errors.Is(err, records.ErrNotFound):
			cancel(errLost)
			return
		case err != nil:
			if ctx.Err() == nil {
				s.cfg.Logf("jobrun: job %s: heartbeat: %v", id, err)
			}
		case stop:
			cancel(errCanceledByRequest)
			return
		}
	}
}

// hidePaths replaces the server's own paths in a job's error or warning:
// a model directory it allows (an error in its files names them) by the
// name a request gives it, "server:" and its base name; the Inception
// weights file by "server:" and its base name; the data directory by
// "<data>". A job's reader chose none of them and learns nothing of the
// server's layout from them.
func (s *Service) hidePaths(msg string) string {
	if msg == "" {
		return msg
	}
	type sub struct{ from, to string }
	var subs []sub
	add := func(path, to string) {
		if path == "" {
			return
		}
		subs = append(subs, sub{path, to}, sub{filepath.Clean(path), to})
		if abs, err := filepath.Abs(path); err == nil {
			subs = append(subs, sub{abs, to})
		}
	}
	for _, d := range s.cfg.ModelDirs {
		add(d, "server:"+filepath.Base(filepath.Clean(d)))
	}
	if s.cfg.Weights != "" {
		add(s.cfg.Weights, "server:"+filepath.Base(s.cfg.Weights))
	}
	add(s.cfg.DataDir, "<data>")
	if s.cfg.Downloads {
		// Models fetched by name live in the server's user's cache.
		if d, err := hub.HFCache(); err == nil {
			add(d, "<hub cache>")
		}
		for _, m := range hub.Models {
			if p, err := m.Where(); err == nil {
				add(filepath.Dir(p), "<"+string(m.Cache)+" cache>")
			}
		}
	}
	slices.SortStableFunc(subs, func(a, b sub) int { return len(b.from) - len(a.from) })
	for _, x := range subs {
		if x.from != "" && x.from != "." && x.from != string(filepath.Separator) {
			msg = strings.ReplaceAll(msg, x.from, x.to)
		}
	}
	return msg
}

// redact replaces every non-empty text of secrets in s by "[redacted]",
// the longest first (a secret that contains another is not left half
// shown).
func redact(s string, secrets []string) string {
	if s == "" || len(secrets) == 0 {
		return s
	}
	sorted := slices.Clone(secrets)
	slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	for _, v := range sorted {
		if v != "" {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}

// outcome classifies how a job ended.
func (s *Service) outcome(ctx context.Context, j records.Job, res any, err error) records.Outcome {
	if cause := context.Cause(ctx); cause != nil && cause != context.Canceled && err != nil {
		// Cancelled from outside: by request or by shutdown, whatever
		// error the job returned on its way out.
		if errors.Is(cause, errCanceledByRequest) {
			return records.Outcome{Status: records.StatusCanceled, ErrorKind: fault.KindCanceled.String(), Error: "canceled by request while running"}
		}
		if errors.Is(cause, errTooLong) {
			return records.Outcome{Status: records.StatusFailed, ErrorKind: fault.KindCanceled.String(), Error: fmt.Sprintf("stopped: %v (%v)", cause, s.cfg.MaxRuntime)}
		}
		return records.Outcome{Status: records.StatusFailed, ErrorKind: fault.KindInternal.String(), Error: cause.Error()}
	}
	if err != nil {
		k := fault.Classify(err)
		var pe *par.PanicError
		if errors.As(err, &pe) {
			s.cfg.Logf("jobrun: job %s (%s) panicked: %v\n%s", j.ID, j.Kind, pe.Value, pe.Stack)
		}
		st := records.StatusFailed
		if k == fault.KindCanceled {
			st = records.StatusCanceled
		}
		return records.Outcome{Status: st, ErrorKind: k.String(), Error: oneLine(err.Error())}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return records.Outcome{Status: records.StatusFailed, ErrorKind: fault.KindInternal.String(), Error: "encoding the result: " + err.Error()}
	}
	return records.Outcome{Status: records.StatusSucceeded, Result: b}
}

// oneLine keeps the first line of a message.
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// storeArtifacts renders every artifact and stores it, with the job's
// warnings as warnings.txt when there are any.
func (s *Service) storeArtifacts(ctx context.Context, id string, arts []job.Artifact, warnings []string) error {
	if len(warnings) > 0 {
		arts = append(arts, job.Artifact{Name: "warnings.txt", Write: func(w io.Writer) error {
			_, err := io.WriteString(w, strings.Join(warnings, "\n")+"\n")
			return err
		}})
	}
	for _, a := range arts {
		if !validArtifactName(a.Name) {
			return fmt.Errorf("artifact name %q is not a plain file name", a.Name)
		}
		var buf bytes.Buffer
		lw := &limitWriter{w: &buf, n: s.cfg.MaxArtifactBytes}
		if err := a.Write(lw); err != nil {
			return fmt.Errorf("%s: %w", a.Name, err)
		}
		if err := s.store.PutArtifact(ctx, records.Artifact{JobID: id, Name: a.Name, ContentType: contentType(a.Name), Data: buf.Bytes()}); err != nil {
			return fmt.Errorf("%s: %w", a.Name, err)
		}
	}
	return nil
}

// limitWriter fails once more than n bytes are written.
type limitWriter struct {
	w io.Writer
	n int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, fmt.Errorf("larger than the artifact limit")
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}
