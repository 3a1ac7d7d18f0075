package hub

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Cache names where a published single file is kept.
type Cache string

const (
	// Torch is torch hub's checkpoints folder,
	// $TORCH_HOME/hub/checkpoints (TorchHome).
	Torch Cache = "torch"
	// CLIP is clip.load's folder, ~/.cache/clip.
	CLIP Cache = "clip"
)

// Model is a published model genlens knows by name: one file at URL kept
// in Cache (DINOv2's, CLIP's), or a Hugging Face repository (Repo).
type Model struct {
	Name   string // genlens's name: dinov2-vits14, e5-small-v2, ...
	URL    string
	Cache  Cache
	SHA256 string // the file's published SHA-256, "" when none is
	Repo   string // a Hugging Face model id, org/name
}

// dinov2 is the torch hub release of DINOv2 arch ("vits14", ...), as
// torch.hub.load("facebookresearch/dinov2", "dinov2_"+arch) fetches it;
// Meta publishes no hash of these files.
func dinov2(arch string) Model {
	return Model{Name: "dinov2-" + arch, Cache: Torch,
		URL: "https://dl.fbaipublicfiles.com/dinov2/dinov2_" + arch + "/dinov2_" + arch + "_pretrain.pth"}
}

// openaiCLIP is OpenAI's release of a CLIP model, whose URL's last
// folder is the file's SHA-256 (clip.load checks it too).
func openaiCLIP(name, sha, file string) Model {
	return Model{Name: name, Cache: CLIP, SHA256: sha,
		URL: "https://openaipublic.azureedge.net/clip/models/" + sha + "/" + file}
}

// Models are the models genlens fetches by name.
var Models = []Model{
	dinov2("vits14"), dinov2("vitb14"), dinov2("vitl14"), dinov2("vitg14"),
	openaiCLIP("clip-vitb32", "40d365715913c9da98579312b702a82c18be219cc2a73407c4526f58eba950af", "ViT-B-32.pt"),
	openaiCLIP("clip-vitl14-336", "3035c92b350959924f9f00213499208652fc7ea050643e8b385c2dac08641f02", "ViT-L-14-336px.pt"),
	{Name: "e5-small-v2", Repo: "intfloat/e5-small-v2"},
	{Name: "all-minilm-l6-v2", Repo: "sentence-transformers/all-MiniLM-L6-v2"},
	{Name: "bge-small-en-v1.5", Repo: "BAAI/bge-small-en-v1.5"},
	{Name: "deberta-large-mnli", Repo: "microsoft/deberta-large-mnli"},
}

// Lookup returns the model genlens publishes under name.
func Lookup(name string) (Model, bool) {
	for _, m := range Models {
		if m.Name == name {
			return m, true
		}
	}
	return Model{}, false
}

// Where returns the path the file of m (a single-file model) has in its
// cache, downloaded or not.
func (m Model) Where() (string, error) {
	var dir string
	var err error
	switch m.Cache {
	case Torch:
		dir, err = TorchHome()
		dir = filepath.Join(dir, "hub", "checkpoints")
	case CLIP:
		dir, err = home(".cache", "clip")
	default:
		return "", fmt.Errorf("%s is not a single file", m.Name)
	}
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, path.Base(m.URL)), nil
}

// Fetch returns the path of m's file in its cache, downloading it first
// when it is not there (see Download). A file in the cache is trusted as
// torch hub and clip.load left it.
func (m Model) Fetch(ctx context.Context, opt Options) (string, error) {
	p, err := m.Where()
	if err != nil {
		return "", err
	}
	if regular(p) {
		return p, nil
	}
	if why := opt.offline(); why != "" {
		return "", fmt.Errorf("%s: %s is not in the cache and %s; download %s to it, or pass the file's path", m.Name, p, why, m.URL)
	}
	if err := Download(ctx, m.URL, p, m.SHA256, opt); err != nil {
		return "", fmt.Errorf("%s: %w; or download %s by hand to %s", m.Name, err, m.URL, p)
	}
	return p, nil
}

// TorchHome is torch's cache folder: $TORCH_HOME, else
// $XDG_CACHE_HOME/torch, else ~/.cache/torch.
func TorchHome() (string, error) {
	if d := os.Getenv("TORCH_HOME"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "torch"), nil
	}
	return home(".cache", "torch")
}

// home joins elem under the user's home folder.
func home(elem ...string) (string, error) {
	h, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home folder for the model cache: %v", err)
	}
	return filepath.Join(append([]string{h}, elem...)...), nil
}

// IsRepoID reports whether s has the form of a Hugging Face model id,
// org/name: two non-empty parts of letters, digits, '-', '_' and '.',
// neither "." nor "..". Whether it is one rather than a relative path is
// the caller's to decide (a path that exists is a path).
func IsRepoID(s string) bool {
	org, name, ok := strings.Cut(s, "/")
	return ok && idPart(org) && idPart(name)
}

func idPart(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 96 {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}
