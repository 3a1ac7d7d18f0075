package jobrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/hub"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/internal/testkit/hubtest"
	"github.com/genlens/genlens/internal/testkit/vittest"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/commands"
)

// pngOf is a w×h PNG of a gradient, different for each k.
func pngOf(t *testing.T, w, h, k int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), uint8(40 * k), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The weights rule of image jobs knows their network: Inception's come
// from an uploaded .pth or the server's file; a ViT's from an upload of
// any file its loader reads, or, only when the server fetches models,
// from a Hugging Face model id or the published file; never the
// server's Inception file. Results name them as the client knows them.
func TestImageWeightsRule(t *testing.T) {
	const (
		inc    = "/srv/weights/pt_inception-2015-12-05.pth"
		why    = "this server fetches no models by name (its operator may start it with --allow-downloads)"
		upPth  = "0123456789abcdef0123456789abcdef.pth"
		upST   = "0123456789abcdef0123456789abcdef.safetensors"
		upPt   = "0123456789abcdef0123456789abcdef.pt"
		upNpy  = "0123456789abcdef0123456789abcdef.npy"
		folder = "0123456789abcdef0123456789abcdef.zip"
	)
	off := prepEnv{uploadsDir: "/up", weights: inc, noDownloads: why}
	on := prepEnv{uploadsDir: "/up", weights: inc, downloads: true}
	none := prepEnv{uploadsDir: "/up"}
	dino, _ := hub.Lookup("dinov2-vits14")
	for _, c := range []struct {
		name      string
		pe        prepEnv
		embedder  string
		weights   string
		inputs    []string
		want      string // *weights after
		id, named string
		field     bool     // a field error on weights
		msg       []string // ... containing these
	}{
		{name: "inception, server file", pe: off, embedder: "inception", inputs: []string{folder}, want: inc, named: "server:pt_inception-2015-12-05.pth"},
		{name: "inception, server file, downloads", pe: on, embedder: "inception", inputs: []string{folder}, want: inc, named: "server:pt_inception-2015-12-05.pth"},
		{name: "inception, upload", pe: off, embedder: "inception", weights: upPth, inputs: []string{folder}, want: "/up/" + upPth, id: upPth, named: upPth},
		{name: "inception, no server file", pe: none, embedder: "inception", inputs: []string{folder}, field: true, msg: []string{"no Inception weights configured"}},
		{name: "inception, safetensors", pe: on, embedder: "inception", weights: upST, inputs: []string{folder}, field: true, msg: []string{"uploaded .pth"}},
		{name: "no folder", pe: off, embedder: "dinov2-vits14", inputs: []string{"x.npy"}},
		{name: "dinov2, no downloads", pe: off, embedder: "dinov2-vits14", inputs: []string{folder}, field: true, msg: []string{why + "; upload the weights file (.pth, .pt, .safetensors) and pass its id", "dinov2-vits14"}},
		{name: "dinov2, no downloads, default reason", pe: none, embedder: "dinov2-vits14", inputs: []string{folder}, field: true, msg: []string{job.NoDownloads + "; upload the weights file"}},
		{name: "dinov2, downloads", pe: on, embedder: "dinov2-vits14", inputs: []string{folder}, named: dino.URL},
		{name: "dinov2, upload .pth", pe: off, embedder: "dinov2-vits14", weights: upPth, inputs: []string{folder}, want: "/up/" + upPth, id: upPth, named: upPth},
		{name: "clip, upload .safetensors", pe: off, embedder: "clip-vitb32", weights: upST, inputs: []string{folder}, want: "/up/" + upST, id: upST, named: upST},
		{name: "clip, upload .pt", pe: off, embedder: "clip-vitb32", weights: upPt, inputs: []string{folder}, want: "/up/" + upPt, id: upPt, named: upPt},
		{name: "clip, upload .npy", pe: on, embedder: "clip-vitb32", weights: upNpy, inputs: []string{folder}, field: true, msg: []string{".pth, .pt, .safetensors"}},
		{name: "clip, model id, downloads", pe: on, embedder: "clip-vitb32", weights: "openai/clip-vit-base-patch32", inputs: []string{folder}, want: job.HubPrefix + "openai/clip-vit-base-patch32", named: "openai/clip-vit-base-patch32"},
		{name: "clip, model id, no downloads", pe: off, embedder: "clip-vitb32", weights: "openai/clip-vit-base-patch32", inputs: []string{folder}, field: true, msg: []string{why + "; upload the weights file"}},
		{name: "clip, host path", pe: on, embedder: "clip-vitb32", weights: "/etc/clip.pt", inputs: []string{folder}, field: true},
		{name: "clip, server's inception", pe: on, embedder: "clip-vitb32", weights: "server:pt_inception-2015-12-05.pth", inputs: []string{folder}, field: true},
	} {
		w := c.weights
		id, named, err := c.pe.imageWeights(c.embedder, &w, c.inputs...)
		var fe *fault.FieldError
		if c.field {
			if !errors.As(err, &fe) || fe.Field != "weights" || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: %v, want a one-line field error on weights", c.name, err)
				continue
			}
			for _, m := range c.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("%s: %v does not say %q", c.name, err, m)
				}
			}
			if strings.Contains(err.Error(), "text model") {
				t.Errorf("%s: %v offers a text model's alternative", c.name, err)
			}
			continue
		}
		want := c.want
		if want == "" {
			want = c.weights
		}
		if err != nil || w != filepath.FromSlash(want) || id != c.id || named != c.named {
			t.Errorf("%s: weights %q, id %q, named %q, %v; want %q, %q, %q", c.name, w, id, named, err, want, c.id, c.named)
		}
	}
}

