package vit

import "github.com/genlens/genlens/torchfile"

// ReadTorchScript reads the parameters and buffers of a TorchScript
// archive (OpenAI's released CLIP .pt files) as a float32 state dict
// (torchfile.ReadTorchScript: the module tree gives the names, the
// archive's code is not read). A damaged archive is a one-line error
// naming it.
func ReadTorchScript(path string) (map[string]*Tensor, error) {
	pt, err := torchfile.ReadTorchScript(path)
	if err != nil {
		return nil, err
	}
	return toFloat32(pt), nil
}
