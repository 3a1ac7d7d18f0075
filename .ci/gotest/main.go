// Command gotest runs `go test -json` with the arguments given (the
// README's `go test ./...`, say) and prints what `go test` prints without
// -v (a line per package; the output of failing tests), then one line
// naming the tests that skipped and why: those that found no shared data,
// Postgres, Chromium or Node, which a plain `go test ./...` passes over
// in silence. It exits with go test's status. Without a -timeout flag it
// gives each package 25 minutes rather than go test's 10.
//
// It lives under .ci, which `./...` does not match, and runs with
// `go run ./.ci/gotest ./...`.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// event is one line of `go test -json` (see `go doc test2json`).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

func main() {
	args := []string{"test", "-json"}
	if !slices.ContainsFunc(os.Args[1:], func(a string) bool { return strings.HasPrefix(a, "-timeout") || strings.HasPrefix(a, "--timeout") }) {
		// The largest packages (the command line's end-to-end tests) run
		// for minutes; on a loaded CI machine they can pass go test's
		// default limit of 10 minutes a package.
		args = append(args, "-timeout=25m")
	}
	cmd := exec.Command("go", append(args, os.Args[1:]...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gotest:", err)
		os.Exit(1)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "gotest:", err)
		os.Exit(1)
	}
	s := summarize(out, os.Stdout)
	err = cmd.Wait()
	fmt.Println(s.skipLine())
	if err != nil || s.failed {
		os.Exit(1)
	}
}

// summary is what summarize gathers.
type summary struct {
	skips  map[string][]string // package -> "TestX: reason"
	failed bool
}

// summarize reads the events of r, writes the lines go test prints
// without -v to w, and returns the skips.
func summarize(r io.Reader, w io.Writer) summary {
	s := summary{skips: map[string][]string{}}
	type key struct{ pkg, test string }
	output := map[key][]string{} // the output of a test (or package) so far
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil {
			fmt.Fprintln(w, string(line)) // not an event: build errors and the like
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "output":
			output[k] = append(output[k], e.Output)
			if e.Test == "" && isPackageLine(e.Output) {
				fmt.Fprint(w, e.Output)
			}
		case "skip":
			if e.Test != "" {
				s.skips[e.Package] = append(s.skips[e.Package], e.Test+": "+reason(output[k]))
			}
			delete(output, k)
		case "fail":
			s.failed = true
			if e.Test != "" {
				for _, o := range output[k] {
					if !strings.HasPrefix(o, "=== ") {
						fmt.Fprint(w, o)
					}
				}
			} else if e.Test == "" {
				// A package that failed outside its tests (a panic, a
				// build failure): its own output.
				for _, o := range output[k] {
					if !isPackageLine(o) {
						fmt.Fprint(w, o)
					}
				}
			}
			delete(output, k)
		case "pass":
			delete(output, k)
		}
	}
	return s
}

// isPackageLine reports whether a line of package output is the one go
// test prints per package without -v.
func isPackageLine(o string) bool {
	for _, p := range []string{"ok  \t", "FAIL\t", "?   \t", "--- FAIL", "FAIL\n", "PASS\n"} {
		if strings.HasPrefix(o, p) {
			return p != "PASS\n" && p != "FAIL\n" && p != "--- FAIL"
		}
	}
	return false
}

// reason is the message a test skipped with: its last line of output
// that is not the "--- SKIP" line, without the file:line prefix.
func reason(out []string) string {
	for i := len(out) - 1; i >= 0; i-- {
		o := strings.TrimSpace(out[i])
		if o == "" || strings.HasPrefix(o, "--- SKIP") || strings.HasPrefix(o, "=== ") {
			continue
		}
		if _, msg, ok := strings.Cut(o, ": "); ok && strings.Contains(o[:strings.Index(o, ": ")], ".go:") {
			o = msg
		}
		return o
	}
	return "no reason given"
}

// skipLine is one line naming every package with skipped tests, the
// number of tests and their distinct reasons.
func (s summary) skipLine() string {
	if len(s.skips) == 0 {
		return "skipped: none"
	}
	pkgs := make([]string, 0, len(s.skips))
	for p := range s.skips {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	var parts []string
	for _, p := range pkgs {
		var reasons []string
		for _, t := range s.skips[p] {
			_, r, _ := strings.Cut(t, ": ")
			if len(r) > 80 {
				r = r[:77] + "..."
			}
			if !slices.Contains(reasons, r) {
				reasons = append(reasons, r)
			}
		}
		parts = append(parts, fmt.Sprintf("%s (%d: %s)", strings.TrimPrefix(p, "github.com/genlens/genlens/"), len(s.skips[p]), strings.Join(reasons, "; ")))
	}
	return "skipped: " + strings.Join(parts, ", ")
}
