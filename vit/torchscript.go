package vit

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"genlens/dataio"
	"genlens/inception"

	"github.com/nlpodyssey/gopickle/pickle"
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

// isTorchScript reports whether the zip at path is a TorchScript
// archive, and the directory prefix of its records.
func isTorchScript(path string) (prefix string, ok bool) {
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
// archive as a state dict. gopickle checks every storage against its
// record's length; a damaged archive is a one-line error naming it.
func ReadTorchScript(path string) (sd map[string]*Tensor, err error) {
	bad := func(msg string) error { return &dataio.InputError{File: path, Msg: msg} }
	prefix, ok := isTorchScript(path)
	if !ok {
		return nil, bad("is not a TorchScript archive")
	}
	r, err := zip.OpenReader(path)
	if err != nil {
		return nil, bad("cannot open TorchScript archive: " + err.Error())
	}
	defer r.Close()
	records := map[string]*zip.File{}
	for _, f := range r.File {
		records[f.Name] = f
	}
	data, ok := records[prefix+"data.pkl"]
	if !ok {
		return nil, bad("TorchScript archive without data.pkl")
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, bad(err.Error())
	}
	pkl, err := inception.ReadPickle(data, st.Size())
	if err != nil {
		return nil, bad("cannot read data.pkl: " + err.Error())
	}
	defer func() {
		if p := recover(); p != nil {
			sd, err = nil, bad(fmt.Sprintf("corrupt TorchScript archive: %v", p))
		}
	}()
	storages := map[string]pytorch.StorageInterface{}
	u := pickle.NewUnpickler(bytes.NewReader(pkl))
	u.FindClass = func(module, name string) (any, error) {
		switch module + "." + name {
		case "torch._utils._rebuild_tensor_v2":
			return &pytorch.RebuildTensorV2{}, nil
		case "torch.FloatStorage":
			return &pytorch.FloatStorageClass{}, nil
		case "torch.HalfStorage":
			return &pytorch.HalfStorageClass{}, nil
		case "torch.DoubleStorage":
			return &pytorch.DoubleStorageClass{}, nil
		case "torch.BFloat16Storage":
			return &pytorch.BFloat16StorageClass{}, nil
		case "torch.LongStorage":
			return &pytorch.LongStorageClass{}, nil
		case "torch.IntStorage":
			return &pytorch.IntStorageClass{}, nil
		case "torch.ByteStorage":
			return &pytorch.ByteStorageClass{}, nil
		case "torch.BoolStorage":
			return &pytorch.BoolStorageClass{}, nil
		}
		if strings.HasPrefix(module, "__torch__") {
			return &tsClass{name: module + "." + name}, nil
		}
		return nil, fmt.Errorf("class %s.%s not expected in a TorchScript module", module, name)
	}
	u.PersistentLoad = func(id any) (any, error) {
		t, ok := id.(*types.Tuple)
		if !ok || t.Len() < 5 {
			return nil, fmt.Errorf("unexpected persistent id %v", id)
		}
		class, ok1 := t.Get(1).(pytorch.StorageClassInterface)
		key, ok2 := t.Get(2).(string)
		loc, ok3 := t.Get(3).(string)
		n, ok4 := t.Get(4).(int)
		if !ok1 || !ok2 || !ok3 || !ok4 || n < 0 {
			return nil, fmt.Errorf("unexpected storage reference %v", id)
		}
		if s, ok := storages[key]; ok {
			return s, nil
		}
		rec, ok := records[prefix+"data/"+key]
		if !ok {
			return nil, fmt.Errorf("storage %s missing from the archive", key)
		}
		// The element count claimed must fit in the record and the file.
		es := map[string]uint64{"float32": 4, "float16": 2, "float64": 8, "bfloat16": 2, "int64": 8, "int32": 4, "uint8": 1, "bool": 1}[storageDType(class)]
		if es == 0 || uint64(n) != rec.UncompressedSize64/es || rec.UncompressedSize64%es != 0 || rec.UncompressedSize64 > uint64(st.Size()) {
			return nil, fmt.Errorf("storage %s claims %d elements, its record holds %d bytes", key, n, rec.UncompressedSize64)
		}
		f, err := rec.Open()
		if err != nil {
			return nil, err
		}
		defer f.Close()
		s := class.New(n, loc)
		if hs, ok := s.(*pytorch.HalfStorage); ok {
			// gopickle 0.2.0 converts float16 subnormals wrongly (0x0110,
			// 1.6e-5, becomes 7.7e-5); OpenAI's weights are float16 and
			// have many. Convert them here.
			raw := make([]byte, 2*n)
			if _, err := io.ReadFull(f, raw); err != nil {
				return nil, err
			}
			hs.Data = make([]float32, n)
			for i := range hs.Data {
				hs.Data[i] = inception.Float16(binary.LittleEndian.Uint16(raw[2*i:]))
			}
		} else if err := s.SetFromFileWithSize(f, n); err != nil {
			return nil, err
		}
		storages[key] = s
		return s, nil
	}
	root, err := u.Load()
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
	pt, err := inception.TensorsFromPickle(path, raw)
	if err != nil {
		return nil, err
	}
	return toFloat32(pt), nil
}

// storageDType names a storage class's element type.
func storageDType(c pytorch.StorageClassInterface) string {
	switch c.(type) {
	case *pytorch.FloatStorageClass:
		return "float32"
	case *pytorch.HalfStorageClass:
		return "float16"
	case *pytorch.DoubleStorageClass:
		return "float64"
	case *pytorch.BFloat16StorageClass:
		return "bfloat16"
	case *pytorch.LongStorageClass:
		return "int64"
	case *pytorch.IntStorageClass:
		return "int32"
	case *pytorch.ByteStorageClass:
		return "uint8"
	case *pytorch.BoolStorageClass:
		return "bool"
	}
	return ""
}
