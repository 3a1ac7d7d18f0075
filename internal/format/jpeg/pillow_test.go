package jpeg

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/testkit/shareddata"
)

// The Python with Pillow that the oracle tests run; Debian's, since the
// default python3 on PATH may lack PIL.
const pillowPython = "/usr/bin/python3"

var (
	randomN    = flag.Int("pillow.n", 150, "number of random JPEGs TestPillowRandom makes")
	randomSeed = flag.Int("pillow.seed", 1, "seed of TestPillowRandom")
)

// needPillow skips the test unless Pillow, numpy and cjpeg are available.
func needPillow(t *testing.T) {
	t.Helper()
	if err := exec.Command(pillowPython, "-c", "import PIL, numpy").Run(); err != nil {
		t.Skipf("skipping: %s cannot import PIL and numpy (%v)", pillowPython, err)
	}
	if _, err := exec.LookPath("cjpeg"); err != nil {
		t.Skip("skipping: cjpeg (libjpeg-turbo-progs) not installed")
	}
}

// checkAgainstPillow decodes data and compares with Pillow's output read
// from dir/<i>.rgb, or expects an error when Pillow failed (<i>.err).
func checkAgainstPillow(t *testing.T, data []byte, dir string, i int, what string) {
	t.Helper()
	img, err := Decode(bytes.NewReader(data))
	want, rerr := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.rgb", i)))
	if rerr != nil {
		perr, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.err", i)))
		if err == nil {
			t.Errorf("%s: decoded, but Pillow fails: %s", what, perr)
		}
		return
	}
	if err != nil {
		t.Errorf("%s: %v (Pillow decodes it)", what, err)
		return
	}
	if d := compareRGB(img.Pix, want, img.Width); d != "" {
		t.Errorf("%s: %dx%d: %s", what, img.Width, img.Height, d)
	}
}

// TestPillowRandom makes random JPEGs with Pillow and cjpeg (sizes,
// qualities, sampling factors, progression, restarts, arithmetic coding)
// and compares every pixel with Pillow's decoding.
func TestPillowRandom(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in short mode")
	}
	needPillow(t)
	dir := t.TempDir()
	cmd := exec.Command(pillowPython, filepath.Join("testdata", "pillow_oracle.py"),
		"random", dir, fmt.Sprint(*randomN), fmt.Sprint(*randomSeed))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pillow_oracle.py: %v\n%s", err, out)
	}
	for i := 0; i < *randomN; i++ {
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.jpg", i)))
		if err != nil {
			t.Fatal(err)
		}
		how, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.txt", i)))
		checkAgainstPillow(t, data, dir, i, fmt.Sprintf("#%d (%s)", i, strings.TrimSpace(string(how))))
	}
}

// TestSharedDataJPEGs compares with Pillow on the real JPEG photographs in
// the shared data directory, decoded by Pillow on the fly.
func TestSharedDataJPEGs(t *testing.T) {
	root := shareddata.Dir()
	if root == "" {
		t.Skip("skipping: shared data not found (set GENLENS_SHARED_DATA or place it at ../shared/data)")
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ext := strings.ToLower(filepath.Ext(p))
		if !e.IsDir() && (ext == ".jpg" || ext == ".jpeg") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skipf("skipping: no .jpg or .jpeg files under %s", root)
	}
	needPillow(t)
	dir := t.TempDir()
	args := append([]string{filepath.Join("testdata", "pillow_oracle.py"), "decode", dir}, files...)
	if out, err := exec.Command(pillowPython, args...).CombinedOutput(); err != nil {
		t.Fatalf("pillow_oracle.py: %v\n%s", err, out)
	}
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkAgainstPillow(t, data, dir, i, f)
	}
}
