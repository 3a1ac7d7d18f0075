package job

import (
	"container/list"
	"fmt"
	"os"
	"sync"
)

// DefaultModelCacheBytes bounds a ModelCache made for a process that does
// not choose: room for the Inception-v3 weights (95 MB) and a ViT-L/14
// (1.2 GB) at once.
const DefaultModelCacheBytes = 1536 << 20

// ModelCache keeps networks loaded from weights files for the jobs that
// follow, since unpickling and folding the weights takes seconds. Its
// owner makes it (the command line once per process, each job service
// its own) and hands it to jobs through Env.Models; a nil *ModelCache
// loads the weights for every job.
//
// An entry is a network of one kind (inception, a ViT's name) loaded from
// one weights file; a file changed on disk (size or modification time) is
// loaded again. The cache holds at most maxBytes of weights, counted as
// their files' sizes, and drops the least recently used networks to make
// room before loading another. A network larger than the bound is loaded
// for its job and not kept. Loads are serialised, so that two jobs
// wanting the same network load it once.
type ModelCache struct {
	mu       sync.Mutex
	maxBytes int64
	bytes    int64
	lru      *list.List // of *modelEntry, most recently used first
	byKey    map[string]*list.Element
}

type modelEntry struct {
	key   string
	size  int64
	model any
}

// NewModelCache returns an empty cache holding at most maxBytes of
// weights (0 or less: DefaultModelCacheBytes).
func NewModelCache(maxBytes int64) *ModelCache {
	if maxBytes <= 0 {
		maxBytes = DefaultModelCacheBytes
	}
	return &ModelCache{maxBytes: maxBytes, lru: list.New(), byKey: map[string]*list.Element{}}
}

// Len returns the number of networks kept and the bytes they count for.
func (c *ModelCache) Len() (n int, bytes int64) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.bytes
}

// get returns the network of kind loaded from path, calling load (with
// path) when the cache does not have it.
func (c *ModelCache) get(kind, path string, load func(string) (any, error)) (any, error) {
	if c == nil {
		return load(path)
	}
	key := kind + "\x00" + path
	var size int64
	if st, err := os.Stat(path); err == nil {
		size = st.Size()
		key = fmt.Sprintf("%s\x00%d\x00%d", key, size, st.ModTime().UnixNano())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*modelEntry).model, nil
	}
	keep := size <= c.maxBytes
	if keep {
		// Free the room first: the old networks need not stay in memory
		// while the new one loads.
		for c.bytes+size > c.maxBytes && c.lru.Len() > 0 {
			c.remove(c.lru.Back())
		}
	}
	m, err := load(path)
	if err != nil {
		return nil, err
	}
	if keep {
		c.byKey[key] = c.lru.PushFront(&modelEntry{key: key, size: size, model: m})
		c.bytes += size
	}
	return m, nil
}

func (c *ModelCache) remove(e *list.Element) {
	me := c.lru.Remove(e).(*modelEntry)
	delete(c.byKey, me.key)
	c.bytes -= me.size
}

// CachedLoad returns the network of kind loaded from path by load, through
// c (which may be nil).
func CachedLoad[M any](c *ModelCache, kind, path string, load func(string) (M, error)) (M, error) {
	m, err := c.get(kind, path, func(p string) (any, error) { return load(p) })
	if err != nil {
		var zero M
		return zero, err
	}
	return m.(M), nil
}
