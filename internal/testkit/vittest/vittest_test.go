package vittest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/genlens/genlens/network/vit"
)

// The file loads as the network it is made for.
func TestDINOv2Loads(t *testing.T) {
	b, err := DINOv2("dinov2-vits14")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dinov2_vits14_pretrain.pth")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _ := vit.Lookup("dinov2-vits14")
	if _, err := vit.Load(path, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := DINOv2("clip-vitb32"); err == nil {
		t.Error("clip-vitb32: no error")
	}
}
