package inception

import (
	"strings"
	"testing"
)

// clean-fid's mode names are accepted as the pipelines they document as
// equal; spelling variants of the names too; a typo gets a suggestion.
func TestParseModeNames(t *testing.T) {
	for s, want := range map[string]Mode{
		"pytorch-fid": ModePyTorchFID, "pytorch_fid": ModePyTorchFID, "PyTorch-FID": ModePyTorchFID,
		"tf": ModeTF, "clean": ModeClean,
		"legacy_pytorch": ModePyTorchFID, "legacy-pytorch": ModePyTorchFID,
		"legacy_tensorflow": ModeTF, "LEGACY_TENSORFLOW": ModeTF,
	} {
		if got, err := ParseMode(s); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", s, got, err, want)
		}
	}
	for s, want := range map[string]string{
		"clen":              "did you mean clean?",
		"legacy_pytroch":    "did you mean legacy_pytorch?",
		"legacy_tensorflw":  "did you mean legacy_tensorflow?",
		"pytorch-fd":        "did you mean pytorch-fid?",
		"tensorflow_legacy": "want pytorch-fid, tf or clean",
	} {
		_, err := ParseMode(s)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseMode(%q): %v, want an error saying %q", s, err, want)
		}
	}
}
