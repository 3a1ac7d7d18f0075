package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEmbedCommand(t *testing.T) {
	t.Setenv("GENLENS_CACHE", t.TempDir())
	dir := t.TempDir()
	in := filepath.Join(dir, "texts.txt")
	if err := os.WriteFile(in, []byte("Hello, world!\nhow many legs does a spider have?\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "E.npy")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"embed", "--embedder", "bge-small-en-v1.5", "--weights", "../../network/bert/testdata/bge", "--in", in, "--out", out, "--json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var res struct {
		Texts, Dim int
		Prefix     string
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Texts != 2 || res.Dim != 32 || res.Prefix != "" {
		t.Fatalf("result %+v", res)
	}
	if st, err := os.Stat(out); err != nil || st.Size() != 128+2*32*8 {
		t.Fatalf("E.npy: %v %v", st, err)
	}
	stderr.Reset()
	if code := run([]string{"embed", "--embedder", "bge-small-en-v1.5", "--weights", dir, "--in", in, "--out", out}, &stdout, &stderr); code != 2 {
		t.Fatalf("a directory without a model: exit %d, want 2 (%s)", code, stderr.String())
	}
}

// BERT weights holding NaN, or a LayerNorm weight of 3e38, are refused at
// load: embed exits 2 naming the file and tensor, instead of exiting 0
// with NaN vectors.
func TestEmbedRefusesBadWeights(t *testing.T) {
	t.Setenv("GENLENS_CACHE", t.TempDir())
	src := "../../network/bert/testdata/bge"
	for _, tc := range []struct {
		tensor string
		value  float32
	}{{"encoder.layer.0.attention.self.query.weight", float32(math.NaN())}, {"embeddings.LayerNorm.weight", 3e38}} {
		dir := t.TempDir()
		for _, name := range []string{"config.json", "vocab.txt", "model.safetensors"} {
			b, err := os.ReadFile(filepath.Join(src, name))
			if err != nil {
				t.Fatal(err)
			}
			if name == "model.safetensors" {
				n := binary.LittleEndian.Uint64(b)
				var header map[string]json.RawMessage
				if err := json.Unmarshal(b[8:8+n], &header); err != nil {
					t.Fatal(err)
				}
				var info struct {
					Dtype   string `json:"dtype"`
					Offsets [2]int `json:"data_offsets"`
				}
				if err := json.Unmarshal(header[tc.tensor], &info); err != nil || info.Dtype != "F32" {
					t.Fatalf("%s: %v %+v", tc.tensor, err, info)
				}
				binary.LittleEndian.PutUint32(b[8+int(n)+info.Offsets[0]:], math.Float32bits(tc.value))
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		in := filepath.Join(dir, "texts.txt")
		if err := os.WriteFile(in, []byte("Hello, world!\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		code := run([]string{"embed", "--embedder", "bge-small-en-v1.5", "--weights", dir, "--in", in, "--out", filepath.Join(dir, "E.npy")}, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.tensor) || !strings.Contains(stderr.String(), "model.safetensors") {
			t.Errorf("%s = %v: exit %d, want 2 naming the file and tensor (%s)", tc.tensor, tc.value, code, stderr.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "E.npy")); err == nil {
			t.Errorf("%s = %v: E.npy written", tc.tensor, tc.value)
		}
	}
}
