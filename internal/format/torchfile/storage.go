package torchfile

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path"

	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/pytorch"
	"github.com/nlpodyssey/gopickle/types"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/tensor/membudget"
)

// The loaders below read torch.save files through gopickle's unpickler
// and tensor types, but allocate every storage themselves: gopickle's own
// pytorch.Load allocates the element count a file claims before reading
// a byte of it (15 bytes of pickle claiming a 2^40-byte storage stop the
// process), and converts float16 subnormals wrongly. Here each claimed
// storage is checked against the bytes that hold it (its zip record,
// the rest of a legacy file) first, and each pickle is scanned for
// declared lengths past its end (scanPickle) before it is unpickled.

// storageElem returns the element size of a storage class, 0 when genlens
// does not read it.
func storageElem(c pytorch.StorageClassInterface) int64 {
	switch c.(type) {
	case *pytorch.FloatStorageClass, *pytorch.IntStorageClass:
		return 4
	case *pytorch.DoubleStorageClass, *pytorch.LongStorageClass:
		return 8
	case *pytorch.HalfStorageClass, *pytorch.BFloat16StorageClass, *pytorch.ShortStorageClass:
		return 2
	case *pytorch.CharStorageClass, *pytorch.ByteStorageClass, *pytorch.BoolStorageClass:
		return 1
	}
	return 0
}

// torchClass is the one allowlist of the classes a pickle may name: the
// tensor rebuilder and the storage types (BFloat16 included, for
// checkpoints saved in bfloat16); any other is refused, since resolving a
// class is how a pickle runs code (a state dict is tensors in an
// OrderedDict, which the unpickler knows itself; a TorchScript archive
// adds only its own __torch__ module classes, see ReadTorchScript).
func torchClass(module, name string) (any, error) {
	switch module + "." + name {
	case "torch._utils._rebuild_tensor_v2":
		return &pytorch.RebuildTensorV2{}, nil
	case "torch.FloatStorage":
		return &pytorch.FloatStorageClass{}, nil
	case "torch.HalfStorage":
		return &pytorch.HalfStorageClass{}, nil
	case "torch.DoubleStorage":
		return &pytorch.DoubleStorageClass{}, nil
	case "torch.CharStorage":
		return &pytorch.CharStorageClass{}, nil
	case "torch.ShortStorage":
		return &pytorch.ShortStorageClass{}, nil
	case "torch.IntStorage":
		return &pytorch.IntStorageClass{}, nil
	case "torch.LongStorage":
		return &pytorch.LongStorageClass{}, nil
	case "torch.ByteStorage":
		return &pytorch.ByteStorageClass{}, nil
	case "torch.BoolStorage":
		return &pytorch.BoolStorageClass{}, nil
	case "torch.BFloat16Storage":
		return &pytorch.BFloat16StorageClass{}, nil
	}
	return nil, fmt.Errorf("class %s.%s not expected in a state dict", module, name)
}

// budget prices the storages of one file against the matrix budget
// (membudget) before each is allocated: a zip record may decompress to
// MaxCompressionRatio times its size, and float16 storages are held as
// float32, so a file's storages can take more than the file.
type budget struct {
	file  string
	used  int64
	limit int64 // membudget.Limit, read once (the default reads /proc)
	err   error // the refusal, kept because the unpickler's errors lose its kind
}

// add prices the storage of ref, in the bytes it takes once read.
func (b *budget) add(ref storageRef) error {
	es := storageElem(ref.class)
	switch ref.class.(type) {
	case *pytorch.HalfStorageClass, *pytorch.BFloat16StorageClass:
		es = 4 // held as float32
	}
	b.used += int64(ref.n) * es
	if b.limit == 0 {
		b.limit = membudget.Limit()
	}
	if b.used <= b.limit {
		return nil
	}
	if err := membudget.CheckBytes(fmt.Sprintf("the storages of the weights %s up to storage %s", b.file, ref.key), 1, ref.n, b.used); err != nil {
		b.err = err
		return err
	}
	return nil
}

