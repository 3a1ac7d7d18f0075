package job

import (
	"io/fs"
	"net/http"
	"os"

	"genlens/dataio"
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
}

// CLIEnv returns the Env of the command line: host files, secrets from the
// environment; progress and warnings as given.
func CLIEnv(progress func(done, total int), warn func(string)) Env {
	return Env{FS: dataio.HostFS, Progress: progress, Warn: warn, Secret: os.LookupEnv}
}

func (e Env) fsys() fs.FS {
	if e.FS == nil {
		return dataio.HostFS
	}
	return e.FS
}

func (e Env) progress(done, total int) {
	if e.Progress != nil {
		e.Progress(done, total)
	}
}

func (e Env) meter(name string, delta int64) {
	if e.Meter != nil {
		e.Meter(name, delta)
	}
}

func (e Env) warn(msg string) {
	if e.Warn != nil {
		e.Warn(msg)
	}
}

func (e Env) secret(name string) (string, bool) {
	if e.Secret == nil {
		return "", false
	}
	return e.Secret(name)
}
