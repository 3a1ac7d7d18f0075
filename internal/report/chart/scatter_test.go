package chart

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestScatter(t *testing.T) {
	dir := t.TempDir()
	s := []Series{{Name: "n = 2", X: []float64{0.1, 0.2, 0.3}, Y: []float64{0.12, 0.18, 0.33}}, {Name: "n = 16", X: []float64{0.05}, Y: []float64{0.04}}}
	p := filepath.Join(dir, "s.png")
	if err := Scatter(p, "calibration", "estimate", "truth", s, true); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 750 || b.Dy() != 750 {
		t.Errorf("size %v, want 750x750 (5 in at 150 dpi)", b)
	}
	if err := Scatter(filepath.Join(dir, "s.svg"), "", "x", "y", s, false); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]Series{nil, {{X: []float64{1}, Y: nil}}, {{X: []float64{math.NaN()}, Y: []float64{1}}}} {
		if err := Scatter(filepath.Join(dir, "b.png"), "", "", "", bad, true); err == nil {
			t.Errorf("Scatter(%v): want error", bad)
		}
	}
}
