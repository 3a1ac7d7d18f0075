package features

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The Python with Pillow 9.4 and numpy that the oracle tests run:
// Debian's, since the python3 first on PATH may lack PIL.
const pilPython = "/usr/bin/python3"

var (
	pilN    = flag.Int("pil.n", 3, "images of each case TestPILRandom makes")
	pilSeed = flag.Int("pil.seed", 1, "seed of TestPILRandom")
)

// needPIL skips the test unless pilPython imports PIL and numpy.
func needPIL(t *testing.T) {
	t.Helper()
	if err := exec.Command(pilPython, "-c", "import PIL, numpy").Run(); err != nil {
		t.Skipf("skipping: %s cannot import PIL and numpy (%v); the committed fixtures are checked by TestPILFixtures", pilPython, err)
	}
	if _, err := exec.LookPath("cwebp"); err != nil {
		t.Skip("skipping: cwebp (Debian's webp package) not installed")
	}
}

// interleave returns the planar RGB of Decode as PIL lays it out.
func interleave(m *RGB) []byte {
	n := m.H * m.W
	out := make([]byte, 3*n)
	for i := range n {
		out[3*i], out[3*i+1], out[3*i+2] = m.Pix[i], m.Pix[n+i], m.Pix[2*n+i]
	}
	return out
}

// diffRGB describes how got differs from want (interleaved RGB), "" if
// not at all.
func diffRGB(got, want []byte, w int) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d bytes, want %d", len(got), len(want))
	}
	n, maxd, first := 0, 0, -1
	for i := range got {
		d := int(got[i]) - int(want[i])
		if d != 0 {
			if first < 0 {
				first = i
			}
			n++
			maxd = max(maxd, d, -d)
		}
	}
	if n == 0 {
		return ""
	}
	p := first / 3
	return fmt.Sprintf("%d of %d values differ, by up to %d; first at (%d,%d) channel %d: %d, want %d",
		n, len(got), maxd, p%w, p/w, first%3, got[first], want[first])
}

// notRead lists the cases of pil_images.py that PIL decodes and genlens
// refuses, with the reason; a file of these must give an error, never
// other pixels.
var notRead = map[string]string{
	"tiff_LA":   "golang.org/x/image/tiff reads no greyscale with an alpha sample",
	"tiff_CMYK": "golang.org/x/image/tiff reads no CMYK",
}

// caseOf returns the case of a file the generator named case_i.ext.
func caseOf(name string) string {
	name = strings.TrimSuffix(name, filepath.Ext(name))
	if i := strings.LastIndexByte(name, '_'); i > 0 {
		if _, err := fmt.Sscan(name[i+1:], new(int)); err == nil {
			return name[:i]
		}
	}
	return name
}

// TestPILRandom makes random images of every case of
// testdata/pil_images.py (every PNG colour type and depth, JPEG, lossless
// and lossy WebP, BMP, TIFF, PGM and PPM; odd and tiny sizes), decodes
// them with PIL's Image.open(f).convert("RGB") and with Decode, and
// compares every byte.
func TestPILRandom(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in short mode")
	}
	needPIL(t)
	dir := t.TempDir()
	script := filepath.Join("testdata", "pil_images.py")
	for _, args := range [][]string{
		{"random", dir, fmt.Sprint(*pilN), fmt.Sprint(*pilSeed)},
		{"decode", dir},
	} {
		if out, err := exec.Command(pilPython, append([]string{script}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("pil_images.py %s: %v\n%s", args[0], err, out)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS(dir)
	exact := map[string]int{}
	total := map[string]int{}
	for _, e := range entries {
		name := e.Name()
		if !IsImageName(name) {
			continue
		}
		c := caseOf(name)
		total[c]++
		got, err := Decode(fsys, name)
		want, rerr := os.ReadFile(filepath.Join(dir, name+".rgb"))
		if rerr != nil {
			perr, _ := os.ReadFile(filepath.Join(dir, name+".err"))
			if err == nil {
				t.Errorf("%s: decoded, but PIL fails: %s", name, bytes.TrimSpace(perr))
			} else {
				exact[c]++ // refused by both
			}
			continue
		}
		if why, ok := notRead[c]; ok {
			if err == nil {
				t.Errorf("%s: decoded, but listed as not read (%s)", name, why)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v (PIL decodes it)", name, err)
			continue
		}
		var w, h int
		nl := bytes.IndexByte(want, '\n')
		if _, err := fmt.Sscanf(string(want[:max(nl, 0)]), "%d %d", &w, &h); err != nil {
			t.Fatalf("%s.rgb: %v", name, err)
		}
		want = want[nl+1:]
		if got.W != w || got.H != h {
			t.Errorf("%s: %dx%d, PIL %dx%d", name, got.W, got.H, w, h)
			continue
		}
		if d := diffRGB(interleave(got), want, w); d != "" {
			t.Errorf("%s: %dx%d: %s", name, w, h, d)
			continue
		}
		exact[c]++
	}
	cases := make([]string, 0, len(total))
	for c := range total {
		cases = append(cases, c)
	}
	sort.Strings(cases)
	n, e := 0, 0
	for _, c := range cases {
		if why, ok := notRead[c]; ok {
			t.Logf("%-26s %d refused, as expected: %s", c, total[c], why)
			continue
		}
		t.Logf("%-26s %d/%d exact", c, exact[c], total[c])
		n += total[c]
		e += exact[c]
	}
	t.Logf("%d of %d images decode to PIL's pixels", e, n)
}

// TestPILFixtures decodes the small images of testdata/pil, written by
// pil_images.py fixtures, and checks their pixels against the SHA-256 (and,
// for the tiniest, the bytes) of PIL's decoding kept in expected.txt.
func TestPILFixtures(t *testing.T) {
	dir := filepath.Join("testdata", "pil")
	f, err := os.Open(filepath.Join(dir, "expected.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fsys := os.DirFS(dir)
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 3 {
			t.Fatalf("bad line %q", line)
		}
		name := fields[0]
		var w, h int
		if _, err := fmt.Sscanf(fields[1], "%dx%d", &w, &h); err != nil {
			t.Fatalf("bad size in %q", line)
		}
		n++
		m, err := Decode(fsys, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if m.W != w || m.H != h {
			t.Errorf("%s: %dx%d, want %dx%d", name, m.W, m.H, w, h)
			continue
		}
		got := interleave(m)
		if len(fields) > 3 {
			want, err := hex.DecodeString(fields[3])
			if err != nil {
				t.Fatal(err)
			}
			if d := diffRGB(got, want, w); d != "" {
				t.Errorf("%s: %s", name, d)
			}
		}
		if sum := sha256.Sum256(got); hex.EncodeToString(sum[:]) != fields[2] {
			t.Errorf("%s: SHA-256 of the RGB is %x, PIL's %s", name, sum, fields[2])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Errorf("only %d fixtures", n)
	}
}
