package chart

import (
	"bytes"
	"errors"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// corrMatrix returns an n×n correlation-like matrix that decays with
// distance from the diagonal and goes negative far from it.
func corrMatrix(n int) [][]float64 {
	m := make([][]float64, n)
	for i := range m {
		m[i] = make([]float64, n)
		for j := range m[i] {
			d := float64(i - j)
			m[i][j] = math.Exp(-d*d/8)*1.2 - 0.2
			if i == j {
				m[i][j] = 1
			}
		}
	}
	return m
}

func epochLabels(first, n int) []string {
	l := make([]string, n)
	for i := range l {
		l[i] = strconv.Itoa(first + i)
	}
	return l
}

// chartCase is one successful chart drawing, parameterised by the output
// path so that each can be written in both formats.
type chartCase struct {
	name string
	w, h float64 // size in inches
	draw func(path string) error
}

func chartCases() []chartCase {
	nanM := corrMatrix(5)
	nanM[1][3] = math.NaN()
	nanM[3][1] = math.NaN()
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	long := make([]float64, 200)
	longY := make([]float64, 200)
	for i := range long {
		long[i] = float64(i)
		longY[i] = math.Sin(float64(i) / 20)
	}
	return []chartCase{
		{"heatmap_corr", 6, 5.5, func(p string) error {
			return Heatmap(p, "Distributional correlation between epochs", corrMatrix(11), epochLabels(20, 11), -1, 1)
		}},
		{"heatmap_datarange_nil_labels", 6, 5.5, func(p string) error {
			return Heatmap(p, "", corrMatrix(4), nil, math.NaN(), math.NaN())
		}},
		{"heatmap_nan", 6, 5.5, func(p string) error {
			return Heatmap(p, "with NaN", nanM, nil, -1, 1)
		}},
		{"heatmap_large", 6, 5.5, func(p string) error {
			return Heatmap(p, "150 × 150", corrMatrix(150), nil, math.NaN(), math.NaN())
		}},
		{"heatmap_1x1_const", 6, 5.5, func(p string) error {
			return Heatmap(p, "one cell", [][]float64{{3}}, []string{"only"}, math.NaN(), math.NaN())
		}},
		{"heatmap_long_labels", 6, 5.5, func(p string) error {
			return Heatmap(p, "long labels", corrMatrix(6), []string{"epoch-1", "epoch-2", "epoch-3", "epoch-4", "epoch-5", "epoch-6"}, -1, 1)
		}},
		{"heatmap_inf", 6, 5.5, func(p string) error {
			return Heatmap(p, "", [][]float64{{math.Inf(1), 0}, {0, math.Inf(-1)}}, nil, math.NaN(), math.NaN())
		}},
		{"heatmap_all_nan", 6, 5.5, func(p string) error {
			return Heatmap(p, "", [][]float64{{math.NaN()}}, nil, math.NaN(), math.NaN())
		}},
		{"lines_unnamed", 5, 4, func(p string) error {
			return Lines(p, "", "", "", []Series{{X: []float64{0}, Y: []float64{1}}})
		}},
		{"lines", 5, 4, func(p string) error {
			return Lines(p, "Kernel entropy", "epoch", "entropy (nats)", []Series{
				{Name: "model A", X: x, Y: []float64{1, 1.5, 1.8, 2, 2.1, 2.15, 2.2, 2.2},
					Lower: []float64{0.9, 1.3, 1.6, 1.8, 1.95, 2, 2.05, 2.05},
					Upper: []float64{1.1, 1.7, 2.0, 2.2, 2.25, 2.3, 2.35, 2.35}},
				{Name: "model B", X: x, Y: []float64{0.5, 0.9, 1.4, 1.6, 1.7, 1.9, 1.95, 2.0}},
				{Name: "", X: long[:8], Y: longY[:8]},
				{Name: "long", X: long, Y: longY},
			})
		}},
		{"roc", 5, 4.5, func(p string) error {
			return ROC(p, "Hallucination detection", []Series{
				{Name: "kernel entropy (AUC 0.81)", X: []float64{0, 0.1, 0.2, 0.4, 0.7, 1}, Y: []float64{0, 0.45, 0.65, 0.82, 0.95, 1}},
				{Name: "length (AUC 0.58)", X: []float64{0, 0.3, 0.6, 1}, Y: []float64{0, 0.4, 0.7, 1}},
			})
		}},
		{"histograms", 5, 4, func(p string) error {
			return Histograms(p, "Kernel entropy by correctness", "kernel entropy", map[string][]float64{
				"incorrect": {1.2, 1.5, 1.7, 1.8, 2.0, 2.1, 2.2, 2.4},
				"correct":   {0.2, 0.3, 0.5, 0.6, 0.6, 0.7, 0.9, 1.0, 1.1, 1.3, 1.6, 0.4, 0.45},
				"empty":     nil,
			}, 12)
		}},
		{"histogram_constant", 5, 4, func(p string) error {
			return Histograms(p, "", "x", map[string][]float64{"a": {1, 1, 1}}, 5)
		}},
		{"bars", 5, 4, func(p string) error {
			return Bars(p, "Decomposition of kernel score", "value", []string{"bias", "variance", "noise", "covariance"},
				[]float64{0.42, 0.17, 0.08, -0.05}, []float64{0.03, 0.02, 0.01, 0.02})
		}},
		{"bars_noerr", 5, 4, func(p string) error {
			return Bars(p, "", "", []string{"one"}, []float64{3}, nil)
		}},
	}
}

func TestChartsWritten(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range chartCases() {
		for _, ext := range []string{".png", ".svg", ".PNG"} {
			t.Run(tc.name+ext, func(t *testing.T) {
				path := filepath.Join(dir, tc.name+ext)
				if err := tc.draw(path); err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if len(b) == 0 {
					t.Fatal("empty file")
				}
				switch strings.ToLower(ext) {
				case ".png":
					img, err := png.Decode(bytes.NewReader(b))
					if err != nil {
						t.Fatalf("decoding PNG: %v", err)
					}
					got := img.Bounds().Size()
					wantW, wantH := int(math.Round(tc.w*dpi)), int(math.Round(tc.h*dpi))
					if got.X != wantW || got.Y != wantH {
						t.Errorf("PNG size = %dx%d, want %dx%d", got.X, got.Y, wantW, wantH)
					}
				case ".svg":
					if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("</svg>")) {
						t.Errorf("output does not look like SVG: %.80q", b)
					}
				}
			})
		}
	}
	// Atomic writes must not leave temporary files behind.
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestChartErrors(t *testing.T) {
	dir := t.TempDir()
	png := filepath.Join(dir, "x.png")
	nan := math.NaN()
	ok := [][]float64{{1, 0}, {0, 1}}
	good := Series{Name: "a", X: []float64{0, 1}, Y: []float64{0, 1}}
	for _, tc := range []struct {
		name string
		err  func() error
	}{
		{"heatmap bad ext", func() error { return Heatmap(filepath.Join(dir, "x.jpg"), "", ok, nil, -1, 1) }},
		{"heatmap no ext", func() error { return Heatmap(filepath.Join(dir, "x"), "", ok, nil, -1, 1) }},
		{"heatmap empty", func() error { return Heatmap(png, "", nil, nil, -1, 1) }},
		{"heatmap empty rows", func() error { return Heatmap(png, "", [][]float64{{}}, nil, -1, 1) }},
		{"heatmap non-square", func() error { return Heatmap(png, "", [][]float64{{1, 2, 3}, {4, 5, 6}}, nil, -1, 1) }},
		{"heatmap ragged", func() error { return Heatmap(png, "", [][]float64{{1, 2}, {3}}, nil, -1, 1) }},
		{"heatmap labels", func() error { return Heatmap(png, "", ok, []string{"a"}, -1, 1) }},
		{"heatmap half NaN range", func() error { return Heatmap(png, "", ok, nil, nan, 1) }},
		{"heatmap inverted range", func() error { return Heatmap(png, "", ok, nil, 1, -1) }},
		{"heatmap empty range", func() error { return Heatmap(png, "", ok, nil, 1, 1) }},
		{"heatmap infinite range", func() error { return Heatmap(png, "", ok, nil, math.Inf(-1), 1) }},
		{"heatmap missing dir", func() error { return Heatmap(filepath.Join(dir, "no", "x.png"), "", ok, nil, -1, 1) }},
		{"lines bad ext", func() error { return Lines(filepath.Join(dir, "x.pdf"), "", "", "", []Series{good}) }},
		{"lines none", func() error { return Lines(png, "", "", "", nil) }},
		{"lines empty series", func() error { return Lines(png, "", "", "", []Series{{Name: "e"}}) }},
		{"lines length mismatch", func() error {
			return Lines(png, "", "", "", []Series{{X: []float64{1, 2}, Y: []float64{1}}})
		}},
		{"lines NaN", func() error {
			return Lines(png, "", "", "", []Series{{X: []float64{1, 2}, Y: []float64{1, nan}}})
		}},
		{"lines half band", func() error {
			return Lines(png, "", "", "", []Series{{X: []float64{1, 2}, Y: []float64{1, 2}, Lower: []float64{0, 1}}})
		}},
		{"lines band length", func() error {
			return Lines(png, "", "", "", []Series{{X: []float64{1, 2}, Y: []float64{1, 2}, Lower: []float64{0}, Upper: []float64{2}}})
		}},
		{"roc none", func() error { return ROC(png, "", nil) }},
		{"roc out of range", func() error {
			return ROC(png, "", []Series{{X: []float64{0, 1.5}, Y: []float64{0, 1}}})
		}},
		{"roc NaN", func() error { return ROC(png, "", []Series{{X: []float64{0, nan}, Y: []float64{0, 1}}}) }},
		{"hist bad ext", func() error {
			return Histograms(filepath.Join(dir, "x.svgz"), "", "", map[string][]float64{"a": {1}}, 3)
		}},
		{"hist zero bins", func() error { return Histograms(png, "", "", map[string][]float64{"a": {1}}, 0) }},
		{"hist no groups", func() error { return Histograms(png, "", "", nil, 3) }},
		{"hist no values", func() error { return Histograms(png, "", "", map[string][]float64{"a": {}}, 3) }},
		{"hist Inf", func() error { return Histograms(png, "", "", map[string][]float64{"a": {1, math.Inf(1)}}, 3) }},
		{"bars bad ext", func() error { return Bars(filepath.Join(dir, "x.txt"), "", "", []string{"a"}, []float64{1}, nil) }},
		{"bars none", func() error { return Bars(png, "", "", nil, nil, nil) }},
		{"bars value count", func() error { return Bars(png, "", "", []string{"a", "b"}, []float64{1}, nil) }},
		{"bars err count", func() error { return Bars(png, "", "", []string{"a"}, []float64{1}, []float64{1, 2}) }},
		{"bars NaN", func() error { return Bars(png, "", "", []string{"a"}, []float64{nan}, nil) }},
		{"bars negative err", func() error { return Bars(png, "", "", []string{"a"}, []float64{1}, []float64{-1}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.err(); err == nil {
				t.Error("expected an error")
			}
		})
	}
	if _, err := os.Stat(png); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed calls created %s (stat error %v)", png, err)
	}
}

func TestIntegerTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 5, "0 1 2 3 4 5"},
		{0, 23, "0 5 10 15 20"},
		{1, 1000, "200 400 600 800 1000"},
		{3, 3, "3"},
	} {
		var got []string
		for _, tk := range (integerTicks{}).Ticks(c.lo, c.hi) {
			got = append(got, tk.Label)
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("integer ticks on [%g, %g] = %q, want %q", c.lo, c.hi, g, c.want)
		}
	}
}

