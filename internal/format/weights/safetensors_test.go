package weights

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
)

// stFile builds a safetensors file from a header and data.
func stFile(header string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	b.Write(data)
	return b.Bytes()
}

func f32bytes(v ...float32) []byte {
	var b bytes.Buffer
	for _, x := range v {
		binary.Write(&b, binary.LittleEndian, math.Float32bits(x))
	}
	return b.Bytes()
}

func TestSafetensors(t *testing.T) {
	good := stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"h":{"dtype":"F16","shape":[2],"data_offsets":[8,12]},"b":{"dtype":"BF16","shape":[1],"data_offsets":[12,14]},"i":{"dtype":"I64","shape":[1],"data_offsets":[14,22]},"__metadata__":{"format":"pt"}}`,
		append(append(f32bytes(1.5, -2), 0x00, 0x3c, 0x01, 0x80, 0xc0, 0x3f), make([]byte, 8)...))
	sd, err := ParseSafetensors("g.safetensors", bytes.NewReader(good), int64(len(good)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := sd["a"].Data; len(got) != 2 || got[0] != 1.5 || got[1] != -2 {
		t.Errorf("a = %v", got)
	}
	// F16 0x3c00 = 1, 0x8001 = −2⁻²⁴ (the smallest subnormal); BF16
	// 0x3fc0 = 1.5.
	if got := sd["h"].Data; got[0] != 1 || got[1] != -float32(math.Ldexp(1, -24)) {
		t.Errorf("h = %v", got)
	}
	if got := sd["b"].Data; got[0] != 1.5 {
		t.Errorf("b = %v", got)
	}
	if _, ok := sd["i"]; ok {
		t.Error("integer tensor kept")
	}
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"short", []byte{1, 2, 3}, "shorter than the 8-byte header length"},
		{"header past end", stFile(`{}`, nil)[:9], "header claims 2 bytes"},
		{"huge header", append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, '{', '}'), "header claims"},
		{"not json", stFile(`{"a":`, nil), "not a JSON object"},
		{"truncated data", good[:len(good)-3], "outside the 19 data bytes"},
		{"size mismatch", stFile(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, make([]byte, 8)), "needs 12 bytes, offsets give 8"},
		{"overflow", stFile(`{"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]}}`, make([]byte, 8)), "overflows"},
		{"negative", stFile(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}`, nil), "negative dimension"},
		{"dtype", stFile(`{"a":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}`, make([]byte, 16)), `unknown dtype "F128"`},
		{"overlap", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, make([]byte, 12)), `overlap those of "a" [0, 8]`},
		{"reversed offsets", stFile(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}`, make([]byte, 8)), "outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSafetensors("x.safetensors", bytes.NewReader(tc.file), int64(len(tc.file)), nil)
			var ie *fault.InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "x.safetensors") {
				t.Errorf("err = %v, want an InputError naming the file and containing %q", err, tc.want)
			}
		})
	}
}

func FuzzSafetensors(f *testing.F) {
	fixture, err := os.ReadFile(filepath.Join("..", "..", "..", "network", "vit", "testdata", "clip_small.safetensors"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fixture[:4096])
	f.Add(stFile(`{"a":{"dtype":"F16","shape":[2,1],"data_offsets":[0,4]}}`, make([]byte, 4)))
	f.Add(stFile(`{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"__metadata__":{}}`, make([]byte, 4)))
	f.Fuzz(func(t *testing.T, b []byte) {
		sd, err := ParseSafetensors("f", bytes.NewReader(b), int64(len(b)), nil)
		if err != nil {
			return
		}
		total := 0
		for k, tt := range sd {
			total += len(tt.Data)
			n := 1
			for _, d := range tt.Shape {
				n *= d
			}
			if n != len(tt.Data) {
				t.Fatalf("%s: shape %v but %d values", k, tt.Shape, len(tt.Data))
			}
		}
		if total > len(b) {
			t.Fatalf("%d values from a %d-byte file", total, len(b))
		}
	})
}
