package weights

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/genlens/genlens/internal/format/torchfile"
	"github.com/genlens/genlens/internal/tensor/membudget"
)

// Tensor is one weight, row-major float32, with its shape.
type Tensor struct {
	Shape []int
	Data  []float32
}

// Load reads every floating-point tensor of a weights file: a
// safetensors file, a TorchScript archive or a torch.save state dict,
// told apart by their first bytes. See LoadKeys.
func Load(path string) (map[string]*Tensor, error) {
	return LoadKeys(path, nil)
}

// LoadKeys is Load for the tensors whose names keep accepts (all when
// keep is nil): the others are neither priced nor copied. Every problem
// with the file is a one-line *fault.InputError naming it; a file whose
// tensors would pass the matrix budget is a *membudget.Error naming the
// file and the tensor, before that tensor is allocated.
func LoadKeys(path string, keep func(key string) bool) (map[string]*Tensor, error) {
	if IsSafetensors(path) {
		return readSafetensors(path, keep)
	}
	var (
		views map[string]*torchfile.View
		err   error
	)
	if torchfile.IsTorchScript(path) {
		views, err = torchfile.OpenTorchScript(path)
	} else {
		views, err = torchfile.OpenStateDict(path)
	}
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(views))
	for k, v := range views {
		if v.IsFloat() && (keep == nil || keep(k)) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	// The storages stay in memory while the copies are made: count the
	// file's bytes, which hold them, first.
	var held int64
	if st, err := os.Stat(path); err == nil {
		held = st.Size()
	}
	p := pricer{file: path, used: held}
	for _, k := range keys {
		if views[k].InPlace() {
			continue // the storage's memory, counted in the file's bytes
		}
		if err := p.add(k, views[k].Shape, int64(views[k].Len())); err != nil {
			return nil, err
		}
	}
	sd := make(map[string]*Tensor, len(keys))
	for _, k := range keys {
		v := views[k]
		sd[k] = &Tensor{Shape: v.Shape, Data: v.Float32()}
		delete(views, k)
	}
	return sd, nil
}

// pricer adds up the bytes of a load against the matrix budget.
type pricer struct {
	file  string
	used  int64
	limit int64 // membudget.Limit, read once (the default reads /proc)
}

// add prices a float32 tensor of shape (n elements).
func (p *pricer) add(key string, shape []int, n int64) error {
	if p.limit == 0 {
		p.limit = membudget.Limit()
	}
	p.used += 4 * n
	if p.used <= p.limit {
		return nil
	}
	rows, cols := 1, int(n)
	if len(shape) > 1 && shape[0] > 0 {
		rows, cols = shape[0], int(n)/shape[0]
	}
	return membudget.CheckBytes(fmt.Sprintf("the weights %s up to tensor %s", p.file, key), rows, cols, p.used)
}

// IsSafetensors reports whether the file starts like a safetensors file:
// a header length that fits in the file, then a JSON object.
func IsSafetensors(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [9]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return false
	}
	st, err := f.Stat()
	if err != nil {
		return false
	}
	n := binary.LittleEndian.Uint64(b[:8])
	return b[8] == '{' && n <= uint64(st.Size()-8)
}
