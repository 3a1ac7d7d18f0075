package dataio

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// zipBytes builds an archive with archive/zip directly, independent of
// WriteNPZ.
func zipBytes(t testing.TB, method uint16, members ...any) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := 0; i < len(members); i += 2 {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: members[i].(string), Method: method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(members[i+1].([]byte))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestNPZRoundTrip(t *testing.T) {
	dir := t.TempDir()
	arrays := map[string]*Array{
		"sigma": {Shape: []int{2, 2}, Data: []float64{1, 0.5, 0.5, 2}},
		"mu":    {Shape: []int{2}, Data: []float64{-1, math.SmallestNonzeroFloat64}},
		"x":     {Shape: []int{1, 2, 3}, Data: []float64{1, 2, 3, 4, 5, 6}},
	}
	for _, compressed := range []bool{false, true} {
		p := filepath.Join(dir, "s.npz")
		if err := WriteNPZ(p, arrays, compressed); err != nil {
			t.Fatal(err)
		}
		zr, err := zip.OpenReader(p)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		wantMethod := zip.Store
		if compressed {
			wantMethod = zip.Deflate
		}
		for _, f := range zr.File {
			names = append(names, f.Name)
			if f.Method != wantMethod {
				t.Errorf("compressed=%v: %s has method %d", compressed, f.Name, f.Method)
			}
		}
		zr.Close()
		if want := []string{"mu.npy", "sigma.npy", "x.npy"}; !reflect.DeepEqual(names, want) {
			t.Errorf("members %v, want sorted %v", names, want)
		}
		keys, err := NPZKeys(p)
		if err != nil || !reflect.DeepEqual(keys, []string{"mu", "sigma", "x"}) {
			t.Errorf("NPZKeys = %v, %v", keys, err)
		}
		for k, want := range arrays {
			for _, key := range []string{k, k + ".npy"} {
				got, err := ReadArray(p, ReadOptions{Key: key})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("compressed=%v key %s: got %+v, want %+v", compressed, key, got, want)
				}
			}
		}
		// Deterministic: the same arrays give the same bytes.
		first, _ := os.ReadFile(p)
		if err := WriteNPZ(p, arrays, compressed); err != nil {
			t.Fatal(err)
		}
		second, _ := os.ReadFile(p)
		if !bytes.Equal(first, second) {
			t.Errorf("compressed=%v: two writes differ", compressed)
		}
	}
}

func TestReadNPZ(t *testing.T) {
	dir := t.TempDir()
	le := binary.LittleEndian
	f4 := npyBytes(1, hdr("<f4", false, "(2, 2)"), f32s(le, 1, 2, 3, 4))
	u1 := npyBytes(1, hdr("|u1", false, "(1, 2, 2)"), []byte{9, 8, 7, 6})
	nan := npyBytes(1, hdr("<f8", false, "(2, 2)"), f64s(le, 1, 2, 3, math.NaN()))

	one := writeFile(t, dir, "one.npz", zipBytes(t, zip.Deflate, "arr_0.npy", f4, "notes.txt", []byte("hi")))
	a, err := ReadMatrix(one, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.At(1, 1) != 4 {
		t.Errorf("At(1,1) = %v", a.At(1, 1))
	}
	st, err := ReadStack(writeFile(t, dir, "st.npz", zipBytes(t, zip.Store, "images.npy", u1)), ReadOptions{Key: "images"})
	if err != nil || !reflect.DeepEqual(st.Data, []float64{9, 8, 7, 6}) {
		t.Errorf("stored uint8 member: %v, %v", st, err)
	}

	two := writeFile(t, dir, "two.npz", zipBytes(t, zip.Deflate, "b.npy", f4, "a.npy", u1, "bad.npy", nan))
	// A deflate stream with a corrupted byte fails its checksum.
	raw := zipBytes(t, zip.Store, "a.npy", f4)
	i := bytes.Index(raw, f4) + len(f4) - 1
	raw[i] ^= 0xff
	corrupt := writeFile(t, dir, "crc.npz", raw)
	trunc := writeFile(t, dir, "trunc.npz", zipBytes(t, zip.Deflate, "a.npy", f4[:len(f4)-4]))
	empty := writeFile(t, dir, "empty.npz", zipBytes(t, zip.Deflate, "readme.txt", []byte("x")))
	notZip := writeFile(t, dir, "text.npz", []byte("this is not a zip file at all"))

	tests := []struct {
		name string
		path string
		key  string
		want []string
	}{
		{"several without key", two, "", []string{"two.npz", "3 arrays", "a, b, bad", "key"}},
		{"unknown key", two, "c", []string{"two.npz", `no array named "c"`, "keys: a, b, bad"}},
		{"NaN names key and position", two, "bad", []string{`two.npz key "bad" row 2, column 2: is NaN`}},
		{"checksum", corrupt, "", []string{"crc.npz", `key "a"`, "checksum"}},
		{"truncated member", trunc, "", []string{"trunc.npz", "truncated data"}},
		{"no arrays", empty, "", []string{"empty.npz", "no arrays"}},
		{"not a zip", notZip, "", []string{"text.npz", "not a valid .npz"}},
		{"missing", filepath.Join(dir, "none.npz"), "", []string{"none.npz", "cannot open"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadArray(tt.path, ReadOptions{Key: tt.key})
			wantInputError(t, err, tt.want...)
		})
	}
}

// ReadMatrix passes its rank to the NPZ reader, which refuses a 3-D member
// from its header (a decompression bomb of the wrong shape is never
// inflated).
func TestReadMatrixNPZRankFromHeader(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cube.npz")
	if err := WriteNPZ(p, map[string]*Array{"x": {Shape: []int{2, 2, 2}, Data: make([]float64, 8)}}, true); err != nil {
		t.Fatal(err)
	}
	_, err := ReadMatrix(p, ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "want a 2-D array, got shape (2, 2, 2)") {
		t.Fatalf("got %v, want the header's rank refused", err)
	}
}

// A deflated member, whose size is known only as it arrives, is decoded
// into its values a chunk at a time: reading it allocates about its
// values' bytes, not its raw bytes grown by doubling beside them (a
// 2 GiB matrix took 6 GiB).
func TestReadNPZDeflatedAllocatesItsValues(t *testing.T) {
	const n = 1 << 20 // 8 MiB of float64
	raw := make([]float64, n)
	for i := range raw {
		raw[i] = float64(i % 1000)
	}
	var b bytes.Buffer
	if err := encodeNPZ(&b, map[string]*Array{"x": {Shape: []int{1024, 1024}, Data: raw}}, true); err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, t.TempDir(), "x.npz", b.Bytes())
	for _, f8 := range []bool{true, false} {
		if !f8 {
			// A plain .npy, whose size is known, too.
			b.Reset()
			if err := encodeNPY(&b, &Array{Shape: []int{1024, 1024}, Data: raw}); err != nil {
				t.Fatal(err)
			}
			path = writeFile(t, t.TempDir(), "x.npy", b.Bytes())
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		a, err := ReadArrayFS(HostFS, path, ReadOptions{})
		runtime.ReadMemStats(&after)
		if err != nil || !reflect.DeepEqual(a.Data, raw) {
			t.Fatalf("%s: %v", path, err)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d bytes allocated for %d of values", filepath.Base(path), alloc, 8*n)
		// Relative to the values' bytes: the race build allocates more in
		// small pieces, not in these.
		if alloc > 8*n*3/2 {
			t.Errorf("%s: reading 8 MiB of values allocated %d bytes", filepath.Base(path), alloc)
		}
	}
}
