package jpeg

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

type fixture struct {
	name       string
	ok         bool
	w, h       int
	sum        string // SHA-256 of Pillow's RGB bytes
	wantErr    string // substring of the error, for broken files
	pillowNote string
}

// readFixtures parses testdata/expected.txt, written by make_fixtures.py.
func readFixtures(t testing.TB) []fixture {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "expected.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var fs []fixture
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		line, note, _ := strings.Cut(line, "#")
		fld := strings.Fields(line)
		switch {
		case len(fld) == 5 && fld[1] == "ok":
			w, _ := strconv.Atoi(fld[2])
			h, _ := strconv.Atoi(fld[3])
			fs = append(fs, fixture{name: fld[0], ok: true, w: w, h: h, sum: fld[4]})
		case len(fld) == 3 && fld[1] == "error":
			fs = append(fs, fixture{name: fld[0], wantErr: strings.ReplaceAll(fld[2], "_", " "), pillowNote: strings.TrimSpace(note)})
		default:
			t.Fatalf("bad line in expected.txt: %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return fs
}

// compareRGB reports how got differs from want: the number of differing
// bytes, the largest difference and where the first one is.
func compareRGB(got, want []byte, w int) string {
	if len(got) != len(want) {
		return fmt.Sprintf("length %d, want %d", len(got), len(want))
	}
	n, maxd, first := 0, 0, -1
	for i := range got {
		if got[i] != want[i] {
			n++
			maxd = max(maxd, absInt(int(got[i])-int(want[i])))
			if first < 0 {
				first = i
			}
		}
	}
	if n == 0 {
		return ""
	}
	p := first / 3
	return fmt.Sprintf("%d of %d values differ, max difference %d, first at (x=%d, y=%d) channel %d: got %d want %d",
		n, len(got), maxd, p%w, p/w, first%3, got[first], want[first])
}

func absInt(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func TestFixtures(t *testing.T) {
	for _, fx := range readFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", fx.name+".jpg"))
			if err != nil {
				t.Fatal(err)
			}
			img, err := Decode(bytes.NewReader(data))
			if !fx.ok {
				if err == nil {
					t.Fatalf("decoded a broken file; want an error containing %q", fx.wantErr)
				}
				if !strings.Contains(err.Error(), fx.wantErr) {
					t.Fatalf("error %q, want one containing %q", err, fx.wantErr)
				}
				if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "jpeg: ") {
					t.Errorf("error %q is not one line starting with \"jpeg: \"", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if img.Width != fx.w || img.Height != fx.h {
				t.Fatalf("size %dx%d, want %dx%d", img.Width, img.Height, fx.w, fx.h)
			}
			sum := sha256.Sum256(img.Pix)
			if hex.EncodeToString(sum[:]) == fx.sum {
				return
			}
			want, err := os.ReadFile(filepath.Join("testdata", fx.name+".rgb"))
			if err != nil {
				t.Fatalf("RGB differs from Pillow's (SHA-256 %x, want %s); no .rgb file to compare with", sum, fx.sum)
			}
			t.Fatalf("RGB differs from Pillow's: %s", compareRGB(img.Pix, want, img.Width))
		})
	}
}

func TestDecodeConfig(t *testing.T) {
	tests := []struct {
		name        string
		cs          ColorSpace
		progressive bool
		arithmetic  bool
		sampling    string
	}{
		{"q95_420_75x61", YCbCr, false, false, "2x2,1x1,1x1"},
		{"q75_420_75x61_prog", YCbCr, true, false, "2x2,1x1,1x1"},
		{"gray_q75_33x17", Gray, false, false, "1x1"},
		{"cmyk_q90_64x48", CMYK, false, false, "1x1,1x1,1x1,1x1"},
		{"ycck_420_q90_64x48", YCCK, false, false, "2x2,1x1,1x1,2x2"},
		{"cj_rgb_64x48", RGB, false, false, "1x1,1x1,1x1"},
		{"cj_31_75x61", YCbCr, false, false, "3x1,1x1,1x1"},
		{"cj_arith_75x61_prog", YCbCr, true, true, "2x2,1x1,1x1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tt.name+".jpg"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			c, err := DecodeConfig(f)
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, comp := range c.Components {
				s = append(s, fmt.Sprintf("%dx%d", comp.H, comp.V))
			}
			if c.ColorSpace != tt.cs || c.Progressive != tt.progressive || c.Arithmetic != tt.arithmetic ||
				strings.Join(s, ",") != tt.sampling {
				t.Errorf("got %v progressive=%v arithmetic=%v sampling %s; want %v %v %v %s",
					c.ColorSpace, c.Progressive, c.Arithmetic, strings.Join(s, ","),
					tt.cs, tt.progressive, tt.arithmetic, tt.sampling)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "q90_444_299x299_prog.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		opt     Options
		wantErr string
	}{
		{Options{}, ""},
		{Options{MaxPixels: 299 * 299}, ""},
		{Options{MaxPixels: 299*299 - 1}, "more than the limit"},
		{Options{MaxScans: 3}, "more than 3 scans"},
	}
	for _, tt := range tests {
		_, err := DecodeWith(bytes.NewReader(data), tt.opt)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%+v: error %v, want %q", tt.opt, err, tt.wantErr)
		}
	}
}

// TestShortFileLargeImage checks that a few bytes claiming a huge image are
// refused before the buffers are allocated.
func TestShortFileLargeImage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "q75_444_33x17.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	f := bytes.Index(data, []byte{0xff, 0xc0})
	data = bytes.Clone(data)
	data[f+5], data[f+6] = 0x30, 0x00 // height 12288
	data[f+7], data[f+8] = 0x30, 0x00 // width 12288
	_, err = Decode(bytes.NewReader(data))
	if err == nil || !strings.Contains(err.Error(), "cannot hold") {
		t.Fatalf("error %v, want the short-file refusal", err)
	}
}
