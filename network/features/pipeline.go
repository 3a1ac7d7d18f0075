package features

import (
	"context"
	"image"
	"io/fs"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/tensor/membudget"
	"github.com/genlens/genlens/internal/tensor/par"
)

// Pipeline computes the features of image files with an ImageEmbedder:
// the images are decoded and preprocessed on worker goroutines one batch
// ahead of the network, features go batch by batch to whatever consumes
// them, and a Cache skips the network for images seen before with the
// same settings. Its counters add up over every Run.
type Pipeline struct {
	FS      fs.FS // where the image files are; nil is the host
	Batch   int   // images run through the network together
	Workers int   // goroutines decoding; <= 0 or past the CPUs: one per CPU (Workers)
	// CacheError, when set, hears of an entry that could not be stored
	// (the features are still computed, only not kept).
	CacheError func(error)

	Cached   int // images read from the cache
	Computed int // images run through the network
	// Where the time goes: decoding and preprocessing summed over the
	// workers (it overlaps the network), the network, waiting for
	// decoded images (the part of decoding the network did not hide),
	// the consumer of the features, and loading the network.
	decodeNS                   atomic.Int64
	Network, Wait, Sink, Loads time.Duration

	loaded map[any]bool
}

// Workers is the goroutines that n asks to decode images with: n, capped
// at the CPUs the process may use (runtime.GOMAXPROCS), which <= 0 asks
// for. More would only hold more decoded images at once: decoding is
// CPU-bound.
func Workers(n int) int {
	if c := runtime.GOMAXPROCS(0); n <= 0 || n > c {
		return c
	}
	return n
}

// Decode returns the time spent decoding and preprocessing, summed over
// the workers.
func (p *Pipeline) Decode() time.Duration { return time.Duration(p.decodeNS.Load()) }

// prepared is one batch of images on its way to the network: cached
// features where the cache had them, preprocessed images elsewhere.
type prepared struct {
	feats [][]float32
	imgs  [][]float32
	keys  []string
	err   error
}

// load loads e's network once per pipeline, counting the time.
func (p *Pipeline) load(e ImageEmbedder) error {
	if p.loaded[e] {
		return nil
	}
	t0 := time.Now()
	err := e.Load()
	p.Loads += time.Since(t0)
	if err == nil {
		if p.loaded == nil {
			p.loaded = map[any]bool{}
		}
		p.loaded[e] = true
	}
	return err
}

// Run computes the features of files with e, in order, and hands them to
// sink batch by batch (sink may keep the rows), calling tick with the
// number of images each batch finished. cache may be nil. The next batch
// is decoded while the network runs on this one; at most three batches of
// images are in memory. Every image is priced before its pixels are
// decoded (DecodedBytes): one over the matrix memory budget is refused
// (membudget), and the images decoding at once hold at most the budget
// together (a worker waits for room) and are reserved process-wide
// (membudget.Reserve) until preprocessed.
func (p *Pipeline) Run(ctx context.Context, e ImageEmbedder, cache *Cache, files []string, sink func([][]float32) error, tick func(int)) error {
	fsys := p.FS
	if fsys == nil {
		fsys = dataio.HostFS
	}
	batch := max(1, p.Batch)
	if !p.loaded[e] && (cache == nil || !cache.Exists()) {
		// Nothing cached with these weights yet: load them before any
		// image, so that a bad weights file is reported first. With
		// entries under their hash, they loaded before, and a run that
		// only hits the cache need not spend seconds loading them.
		if err := p.load(e); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	held := semaphore.NewWeighted(membudget.Limit())
	ch := make(chan *prepared, 1)
	defer func() {
		cancel()
		for range ch { // let the producer finish before returning
		}
	}()
	go func() {
		defer close(ch)
		for lo := 0; lo < len(files); lo += batch {
			n := min(batch, len(files)-lo)
			b := &prepared{feats: make([][]float32, n), imgs: make([][]float32, n), keys: make([]string, n)}
			b.err = par.For(ctx, n, Workers(p.Workers), func(ctx context.Context, i int) error {
				name := files[lo+i]
				if cache != nil {
					// A file that cannot be hashed is reported by the
					// decoder below, in the words of every other image error.
					if k, err := HashFile(fsys, name); err == nil {
						b.keys[i] = k
						if v, ok := cache.Get(k); ok {
							b.feats[i] = v
							return nil
						}
					}
				}
				t0 := time.Now()
				defer func() { p.decodeNS.Add(int64(time.Since(t0))) }()
				var release func()
				img, err := decodeImage(fsys, name, func(cfg image.Config) (err error) {
					release, err = admitImage(ctx, held, name, cfg)
					return err
				})
				if release != nil {
					defer release()
				}
				if err != nil {
					return err
				}
				if b.imgs[i], err = e.Preprocess(ToRGB(img)); err != nil {
					return &fault.InputError{File: name, Msg: err.Error()}
				}
				return nil
			})
			select {
			case ch <- b:
			case <-ctx.Done():
				return
			}
			if b.err != nil {
				return
			}
		}
	}()
	for {
		t0 := time.Now()
		b, ok := <-ch
		p.Wait += time.Since(t0)
		if !ok {
			break
		}
		if b.err != nil {
			return b.err
		}
		var idx []int
		var imgs [][]float32
		for i, img := range b.imgs {
			if img != nil {
				idx = append(idx, i)
				imgs = append(imgs, img)
			}
		}
		if len(imgs) > 0 {
			if err := p.load(e); err != nil {
				return err
			}
			t0 := time.Now()
			fs, err := e.Forward(ctx, imgs)
			p.Network += time.Since(t0)
			if err != nil {
				return err
			}
			p.Computed += len(imgs)
			for j, i := range idx {
				b.feats[i] = fs[j]
				b.imgs[i] = nil
				if cache != nil && b.keys[i] != "" {
					if err := cache.Put(b.keys[i], b.feats[i]); err != nil && p.CacheError != nil {
						p.CacheError(err)
					}
				}
			}
		}
		p.Cached += len(b.feats) - len(imgs)
		t0 = time.Now()
		err := sink(b.feats)
		p.Sink += time.Since(t0)
		if err != nil {
			return err
		}
		tick(len(b.feats))
	}
	return ctx.Err()
}

// admitImage admits an image of cfg among those one pipeline decodes at
// once: refused over the budget alone (reserve's error), it waits until
// ctx ends for the others to leave room in held, then reserves it
// process-wide. release gives both back.
func admitImage(ctx context.Context, held *semaphore.Weighted, name string, cfg image.Config) (release func(), err error) {
	need := DecodedBytes(cfg)
	if need > membudget.Limit() {
		return reserve(name, cfg) // the budget's refusal, in the image's words
	}
	if err := held.Acquire(ctx, need); err != nil {
		return nil, err
	}
	free, err := reserve(name, cfg)
	if err != nil {
		held.Release(need)
		return nil, err
	}
	return func() { free(); held.Release(need) }, nil
}
