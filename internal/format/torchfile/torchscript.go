package torchfile

import (
	"archive/zip"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/genlens/genlens/fault"
	"github.com/nlpodyssey/gopickle/pytorch"
	"github.com/nlpodyssey/gopickle/types"
)

// A TorchScript archive (torch.jit.save, OpenAI's released CLIP .pt
// files) pickles the module tree itself into <archive>/data.pkl: every
// module is an object of a __torch__.* class whose state is a dict of
// its attributes (submodules, parameters, buffers, flags), and tensors
// are rebuilt from storages under <archive>/data/ as in a state dict.
// Walking the attributes with dotted names gives the keys
// module.state_dict() would have. The code in the archive is not read.

// tsClass is a __torch__ class; tsObject one module.
type tsClass struct{ name string }

type tsObject struct {
	class string
	attrs map[string]any
}

func (c *tsClass) PyNew(args ...any) (any, error) {
	return &tsObject{class: c.name, attrs: map[string]any{}}, nil
}

func (o *tsObject) PySetState(state any) error {
	switch d := state.(type) {
	case *types.Dict:
		for _, e := range *d {
			if k, ok := e.Key.(string); ok {
				o.attrs[k] = e.Value
			}
		}
	case *types.OrderedDict:
		for k, e := range d.Map {
			if ks, ok := k.(string); ok {
				o.attrs[ks] = e.Value
			}
		}
	default:
		return fmt.Errorf("module %s: state is a %T, not a dict", o.class, state)
	}
	return nil
}

func (o *tsObject) PyDictSet(key, value any) error {
	k, ok := key.(string)
	if !ok {
		return fmt.Errorf("module %s: attribute name %v is not a string", o.class, key)
	}
	o.attrs[k] = value
	return nil
}

// moduleClass resolves the classes of a TorchScript module tree: those
// of a state dict (torchClass) and the archive's own __torch__ module
// classes, which become plain attribute holders (no code runs).
func moduleClass(module, name string) (any, error) {
	if c, err := torchClass(module, name); err == nil {
		return c, nil
	}
	if strings.HasPrefix(module, "__torch__") {
		return &tsClass{name: module + "." + name}, nil
	}
	return nil, fmt.Errorf("class %s.%s not expected in a TorchScript module", module, name)
}

// IsTorchScript reports whether the file at path is a TorchScript
// archive (a zip holding <archive>/constants.pkl).
func IsTorchScript(path string) bool {
	_, ok := torchScriptPrefix(path)
	return ok
}

// torchScriptPrefix returns the directory prefix of a TorchScript
// archive's records.
func torchScriptPrefix(path string) (prefix string, ok bool) {
	r, err := zip.OpenReader(path)
	if err != nil {
		return "", false
	}
	defer r.Close()
	for _, f := range r.File {
		if strings.HasSuffix(f.Name, "/constants.pkl") {
			return strings.TrimSuffix(f.Name, "constants.pkl"), true
		}
	}
	return "", false
}

// ReadTorchScript reads the parameters and buffers of a TorchScript
// archive as a state dict, with the checks of LoadStateDict: the pickle
// is scanned before it is unpickled, every storage's claimed size must
// fill its record, every view must lie inside its storage. A damaged
// archive is a one-line *fault.InputError naming it.
func ReadTorchScript(path string) (map[string]*Tensor, error) {
	views, err := OpenTorchScript(path)
	if err != nil {
		return nil, err
	}
	return float64s(path, views)
}

// OpenTorchScript reads a TorchScript archive as ReadTorchScript does,
// but copies no tensor out of its storages (see OpenStateDict).
func OpenTorchScript(path string) (sd map[string]*View, err error) {
	bad := func(msg string) error { return &fault.InputError{File: path, Msg: msg} }
	prefix, ok := torchScriptPrefix(path)
	if !ok {
		return nil, bad("is not a TorchScript archive")
	}
	r, err := zip.OpenReader(path)
	if err != nil {
		return nil, bad("cannot open TorchScript archive: " + err.Error())
	}
	defer r.Close()
	var data *zip.File
	storages := map[string]*zip.File{}
	for _, f := range r.File {
		switch {
		case f.Name == prefix+"data.pkl":
			data = f
		case strings.HasPrefix(f.Name, prefix+"data/"):
			storages[strings.TrimPrefix(f.Name, prefix+"data/")] = f
		}
	}
	if data == nil {
		return nil, bad("TorchScript archive without data.pkl")
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, bad(err.Error())
	}
	pkl, err := readPickle(data, st.Size())
	if err != nil {
		return nil, bad("cannot read data.pkl: " + err.Error())
	}
	// gopickle's unpickler panics on some malformed input.
	defer func() {
		if p := recover(); p != nil {
			sd, err = nil, bad(fmt.Sprintf("corrupt TorchScript archive: %v", p))
		}
	}()
	b := &budget{file: path}
	root, err := unpickleChecked(pkl, moduleClass, zipStorages(storages, st.Size(), b))
	if b.err != nil {
		return nil, b.err
	}
	if err != nil {
		return nil, bad("cannot decode the TorchScript module: " + err.Error())
	}
	obj, ok := root.(*tsObject)
	if !ok {
		return nil, bad(fmt.Sprintf("TorchScript archive holds a %T, not a module", root))
	}
	raw := map[string]*pytorch.Tensor{}
	var walk func(prefix string, o *tsObject, depth int)
	walk = func(prefix string, o *tsObject, depth int) {
		if depth > 64 {
			return
		}
		keys := make([]string, 0, len(o.attrs))
		for k := range o.attrs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch v := o.attrs[k].(type) {
			case *pytorch.Tensor:
				raw[prefix+k] = v
			case *tsObject:
				walk(prefix+k+".", v, depth+1)
			}
		}
	}
	walk("", obj, 0)
	return openViews(path, raw)
}
