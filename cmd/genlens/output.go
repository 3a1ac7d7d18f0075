package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"genlens/linalg"
)

// num is a float64 that encodes NaN and ±Inf as JSON null (an undefined
// estimate, e.g. a variance from one model), since JSON has no NaN.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n) + 0 // -0 (e.g. minus a zero entropy) prints as 0
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

func nums(v []float64) []num {
	out := make([]num, len(v))
	for i, x := range v {
		out[i] = num(x)
	}
	return out
}

// fmtNum formats a value for the human-readable tables.
func fmtNum(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v+0, 'g', 6, 64)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// prepareOut creates the --out directory. It never removes anything the
// user has there; files genlens writes are replaced atomically.
func prepareOut(dir string) error {
	if dir == "" {
		return nil
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return badUsage("--out %s is a file; give a directory (it is created if missing)", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out %s: %w", dir, err)
	}
	return nil
}

func outPath(dir, name string) string { return filepath.Join(dir, name) }

// guardOut refuses, before any work is done, an --out directory where one
// of the files a command writes (names) is one of the user's inputs (the
// input would be replaced by an artifact), or that is itself an input
// folder (of PNG images, whose set the artifacts would change). Inputs
// that do not exist cannot collide. With dir == "" nothing is written and
// nothing is checked.
func guardOut(dir string, names []string, inputs ...string) error {
	if dir == "" {
		return nil
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return badUsage("--out %s is a file; give a directory (it is created if missing)", dir)
	}
	if in := sameFileAs(dir, inputs...); in != "" {
		return badUsage("--out %s is the input %s; write the artifacts elsewhere", dir, in)
	}
	for _, n := range names {
		if in := sameFileAs(outPath(dir, n), inputs...); in != "" {
			return badUsage("--out %s: writing %s would overwrite the input %s", dir, n, in)
		}
	}
	return nil
}

// sameFileAs returns the first of inputs that names the existing file
// path (through links and different spellings of the path), or "".
func sameFileAs(path string, inputs ...string) string {
	sp, err := os.Stat(path)
	if err != nil {
		return ""
	}
	for _, in := range inputs {
		if in == "" {
			continue
		}
		if si, err := os.Stat(in); err == nil && os.SameFile(sp, si) {
			return in
		}
	}
	return ""
}

// parallelTasks readies BLAS for work that runs tasks (simulation trials,
// independent fits) on several goroutines at once: with OpenBLAS each small
// product would otherwise also spread over every core, and its threads
// spin against the goroutines (4x slower seen on 2 cores). It returns the
// function that restores the previous setting.
func parallelTasks(tasks int) (restore func()) {
	if tasks < 2 || runtime.GOMAXPROCS(0) < 2 {
		return func() {}
	}
	prev := linalg.SetThreads(1)
	return func() { linalg.SetThreads(prev) }
}

// progress returns a tick function drawing a bar on stderr when stderr is
// a terminal, and a no-op otherwise (CI logs and pipes stay clean). extra
// options add to the bar's look (features shows images/s).
func progress(stderr io.Writer, total int, what string, extra ...progressbar.Option) (tick func(), done func()) {
	f, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || total < 2 {
		return func() {}, func() {}
	}
	bar := progressbar.NewOptions(total, append([]progressbar.Option{
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
	}, extra...)...)
	return func() { _ = bar.Add(1) }, func() { _ = bar.Finish() }
}
