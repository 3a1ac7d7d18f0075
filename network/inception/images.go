package inception

import (
	"io/fs"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/network/features"
)

// LoadImage decodes a host image file and preprocesses it for the network.
func LoadImage(path string, mode Mode) ([]float32, error) {
	return LoadImageFS(dataio.HostFS, path, mode)
}

// LoadImageFS decodes name in fsys and preprocesses it for the network.
func LoadImageFS(fsys fs.FS, name string, mode Mode) ([]float32, error) {
	img, err := features.Decode(fsys, name)
	if err != nil {
		return nil, err
	}
	x, err := Preprocess(img, mode)
	if err != nil {
		return nil, &fault.InputError{File: name, Msg: err.Error()}
	}
	return x, nil
}
