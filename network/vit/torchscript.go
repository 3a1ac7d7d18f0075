package vit

import (
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/format/torchfile"
	"github.com/genlens/genlens/internal/format/weights"
)

// ReadTorchScript reads the parameters and buffers of a TorchScript
// archive (OpenAI's released CLIP .pt files) as a float32 state dict
// (torchfile.OpenTorchScript: the module tree gives the names, the
// archive's code is not read; weights.Load prices and copies). A damaged
// archive, or a file that is not one, is a one-line error naming it.
func ReadTorchScript(path string) (map[string]*weights.Tensor, error) {
	if !torchfile.IsTorchScript(path) {
		return nil, &fault.InputError{File: path, Msg: "is not a TorchScript archive"}
	}
	return weights.Load(path)
}
