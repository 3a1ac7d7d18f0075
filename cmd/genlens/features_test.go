package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/testkit/shareddata"
	"github.com/genlens/genlens/job/imagejob"
)

// TestFeaturesCmdErrors: bad flags and inputs end with exit 2 and one
// line on stderr, before any image is run.
func TestFeaturesCmdErrors(t *testing.T) {
	dir := t.TempDir()
	imgs := filepath.Join(dir, "imgs")
	os.Mkdir(imgs, 0o755)
	os.WriteFile(filepath.Join(imgs, "a.png"), []byte("x"), 0o644)
	existing := filepath.Join(dir, "old.npy")
	os.WriteFile(existing, []byte("keep me"), 0o644)
	fresh := filepath.Join(dir, "new.npy")
	// No case may touch the network or the user's caches.
	t.Setenv("HF_HUB_OFFLINE", "1")
	t.Setenv("HF_HUB_CACHE", filepath.Join(dir, "hf"))
	torch := filepath.Join(dir, "torch")
	t.Setenv("TORCH_HOME", torch)
	os.MkdirAll(filepath.Join(torch, "hub", "checkpoints"), 0o755)
	os.WriteFile(filepath.Join(torch, "hub", "checkpoints", "dinov2_vits14_pretrain.pth"), []byte("not weights"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad weights path", []string{"features", imgs, "--out", fresh, "--weights", filepath.Join(dir, "missing.pth")}, "missing.pth: weights file not found"},
		{"out exists", []string{"features", imgs, "--out", existing, "--weights", existing}, "--out " + existing + " exists"},
		{"no out", []string{"features", imgs}, "--out FILE.npy is required"},
		{"bad dims", []string{"features", imgs, "--out", fresh, "--dims", "1000"}, "--dims"},
		{"bad mode", []string{"features", imgs, "--out", fresh, "--mode", "legacy_tf"}, `--mode "legacy_tf": want pytorch-fid, tf or clean`},
		{"mode typo", []string{"features", imgs, "--out", fresh, "--mode", "legacy_tensorflw"}, "did you mean legacy_tensorflow?"},
		{"no folder", []string{"features", filepath.Join(dir, "nope"), "--out", fresh, "--weights", existing}, "nope: cannot read"},
		{"not weights", []string{"features", imgs, "--out", fresh, "--weights", existing}, "not a PyTorch .pth file"},
		// Offline (below), a published file not in the cache is named.
		{"vit without weights", []string{"features", imgs, "--out", fresh, "--embedder", "dinov2-vitl14"}, "dinov2_vitl14_pretrain.pth is not in the cache and $HF_HUB_OFFLINE is set"},
		{"vit weights missing", []string{"features", imgs, "--out", fresh, "--embedder", "dinov2-vits14", "--weights", filepath.Join(dir, "nope.pth")}, "nope.pth: does not exist"},
		{"vit model id offline", []string{"features", imgs, "--out", fresh, "--embedder", "clip-vitb32", "--weights", "openai/clip-vit-base-patch32"}, "openai/clip-vit-base-patch32 is not in the Hugging Face cache"},
		// A published file in torch hub's cache is what the loader reads.
		{"vit weights from the torch cache", []string{"features", imgs, "--out", fresh, "--embedder", "dinov2-vits14"}, filepath.Join(torch, "hub", "checkpoints", "dinov2_vits14_pretrain.pth")},
		{"unknown embedder", []string{"features", imgs, "--out", fresh, "--embedder", "dinov3"}, "--embedder \"dinov3\""},
		{"preset of another family", []string{"features", imgs, "--out", fresh, "--embedder", "clip-vitb32", "--preset", "dgm-eval"}, "--preset"},
		{"vit weights not weights", []string{"features", imgs, "--out", fresh, "--embedder", "dinov2-vits14", "--weights", existing}, "old.npy"},
		{"dims with vit", []string{"features", imgs, "--out", fresh, "--embedder", "dinov2-vits14", "--dims", "768"}, "--dims"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := cli(t, tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stderr %q: want exit 2 and one line containing %q", code, stderr, tc.want)
			}
			if b, _ := os.ReadFile(existing); string(b) != "keep me" {
				t.Fatal("existing --out file was changed")
			}
			if _, err := os.Stat(fresh); err == nil {
				t.Fatal("a failed run wrote --out")
			}
		})
	}
}

// TestFeaturesCmdFixture runs two fixture images with the random-weight
// network and checks the .npy and the --json summary.
func TestFeaturesCmdFixture(t *testing.T) {
	fx := shareddata.Path(t, "fixtures/inception_random")
	imgs := filepath.Join(t.TempDir(), "imgs")
	os.Mkdir(imgs, 0o755)
	for _, n := range []string{"img003.png", "img004.png"} {
		b, err := os.ReadFile(filepath.Join(fx, "images", n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(imgs, strings.ToUpper(n)), b, 0o644) // IMG003.PNG: extensions in any case
	}
	out := filepath.Join(t.TempDir(), "f.npy")
	code, stdout, stderr := cli(t, "features", imgs, "--out", out, "--dims", "64", "--weights", filepath.Join(fx, "inception_random.pth"), "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sum map[string]any
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if sum["images"] != 2.0 || sum["dims"] != 64.0 || sum["mode"] != "pytorch-fid" || sum["output"] != "64" {
		t.Errorf("summary %v", sum)
	}
	got, err := dataio.ReadArray(out, dataio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := dataio.ReadArray(filepath.Join(fx, "expected.npz"), dataio.ReadOptions{Key: "pool64"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Shape) != 2 || got.Shape[0] != 2 || got.Shape[1] != 64 {
		t.Fatalf("shape %v", got.Shape)
	}
	for i, v := range got.Data {
		if d := v - want.Data[3*64+i]; d > 1e-4 || d < -1e-4 {
			t.Fatalf("value %d: %g, want %g", i, v, want.Data[3*64+i])
		}
	}
}

// TestFeaturesFlagsMatchRequest: every JSON field of the request is a
// flag of the command ('_' for '-'), except the positional folder, and
// the flag defaults are the request's defaults.
func TestFeaturesFlagsMatchRequest(t *testing.T) {
	cmd := newFeaturesCmd()
	def := imagejob.NewFeaturesRequest()
	defaults := map[string]string{"dims": def.Dims, "mode": def.Mode, "batch": strconv.Itoa(def.Batch), "workers": "0", "recursive": "false", "weights": "", "no_cache": "false", "shards": "0", "shard": "0", "embedder": "", "preset": ""}
	var names []string
	var walk func(rt reflect.Type)
	walk = func(rt reflect.Type) {
		for i := 0; i < rt.NumField(); i++ {
			if f := rt.Field(i); f.Anonymous {
				walk(f.Type)
			} else {
				names = append(names, strings.Split(f.Tag.Get("json"), ",")[0])
			}
		}
	}
	walk(reflect.TypeOf(def))
	if len(names) != len(defaults)+1 {
		t.Errorf("request fields %v, defaults of %d", names, len(defaults))
	}
	for _, name := range names {
		if name == "input" {
			continue
		}
		fl := cmd.Flags().Lookup(strings.ReplaceAll(name, "_", "-"))
		if fl == nil {
			t.Errorf("request field %s has no flag", name)
			continue
		}
		if want, ok := defaults[name]; !ok || fl.DefValue != want {
			t.Errorf("--%s default %q, request default %q", fl.Name, fl.DefValue, want)
		}
	}
}
