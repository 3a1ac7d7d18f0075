package torchfile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/tensor/membudget"
	"github.com/genlens/genlens/internal/testkit/shareddata"
)

// pk writes pickle opcodes by hand, as torch.save would for a state dict.
type pk struct{ bytes.Buffer }

func (p *pk) op(b ...byte) *pk { p.Write(b); return p }

func (p *pk) str(s string) *pk {
	p.WriteByte('X')
	binary.Write(p, binary.LittleEndian, uint32(len(s)))
	p.WriteString(s)
	return p
}

// int pushes n: BININT when it fits in 31 bits, else LONG1 of 8 bytes.
func (p *pk) int(n int64) *pk {
	if n >= 0 && n < 1<<31 {
		p.WriteByte('J')
		binary.Write(p, binary.LittleEndian, int32(n))
		return p
	}
	p.Write([]byte{0x8a, 8})
	binary.Write(p, binary.LittleEndian, n)
	return p
}

func (p *pk) tuple(ns ...int64) *pk {
	p.WriteByte('(')
	for _, n := range ns {
		p.int(n)
	}
	return p.op('t')
}

func (p *pk) global(module, name string) *pk {
	p.WriteString("c" + module + "\n" + name + "\n")
	return p
}

// tensor is one state-dict entry: a storage reference and its view.
type tensor struct {
	name, class, key string
	elements         int64 // the storage's claimed elements
	shape, stride    []int64
}

// statePickle returns data.pkl of an OrderedDict of tensors; legacy
// storage ids carry a sixth element (no view).
func statePickle(ts []tensor, legacy bool) []byte {
	var p pk
	p.op(0x80, 2).global("collections", "OrderedDict").op(')', 'R', '(')
	for _, t := range ts {
		p.str(t.name).global("torch._utils", "_rebuild_tensor_v2").op('(')
		p.op('(').str("storage").global("torch", t.class).str(t.key).str("cpu").int(t.elements)
		if legacy {
			p.op('N')
		}
		p.op('t', 'Q')
		p.int(0).tuple(t.shape...).tuple(t.stride...).op(0x89)
		p.global("collections", "OrderedDict").op(')', 'R', 't', 'R')
	}
	p.op('u', '.')
	return p.Bytes()
}

// zipOf returns a zip archive of the given records, stored uncompressed
// as torch.save stores them.
func zipOf(t testing.TB, files map[string][]byte) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, data := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// zipPth returns a zip .pth holding data.pkl and the given records.
func zipPth(t testing.TB, pkl []byte, records map[string][]byte) []byte {
	files := map[string][]byte{"archive/data.pkl": pkl}
	for k, v := range records {
		files["archive/data/"+k] = v
	}
	return zipOf(t, files)
}

// legacyPth returns a legacy .pth: the magic number, protocol version and
// system information pickles, the state dict, the storage keys, then each
// storage as its element count (count, which may lie) and its bytes.
func legacyPth(ts []tensor, count map[string]int64, data map[string][]byte, keys ...string) []byte {
	var b bytes.Buffer
	b.Write([]byte{0x80, 2, 0x8a, 10, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, '.'})
	b.Write([]byte{0x80, 2, 'M', 0xe9, 0x03, '.'}) // 1001
	b.Write([]byte{0x80, 2, '}', '.'})
	b.Write(statePickle(ts, true))
	var p pk
	p.op(0x80, 2, '(')
	for _, k := range keys {
		p.str(k)
	}
	p.op('l', '.')
	b.Write(p.Bytes())
	for _, k := range keys {
		binary.Write(&b, binary.LittleEndian, count[k])
		b.Write(data[k])
	}
	return b.Bytes()
}

func f32bytes(v ...float32) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, v)
	return b.Bytes()
}

