package features

import (
	"context"
	"io/fs"
	"sync/atomic"
	"time"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
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
	Workers int   // goroutines decoding; <= 0: one per CPU
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
// images are in memory.
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
			b.err = par.For(ctx, n, p.Workers, func(_ context.Context, i int) error {
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
				img, err := Decode(fsys, name)
				if err == nil {
					if b.imgs[i], err = e.Preprocess(img); err != nil {
						err = &fault.InputError{File: name, Msg: err.Error()}
					}
				}
				p.decodeNS.Add(int64(time.Since(t0)))
				return err
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
