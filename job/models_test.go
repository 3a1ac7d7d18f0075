package job

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// weightsFile writes a file of n bytes standing for weights.
func weightsFile(t *testing.T, dir, name string, n int) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// countingLoad returns a loader that counts its calls per path and
// returns a fresh value each time.
func countingLoad(calls map[string]int) func(string) (*int, error) {
	return func(p string) (*int, error) {
		calls[p]++
		v := calls[p]
		return &v, nil
	}
}

func TestModelCacheKeepsAndReloadsChanged(t *testing.T) {
	dir := t.TempDir()
	a := weightsFile(t, dir, "a.pth", 10)
	c := NewModelCache(100)
	calls := map[string]int{}
	load := countingLoad(calls)
	m1, err := CachedLoad(c, "inception", a, load)
	if err != nil {
		t.Fatal(err)
	}
	m2, _ := CachedLoad(c, "inception", a, load)
	if m1 != m2 || calls[a] != 1 {
		t.Errorf("second get: same = %v, loads = %d; want the kept network, 1 load", m1 == m2, calls[a])
	}
	// Another kind of network from the same file is another entry.
	if _, err := CachedLoad(c, "vit", a, load); err != nil {
		t.Fatal(err)
	}
	if calls[a] != 2 {
		t.Errorf("loads after another kind = %d, want 2", calls[a])
	}
	// A file changed on disk is loaded again.
	if err := os.WriteFile(a, make([]byte, 12), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(a, later, later); err != nil {
		t.Fatal(err)
	}
	m3, _ := CachedLoad(c, "inception", a, load)
	if m3 == m1 || calls[a] != 3 {
		t.Errorf("changed file: reloaded = %v, loads = %d; want a new load (3)", m3 != m1, calls[a])
	}
	// A failed load is not kept.
	bad := errors.New("not a weights file")
	for i := 0; i < 2; i++ {
		if _, err := CachedLoad(c, "inception", filepath.Join(dir, "missing.pth"), func(string) (*int, error) { return nil, bad }); !errors.Is(err, bad) {
			t.Fatalf("failed load: err = %v, want %v", err, bad)
		}
	}
}

func TestModelCacheBound(t *testing.T) {
	dir := t.TempDir()
	a := weightsFile(t, dir, "a.pth", 40)
	b := weightsFile(t, dir, "b.pth", 40)
	d := weightsFile(t, dir, "d.pth", 40)
	huge := weightsFile(t, dir, "huge.pth", 101)
	c := NewModelCache(100)
	calls := map[string]int{}
	load := countingLoad(calls)
	get := func(p string) {
		t.Helper()
		if _, err := CachedLoad(c, "inception", p, load); err != nil {
			t.Fatal(err)
		}
	}
	get(a)
	get(b)
	get(a) // a is now the most recently used: b goes first
	get(d) // 120 bytes > 100: b is dropped
	if n, bytes := c.Len(); n != 2 || bytes != 80 {
		t.Errorf("after a, b, a, d: %d networks, %d bytes; want 2, 80", n, bytes)
	}
	get(a)
	get(d)
	if calls[a] != 1 || calls[d] != 1 {
		t.Errorf("loads of a, d = %d, %d; want 1, 1 (both kept)", calls[a], calls[d])
	}
	get(b)
	if calls[b] != 2 {
		t.Errorf("loads of b = %d, want 2 (it was dropped)", calls[b])
	}
	// Larger than the bound: loaded each time, never kept, nothing dropped.
	get(huge)
	get(huge)
	if n, bytes := c.Len(); calls[huge] != 2 || n != 2 || bytes != 80 {
		t.Errorf("huge: loads %d, cache %d networks %d bytes; want 2 loads and the cache as it was (2, 80)", calls[huge], n, bytes)
	}
}

func TestModelCacheNil(t *testing.T) {
	a := weightsFile(t, t.TempDir(), "a.pth", 10)
	var c *ModelCache
	calls := map[string]int{}
	for i := 0; i < 2; i++ {
		if _, err := CachedLoad(c, "inception", a, countingLoad(calls)); err != nil {
			t.Fatal(err)
		}
	}
	if calls[a] != 2 {
		t.Errorf("nil cache: loads = %d, want 2 (one per job)", calls[a])
	}
	if n, bytes := c.Len(); n != 0 || bytes != 0 {
		t.Errorf("nil cache Len = %d, %d", n, bytes)
	}
}
