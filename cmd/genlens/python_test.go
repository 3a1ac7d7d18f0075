// The Python package of genlens (python/ at the repository's root): this
// test installs it as a user would, offline into a bare virtual
// environment, and runs its own tests and the runnable blocks of
// docs/python.md against the binary built from this checkout.

package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/internal/testkit/shareddata"
)

// pythonDir is the Python package's directory.
var pythonDir = filepath.Join("..", "..", "python")

// pythonCandidates are the Pythons tried: $GENLENS_PYTHON, python3 on
// PATH (pyenv's, say), and Debian's /usr/bin/python3.
func pythonCandidates() []string {
	var out []string
	for _, p := range []string{os.Getenv("GENLENS_PYTHON"), "python3", "/usr/bin/python3"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil && !slices.Contains(out, path) {
			out = append(out, path)
		}
	}
	return out
}

// findPython returns the first candidate that imports every module of
// mods, or "" with the candidates tried.
func findPython(mods ...string) (string, []string) {
	tried := pythonCandidates()
	for _, path := range tried {
		if exec.Command(path, "-c", "import "+strings.Join(mods, ", ")).Run() == nil {
			return path, tried
		}
	}
	return "", tried
}

// pyEnv is the environment of the Python processes: pip quiet and
// offline, no bytecode written beside the sources.
func pyEnv(extra ...string) []string {
	env := append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1", "PIP_ROOT_USER_ACTION=ignore",
		"PIP_NO_INDEX=1", "PYTHONDONTWRITEBYTECODE=1")
	return append(env, extra...)
}