// storageRef is a storage a pickle refers to: (class, key, location, n).
type storageRef struct {
	class pytorch.StorageClassInterface
	key   string
	loc   string
	n     int
}

// parseStorageRef reads a persistent id ("storage", class, key, location,
// n[, view]) and checks what does not depend on the file.
func parseStorageRef(id any, legacy bool) (storageRef, error) {
	t, ok := id.(*types.Tuple)
	if !ok || t.Len() < 5 {
		return storageRef{}, fmt.Errorf("unexpected persistent id %v", id)
	}
	if s, _ := t.Get(0).(string); s != "storage" {
		return storageRef{}, fmt.Errorf("persistent id of type %v, want storage", t.Get(0))
	}
	var r storageRef
	var ok1, ok2, ok3, ok4 bool
	r.class, ok1 = t.Get(1).(pytorch.StorageClassInterface)
	r.key, ok2 = t.Get(2).(string)
	r.loc, ok3 = t.Get(3).(string)
	r.n, ok4 = t.Get(4).(int)
	if !ok1 || !ok2 || !ok3 || !ok4 || r.n < 0 {
		return storageRef{}, fmt.Errorf("unexpected storage reference %v", id)
	}
	if legacy && t.Len() > 5 && t.Get(5) != nil {
		return storageRef{}, errors.New("storage views (pre-0.4 files) are not supported")
	}
	return r, nil
}

