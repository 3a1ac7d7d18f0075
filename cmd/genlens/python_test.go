// The Python package of genlens (python/ at the repository's root): this
// test runs its own tests against the binary built from this checkout.

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// findPython returns a Python 3 with NumPy: $GENLENS_PYTHON, python3 on
// PATH, or Debian's /usr/bin/python3 (.ci/run installs python3-numpy).
// pythonDir is the Python package's directory.
var pythonDir = filepath.Join("..", "..", "python")

func findPython(t *testing.T) string {
	t.Helper()
	var tried []string
	for _, p := range []string{os.Getenv("GENLENS_PYTHON"), "python3", "/usr/bin/python3"} {
		if p == "" {
			continue
		}
		path, err := exec.LookPath(p)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import numpy").Run() == nil {
			return path
		}
		tried = append(tried, path)
	}
	t.Skipf("no Python 3 with NumPy (tried %v): the Python package's tests need it (Debian python3-numpy; .ci/run installs it)", tried)
	return ""
}

// The package installs with pip from the checkout, offline, and its tests
// pass against the binary built here and a `genlens serve` they start.
func TestPythonPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds genlens and runs the Python tests; skipped in -short mode")
	}
	py := findPython(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "genlens")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	target := filepath.Join(dir, "site")
	if exec.Command(py, "-m", "pip", "--version").Run() == nil && exec.Command(py, "-c", "import setuptools").Run() == nil {
		// pip builds in the source tree: build from a copy so the checkout
		// stays clean.
		src := filepath.Join(dir, "src")
		if out, err := exec.Command("cp", "-r", pythonDir, src).CombinedOutput(); err != nil {
			t.Fatalf("copy: %v\n%s", err, out)
		}
		install := exec.Command(py, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index", "--quiet", "--target", target, src)
		install.Env = append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_ROOT_USER_ACTION=ignore")
		if out, err := install.CombinedOutput(); err != nil {
			t.Fatalf("pip install --no-build-isolation ./python: %v\n%s", err, out)
		}
	} else {
		t.Log("no pip or setuptools: the tests import the package from the source tree instead of installing it")
		target, _ = filepath.Abs(pythonDir)
	}

	tests, err := filepath.Abs(filepath.Join(pythonDir, "tests"))
	if err != nil {
		t.Fatal(err)
	}
	// Run outside the checkout, so that `import genlens` finds the
	// installed copy rather than the source tree beside the current
	// directory.
	cmd := exec.Command(py, "-m", "unittest", "discover", "-s", tests, "-t", tests, "-v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GENLENS_BIN="+bin, "PYTHONPATH="+target, "PYTHONDONTWRITEBYTECODE=1", "GENLENS_EXPECT_PACKAGE_IN="+target)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python -m unittest: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
