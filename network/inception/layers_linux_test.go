//go:build linux

package inception

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/network/features"
)

// threadSeconds is the CPU time of the calling OS thread.
func threadSeconds() float64 {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}

// layerTable sums the thread CPU time and multiply-adds of every step of
// the forward passes it traces, keeping the steps in the order of the
// first pass.
type layerTable struct {
	mu    sync.Mutex
	order []string
	sec   map[string]float64
	macs  map[string]int
}

type threadTracer struct {
	t     *layerTable
	last  float64
	names []string
	sec   []float64
	macs  []int
}

func (t *layerTable) start() layerTracer {
	// The goroutine stays on its thread so that the thread's clock is
	// the pass's.
	runtime.LockOSThread()
	return &threadTracer{t: t, last: threadSeconds()}
}

func (tr *threadTracer) layer(name string, macs int) {
	now := threadSeconds()
	tr.names = append(tr.names, name)
	tr.sec = append(tr.sec, now-tr.last)
	tr.macs = append(tr.macs, macs)
	tr.last = threadSeconds()
}

func (tr *threadTracer) done() {
	runtime.UnlockOSThread()
	t := tr.t
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, name := range tr.names {
		if _, ok := t.sec[name]; !ok {
			t.order = append(t.order, name)
		}
		t.sec[name] += tr.sec[i]
		t.macs[name] += tr.macs[i]
	}
}

// BenchmarkForwardLayers runs the forward pass as BenchmarkForward does,
// at batch 8 and 50, with every step timed on the thread that runs it,
// and logs per image each step's CPU milliseconds, multiply-adds and
// GFLOP/s (2 flops a multiply-add), so that a step running far below the
// kernels' rate shows. The step metrics say where the pass's time goes:
// conv-ms/image is the convolutions', other-ms/image the pools' and
// copies', and cpu-ms/image the process's (the difference being the
// scheduler, the garbage collector and the fc layer).
func BenchmarkForwardLayers(b *testing.B) {
	m := randomModel(b)
	names, err := features.ListImages(filepath.Join(shareddata.Path(b, fixtureDir), "images"), false)
	if err != nil {
		b.Fatal(err)
	}
	imgs := make([][]float32, len(names))
	for i, name := range names {
		if imgs[i], err = LoadImage(name, ModePyTorchFID); err != nil {
			b.Fatal(err)
		}
	}
	for _, n := range []int{8, 50} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			batch := make([][]float32, n)
			for i := range batch {
				batch[i] = imgs[i%len(imgs)]
			}
			t := &layerTable{sec: map[string]float64{}, macs: map[string]int{}}
			traceLayers = t.start
			defer func() { traceLayers = nil }()
			cpu0 := cpuSeconds()
			for b.Loop() {
				if _, err := m.Forward(context.Background(), batch, 0); err != nil {
					b.Fatal(err)
				}
			}
			images := float64(b.N * n)
			var report strings.Builder
			var conv, other float64
			fmt.Fprintf(&report, "%-32s %9s %8s %8s\n", "step", "MMAC", "cpu-ms", "GFLOP/s")
			for _, name := range t.order {
				ms, macs := t.sec[name]/images*1e3, float64(t.macs[name])/images
				gflops := 0.0
				if macs > 0 {
					gflops = 2 * macs / (ms * 1e6)
					conv += ms
				} else {
					other += ms
				}
				fmt.Fprintf(&report, "%-32s %9.1f %8.3f %8.1f\n", name, macs/1e6, ms, gflops)
			}
			b.Log("per image:\n" + report.String())
			b.ReportMetric(conv, "conv-ms/image")
			b.ReportMetric(other, "other-ms/image")
			b.ReportMetric((cpuSeconds()-cpu0)/images*1e3, "cpu-ms/image")
		})
	}
}
