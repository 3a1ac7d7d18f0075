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

// layers states the layers as path prefixes of the module, from the top;
// the first prefix a package's path starts with names its layer (a prefix
// ending in "/" takes the folder's packages, one without it also the
// package of that exact path). More specific prefixes come first: the
// leaves under a folder of a higher layer (the records both the store and
// the services read, the demo's data generators that tests and examples
// of the methods use) belong to the bottom layer.
var layers = []struct{ prefix, layer string }{
	{"cmd/", "cmd"},
	{"internal/service/server", "server"},
	{"internal/service/", "service"},
	{"internal/demo/synth", "method"},
	{"internal/demo/imagesynth", "method"},
	{"internal/demo", "job"},
	{"internal/testkit/msejobtest", "job"},
	{"job", "job"},
	{"internal/store/records", "method"},
	{"internal/store", "store"},
	{"", "method"},
}

// group names the layer of a package of the module (without the module
// prefix).
func group(p string) string {
	for _, l := range layers {
		if l.prefix == "" || p == strings.TrimSuffix(l.prefix, "/") || strings.HasPrefix(p, strings.TrimSuffix(l.prefix, "/")+"/") {
			return l.layer
		}
	}
	return "method"
}

// mayImport lists the groups each group may import besides its own. An
// arrow goes down only; the store and the job layer do not know each
// other (the records both use live in internal/store/records, a leaf);
// the services take the store as interfaces.
var mayImport = map[string][]string{
	"cmd":     {"server", "service", "job", "store", "method"},
	"server":  {"service", "job", "store", "method"},
	"service": {"job", "method"},
	"job":     {"method"},
	"store":   {"method"},
	"method":  {},
}

// never lists imports forbidden, direct or not, as path prefixes (see
// layers): the image pipeline knows no network and the networks do not
// know each other; the leaves that everything imports import nothing of
// the module that could import them back; the proxy stands on the method
// packages, not on a command, and draws no chart.
var never = []struct{ pkg, dep, why string }{
	{"network/features", "network/inception", "the pipeline knows no network"},
	{"network/features", "network/vit", "the pipeline knows no network"},
	{"network/vit", "network/inception", "the networks share their image helpers through features and resample"},
	{"network/inception", "network/vit", "the networks share their image helpers through features and resample"},
	{"internal/store/records", "", "records is a leaf: the store and the services both import it"},
	{"fault", "dataio", "fault is the bottom error package"},
	{"llm", "metric/", "llm talks to endpoints; scoring is the metric packages'"},
	{"metric/", "job/", "the methods know no command"},
	{"network/", "job/", "the networks know no command"},
	{"network/", "metric/", "a network computes features; what they measure is the metric packages'"},
	{"internal/service/llmproxy", "job/", "the proxy stands on the method packages, not on a command"},
	{"internal/service/llmproxy", "internal/report/", "the proxy draws no chart"},
}

// under reports whether the package path p is under prefix (see layers).
func under(p, prefix string) bool {
	if prefix == "" {
		return true
	}
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(p, prefix)
	}
	return p == prefix || strings.HasPrefix(p, prefix+"/")
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
		found := false
		for pkg, ds := range deps {
			if !under(pkg, r.pkg) {
				continue
			}
			found = true
			for _, d := range ds {
				d, ok := strings.CutPrefix(d, module)
				if ok && under(d, r.dep) && !under(d, r.pkg) {
					t.Errorf("%s depends on %s: %s", pkg, d, r.why)
				}
			}
		}
		if !found {
			t.Errorf("no package under %s: update the rule and ARCHITECTURE.md", r.pkg)
		}
	}
}

// The rules must bite: a made-up import across layers is caught.
func TestRulesBite(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"job", "internal/service/jobrun", false},
		{"internal/store", "job", false},
		{"job", "internal/store", false},
		{"internal/demo", "internal/store", false},
		{"internal/service/statsvc", "internal/store", false},
		{"metric/frechet", "job/imagejob", false},
		{"metric/kscore", "internal/demo", false},
		{"internal/service/jobrun", "internal/service/server", false},
		{"internal/service/server", "internal/store", true},
		{"internal/service/jobrun", "internal/store/records", true},
		{"internal/store", "internal/store/records", true},
		{"metric/kscore", "internal/demo/synth", true},
		{"cmd/genlens", "internal/service/server", true},
		{"internal/service/jobrun", "job", true},
		{"metric/kernel", "internal/tensor/linalg", true},
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
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", module+"internal/service/server").Output()
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
	for p, want := range map[string]bool{module + "job": true, module + "job/msejob": true, module + "internal/service/jobrun": false, module + "internal/service/monitorsvc": false} {
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
