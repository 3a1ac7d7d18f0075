package features

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/genlens/genlens/internal/tensor/linalg"
)

// CacheEnv names the environment variable that moves genlens's cache
// directory (the weights and the feature cache) away from
// os.UserCacheDir()/genlens.
const CacheEnv = "GENLENS_CACHE"

// CacheDir returns genlens's cache directory: $GENLENS_CACHE when set,
// else os.UserCacheDir()/genlens.
func CacheDir() (string, error) {
	if d := os.Getenv(CacheEnv); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory (%v); set $%s", err, CacheEnv)
	}
	return filepath.Join(base, "genlens"), nil
}

// Settings are everything besides an image that decides its features:
// the embedder, its preprocessing, the output, the feature length, the
// SHA-256 of the weights and the arithmetic that computes them. They key
// a Cache.
type Settings struct {
	Embedder      string // "inception-v3", "dinov2-vitl14", ...
	Preprocessing string // "pytorch-fid", "preset dgm-eval", ...
	Output        string // "2048", "logits_unbiased", "x_norm_clstoken", ...
	Dim           int
	WeightsSHA256 string
	// Numerics names the arithmetic: the version of the network's
	// kernels and the BLAS backend they run on ("inception-v3
	// arithmetic 3 on simdblas (...)"). A new kernel, convolution form
	// or backend moves features in their last bits (about 1e-7
	// relative), far within every fidelity bar, yet a cache that mixed
	// both would make a sharded run differ from a single pass. The cache
	// keys on it; provenance does not record it, so that statistics of
	// two builds still compare and merge.
	Numerics string
}

// Numerics returns Settings.Numerics for a network of the given name
// and arithmetic version on this build's BLAS backend (linalg.Backend,
// which names the CPU's kernel path): "inception-v3 arithmetic 3 on
// simdblas (...)".
func Numerics(network string, version int) string {
	return fmt.Sprintf("%s arithmetic %d on %s", network, version, linalg.Backend())
}

// Cache stores the features of single images on disk, keyed by the
// SHA-256 of the image file's bytes and by the Settings. A second run
// over the same images (the real set of every comparison against it)
// then reads features instead of running the network; a renamed or
// copied image still hits, an edited one misses.
//
// Entries live under Dir/features/<settings>/<ab>/<image hash>, one small
// file each (8 KiB for pool3), written to a temporary file and renamed
// into place, so readers never see half an entry. They are not synced to
// disk (thousands of fsyncs would cost more than the network saves on a
// small set); an entry that a crash left short or garbled fails its
// length or checksum test, is ignored, and is rewritten by the next run.
// Nothing is ever evicted: delete the directory to reclaim the space.
type Cache struct {
	dir string // Dir/features/<settings>
	dim int
}

// cacheMagic starts every entry; the version digit changes with the layout.
const cacheMagic = "GLF1"

// OpenCache returns the cache of features computed with settings s under
// dir (see CacheDir). It creates nothing until the first Put.
func OpenCache(dir string, s Settings) *Cache {
	h := sha256.Sum256(fmt.Appendf(nil, "genlens features\nembedder %s\npreprocessing %s\noutput %s\ndim %d\nweights %s\nnumerics %s\n",
		s.Embedder, s.Preprocessing, s.Output, s.Dim, s.WeightsSHA256, s.Numerics))
	return &Cache{dir: filepath.Join(dir, "features", hex.EncodeToString(h[:12])), dim: s.Dim}
}

// Exists reports whether any entry was ever stored with these settings.
func (c *Cache) Exists() bool {
	st, err := os.Stat(c.dir)
	return err == nil && st.IsDir()
}

// Dir returns the directory holding this cache's entries.
func (c *Cache) Dir() string { return c.dir }

func (c *Cache) path(key string) string {
	return filepath.Join(c.dir, key[:2], key)
}

// Get returns the features stored under key (an image's HashFile), and
// false when there are none or the entry is damaged; the caller then
// computes them and Put replaces the entry.
//
// Only a regular file of exactly the entry's size is read, and no more
// than that size: an entry that is a symbolic link (to /dev/zero, say, which
// would be read forever), a FIFO (whose open would block until a writer
// came) or a device is a miss. An entry holding a NaN or an infinity is
// damaged too, whatever its checksum: genlens never stores one (Put
// refuses them), and recomputing costs one image's forward pass where
// trusting it would turn every score of the run into NaN.
func (c *Cache) Get(key string) ([]float32, bool) {
	size := 12 + 4*c.dim
	b, ok := readEntry(c.path(key), size)
	if !ok || string(b[:4]) != cacheMagic || binary.LittleEndian.Uint32(b[4:]) != uint32(c.dim) {
		return nil, false
	}
	data := b[12:]
	if binary.LittleEndian.Uint32(b[8:]) != crc32.Checksum(data, crcTable) {
		return nil, false
	}
	v := make([]float32, c.dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		if math.IsNaN(float64(v[i])) || math.IsInf(float64(v[i]), 0) {
			return nil, false
		}
	}
	return v, true
}

// readEntry returns the size bytes of the regular file at path, false
// when it is anything else (missing, a link, a FIFO, a device, a
// directory) or of another size. The mode is checked on the link itself
// before opening; the open neither follows a link nor blocks on a FIFO
// (entryOpenFlags), in case the entry was swapped in between, and the
// opened file is checked again.
func readEntry(path string, size int) ([]byte, bool) {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() != int64(size) {
		return nil, false
	}
	f, err := os.OpenFile(path, os.O_RDONLY|entryOpenFlags, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fst, err := f.Stat(); err != nil || !fst.Mode().IsRegular() || !os.SameFile(st, fst) || fst.Size() != int64(size) {
		return nil, false
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, false
	}
	return b, true
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Put stores v under key, replacing any entry there.
func (c *Cache) Put(key string, v []float32) error {
	if len(v) != c.dim {
		return fmt.Errorf("features: feature cache: %d values, want %d", len(v), c.dim)
	}
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("features: feature cache: value %d is %v; not stored", i, x)
		}
	}
	b := make([]byte, 12+4*len(v))
	copy(b, cacheMagic)
	binary.LittleEndian.PutUint32(b[4:], uint32(c.dim))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[12+4*i:], math.Float32bits(x))
	}
	binary.LittleEndian.PutUint32(b[8:], crc32.Checksum(b[12:], crcTable))
	p := c.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("features: feature cache: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("features: feature cache: %w", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("features: feature cache: %w", err)
	}
	return nil
}

// HashFile returns the hex SHA-256 of the bytes of name in fsys, the key
// of its cache entry. Only regular files are read (a FIFO named x.png
// would block forever).
func HashFile(fsys fs.FS, name string) (string, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file (%s)", name, st.Mode().Type())
	}
	f, err := fsys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return hashReader(f)
}

// HashWeights returns the hex SHA-256 of a weights file on the host.
func HashWeights(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return hashReader(f)
}

// hashReader returns the hex SHA-256 of what r holds.
func hashReader(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