func TestPow2Ticks(t *testing.T) {
	var labels []string
	for _, tk := range (pow2Ticks{}).Ticks(1, 32) {
		labels = append(labels, tk.Label)
	}
	if g := strings.Join(labels, " "); g != "1 2 4 8 16 32" {
		t.Errorf("pow2 ticks on [1, 32] = %q", g)
	}
	labels = labels[:0]
	for _, tk := range (pow2Ticks{}).Ticks(1, 4096) {
		labels = append(labels, tk.Label)
	}
	// 13 powers: every second one labelled, the rest as minor ticks.
	if g := strings.Join(labels, ","); g != "1,,4,,16,,64,,256,,1024,,4096" {
		t.Errorf("pow2 ticks on [1, 4096] = %q", g)
	}
}

func TestMatrixTicksOncePerRun(t *testing.T) {
	x, y := matrixTicks([]string{"c0", "c0", "c0", "c1", "c1", "c2"})
	var got []string
	for _, tk := range x {
		got = append(got, fmt.Sprintf("%g:%s", tk.Value, tk.Label))
	}
	if g := strings.Join(got, " "); g != "1:c0 3.5:c1 2.5: 5:c2 4.5:" {
		t.Errorf("x ticks = %q", g)
	}
	if y[0].Value != 4 || y[0].Label != "c0" {
		t.Errorf("first y tick = %+v, want c0 at 4 (top row)", y[0])
	}
	x, _ = matrixTicks([]string{"a", "b", "c"})
	if len(x) != 3 || x[1].Label != "b" || x[1].Value != 1 {
		t.Errorf("distinct labels: ticks %+v", x)
	}
}

