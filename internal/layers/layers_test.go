package layers

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/genlens/genlens/"

// group names the layer of a package of the module (without the module
// prefix), from the top: the command line, the HTTP server, the services
// beside it, the job layer (and the demo, which runs jobs), the store,
// and the method and foundation packages under all of them.
func group(p string) string {
	switch {
	case strings.HasPrefix(p, "cmd/"):
		return "cmd"
	case p == "server":
		return "server"
	case slices.Contains([]string{"jobrun", "llmproxy", "monitorsvc", "statsvc"}, p):
		return "service"
	case p == "job" || strings.HasPrefix(p, "job/") || p == "demo":
		return "job"
	case p == "store":
		return "store"
	}
	return "method"
}

// mayImport lists the groups each group may import besides its own. An
// arrow goes down only; the store and the job layer do not know each
// other (the records both use live in package records, a method-layer
// leaf); the services take the store as interfaces.
var mayImport = map[string][]string{
	"cmd":     {"server", "service", "job", "store", "method"},
	"server":  {"service", "job", "store", "method"},
	"service": {"job", "method"},
	"job":     {"method"},
	"store":   {"method"},
	"method":  {},
}

// never lists imports forbidden inside a group, direct or not: the
// image pipeline knows no network and the networks do not know each
// other; the leaves that everything imports import nothing of the
// module that could import them back.
var never = []struct{ pkg, dep, why string }{
	{"features", "inception", "the pipeline knows no network"},
	{"features", "vit", "the pipeline knows no network"},
	{"vit", "inception", "the networks share their image helpers through features and resample"},
	{"inception", "vit", "the networks share their image helpers through features and resample"},
	{"records", "", "records is a leaf: the store and the services both import it"},
	{"fault", "dataio", "fault is the bottom error package"},
	{"llm", "uncertainty", "llm talks to endpoints; scoring is uncertainty's"},
}

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func list(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", "github.com/genlens/genlens/...")
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	var ps []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if len(ps) < 20 {
		t.Fatalf("go list found %d packages", len(ps))
	}
	return ps
}

func TestImportsGoDown(t *testing.T) {
	for _, p := range list(t) {
		from := strings.TrimPrefix(p.ImportPath, module)
		g := group(from)
		for _, imp := range p.Imports {
			to, ok := strings.CutPrefix(imp, module)
			if !ok {
				if g != "cmd" && (strings.HasPrefix(imp, "github.com/spf13/")) {
					t.Errorf("%s imports %s: only the command line parses flags", from, imp)
				}
				continue
			}
			h := group(to)
			if h != g && !slices.Contains(mayImport[g], h) {
				t.Errorf("%s (%s layer) imports %s (%s layer)", from, g, to, h)
			}
		}
	}
}

func TestNeverDepends(t *testing.T) {
	deps := map[string][]string{}
	for _, p := range list(t) {
		deps[strings.TrimPrefix(p.ImportPath, module)] = p.Deps
	}
	for _, r := range never {
		ds, ok := deps[r.pkg]
		if !ok {
			t.Errorf("package %s is gone: update the rule and ARCHITECTURE.md", r.pkg)
			continue
		}
		for _, d := range ds {
			d, ok := strings.CutPrefix(d, module)
			if ok && (d == r.dep || r.dep == "") {
				t.Errorf("%s depends on %s: %s", r.pkg, d, r.why)
			}
		}
	}
}

// The rules must bite: a made-up import across layers is caught.
func TestRulesBite(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"job", "jobrun", false},
		{"store", "job", false},
		{"job", "store", false},
		{"statsvc", "store", false},
		{"frechet", "job/imagejob", false},
		{"server", "store", true},
		{"cmd/genlens", "server", true},
		{"jobrun", "job", true},
		{"kernel", "linalg", true},
	} {
		g, h := group(c.from), group(c.to)
		if got := g == h || slices.Contains(mayImport[g], h); got != c.ok {
			t.Errorf("%s → %s allowed %v, want %v", c.from, c.to, got, c.ok)
		}
	}
}

// jobFiles lists the files of server that serve the job API (and its
// options): only they may import the job layer, so that routes, auth,
// metrics, the dashboard and the monitors stand without it.
var jobFiles = map[string]bool{"jobs.go": true}

func TestServerNeedsNoJobOutsideItsJobAPI(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", module+"server").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) < 5 {
		t.Fatalf("server's files: %v, %v", files, err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		name := filepath.Base(f)
		if strings.HasSuffix(name, "_test.go") || jobFiles[name] {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if inJobLayer(p) {
				t.Errorf("server/%s imports %s: only the job API (%v) may import the job layer", name, p, slices.Sorted(maps.Keys(jobFiles)))
			}
		}
	}
}

// inJobLayer reports whether the import path p is a package of the job
// layer (job, job/...; not jobrun, a service).
func inJobLayer(p string) bool {
	rest, ok := strings.CutPrefix(p, module)
	return ok && (rest == "job" || strings.HasPrefix(rest, "job/"))
}

func TestInJobLayer(t *testing.T) {
	for p, want := range map[string]bool{module + "job": true, module + "job/msejob": true, module + "jobrun": false, module + "monitorsvc": false} {
		if inJobLayer(p) != want {
			t.Errorf("inJobLayer(%s) = %v", p, !want)
		}
	}
}

// Sizes: a package over 4,000 lines of non-test code holds more than one
// concept, and the command line stays a thin transport over the jobs.
func TestPackageSizes(t *testing.T) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles", "github.com/genlens/genlens/...")
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath, Dir string
			GoFiles         []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		lines := 0
		for _, f := range p.GoFiles {
			b, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			lines += strings.Count(string(b), "\n")
		}
		name := strings.TrimPrefix(p.ImportPath, module)
		limit := 4000
		if name == "cmd/genlens" {
			limit = 2500
		}
		if lines >= limit {
			t.Errorf("%s: %d lines of non-test code, want fewer than %d", name, lines, limit)
		}
	}
}
