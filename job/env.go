package job

import (
	"io/fs"
	"net/http"
	"os"
	"path"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/hub"
)

// Env is what a job needs from the transport that runs it.
type Env struct {
	// FS holds the inputs a request names. nil means the host's files
	// (dataio.HostFS), as the command line uses.
	FS fs.FS
	// Progress, when not nil, is called as work advances, with done out
	// of total steps of the current stage. It may be called from several
	// goroutines, but never concurrently.
	Progress func(done, total int)
	// Meter, when not nil, is told of work counted in other units than
	// Progress's steps (the completion tokens of sample), as it is done:
	// delta more of the unit called name. Like Progress, it is never
	// called concurrently.
	Meter func(name string, delta int64)
	// Warn, when not nil, receives warnings: results that are valid but
	// that a user should look at twice (unequal sample counts, an
	// estimate within noise of zero).
	Warn func(msg string)
	// Secret returns the value of a named secret (an API key); nil means
	// none are available. The command line reads the environment.
	Secret func(name string) (string, bool)
	// HTTPClient, when not nil, makes the outbound calls of a job (the
	// LLM API of hallucination run), so that a service can police them
	// (redirects, addresses); nil means the job's own client.
	HTTPClient *http.Client
	// Download, when not nil, is told of the one-time download of the
	// Inception weights as it advances: bytes received of total (-1 when
	// unknown). Jobs find (or download) the weights themselves; only the
	// command line downloads, the service's jobs name a file.
	Download func(done, total int64)
	// Fetch, when not nil, lets the job download the published models a
	// request names ({embedder} dinov2-vits14 or e5-small-v2 without
	// {weights}, a Hugging Face model id for a folder) into the caches of
	// torch hub, clip.load and the Hugging Face hub (package hub), with
	// its Progress told as they arrive. nil fetches nothing by name, not
	// even from those caches: a job needing a published model is refused
	// with NoFetch (the reason, "" for NoDownloads). The command line
	// fetches; the service only when its operator allows.
	Fetch   *hub.Options
	NoFetch string
	// Models keeps loaded networks (Inception's weights) across the jobs
	// of its owner, a process or a service; nil loads them for each job.
	Models *ModelCache
}

// CLIEnv returns the Env of the command line: host files, secrets from the
// environment, models fetched by name; progress and warnings as given.
func CLIEnv(progress func(done, total int), warn func(string)) Env {
	return Env{FS: dataio.HostFS, Progress: progress, Warn: warn, Secret: os.LookupEnv, Fetch: &hub.Options{}}
}

// InputFS returns the file system of the inputs. A name is cleaned before
// it reaches e.FS: a request names a folder as a user types it, "real/"
// or "./real", which the fs.FS contract (fs.ValidPath) refuses; the
// host's files (dataio.HostFS) take any path as it is.
func (e Env) InputFS() fs.FS {
	if e.FS == nil || e.FS == dataio.HostFS {
		return dataio.HostFS
	}
	if _, ok := e.FS.(cleanFS); ok {
		return e.FS
	}
	return cleanFS{e.FS}
}

// cleanFS is a file system whose names are cleaned (path.Clean) when
// they are not valid as given but are once cleaned; rooted names and
// names with ".." stay as they are, refused by the file system under it.
type cleanFS struct{ fsys fs.FS }

func cleanName(name string) string {
	if name == "" || fs.ValidPath(name) {
		return name
	}
	if c := path.Clean(name); fs.ValidPath(c) {
		return c
	}
	return name
}

func (c cleanFS) Open(name string) (fs.File, error) { return c.fsys.Open(cleanName(name)) }

func (c cleanFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(c.fsys, cleanName(name)) }

func (c cleanFS) ReadDir(name string) ([]fs.DirEntry, error) {
	return fs.ReadDir(c.fsys, cleanName(name))
}

func (c cleanFS) ReadFile(name string) ([]byte, error) { return fs.ReadFile(c.fsys, cleanName(name)) }

// ReportProgress calls Progress, if set.
func (e Env) ReportProgress(done, total int) {
	if e.Progress != nil {
		e.Progress(done, total)
	}
}

// AddMeter calls Meter, if set.
func (e Env) AddMeter(name string, delta int64) {
	if e.Meter != nil {
		e.Meter(name, delta)
	}
}

// Warning calls Warn, if set.
func (e Env) Warning(msg string) {
	if e.Warn != nil {
		e.Warn(msg)
	}
}

// LookupSecret calls Secret; no secret when it is not set.
func (e Env) LookupSecret(name string) (string, bool) {
	if e.Secret == nil {
		return "", false
	}
	return e.Secret(name)
}