// Every kind with a weights field has an embedder for the rule to read.
func TestImageKindsNameTheirEmbedder(t *testing.T) {
	for i := range commands.All {
		c := &commands.All[i]
		req := c.New()
		if c.Weights(req) == nil {
			continue
		}
		if _, ok := req.(embedderNamer); !ok {
			t.Errorf("%s: the request has no EmbedderName", c.Name)
		}
	}
}

// A DINOv2 job without weights: refused at submission when the server
// fetches no models (naming the switch and the upload), even with
// Inception weights configured; allowed, the published file is fetched
// once from (a fake) torch hub into $TORCH_HOME and every job after
// uses it from there; results name it by its address.
func TestDINOv2ByName(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("TORCH_HOME", filepath.Join(dir, "torch"))
	t.Setenv("GENLENS_CACHE", filepath.Join(dir, "genlens"))
	t.Setenv("HF_HUB_OFFLINE", "")
	file, err := vittest.DINOv2("dinov2-vits14")
	if err != nil {
		t.Fatal(err)
	}
	pub := vittest.Publish(t, "dinov2-vits14", file)
	ctx := context.Background()
	const why = "this server fetches no models by name (its operator may start it with --allow-downloads)"
	imgs := zipOf(t, map[string][]byte{"a.png": pngOf(t, 40, 30, 0), "b.png": pngOf(t, 30, 40, 1)})

	off := newTestService(t, nil, Config{Weights: filepath.Join(dir, "inception.pth"), NoDownloads: why})
	body := `{"input":"` + upload(t, off, "images.zip", imgs) + `","embedder":"dinov2-vits14","batch":2}`
	_, err = off.Submit(ctx, "features", []byte(body))
	var fe *fault.FieldError
	if !errors.As(err, &fe) || fe.Field != "weights" || !strings.Contains(err.Error(), why+"; upload the weights file") || strings.Contains(err.Error(), "text model") {
		t.Errorf("no downloads: %v", err)
	}
	if pub.Gets() != 0 {
		t.Errorf("fetched %d times without downloads", pub.Gets())
	}
	// An uploaded safetensors file reaches CLIP's loader (a small CLIP's,
	// whose shapes it refuses, naming a tensor).
	small, err := os.ReadFile("../../../network/vit/testdata/clip_small.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	body = `{"input":"` + upload(t, off, "images.zip", imgs) + `","embedder":"clip-vitb32","weights":"` + upload(t, off, "clip.safetensors", small) + `","no_cache":true}`
	j, err := off.Submit(ctx, "features", []byte(body))
	if err != nil {
		t.Fatalf("clip, uploaded safetensors: %v", err)
	}
	if j = waitJob(t, off, j.ID, time.Minute); j.Status != records.StatusFailed || !strings.Contains(j.Error, "has shape") {
		t.Errorf("clip, uploaded small safetensors: %s: %s", j.Status, j.Error)
	}

	on := newTestService(t, nil, Config{Weights: filepath.Join(dir, "inception.pth"), Downloads: true})
	archive := upload(t, on, "images.zip", imgs)
	for i, kind := range []string{"features", "stats"} {
		field := map[string]string{"features": "input", "stats": "in"}[kind]
		j, err := on.Submit(ctx, kind, []byte(`{"`+field+`":"`+archive+`","embedder":"dinov2-vits14","batch":2,"no_cache":true}`))
		if err != nil {
			t.Fatal(err)
		}
		j = waitJob(t, on, j.ID, 2*time.Minute)
		type weights struct{ Path, SHA256 string }
		var res struct{ Weights *weights }                   // features
		var stats struct{ Images struct{ Weights weights } } // stats
		if j.Status != records.StatusSucceeded {
			t.Fatalf("%s: %s: %s", kind, j.Status, j.Error)
		}
		var err2 error
		if kind == "stats" {
			err2 = json.Unmarshal(j.Result, &stats)
			res.Weights = &stats.Images.Weights
		} else {
			err2 = json.Unmarshal(j.Result, &res)
		}
		if err2 != nil || res.Weights == nil {
			t.Fatalf("%s: %v: %s", kind, err2, j.Result)
		}
		wi := *res.Weights
		if wi.Path != pub.URL || wi.SHA256 != hubtest.SHA256(file) || strings.Contains(string(j.Result), dir) {
			t.Errorf("%s: weights %+v, want %s, %s; result %s", kind, wi, pub.URL, hubtest.SHA256(file), j.Result)
		}
		if pub.Gets() != 1 {
			t.Errorf("after job %d: fetched %d times, want once", i+1, pub.Gets())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "torch", "hub", "checkpoints", "dinov2_vits14_pretrain.pth")); err != nil {
		t.Errorf("not in torch hub's cache: %v", err)
	}
	// A failure names the cache without the server's path.
	t.Setenv("HF_HUB_OFFLINE", "1")
	j, err = on.Submit(ctx, "features", []byte(`{"input":"`+archive+`","embedder":"dinov2-vitb14","no_cache":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if j = waitJob(t, on, j.ID, time.Minute); j.Status != records.StatusFailed || !strings.Contains(j.Error, "<torch cache>") || strings.Contains(j.Error, dir) {
		t.Errorf("offline, not cached: %s: %s", j.Status, j.Error)
	}
}
