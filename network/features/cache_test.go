package features

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/internal/tensor/linalg"
)

// testSettings are Inception-like settings of a 64-d output.
func testSettings(mode, out, weights string) Settings {
	return Settings{Embedder: "inception-v3", Preprocessing: mode, Output: out, Dim: 64, WeightsSHA256: weights}
}

func TestFeatureCache(t *testing.T) {
	dir := t.TempDir()
	c := OpenCache(dir, testSettings("pytorch-fid", "64", "w1"))
	fsys := fstest.MapFS{"a.png": {Data: []byte("image a")}, "b.png": {Data: []byte("image a")}, "c.png": {Data: []byte("image c")}}
	ka, err := HashFile(fsys, "a.png")
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := HashFile(fsys, "b.png")
	kc, _ := HashFile(fsys, "c.png")
	if ka != kb || ka == kc || len(ka) != 64 {
		t.Fatalf("keys %s %s %s: equal content must share a key, other content not", ka, kb, kc)
	}
	if _, ok := c.Get(ka); ok || c.Exists() {
		t.Fatal("hit in an empty cache")
	}
	v := make([]float32, 64)
	for i := range v {
		v[i] = float32(i) * 0.25
	}
	if err := c.Put(ka, v); err != nil {
		t.Fatal(err)
	}
	got, ok := c.Get(ka)
	if !ok || len(got) != 64 || got[63] != v[63] || !c.Exists() {
		t.Fatalf("Get after Put: %v %v", ok, got)
	}
	if err := c.Put(ka, v[:3]); err == nil {
		t.Error("Put of 3 values into a 64-d cache succeeded")
	}
	// Every setting is part of the key.
	for _, o := range []*Cache{
		OpenCache(dir, testSettings("tf", "64", "w1")),
		OpenCache(dir, testSettings("pytorch-fid", "192", "w1")),
		OpenCache(dir, testSettings("pytorch-fid", "64", "w2")),
		OpenCache(dir, func() Settings {
			s := testSettings("pytorch-fid", "64", "w1")
			s.Numerics = "inception-v3 arithmetic 2 on openblas"
			return s
		}()),
	} {
		if _, ok := o.Get(ka); ok || o.Dir() == c.Dir() {
			t.Errorf("cache %s hits the entry of %s", o.Dir(), c.Dir())
		}
	}
	// $GENLENS_CACHE moves the cache (and the weights' place).
	t.Setenv(CacheEnv, dir)
	if d, err := CacheDir(); err != nil || d != dir {
		t.Errorf("CacheDir() = %q, %v; want %q", d, err, dir)
	}
	// A FIFO or directory is never read.
	if _, err := HashFile(fstest.MapFS{"d/x.png": {Data: nil}}, "d"); err == nil {
		t.Error("HashFile of a directory succeeded")
	}
}

// FuzzFeatureCacheGet: whatever bytes an entry holds (a crash, a full
// disk, another program), Get returns a miss or exactly dim values and
// never panics.
func FuzzFeatureCacheGet(f *testing.F) {
	dir := f.TempDir()
	c := OpenCache(dir, testSettings("pytorch-fid", "64", "w"))
	key := "abcdef"
	if err := c.Put(key, make([]float32, 64)); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(c.Dir(), "ab", key))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add([]byte("GLF1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(c.Dir(), "ab", key)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		v, ok := c.Get(key)
		if ok && len(v) != 64 {
			t.Fatalf("hit with %d values", len(v))
		}
		if ok && len(b) != len(good) {
			t.Fatalf("hit on a %d-byte entry", len(b))
		}
	})
}

// TestNumerics: the arithmetic string names the network, its version and
// this build's backend, so that a new version or another kernel path
// keys another cache.
func TestNumerics(t *testing.T) {
	a, b := Numerics("inception-v3", 3), Numerics("inception-v3", 4)
	if a == b || a == Numerics("dinov2-vits14", 3) {
		t.Errorf("Numerics does not tell versions or networks apart: %q, %q", a, b)
	}
	if want := "inception-v3 arithmetic 3 on " + linalg.Backend(); a != want {
		t.Errorf("Numerics = %q, want %q", a, want)
	}
}
