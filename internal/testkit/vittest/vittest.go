package vittest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/genlens/genlens/internal/hub"
	"github.com/genlens/genlens/network/vit"
)

// DINOv2 returns a safetensors file of random weights of the DINOv2
// network name (dinov2-vits14, ...), every tensor vit.NewModel reads at
// the published state dict's name and shape (dinov2-vits14: 22 million
// float32, 88 MB). vit.LoadWeights tells a safetensors file from a
// torch.save one by its bytes, so the file may stand under the published
// .pth name. The values make finite features: weights uniform with
// standard deviation 0.02 (the reference's initialisation), LayerNorms
// the identity, LayerScale 0.1. The same name gives the same bytes; they
// are made once per process.
func DINOv2(name string) ([]byte, error) {
	f, _ := files.LoadOrStore(name, sync.OnceValues(func() ([]byte, error) { return dinov2(name) }))
	return f.(func() ([]byte, error))()
}

var files sync.Map // name → func() ([]byte, error)

func dinov2(name string) ([]byte, error) {
	cfg, err := vit.Lookup(name)
	if err != nil {
		return nil, err
	}
	if cfg.Family != vit.DINOv2 || cfg.SwiGLU {
		return nil, fmt.Errorf("vittest: %s is not a plain DINOv2 network", name)
	}
	w, p, h, g := cfg.Width, cfg.Patch, cfg.Hidden, cfg.Input/cfg.Patch
	type tensor struct {
		shape []int
		fill  func(r *rand.Rand) float32
	}
	const a = 0.02 * 1.7320508 // uniform on [-a, a] has standard deviation 0.02
	random := func(r *rand.Rand) float32 { return float32(a * (2*r.Float64() - 1)) }
	constant := func(v float32) func(*rand.Rand) float32 { return func(*rand.Rand) float32 { return v } }
	sd := map[string]tensor{
		"patch_embed.proj.weight": {[]int{w, 3, p, p}, random},
		"patch_embed.proj.bias":   {[]int{w}, random},
		"cls_token":               {[]int{1, 1, w}, random},
		"pos_embed":               {[]int{1, 1 + g*g, w}, random},
		"norm.weight":             {[]int{w}, constant(1)},
		"norm.bias":               {[]int{w}, constant(0)},
	}
	for i := range cfg.Depth {
		pre := "blocks." + strconv.Itoa(i) + "."
		for _, n := range []string{"norm1", "norm2"} {
			sd[pre+n+".weight"] = tensor{[]int{w}, constant(1)}
			sd[pre+n+".bias"] = tensor{[]int{w}, constant(0)}
		}
		for _, l := range []struct {
			name    string
			out, in int
		}{{"attn.qkv", 3 * w, w}, {"attn.proj", w, w}, {"mlp.fc1", h, w}, {"mlp.fc2", w, h}} {
			sd[pre+l.name+".weight"] = tensor{[]int{l.out, l.in}, random}
			sd[pre+l.name+".bias"] = tensor{[]int{l.out}, random}
		}
		sd[pre+"ls1.gamma"] = tensor{[]int{w}, constant(0.1)}
		sd[pre+"ls2.gamma"] = tensor{[]int{w}, constant(0.1)}
	}
	type entry struct {
		DType   string   `json:"dtype"`
		Shape   []int    `json:"shape"`
		Offsets [2]int64 `json:"data_offsets"`
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range sd {
			if !yield(k) {
				return
			}
		}
	})
	hdr := map[string]entry{}
	var size int64
	for _, k := range keys {
		n := 1
		for _, d := range sd[k].shape {
			n *= d
		}
		hdr[k] = entry{"F32", sd[k].shape, [2]int64{size, size + 4*int64(n)}}
		size += 4 * int64(n)
	}
	head, err := json.Marshal(hdr)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 8+len(head), 8+int64(len(head))+size)
	binary.LittleEndian.PutUint64(out, uint64(len(head)))
	copy(out[8:], head)
	r := rand.New(rand.NewPCG(1, uint64(len(name))))
	for _, k := range keys {
		for range int(hdr[k].Offsets[1]-hdr[k].Offsets[0]) / 4 {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(sd[k].fill(r)))
		}
	}
	return out, nil
}

// Published is a file served as a published model's.
type Published struct {
	Server *httptest.Server
	URL    string // the file's address, in place of the published one
	gets   atomic.Int64
}

// Gets is the number of GET requests served so far.
func (p *Published) Gets() int { return int(p.gets.Load()) }

// Publish serves file at the published address of model name (one of
// hub.Models with a URL), on a local server, until the test ends: the
// model's URL points there meanwhile, with the published file's name.
// It changes hub.Models, so tests using it must not run in parallel.
func Publish(t testing.TB, name string, file []byte) *Published {
	t.Helper()
	i := slices.IndexFunc(hub.Models, func(m hub.Model) bool { return m.Name == name })
	if i < 0 || hub.Models[i].URL == "" {
		t.Fatalf("vittest: %s is not a published file", name)
	}
	u, err := url.Parse(hub.Models[i].URL)
	if err != nil {
		t.Fatal(err)
	}
	p := &Published{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != u.Path {
			http.NotFound(w, r)
			return
		}
		if r.Method == http.MethodGet {
			p.gets.Add(1)
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(file)))
		w.Write(file)
	}))
	p.URL = p.Server.URL + u.Path
	old := hub.Models[i]
	hub.Models[i].URL, hub.Models[i].SHA256 = p.URL, ""
	t.Cleanup(func() {
		hub.Models[i] = old
		p.Server.Close()
	})
	return p
}
