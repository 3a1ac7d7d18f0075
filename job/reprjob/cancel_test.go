package reprjob

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/job"
)

// TestCKACancel: the Gram matrices of 4000 examples of 1500 dimensions
// are seconds of work each (the whole job 5.6 s linear, 13.4 s rbf, on 2
// shared cores), which the job once watched only between them.
// Cancelled after 200 ms, under both kernels, the job returns the
// context's error within a second or two.
func TestCKACancel(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates ~300 MB")
	}
	const n, d = 4000, 1500
	var b bytes.Buffer
	data := make([]float64, n*d)
	for i := range data {
		data[i] = float64(i%23) - 11 + float64(i%7)/10
	}
	if err := dataio.EncodeNPY(&b, &dataio.Array{Shape: []int{n, d}, Data: data}); err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{"x.npy": {Data: b.Bytes()}, "y.npy": {Data: b.Bytes()}}
	for _, kernel := range []string{"linear", "rbf"} {
		t.Run(kernel, func(t *testing.T) {
			req := NewCKARequest()
			req.X, req.Y, req.Kernel = "x.npy", "y.npy", kernel
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var cancelled time.Time
			time.AfterFunc(200*time.Millisecond, func() { cancelled = time.Now(); cancel() })
			_, err := CKA(ctx, job.Env{FS: fsys}, req)
			if !errors.Is(err, context.Canceled) || fault.Classify(err) != fault.KindCanceled {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if d := time.Since(cancelled); d > 2*time.Second {
				t.Errorf("returned %v after the cancel, want within 2 s", d)
			}
		})
	}
}