// readStorage allocates the storage of ref and fills it with its n
// elements read from r; the caller has checked that r holds them.
// float16 is converted here, exactly (gopickle 0.2.0 turns subnormals
// such as 0x0110, 1.6e-5, into 7.7e-5).
func readStorage(ref storageRef, n int, r io.Reader) (pytorch.StorageInterface, error) {
	s := ref.class.New(n, ref.loc)
	if hs, ok := s.(*pytorch.HalfStorage); ok {
		raw := make([]byte, 2*n)
		if _, err := io.ReadFull(r, raw); err != nil {
			return nil, truncated(err)
		}
		hs.Data = make([]float32, n)
		for i := range hs.Data {
			hs.Data[i] = Float16(binary.LittleEndian.Uint16(raw[2*i:]))
		}
		return s, nil
	}
	// gopickle's readers ignore a short read of the last element; count
	// what they take.
	cr := &countReader{r: r}
	if err := s.SetFromFileWithSize(cr, n); err != nil {
		return nil, truncated(err)
	}
	if want := int64(n) * storageElem(ref.class); cr.n != want {
		return nil, fmt.Errorf("storage %s: %d of its %d bytes: %w", ref.key, cr.n, want, io.ErrUnexpectedEOF)
	}
	return s, nil
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readPickle returns the bytes of a pickle stored as a zip record
// (a .pt or .pth archive's data.pkl), checked to be one pickle whose
// opcodes declare no length past its end (see scanPickle), so that
// gopickle's unpickler can read it without allocating more than it holds.
// fileSize is the size of the archive.
func readPickle(f *zip.File, fileSize int64) ([]byte, error) {
	b, err := readRecord(f, min(fileSize*dataio.MaxCompressionRatio, maxPickle))
	if err != nil {
		return nil, err
	}
	if _, err := scanPickle(bytes.NewReader(b), int64(len(b))); err != nil {
		return nil, err
	}
	return b, nil
}

// unpickleChecked unpickles b, a pickle checked by readPickle, with the
// classes resolved by find (torchClass, or a function that falls back on
// it) and persistent loads handled by load.
func unpickleChecked(b []byte, find func(module, name string) (any, error), load func(id any) (any, error)) (any, error) {
	u := pickle.NewUnpickler(bytes.NewReader(b))
	u.FindClass = find
	u.PersistentLoad = load
	return u.Load()
}

// readRecord returns the bytes of a small zip record (a pickle), refusing
// one whose size passes limit or whose compression passes
// dataio.MaxCompressionRatio.
func readRecord(f *zip.File, limit int64) ([]byte, error) {
	if f.UncompressedSize64 > uint64(limit) {
		return nil, fmt.Errorf("%s claims %d bytes, more than %d", f.Name, f.UncompressedSize64, limit)
	}
	if f.UncompressedSize64 > max(f.CompressedSize64, 1)*uint64(dataio.MaxCompressionRatio) {
		return nil, fmt.Errorf("%s decompresses to more than %d times its size", f.Name, dataio.MaxCompressionRatio)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b := make([]byte, f.UncompressedSize64)
	if _, err := io.ReadFull(rc, b); err != nil {
		return nil, truncated(err)
	}
	return b, nil
}

// loadZipPickle loads the zip serialisation (torch 1.6 on): a data.pkl
// whose persistent ids name records data/<key>, each the raw elements
// of one storage. A storage must fill its record exactly.
func loadZipPickle(name string, size int64, b *budget) (any, error) {
	zr, err := zip.OpenReader(name)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	records := map[string]*zip.File{}
	for _, f := range zr.File {
		_, base := path.Split(f.Name)
		records[base] = f
	}
	df, ok := records["data.pkl"]
	if !ok {
		return nil, errors.New("data.pkl not found in the zip file")
	}
	data, err := readPickle(df, size)
	if err != nil {
		return nil, err
	}
	return unpickleChecked(data, torchClass, zipStorages(records, size, b))
}

// zipStorages returns the persistent load of a zip archive's pickle:
// each storage reference is read from records[key] (the record
// <archive>/data/<key>), once, after its claimed size is checked
// against the record's and the record's against the file's size.
func zipStorages(records map[string]*zip.File, size int64, b *budget) func(id any) (any, error) {
	storages := map[string]pytorch.StorageInterface{}
	return func(id any) (any, error) {
		ref, err := parseStorageRef(id, false)
		if err != nil {
			return nil, err
		}
		if s, ok := storages[ref.key]; ok {
			return s, nil
		}
		rec, ok := records[ref.key]
		if !ok {
			return nil, fmt.Errorf("storage %s missing from the zip file", ref.key)
		}
		es := storageElem(ref.class)
		if es == 0 {
			return nil, fmt.Errorf("storage %s: unsupported type %T", ref.key, ref.class)
		}
		need := new(big.Int).Mul(big.NewInt(int64(ref.n)), big.NewInt(es))
		if need.Cmp(new(big.Int).SetUint64(rec.UncompressedSize64)) != 0 {
			return nil, fmt.Errorf("storage %s claims %d elements (%s bytes), its record holds %d bytes", ref.key, ref.n, need, rec.UncompressedSize64)
		}
		if rec.UncompressedSize64 > max(rec.CompressedSize64, 1)*uint64(dataio.MaxCompressionRatio) || rec.CompressedSize64 > uint64(size) {
			return nil, fmt.Errorf("storage %s: its record claims %d bytes from %d compressed in a file of %d", ref.key, rec.UncompressedSize64, rec.CompressedSize64, size)
		}
		if err := b.add(ref); err != nil {
			return nil, err
		}
		rc, err := rec.Open()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		s, err := readStorage(ref, ref.n, rc)
		if err != nil {
			return nil, err
		}
		storages[ref.key] = s
		return s, nil
	}
}

// legacyMagicNumber opens a legacy file's pickles.
var legacyMagicNumber, _ = new(big.Int).SetString("1950a86a20f9469cfc6c", 16)

// loadLegacyPickle loads the legacy serialisation (before torch 1.6):
// pickles of the magic number, the protocol version, system information,
// the object and the list of storage keys, then each storage as an 8-byte
// element count and its elements, up to the end of the file.
func loadLegacyPickle(name string, size int64, b *budget) (any, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var off int64
	next := func(load func(any) (any, error)) (any, error) {
		n, err := scanPickle(io.NewSectionReader(f, off, size-off), size-off)
		if err != nil {
			return nil, err
		}
		u := pickle.NewUnpickler(bufio.NewReader(io.NewSectionReader(f, off, n)))
		u.FindClass = torchClass
		u.PersistentLoad = load
		off += n
		return u.Load()
	}
	none := func(id any) (any, error) { return nil, fmt.Errorf("unexpected persistent id %v", id) }
	magic, err := next(none)
	if err != nil {
		return nil, err
	}
	if m, ok := magic.(*big.Int); !ok || m.Cmp(legacyMagicNumber) != 0 {
		return nil, errors.New("not a legacy PyTorch file: wrong magic number")
	}
	if v, err := next(none); err != nil {
		return nil, err
	} else if v != 1001 {
		return nil, fmt.Errorf("legacy protocol version %v, want 1001", v)
	}
	if _, err := next(none); err != nil { // system information
		return nil, err
	}
	refs := map[string]storageRef{}
	storages := map[string]pytorch.StorageInterface{}
	obj, err := next(func(id any) (any, error) {
		ref, err := parseStorageRef(id, true)
		if err != nil {
			return nil, err
		}
		if s, ok := storages[ref.key]; ok {
			return s, nil
		}
		if storageElem(ref.class) == 0 {
			return nil, fmt.Errorf("storage %s: unsupported type %T", ref.key, ref.class)
		}
		// The elements come after the pickles; the tensors keep this
		// (empty) storage, filled in below.
		s := ref.class.New(ref.n, ref.loc)
		refs[ref.key], storages[ref.key] = ref, s
		return s, nil
	})
	if err != nil {
		return nil, err
	}
	keysObj, err := next(none)
	if err != nil {
		return nil, err
	}
	list, ok := keysObj.(*types.List)
	if !ok {
		return nil, fmt.Errorf("storage keys are a %T, not a list", keysObj)
	}
	for i := 0; i < list.Len(); i++ {
		key, ok := list.Get(i).(string)
		if !ok {
			return nil, fmt.Errorf("storage key %v is not a string", list.Get(i))
		}
		ref, ok := refs[key]
		if !ok {
			return nil, fmt.Errorf("storage %s is not referred to", key)
		}
		var cnt [8]byte
		if _, err := f.ReadAt(cnt[:], off); err != nil {
			return nil, truncated(err)
		}
		off += 8
		n := binary.LittleEndian.Uint64(cnt[:])
		es := uint64(storageElem(ref.class))
		if n > uint64(size-off)/es {
			return nil, fmt.Errorf("storage %s claims %d elements of %d bytes, but the file has %d bytes left: %w", key, n, es, size-off, io.ErrUnexpectedEOF)
		}
		ref.n = int(n)
		if err := b.add(ref); err != nil {
			return nil, err
		}
		s, err := readStorage(ref, int(n), io.NewSectionReader(f, off, int64(n*es)))
		if err != nil {
			return nil, err
		}
		off += int64(n * es)
		fill(storages[key], s)
	}
	return obj, nil
}

// fill copies the elements of src into dst, a storage of the same type
// that tensors already point to.
func fill(dst, src pytorch.StorageInterface) {
	switch d := dst.(type) {
	case *pytorch.FloatStorage:
		*d = *src.(*pytorch.FloatStorage)
	case *pytorch.HalfStorage:
		*d = *src.(*pytorch.HalfStorage)
	case *pytorch.DoubleStorage:
		*d = *src.(*pytorch.DoubleStorage)
	case *pytorch.BFloat16Storage:
		*d = *src.(*pytorch.BFloat16Storage)
	case *pytorch.LongStorage:
		*d = *src.(*pytorch.LongStorage)
	case *pytorch.IntStorage:
		*d = *src.(*pytorch.IntStorage)
	case *pytorch.ShortStorage:
		*d = *src.(*pytorch.ShortStorage)
	case *pytorch.CharStorage:
		*d = *src.(*pytorch.CharStorage)
	case *pytorch.ByteStorage:
		*d = *src.(*pytorch.ByteStorage)
	case *pytorch.BoolStorage:
		*d = *src.(*pytorch.BoolStorage)
	}
}
