package deberta

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genlens/genlens/internal/format/weights"
	"github.com/genlens/genlens/internal/text/bpe"
	"github.com/genlens/genlens/network/nli"
)

var _ nli.Model = (*Model)(nil)

func oneLine(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: %v, want a one-line error with %q", what, err, want)
	}
}

func TestHostileConfig(t *testing.T) {
	good, err := os.ReadFile("testdata/config.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseConfig("config.json", good); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ old, new, want string }{
		{`"ENTAILMENT"`, `"ENTAILS"`, "id2label"},
		{`"2": "ENTAILMENT"`, `"2": "NEUTRAL"`, "twice"},
		{`"c2p|p2c"`, `"c2p"`, "pos_att_type"},
		{`"hidden_act": "gelu"`, `"hidden_act": "relu"`, "hidden_act"},
		{`"num_attention_heads": 4`, `"num_attention_heads": 5`, "divide"},
		{`"hidden_size": 32`, `"hidden_size": 99999999`, "hidden_size"},
		{`"model_type": "deberta"`, `"model_type": "deberta-v2"`, "model_type"},
		{`{`, `[`, "not a JSON config"},
	} {
		b := strings.Replace(string(good), c.old, c.new, 1)
		if b == string(good) {
			t.Fatalf("%q not in the fixture config", c.old)
		}
		_, err := ParseConfig("config.json", []byte(b))
		oneLine(t, c.new, err, c.want)
		if err != nil && !strings.Contains(err.Error(), "config.json") {
			t.Errorf("%v does not name the file", err)
		}
	}
}

func TestHostileWeights(t *testing.T) {
	cfg, err := LoadConfig("testdata/config.json")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := bpe.Load("testdata/vocab.json", "testdata/merges.txt", "[UNK]")
	if err != nil {
		t.Fatal(err)
	}
	load := func() map[string]*weights.Tensor {
		sd, err := weights.ReadSafetensors("testdata/tiny.safetensors")
		if err != nil {
			t.Fatal(err)
		}
		return sd
	}
	const q = "deberta.encoder.layer.1.attention.self.q_bias"
	sd := load()
	delete(sd, q)
	_, err = New("w.safetensors", "x", cfg, tok, sd)
	oneLine(t, "missing key", err, q)
	sd = load()
	sd[q].Shape = []int{16, 2}
	_, err = New("w.safetensors", "x", cfg, tok, sd)
	oneLine(t, "wrong shape", err, "has shape [16 2]")
	sd = load()
	sd["classifier.weight"].Data[4] = float32(math.NaN())
	_, err = New("w.safetensors", "x", cfg, tok, sd)
	oneLine(t, "NaN", err, "classifier.weight")

	// A header that claims far more than the file holds is refused
	// before anything is allocated for it.
	dir := fixtureDir(t, "tiny.safetensors", "model.safetensors")
	p := filepath.Join(dir, "model.safetensors")
	b, _ := os.ReadFile(p)
	n := binary.LittleEndian.Uint64(b)
	hdr := strings.Replace(string(b[8:8+n]), `"shape": [3, 32]`, `"shape": [3000000000, 32]`, 1)
	if hdr == string(b[8:8+n]) {
		t.Fatal("classifier shape not found in the header")
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	out = append(append(out, hdr...), b[8+n:]...)
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, "x")
	oneLine(t, "oversized tensor", err, "model.safetensors")
	if err := os.WriteFile(p, []byte("not weights"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, "x")
	oneLine(t, "garbage", err, "model.safetensors")
}

func FuzzParseConfig(f *testing.F) {
	good, _ := os.ReadFile("testdata/config.json")
	f.Add(good)
	f.Add([]byte(`{"pos_att_type": ["c2p","p2c"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig("config.json", b)
		if err != nil {
			return
		}
		if c.Hidden%c.Heads != 0 || c.MaxRelative < 1 {
			t.Fatalf("accepted %+v", c)
		}
	})
}