func runPy(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// sourceFiles lists the files under dir, but Python's bytecode caches.
func sourceFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "__pycache__" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The package installs with pip from the checkout into a fresh virtual
// environment without network, setuptools or wheel, leaving the checkout
// as it was; its tests pass there without NumPy, then with a Python that
// has NumPy (and pandas) against the same installed copy.
func TestPythonPackage(t *testing.T) {
	bin := serveBinary(t)
	tests, err := filepath.Abs(filepath.Join(pythonDir, "tests"))
	if err != nil {
		t.Fatal(err)
	}
	src, _ := filepath.Abs(pythonDir)
	dir := t.TempDir()

	// site is where the package is installed (or the source tree when
	// no Python here makes virtual environments).
	site := ""
	t.Run("offline install", func(t *testing.T) {
		py, tried := findPython("venv", "ensurepip")
		if py == "" {
			t.Skipf("no Python with venv and ensurepip (tried %v): the offline install is not tested (Debian: python3-venv)", tried)
		}
		venv := filepath.Join(dir, "venv")
		runPy(t, dir, pyEnv(), py, "-m", "venv", venv)
		vpy := filepath.Join(venv, "bin", "python")
		// ensurepip may bring setuptools (Python 3.11 does) and wheel:
		// the install must not need them.
		runPy(t, dir, pyEnv(), vpy, "-m", "pip", "uninstall", "--yes", "--quiet", "setuptools", "wheel")
		if out, err := exec.Command(vpy, "-c", "import setuptools").CombinedOutput(); err == nil {
			t.Fatalf("setuptools still importable in the virtual environment:\n%s", out)
		}
		if out, err := exec.Command(vpy, "-c", "import wheel").CombinedOutput(); err == nil {
			t.Fatalf("wheel still importable in the virtual environment:\n%s", out)
		}
		before := sourceFiles(t, src)
		// PIP_NO_INDEX and --no-index: no package index, as offline.
		out := runPy(t, dir, pyEnv("HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9"), vpy,
			"-m", "pip", "install", "--no-index", "--no-cache-dir", src)
		t.Logf("pip install --no-index ./python:\n%s", out)
		if after := sourceFiles(t, src); !slices.Equal(before, after) {
			t.Errorf("pip install left files in python/: before %v, after %v", before, after)
		}
		site = strings.TrimSpace(runPy(t, dir, pyEnv(), vpy, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"))
		if _, err := os.Stat(filepath.Join(site, "genlens", "__init__.py")); err != nil {
			t.Fatalf("the package is not in the virtual environment's site-packages: %v", err)
		}
		// The package on paths, without NumPy: the virtual environment
		// has none. Run outside the checkout so that `import genlens`
		// finds the installed copy.
		if exec.Command(vpy, "-c", "import numpy").Run() == nil {
			t.Fatal("the virtual environment has NumPy: it was to be bare")
		}
		out = runPy(t, dir, pyEnv("GENLENS_BIN="+bin, "GENLENS_EXPECT_PACKAGE_IN="+site), vpy,
			"-m", "unittest", "discover", "-s", tests, "-t", tests, "-v")
		t.Logf("python -m unittest (no NumPy):\n%s", out)
	})

	t.Run("with numpy", func(t *testing.T) {
		py, tried := findPython("numpy")
		if py == "" {
			t.Skipf("no Python 3 with NumPy (tried %v): the package's tests on arrays skip (Debian python3-numpy; .ci/run installs it)", tried)
		}
		where := site
		if where == "" {
			where = src
			t.Log("no installed copy (no virtual environment): the tests import the package from the source tree")
		}
		out := runPy(t, dir, pyEnv("GENLENS_BIN="+bin, "PYTHONPATH="+where, "GENLENS_EXPECT_PACKAGE_IN="+where), py,
			"-m", "unittest", "discover", "-s", tests, "-t", tests, "-v")
		t.Logf("python -m unittest:\n%s", out)
	})
}

// pyRunnableMarker precedes a python block of docs/python.md that runs
// as pasted; pythonDocBlocks finds them.
const pyRunnableMarker = "<!-- runnable python -->"

// pythonDocBlocks returns the runnable python blocks of file, in order.
// A marker not followed by a python block is an error.
func pythonDocBlocks(t *testing.T, file string) []docBlock {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	block := regexp.MustCompile("^" + regexp.QuoteMeta(pyRunnableMarker) + "\n```python\n((?s:.*?))```")
	var out []docBlock
	for off := 0; ; {
		i := strings.Index(s[off:], pyRunnableMarker)
		if i < 0 {
			return out
		}
		at := off + i
		line := strings.Count(s[:at], "\n") + 1
		if at > 0 && s[at-1] != '\n' {
			off = at + len(pyRunnableMarker) // named in prose
			continue
		}
		m := block.FindStringSubmatch(s[at:])
		if m == nil {
			t.Errorf("%s:%d: %s is not followed on the next line by a ```python block", file, line, pyRunnableMarker)
			off = at + len(pyRunnableMarker)
			continue
		}
		out = append(out, docBlock{file: filepath.Base(file), line: line + 2, src: m[1]})
		off = at + len(m[0])
	}
}

// pyDocDriver runs the blocks of a JSON file in one namespace, as cells
// of a notebook, and names the block that failed.
const pyDocDriver = `import json, sys, traceback
g = {"__name__": "__main__"}
for b in json.load(open(sys.argv[1], encoding="utf-8")):
    where = "%s:%d" % (b["file"], b["line"])
    print("== " + where, flush=True)
    try:
        exec(compile(b["src"], where, "exec"), g)
    except BaseException:
        traceback.print_exc()
        print("FAILED: the block at " + where, flush=True)
        sys.exit(1)
`

// The runnable python blocks of docs/python.md run as pasted, in order in
// one Python (as in a notebook), against the binary built here, a
// `genlens serve` the test starts (the blocks' 127.0.0.1:8080) and the
// test data (blocks that name GENLENS_SHARED_DATA skip without it).
func TestPythonDocs(t *testing.T) {
	file := filepath.Join("..", "..", "docs", "python.md")
	blocks := pythonDocBlocks(t, file)
	if len(blocks) < 4 {
		t.Fatalf("%d runnable python blocks in %s: its commands, images, answers, MSE and service blocks are marked %s", len(blocks), file, pyRunnableMarker)
	}
	py, tried := findPython("numpy", "pandas")
	if py == "" {
		t.Skipf("no Python 3 with NumPy and pandas (tried %v): the %d runnable blocks of %s skip (Debian python3-numpy, python3-pandas)", tried, len(blocks), file)
	}
	bin := serveBinary(t)
	src, _ := filepath.Abs(pythonDir)
	dir := t.TempDir()
	srv := startServe(t, "--db", filepath.Join(t.TempDir(), "genlens.db"))
	data := shareddata.Dir()
	if data != "" {
		data, _ = filepath.Abs(data)
	}
	type pyBlock struct {
		File string `json:"file"`
		Line int    `json:"line"`
		Src  string `json:"src"`
	}
	var run []pyBlock
	for _, b := range blocks {
		if data == "" && strings.Contains(b.src, "GENLENS_SHARED_DATA") {
			t.Logf("%s:%d skipped: shared data not found (set GENLENS_SHARED_DATA or place it at ../shared/data)", b.file, b.line)
			continue
		}
		run = append(run, pyBlock{File: b.file, Line: b.line, Src: strings.ReplaceAll(b.src, "http://127.0.0.1:8080", srv.url)})
	}
	j, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	blocksFile := filepath.Join(t.TempDir(), "blocks.json")
	driver := filepath.Join(t.TempDir(), "driver.py")
	if err := os.WriteFile(blocksFile, j, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(driver, []byte(pyDocDriver), 0o644); err != nil {
		t.Fatal(err)
	}
	env := pyEnv("PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "PYTHONPATH="+src,
		"GENLENS_TOKEN=tok-tok-tok-tok-tok", "GENLENS_CACHE="+t.TempDir())
	if data != "" {
		env = append(env, "GENLENS_SHARED_DATA="+data)
	}
	out := runPy(t, dir, env, py, driver, blocksFile)
	t.Logf("%d of %d blocks ran:\n%s", len(run), len(blocks), out)
	started := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "== "+run[0].File+":") {
			started++
		}
	}
	if started != len(run) {
		t.Errorf("%d blocks started, want %d", started, len(run))
	}
}
