package bert

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyFixture copies testdata/e5 to a temporary directory.
func copyFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"config.json", "vocab.txt", "model.safetensors"} {
		b, err := os.ReadFile(filepath.Join("testdata/e5", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestHostileModelDirs(t *testing.T) {
	cfg, _ := os.ReadFile("testdata/e5/config.json")
	for _, c := range []struct {
		name, file, want string
		edit             func([]byte) []byte
	}{
		{"bad json", "config.json", "not a config.json", func([]byte) []byte { return []byte("{") }},
		{"huge hidden", "config.json", `"hidden_size"`, func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"hidden_size": 32`, `"hidden_size": 1000000000`, 1))
		}},
		{"wrong shape", "config.json", `"embeddings.word_embeddings.weight"`, func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"vocab_size": 294`, `"vocab_size": 300`, 1))
		}},
		{"heads do not divide", "config.json", `"num_attention_heads"`, func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"num_attention_heads": 4`, `"num_attention_heads": 5`, 1))
		}},
		{"hidden disagrees with the weights", "config.json", "has shape", func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"hidden_size": 32`, `"hidden_size": 64`, 1))
		}},
		{"activation", "config.json", `"hidden_act"`, func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"hidden_act": "gelu"`, `"hidden_act": "relu"`, 1))
		}},
		{"missing layer", "config.json", `"encoder.layer.2.attention.self.query.weight": missing`, func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"num_hidden_layers": 2`, `"num_hidden_layers": 3`, 1))
		}},
		{"truncated weights", "model.safetensors", "model.safetensors", func(b []byte) []byte { return b[:len(b)/2] }},
		{"huge header", "model.safetensors", "model.safetensors", func(b []byte) []byte {
			return append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0}, b[8:]...)
		}},
		{"vocab without cls", "vocab.txt", `"[CLS]"`, func(b []byte) []byte { return []byte(strings.Replace(string(b), "[CLS]", "[XLS]", 1)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(string(cfg), `"vocab_size": 294`) {
				t.Fatal("the fixture's config changed; update this test")
			}
			dir := copyFixture(t)
			p := filepath.Join(dir, c.file)
			b, _ := os.ReadFile(p)
			if err := os.WriteFile(p, c.edit(b), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(dir, false)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line naming %s", err, c.want)
			}
		})
	}
}