// hostileWeights are small weights files that claim huge sizes: every
// one must be a one-line input error, allocating about what it holds.
func hostileWeights(t testing.TB) map[string][]byte {
	four := f32bytes(1, 2, 3, 4)
	w := func(shape, stride []int64, elements int64) []tensor {
		return []tensor{{name: "w", class: "FloatStorage", key: "0", elements: elements, shape: shape, stride: stride}}
	}
	many := make([]tensor, 3000) // 3000 views of one 4096-element storage
	for i := range many {
		many[i] = tensor{name: "w" + string(rune('a'+i%26)) + strings.Repeat("x", i/26), class: "FloatStorage", key: "0", elements: 4096, shape: []int64{4096}, stride: []int64{1}}
	}
	big := make([]byte, 4096*4)
	return map[string][]byte{
		// gopickle allocates a declared length before reading it.
		"bytes8 2^40":  append([]byte{0x80, 2, 0x8e}, append(binary.LittleEndian.AppendUint64(nil, 1<<40), '.')...),
		"frame 2^40":   append([]byte{0x80, 2, 0x95}, append(binary.LittleEndian.AppendUint64(nil, 1<<40), 'N', '.')...),
		"unicode 4GiB": {0x80, 2, 'X', 0xff, 0xff, 0xff, 0xff, '.'},
		// A storage of 2^38 floats (2^40 bytes) in a four-byte record.
		"zip storage 2^40":    zipPth(t, statePickle(w([]int64{4}, []int64{1}, 1<<38), false), map[string][]byte{"0": four}),
		"zip storage wraps":   zipPth(t, statePickle(w([]int64{4}, []int64{1}, 1<<62), false), map[string][]byte{"0": nil}),
		"zip shape 2^20 sq":   zipPth(t, statePickle(w([]int64{1 << 20, 1 << 20}, []int64{0, 0}, 4), false), map[string][]byte{"0": four}),
		"zip shape 2^32 sq":   zipPth(t, statePickle(w([]int64{1 << 32, 1 << 32}, []int64{1 << 32, 1}, 4), false), map[string][]byte{"0": four}),
		"zip shape overflow3": zipPth(t, statePickle(w([]int64{1 << 32, 1 << 32, 1 << 32}, []int64{0, 0, 0}, 4), false), map[string][]byte{"0": four}),
		"zip stride overflow": zipPth(t, statePickle(w([]int64{2, 2}, []int64{1 << 62, 1 << 62}, 4), false), map[string][]byte{"0": four}),
		"zip many views":      zipPth(t, statePickle(many, false), map[string][]byte{"0": big}),
		// The element count before a legacy storage's bytes.
		"legacy storage 2^40": legacyPth(w([]int64{4}, []int64{1}, 4), map[string]int64{"0": 1 << 38}, map[string][]byte{"0": four}, "0"),
		"legacy count -1":     legacyPth(w([]int64{4}, []int64{1}, 4), map[string]int64{"0": -1}, map[string][]byte{"0": four}, "0"),
		"legacy shape 2^20":   legacyPth(w([]int64{1 << 20, 1 << 20}, []int64{0, 0}, 4), map[string]int64{"0": 4}, map[string][]byte{"0": four}, "0"),
	}
}

// A weights file's claimed sizes are checked against its length before
// anything is allocated: each hostile file is an input error, and
// loading it allocates little.
func TestLoadStateDictHostileSizes(t *testing.T) {
	dir := t.TempDir()
	for name, b := range hostileWeights(t) {
		t.Run(name, func(t *testing.T) {
			err := loadBounded(t, filepath.Join(dir, "w.pth"), b, LoadStateDict)
			var ie *fault.InputError
			if !errors.As(err, &ie) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want a one-line *fault.InputError", err)
			}
			t.Log(err)
		})
	}
}

// loadBounded writes b to p and loads it, failing t when loading
// allocates more than allocBound.
func loadBounded(t *testing.T, p string, b []byte, load func(string) (map[string]*Tensor, error)) error {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := load(p)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > allocBound(len(b)) {
		t.Errorf("a %d-byte file allocated %d bytes", len(b), got)
	}
	return err
}

// allocBound is what loading a weights file of n bytes may allocate: its
// tensors as float64 (at most 8 times the bytes of their storages) a few
// times over, plus the zip reader's and the unpickler's fixed costs.
func allocBound(n int) uint64 { return 64*uint64(n) + 4<<20 }

