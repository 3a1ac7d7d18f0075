package torchfile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"genlens/dataio"
)

// A TorchScript archive whose data.pkl declares a 2^40-byte bytes object
// in 12 bytes, or a storage whose element count times its width wraps
// around 2^64 to its empty record's size, is refused before anything of
// that size is allocated.
func TestTorchScriptHostileSizes(t *testing.T) {
	dir := t.TempDir()
	archive := func(name string, files map[string][]byte) string {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		for n, data := range files {
			w, _ := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Store})
			w.Write(data)
		}
		zw.Close()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	huge := append([]byte{0x80, 2, 0x8e}, append(binary.LittleEndian.AppendUint64(nil, 1<<40), '.')...)
	// ("storage", torch.FloatStorage, "0", "cpu", 2^62) as a persistent id.
	var p bytes.Buffer
	p.Write([]byte{0x80, 2, '(', 'X', 7, 0, 0, 0})
	p.WriteString("storage")
	p.WriteString("ctorch\nFloatStorage\n")
	p.Write([]byte{'X', 1, 0, 0, 0, '0', 'X', 3, 0, 0, 0})
	p.WriteString("cpu")
	p.Write([]byte{0x8a, 8})
	p.Write(binary.LittleEndian.AppendUint64(nil, 1<<62))
	p.Write([]byte{'t', 'Q', '.'})
	for name, files := range map[string]map[string][]byte{
		"bytes8.pt": {"m/constants.pkl": {0x80, 2, ')', '.'}, "m/data.pkl": huge},
		"wraps.pt":  {"m/constants.pkl": {0x80, 2, ')', '.'}, "m/data.pkl": p.Bytes(), "m/data/0": nil},
	} {
		_, err := ReadTorchScript(archive(name, files))
		var ie *dataio.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want an input error naming the file", name, err)
		}
		t.Log(err)
	}
}
