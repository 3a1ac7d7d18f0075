package chart

import (
	"bytes"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClusterMap(t *testing.T) {
	dir := t.TempDir()
	labels := make([]int, 28*28)
	for p := range labels {
		labels[p] = (p % 28) / 6 // five vertical bands
	}
	for _, name := range []string{"map.png", "map.svg"} {
		p := filepath.Join(dir, name)
		if err := ClusterMap(p, "clusters", labels, 28, 28); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.HasSuffix(name, ".png") {
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			// The map must actually show the cluster colours.
			found := map[color.NRGBA]bool{}
			bd := img.Bounds()
			for y := bd.Min.Y; y < bd.Max.Y; y += 3 {
				for x := bd.Min.X; x < bd.Max.X; x += 3 {
					found[color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)] = true
				}
			}
			for c := 0; c < 5; c++ {
				if !found[ClusterColor(c)] {
					t.Errorf("cluster %d colour %v not in the PNG", c, ClusterColor(c))
				}
			}
		}
	}
	if err := ClusterMap(filepath.Join(dir, "x.jpg"), "", labels, 28, 28); err == nil {
		t.Error(".jpg: no error")
	}
	if err := ClusterMap(filepath.Join(dir, "x.png"), "", labels, 27, 28); err == nil {
		t.Error("wrong grid: no error")
	}
	// The first colours are the series colours, so that a chart listing
	// the clusters first colours them as the map does.
	for c := range seriesColors {
		if ClusterColor(c) != seriesColor(c, 0xff) {
			t.Errorf("cluster %d: colour %v, series colour %v", c, ClusterColor(c), seriesColor(c, 0xff))
		}
	}
	// Colours stay distinct well beyond the fixed palette.
	seen := map[color.NRGBA]int{}
	for c := 0; c < 40; c++ {
		if prev, ok := seen[ClusterColor(c)]; ok {
			t.Errorf("clusters %d and %d share a colour", prev, c)
		}
		seen[ClusterColor(c)] = c
	}
}

// Encode writes what Save writes, in either format, and refuses another.
func TestFigureEncode(t *testing.T) {
	dir := t.TempDir()
	fig, err := NewLines("t", "x", "y", []Series{{Name: "a", X: []float64{1, 2, 3}, Y: []float64{3, 1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{PNG, SVG} {
		var b bytes.Buffer
		if err := fig.Encode(&b, f); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "lines."+string(f))
		if err := fig.Save(p); err != nil {
			t.Fatal(err)
		}
		if file, _ := os.ReadFile(p); !bytes.Equal(file, b.Bytes()) {
			t.Errorf("%s: Encode and Save differ", f)
		}
	}
	if err := fig.Encode(&bytes.Buffer{}, "jpg"); err == nil {
		t.Error("format jpg: no error")
	}
	if f, err := FormatOf("a/B.SVG"); f != SVG || err != nil {
		t.Errorf("FormatOf(B.SVG) = %q, %v", f, err)
	}
}