// The sound counterparts of the hostile files load, and float16
// subnormals come out exact (0x0110 is 272 × 2^-24).
func TestLoadStateDictHandMade(t *testing.T) {
	dir := t.TempDir()
	half := binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(nil, 0x0110), 0x3c00)
	ts := []tensor{
		{name: "w", class: "FloatStorage", key: "0", elements: 4, shape: []int64{2, 2}, stride: []int64{1, 2}},
		{name: "h", class: "HalfStorage", key: "1", elements: 2, shape: []int64{2}, stride: []int64{1}},
	}
	for name, b := range map[string][]byte{
		"zip":    zipPth(t, statePickle(ts, false), map[string][]byte{"0": f32bytes(1, 2, 3, 4), "1": half}),
		"legacy": legacyPth(ts, map[string]int64{"0": 4, "1": 2}, map[string][]byte{"0": f32bytes(1, 2, 3, 4), "1": half}, "0", "1"),
	} {
		p := filepath.Join(dir, name+".pth")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		sd, err := LoadStateDict(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if w := sd["w"]; w == nil || !slices.Equal(w.Shape, []int{2, 2}) || w.Data[1] != 3 || w.Data[2] != 2 {
			t.Errorf("%s: w = %+v, want the transpose [[1 3] [2 4]]", name, w)
		}
		if h := sd["h"]; h == nil || h.DType != "float16" || h.Data[0] != 272.0/(1<<24) || h.Data[1] != 1 {
			t.Errorf("%s: h = %+v, want [%g 1]", name, h, 272.0/(1<<24))
		}
	}
}

// FuzzLoadStateDict: whatever bytes a weights file holds, loading it
// (as a state dict, or as a TorchScript archive) neither panics nor
// allocates much more than the file's size.
func FuzzLoadStateDict(f *testing.F) {
	if d := shareddata.Dir(); d != "" {
		for _, name := range []string{"small_legacy.pth", "small_zip.pth"} {
			if b, err := os.ReadFile(filepath.Join(d, fixtureDir, name)); err == nil {
				f.Add(b)
			}
		}
	}
	for _, b := range hostileWeights(f) {
		f.Add(b)
	}
	f.Add(moduleArchive(f, []tensor{{name: "w", class: "HalfStorage", key: "0", elements: 2, shape: []int64{2}, stride: []int64{1}}}, map[string][]byte{"0": {1, 0, 0, 0x3c}}))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, load := range []func(string) (map[string]*Tensor, error){LoadStateDict, ReadTorchScript} {
			if err := loadBounded(t, filepath.Join(dir, "f.pth"), b, load); err != nil {
				var ie *fault.InputError
				if !errors.As(err, &ie) {
					t.Fatalf("err = %v (%T), want a *fault.InputError", err, err)
				}
			}
		}
	})
}

// Views that read one storage several times over ask for a float64 copy
// each: the copies are priced against the matrix budget before any is
// made, and the refusal names the file and the tensor. (Four views of a
// 168 MB uint8 storage once took 48 times the file.)
func TestLoadStateDictPriced(t *testing.T) {
	const n = 4096
	views := make([]tensor, 4)
	for i := range views {
		views[i] = tensor{name: "u" + string(rune('0'+i)), class: "ByteStorage", key: "0", elements: n, shape: []int64{n}, stride: []int64{1}}
	}
	path := filepath.Join(t.TempDir(), "views.pth")
	b := zipPth(t, statePickle(views, false), map[string][]byte{"0": make([]byte, n)})
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	prev := membudget.SetLimit(int64(len(b)) + 2*8*n + 100)
	defer membudget.SetLimit(prev)
	_, err := LoadStateDict(path)
	var be *membudget.Error
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "views.pth up to tensor u2") {
		t.Fatalf("err = %v, want a budget error naming views.pth and u2", err)
	}
	membudget.SetLimit(int64(len(b)) + 4*8*n)
	if sd, err := LoadStateDict(path); err != nil || len(sd) != 4 || sd["u3"].Data[n-1] != 0 {
		t.Fatalf("within the budget: %d tensors, %v", len(sd), err)
	}
}
