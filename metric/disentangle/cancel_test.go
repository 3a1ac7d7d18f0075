package disentangle

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
)

// TestCancelStopsPixelCKA runs the pixel CKA of 64x64 images (4096 pixels,
// one batch of all 300 images: a P×P product of several seconds) and
// cancels it after 100 ms: it must return context.Canceled without
// finishing the batch, that is from inside the product, not between
// batches. Whether it stops is asked of the work done, not of a clock,
// so a loaded machine cannot fail it.
func TestCancelStopsPixelCKA(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates ~300 MB")
	}
	r := rand.New(rand.NewPCG(1, 2))
	const n, side = 300, 64
	x := mat.NewDense(n, side*side, nil)
	raw := x.RawMatrix().Data
	for i := range raw {
		raw[i] = 2*r.Float64() - 1
	}
	var finished atomic.Int32 // batches done
	progress := func(done, total int) { finished.Store(int32(done)) }
	for _, tc := range []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"PixelCKA", func(ctx context.Context) error {
			_, err := PixelCKA(ctx, x, Grid{side, side, 1}, 1e-3, n, progress)
			return err
		}},
		{"Analyze", func(ctx context.Context) error {
			_, err := Analyze(ctx, x, x, []*mat.Dense{x}, Grid{side, side, 1}, Options{CKABatch: n, Progress: progress})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			finished.Store(0)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- tc.run(ctx) }()
			time.Sleep(100 * time.Millisecond)
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v, want context.Canceled", err)
				}
				if b := finished.Load(); b != 0 {
					t.Errorf("the one batch finished (progress %d) before the cancel took effect", b)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("still running 60s after the cancel")
			}
		})
	}
}

// TestSizeRefusedUpFront: 8 images of 256x256 would need a 34 GB pixel
// CKA matrix; Analyze must refuse them with a *SizeError naming the size,
// before allocating it.
func TestSizeRefusedUpFront(t *testing.T) {
	const side = 256
	x := mat.NewDense(8, side*side, nil)
	for i := range 8 {
		x.Set(i, i, 1)
	}
	_, err := Analyze(context.Background(), x, x, []*mat.Dense{x}, Grid{side, side, 1}, Options{})
	var se *SizeError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a *SizeError", err)
	}
	t.Log(err)
	if se.Need < 34<<30 {
		t.Errorf("Need = %d bytes, want at least 34 GB", se.Need)
	}
	_, err = PixelCKA(context.Background(), x, Grid{side, side, 1}, 1, 8, nil)
	if !errors.As(err, &se) {
		t.Fatalf("PixelCKA: err = %v, want a *SizeError", err)
	}
}

func TestIncoherentClusters(t *testing.T) {
	r := &Result{
		Within:  []float64{0.5, 0.084, math.NaN()},
		Between: [][]float64{{0.5, 0.09, 0.01}, {0.09, 0.084, 0.02}, {0.01, 0.02, math.NaN()}},
	}
	if got := r.IncoherentClusters(); len(got) != 1 || got[0] != 1 {
		t.Errorf("IncoherentClusters = %v, want [1] (within 0.084 < 0.090 to cluster 0)", got)
	}
	if got := r.MaxBetween(1); got != 0.09 {
		t.Errorf("MaxBetween(1) = %v, want 0.09", got)
	}
}

// TestCancelStopsCompare compares 1000 real with 1000 generated images
// of 64x64 in four clusters of pixels (1.2 s uncancelled on 2 shared
// cores, in strips of 100 real images) and cancels it after 50 ms: it
// must return context.Canceled, which only a look at ctx inside the
// comparison gives (finished, it returns no error).
func TestCancelStopsCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates ~130 MB")
	}
	r := rand.New(rand.NewPCG(3, 4))
	const n, side = 1000, 64
	x, y := mat.NewDense(n, side*side, nil), mat.NewDense(n, side*side, nil)
	for _, m := range []*mat.Dense{x, y} {
		raw := m.RawMatrix().Data
		for i := range raw {
			raw[i] = 2*r.Float64() - 1
		}
	}
	labels := make([]int, side*side)
	for p := range labels {
		labels[p] = p % 4
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Compare(ctx, x, y, Grid{side, side, 1}, labels, 1e-3, 100)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("still running 60s after the cancel")
	}
}
