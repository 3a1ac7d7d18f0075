package imagejob

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/genlens/genlens/job"
)

// Feature cache entries holding NaN (well formed, with a valid checksum)
// once gave a folder all-NaN statistics with success. They are damaged
// entries: the images are recomputed, the statistics are those of a run
// without the cache, and the entries are rewritten.
func TestFeatureCacheNaNEntriesRecomputed(t *testing.T) {
	dir, fsys := imageFixture(t)
	cache := t.TempDir()
	t.Setenv("GENLENS_CACHE", cache)
	req := NewStatsRequest()
	req.In, req.Weights, req.Dims = "real", filepath.Join(dir, "inception_random.pth"), "64"
	env := job.Env{Models: testModels, FS: fsys}
	first, err := Stats(context.Background(), env, req)
	if err != nil {
		t.Fatal(err)
	}
	// Poison every entry: NaN values, checksum recomputed.
	n := 0
	err = filepath.WalkDir(cache, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil || len(b) < 12 || string(b[:4]) != "GLF1" {
			return err
		}
		for i := 12; i+4 <= len(b); i += 4 {
			binary.LittleEndian.PutUint32(b[i:], math.Float32bits(float32(math.NaN())))
		}
		binary.LittleEndian.PutUint32(b[8:], crc32.Checksum(b[12:], crc32.MakeTable(crc32.Castagnoli)))
		n++
		return os.WriteFile(path, b, 0o644)
	})
	if err != nil || n != 3 {
		t.Fatalf("poisoned %d entries (%v), want the 3 images'", n, err)
	}
	again, err := Stats(context.Background(), env, req)
	if err != nil {
		t.Fatal(err)
	}
	if again.Images.Cached != 0 || again.Images.Computed != 3 {
		t.Errorf("cached %d, computed %d; want every NaN entry recomputed", again.Images.Cached, again.Images.Computed)
	}
	for i, v := range again.Stats.Mu {
		if math.IsNaN(v) || v != first.Stats.Mu[i] {
			t.Fatalf("mu[%d] = %v, want %v as without the cache", i, v, first.Stats.Mu[i])
		}
	}
	// The entries were rewritten: a third run reads them all.
	third, err := Stats(context.Background(), env, req)
	if err != nil || third.Images.Cached != 3 {
		t.Errorf("third run: %v, cached %d; want the 3 rewritten entries", err, third.Images.Cached)
	}
}
