//go:build unix

package features

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"testing/fstest"
	"time"
)

// A cache entry is read only when it is a regular file of its known
// size: a symbolic link (to /dev/zero, which a plain read would follow
// forever, or to a valid entry elsewhere), a FIFO (whose open would
// block) and a directory are misses, returned at once. An entry of valid
// layout and checksum holding a NaN is a miss too, and Put stores none.
func TestFeatureCacheEntries(t *testing.T) {
	dir := t.TempDir()
	c := OpenCache(dir, testSettings("pytorch-fid", "64", "w1"))
	v := make([]float32, 64)
	for i := range v {
		v[i] = float32(i)
	}
	key := func(s string) string { k, _ := HashFile(fstest.MapFS{"x": {Data: []byte(s)}}, "x"); return k }
	good := key("good")
	if err := c.Put(good, v); err != nil {
		t.Fatal(err)
	}
	entry := func(k string) string {
		p := c.path(k)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A symlink to a valid entry of the right size: followed, it would hit.
	if err := os.Symlink(c.path(good), entry(key("link"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", entry(key("zero"))); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(entry(key("fifo")), 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	if err := os.Mkdir(entry(key("dir")), 0o755); err != nil {
		t.Fatal(err)
	}
	// A NaN with a valid checksum: the bytes Put would write for it.
	nan := slices.Clone(v)
	nan[7] = float32(math.NaN())
	b := make([]byte, 12+4*64)
	copy(b, cacheMagic)
	binary.LittleEndian.PutUint32(b[4:], 64)
	for i, x := range nan {
		binary.LittleEndian.PutUint32(b[12+4*i:], math.Float32bits(x))
	}
	binary.LittleEndian.PutUint32(b[8:], crc32.Checksum(b[12:], crcTable))
	if err := os.WriteFile(entry(key("nan")), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"link", "zero", "fifo", "dir", "nan"} {
		done := make(chan bool, 1)
		go func() { _, ok := c.Get(key(name)); done <- ok }()
		select {
		case ok := <-done:
			if ok {
				t.Errorf("%s: Get hit; want a miss", name)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Get still running after 5 s", name)
		}
	}
	if _, ok := c.Get(good); !ok {
		t.Error("the regular entry missed")
	}
	if err := c.Put(key("nan"), nan); err == nil {
		t.Error("Put stored a NaN")
	}
	inf := slices.Clone(v)
	inf[0] = float32(math.Inf(-1))
	if err := c.Put(key("inf"), inf); err == nil {
		t.Error("Put stored an infinity")
	}
}
