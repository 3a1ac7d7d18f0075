package imagejob

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/job"
)

// withRepeatedScan returns a progressive JPEG (imageio's test file, 10
// scans) with its first scan repeated extra more times.
func withRepeatedScan(t *testing.T, extra int) []byte {
	t.Helper()
	jpg, err := os.ReadFile(filepath.Join("..", "..", "network", "features", "testdata", "progressive.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	sos := bytes.Index(jpg, []byte{0xff, 0xda})
	end := sos + 2 + (int(jpg[sos+2])<<8 | int(jpg[sos+3]))
	for jpg[end] != 0xff || jpg[end+1] == 0 || jpg[end+1] >= 0xd0 && jpg[end+1] <= 0xd7 {
		end++
	}
	out := append([]byte(nil), jpg[:end]...)
	for range extra {
		out = append(out, jpg[sos:end]...)
	}
	return append(out, jpg[end:]...)
}

// A JPEG whose scan repeats 20,000 times in a folder of images is bad
// input naming it, refused before decoding (which would take minutes on a
// large image), as the service's 422 and the command line's exit 2.
func TestImageFolderRepeatedScans(t *testing.T) {
	dir, fsys := imageFixture(t)
	t.Setenv("GENLENS_CACHE", t.TempDir())
	fsys["fake/zz_scans.jpg"] = &fstest.MapFile{Data: withRepeatedScan(t, 20000)}
	req := NewCompareRequest()
	req.Real, req.Fake, req.Weights, req.NoCache = "real", "fake", filepath.Join(dir, "inception_random.pth"), true
	_, err := Compare(context.Background(), job.Env{Models: testModels, FS: fsys}, req)
	if fault.Classify(err) != fault.KindInput || !strings.Contains(err.Error(), "fake/zz_scans.jpg") || !strings.Contains(err.Error(), "scans") {
		t.Errorf("repeated scans: %v (%v)", err, fault.Classify(err))
	}
}

// A job's deadline (the service's max_job_runtime) reaches the decoding
// of a folder: images are decoded one context check apart (par.For), so
// a folder of slow JPEGs ends canceled soon after the deadline, not
// minutes later.
func TestImageFolderDeadline(t *testing.T) {
	dir, _ := imageFixture(t)
	t.Setenv("GENLENS_CACHE", t.TempDir())
	// A valid progressive JPEG of 500 scans, the limit for its size.
	slow, err := os.ReadFile(filepath.Join("..", "..", "network", "features", "testdata", "scans500.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	const n = 2000
	for i := range n {
		fsys[fmt.Sprintf("real/%04d.jpg", i)] = &fstest.MapFile{Data: slow}
	}
	req := NewStatsRequest()
	req.In, req.Weights, req.NoCache = "real", filepath.Join(dir, "inception_random.pth"), true
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var done int
	start := time.Now()
	_, err = Stats(ctx, job.Env{Models: testModels, FS: fsys, Progress: func(d, total int) {
		if total == n {
			done = d
		}
	}}, req)
	if fault.Classify(err) != fault.KindCanceled {
		t.Fatalf("err = %v (%v), want canceled", err, fault.Classify(err))
	}
	// Decoding and the network stop within a batch of the deadline (the
	// whole folder takes minutes).
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("the job ran %v past a 3 s deadline", d)
	}
	t.Logf("stopped after %d of %d images, %v", done, n, time.Since(start))
}
