package torchfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
)

// A TorchScript archive whose data.pkl declares a 2^40-byte bytes object
// in 12 bytes, or a storage whose element count times its width wraps
// around 2^64 to its empty record's size, is refused before anything of
// that size is allocated.
func TestTorchScriptHostileSizes(t *testing.T) {
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
		_, err := ReadTorchScript(writeFile(t, name, zipOf(t, files)))
		var ie *fault.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want an input error naming the file", name, err)
		}
		t.Log(err)
	}
}

// moduleArchive returns a TorchScript archive whose module (a
// __torch__.M) holds the tensors ts as attributes, with their storages.
func moduleArchive(t testing.TB, ts []tensor, records map[string][]byte) []byte {
	var p pk
	p.op(0x80, 2).global("__torch__", "M").op(')', 0x81, '}')
	for _, tt := range ts {
		p.str(tt.name).global("torch._utils", "_rebuild_tensor_v2").op('(')
		p.op('(').str("storage").global("torch", tt.class).str(tt.key).str("cpu").int(tt.elements).op('t', 'Q')
		p.int(0).tuple(tt.shape...).tuple(tt.stride...).op(0x89)
		p.global("collections", "OrderedDict").op(')', 'R', 't', 'R', 's')
	}
	p.op('b', '.')
	files := map[string][]byte{
		"m/constants.pkl":     {0x80, 2, ')', '.'},
		"m/code/__torch__.py": []byte("# never read"),
		"m/data.pkl":          p.Bytes(),
	}
	for k, v := range records {
		files["m/data/"+k] = v
	}
	return zipOf(t, files)
}

// writeFile writes b to a file in a temporary folder and returns its path.
func writeFile(t *testing.T, name string, b []byte) string {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A TorchScript module's tensors are read with the storage types of a
// state dict (one allowlist: int8 and float16 here) and exact float16.
func TestReadTorchScriptStorages(t *testing.T) {
	half := binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(nil, 0x0110), 0xbc00)
	p := writeFile(t, "m.pt", moduleArchive(t, []tensor{
		{name: "c", class: "CharStorage", key: "0", elements: 3, shape: []int64{3}, stride: []int64{1}},
		{name: "h", class: "HalfStorage", key: "1", elements: 2, shape: []int64{2}, stride: []int64{1}},
	}, map[string][]byte{"0": {0xff, 2, 0x80}, "1": half}))
	if !IsTorchScript(p) {
		t.Fatal("IsTorchScript = false")
	}
	sd, err := ReadTorchScript(p)
	if err != nil {
		t.Fatal(err)
	}
	if c := sd["c"]; c == nil || c.DType != "int8" || !slices.Equal(c.Data, []float64{-1, 2, -128}) {
		t.Errorf("c = %+v, want int8 [-1 2 -128]", c)
	}
	if h := sd["h"]; h == nil || h.DType != "float16" || !slices.Equal(h.Data, []float64{272.0 / (1 << 24), -1}) {
		t.Errorf("h = %+v, want float16 [%g -1]", h, 272.0/(1<<24))
	}
	// LoadStateDict refuses the same archive, saying what it is.
	if _, err := LoadStateDict(p); err == nil || !strings.Contains(err.Error(), "TorchScript") {
		t.Errorf("LoadStateDict: %v", err)
	}
}

// A class outside the allowlist is refused in both formats, before it
// could be called.
func TestClassAllowlist(t *testing.T) {
	evil := []tensor{{name: "w", class: "FloatStorage", key: "0", elements: 1, shape: []int64{1}, stride: []int64{1}}}
	var p pk
	p.op(0x80, 2).global("os", "system").str("true").op(0x85, 'R', '.')
	sdPath := writeFile(t, "evil.pth", zipPth(t, p.Bytes(), map[string][]byte{"0": f32bytes(1)}))
	if _, err := LoadStateDict(sdPath); err == nil || !strings.Contains(err.Error(), "class os.system not expected") {
		t.Errorf("state dict: %v", err)
	}
	evil[0].class = "EvilStorage"
	ts := writeFile(t, "m.pt", moduleArchive(t, evil, map[string][]byte{"0": f32bytes(1)}))
	if _, err := ReadTorchScript(ts); err == nil || !strings.Contains(err.Error(), "class torch.EvilStorage not expected") {
		t.Errorf("TorchScript: %v", err)
	}
}
