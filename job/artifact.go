package job

import "io"

// Artifact is one file a job can produce beside its JSON result: a CSV
// table, a PNG chart, an NPY array. Write renders it from the result, so
// the command line writes it under --out (atomically) and the service
// stores it; nothing is computed twice.
type Artifact struct {
	Name  string // file name, e.g. "regret.png"
	Write func(w io.Writer) error
}