func TestMiddleEllipsis(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 22, "short"},
		{"ddpm_cifar10_epoch_0100_samples", 22, "ddpm_cifar…100_samples"},
		{"αβγδεζηθικ", 5, "αβ…ικ"},
	} {
		got := middleEllipsis(c.in, c.max)
		if got != c.want || len([]rune(got)) > c.max {
			t.Errorf("middleEllipsis(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

// Long set names neither overlap nor fail: they are shortened and the
// chart is drawn.
func TestBarsLongLabels(t *testing.T) {
	p := filepath.Join(t.TempDir(), "b.png")
	labels := []string{"ddpm_cifar10_epoch_0100_samples", "ddpm_cifar10_epoch_0200_samples", "stylegan2_ada_cifar10_final_checkpoint", "x"}
	if err := Bars(p, "1 - CMS", "1 - CMS", labels, []float64{0.12, 0.08, 0.05, 0.3}, nil); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || st.Size() == 0 {
		t.Fatalf("no chart: %v", err)
	}
}

// Long file names as heatmap labels (correlate --out with long paths, the
// service's upload ids) once squeezed the plot to a negative size.
func TestHeatmapLongLabels(t *testing.T) {
	p := filepath.Join(t.TempDir(), "h.png")
	long := strings.Repeat("0123456789abcdef", 5) // 80 characters
	labels := []string{long + "_a.npy", long + "_b.npy", long + "_c.npy"}
	m := [][]float64{{1, 0.5, 0.2}, {0.5, 1, 0.1}, {0.2, 0.1, 1}}
	if err := Heatmap(p, "correlation", m, labels, -1, 1); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || st.Size() == 0 {
		t.Fatalf("no chart: %v", err)
	}
}

// A chart with a time x axis (Unix seconds) draws.
func TestTimeLines(t *testing.T) {
	day := func(d int) float64 { return float64(time.Date(2024, 3, d, 0, 0, 0, 0, time.UTC).Unix()) }
	s := []Series{{Name: "y", X: []float64{day(1), day(2), day(3)}, Y: []float64{1, 2, 3}, Lower: []float64{0, 1, 2}, Upper: []float64{2, 3, 4}}}
	fig, err := NewTimeLines("t", "day", "y", s, time.UTC, "2006-01-02")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := fig.Encode(&b, PNG); err != nil || b.Len() == 0 {
		t.Fatalf("%d bytes, %v", b.Len(), err)
	}
}
