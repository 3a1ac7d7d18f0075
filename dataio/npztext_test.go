package dataio

import (
	"os"
	"path/filepath"
	"testing"
)

func TestNPZContentsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.npz")
	c := NPZContents{
		Arrays: map[string]*Array{"mean": {Shape: []int{2}, Data: []float64{1.5, -2}}},
		Ints:   map[string]int64{"n": 12345678901, "shard": 0},
		Texts:  map[string]string{"embedder": "inception-v3", "empty": "", "uni": "ßé→"},
	}
	if err := WriteNPZContents(path, c); err != nil {
		t.Fatal(err)
	}
	keys, err := NPZKeys(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 6 {
		t.Fatalf("keys %v", keys)
	}
	for k, want := range c.Texts {
		got, err := ReadNPZText(HostFS, path, k)
		if err != nil || got != want {
			t.Errorf("text %s = %q, %v; want %q", k, got, err, want)
		}
	}
	for k, want := range c.Ints {
		a, err := ReadArrayFS(HostFS, path, ReadOptions{Key: k})
		if err != nil || a.Rank() != 0 || a.Data[0] != float64(want) {
			t.Errorf("int %s = %v, %v; want %d", k, a, err, want)
		}
	}
	if _, err := ReadNPZText(HostFS, path, "mean"); err == nil {
		t.Error("reading a float array as text: no error")
	}
	if _, err := ReadNPZText(HostFS, path, "nope"); err == nil {
		t.Error("missing key: no error")
	}
	// Deterministic bytes.
	path2 := filepath.Join(t.TempDir(), "d.npz")
	if err := WriteNPZContents(path2, c); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(path)
	b, _ := os.ReadFile(path2)
	if string(a) != string(b) {
		t.Error("equal contents gave different bytes")
	}
	if err := WriteNPZContents(path2, NPZContents{Ints: map[string]int64{"x": 1}, Texts: map[string]string{"x": "y"}}); err == nil {
		t.Error("key in two maps: no error")
	}
}
